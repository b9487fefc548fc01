/*
 * providers/lapack/svd.c - gesvd: A = U S V^H for a tall or wide A gathered
 * m x n (ld m), values only (MUSTER_NO_VECTORS), thin or full vectors
 * (MUSTER_FULL_MATRICES), through xGESVD (QR iteration: slower than the
 * divide and conquer of xGESDD but without its rare failures to converge
 * on clustered values).  Where U, V^H and S go: muster_routine_outputs.
 * polar.c builds the polar factors from lp_svd's thin SVD.
 */
#include <inttypes.h>
#include <lapacke.h>
#include <stdlib.h>

#include "lapackInt.h"

#define LAYOUT LAPACK_COL_MAJOR

static lapack_int do_gesvd(muster_dtype_t t, char job, lapack_int m, lapack_int n, void *a, void *s,
                           void *u, lapack_int ldu, void *vt, lapack_int ldvt, void *superb) {
  switch (t) {
  case MUSTER_F32: return LAPACKE_sgesvd(LAYOUT, job, job, m, n, a, m, s, u, ldu, vt, ldvt, superb);
  case MUSTER_F64: return LAPACKE_dgesvd(LAYOUT, job, job, m, n, a, m, s, u, ldu, vt, ldvt, superb);
  case MUSTER_C64: return LAPACKE_cgesvd(LAYOUT, job, job, m, n, a, m, s, u, ldu, vt, ldvt, superb);
  default: return LAPACKE_zgesvd(LAYOUT, job, job, m, n, a, m, s, u, ldu, vt, ldvt, superb);
  }
}

int lp_svd(const muster_provider_call_t *call, char job, int64_t m, int64_t n, void *full, void *s,
           void *u, void *vt) {
  muster_dtype_t t = call->args.dtype;
  int64_t k = m < n ? m : n;
  /* job 'S': U m x k, V^H k x n; 'A': m x m and n x n; 'N': neither */
  lapack_int ldvt = job == 'A' ? (lapack_int)n : job == 'S' ? (lapack_int)k : 1;
  void *superb = lp_alloc((size_t)(k > 1 ? k - 1 : 1) * muster_dtype_real_bytes(t));
  if (!superb) return lp_err(call, MUSTER_ENOMEM, "cannot allocate the gesvd workspace");
  lapack_int info = do_gesvd(t, job, (lapack_int)m, (lapack_int)n, full, s, u,
                             job == 'N' ? 1 : (lapack_int)m, vt, ldvt, superb);
  free(superb);
  if (info > 0) {
    if (call->info) *call->info = info;
    return lp_err(call, MUSTER_EPROVIDER, "LAPACKE_%cgesvd: did not converge (%d superdiagonals)",
                  lp_prefix(t), (int)info);
  }
  return info < 0 ? lp_lapacke_failed(call, "gesvd", info) : 0;
}

int lp_run_gesvd(const muster_provider_call_t *call, const muster_outputs_t *o) {
  muster_dtype_t t = call->args.dtype;
  size_t esz = muster_dtype_bytes(t);
  int64_t m = o->m, n = o->n, k = o->k;
  int vectors = o->nparts > 0, full_vectors = o->nparts == 2;
  char job = !vectors ? 'N' : full_vectors ? 'A' : 'S';
  int64_t ucols = full_vectors ? m : k, vtrows = full_vectors ? n : k;
  void *full = NULL, *s = lp_alloc((size_t)k * muster_dtype_real_bytes(t));
  void *u = vectors ? lp_alloc((size_t)(m * ucols) * esz) : NULL;
  void *vt = vectors ? lp_alloc((size_t)(vtrows * n) * esz) : NULL;
  int rc = s && (!vectors || (u && vt)) ? lp_factor_begin(call, o, &full)
                                        : lp_err(call, MUSTER_ENOMEM, "cannot allocate the factors");
  if (rc == 0) rc = lp_svd(call, job, m, n, full, s, u, vt);
  lp_factors_t f = {.w = s};
  if (full_vectors) { /* B: U, then V^H */
    f.b[0] = u;
    f.b[1] = vt;
  } else if (vectors) { /* the m x n one over A, the square one in B */
    f.a = m >= n ? u : vt;
    f.b[0] = m >= n ? vt : u;
  }
  rc = lp_factor_end(call, o, &f, rc);
  free(full);
  free(s);
  free(u);
  free(vt);
  return rc;
}
