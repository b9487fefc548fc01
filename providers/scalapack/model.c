/*
 * providers/scalapack/model.c - the time model of slModel.h.
 */
#include "slModel.h"

#include "muster.h"

/* LAWN 41 (leading terms; n x n A, nrhs right-hand sides):
 *   potrf n^3/3, potrs 2 n^2 nrhs; potri: potrf + trtri n^3/3 + lauum n^3/3;
 *   getrf 2n^3/3, getrs 2 n^2 nrhs;
 *   geqrf (m = n) 4n^3/3, ormqr 2 n^2 nrhs, trsm n^2 nrhs;
 *   syevd: sytrd 4n^3/3, and with vectors stedc 4n^3/3 (no deflation, the
 *   upper bound) + ormtr 2n^3. */
double sl_model_flops(int routine, int dtype, unsigned flags, int64_t n64, int64_t nrhs64) {
  double n = (double)n64, nrhs = nrhs64 > 0 ? (double)nrhs64 : 0, n3 = n * n * n, f;
  switch (routine) {
    case MUSTER_POTRS: f = n3 / 3 + 2 * n * n * nrhs; break;
    case MUSTER_POTRI: f = n3; break;
    case MUSTER_GETRS: f = 2 * n3 / 3 + 2 * n * n * nrhs; break;
    case MUSTER_GELS:  f = 4 * n3 / 3 + 3 * n * n * nrhs; break;
    case MUSTER_GEQRF: f = 8 * n3 / 3; break; /* geqrf + orgqr (m taken as n: not in the query) */
    case MUSTER_GESVD: f = (flags & MUSTER_NO_VECTORS) ? 8 * n3 / 3 : 22 * n3; break; /* gebrd, +vectors */
    case MUSTER_POLAR: f = 22 * n3 + 4 * n3; break; /* the thin SVD and two gemm */
    case MUSTER_SYEVD: f = (flags & MUSTER_NO_VECTORS) ? 4 * n3 / 3 : 14 * n3 / 3; break;
    default: return -1;
  }
  return muster_dtype_is_complex(dtype) ? 4 * f : f; /* a complex multiply-add: 8 real flops */
}

double sl_model_seconds(int routine, int dtype, unsigned flags, int64_t n64, int64_t nrhs, int R) {
  double flops = sl_model_flops(routine, dtype, flags, n64, nrhs);
  if (flops < 0) return -1;
  double r = R > 1 ? R : 1, n = (double)n64;
  /* getrs and gels: measured nowhere yet; pdgetrf and pdgeqrf are blocked
   * like pdpotrf, so they get its rate (f32 too: its rate is not measured
   * either, and a time too long only lengthens the deadline) */
  double eff = routine == MUSTER_SYEVD ? SL_MODEL_SYEVD_EFF : 1.0;
  int mats = routine == MUSTER_POTRI || (routine == MUSTER_SYEVD && !(flags & MUSTER_NO_VECTORS)) ? 2 : 1;
  double bytes = n * n * mats * (double)muster_dtype_bytes(dtype);
  return flops / (r * SL_MODEL_RATE * eff) + bytes * (SL_MODEL_MOVE_S / r + SL_MODEL_COMM_S * r);
}
