/*
 * providers/lapack/inverse.c - potri's second half: inv(A) = inv(L)^H inv(L)
 * from the Cholesky factor L, into the lower triangle, in place.  This is
 * what xPOTRI does (xTRTRI, then xLAUUM), with xTRTRI done here by blocks.
 *
 * Why not LAPACKE_?potri: OpenBLAS inverts L on ONE thread (trtri_L_single:
 * OPENBLAS_NUM_THREADS=1, or a one-CPU machine) by blocks from the bottom
 * right, and its first step calls the trsm driver with m = 0 rows.  The
 * right-side trsm kernels of the SSE-era cores (Prescott, Core2, Atom,
 * Barcelona, Bobcat: what OpenBLAS picks on such CPUs and on VMs showing a
 * generic CPU model) still pack that empty panel's triangle, with an aligned
 * load at an odd address when the last block's width is odd: SIGSEGV, the
 * caller's whole process gone.  OpenBLAS 0.3.21: f32 and c64 at about half
 * the n from 131 (Prescott) or 229-261 (the others) up, f64 too on Core2;
 * several threads take another path and are fine.  Reference LAPACK's
 * blocked xTRTRI never calls with an empty side, so that loop is here, on
 * BLAS calls with positive sizes only.  The diagonal blocks are NB wide,
 * below every affected core's GEMM_Q (128 and up), so OpenBLAS inverts them
 * unblocked (xTRTI2, no trsm); xLAUUM has no such call and stays OpenBLAS's.
 * Same flops as ?potri, and the trmm/trsm still use OpenBLAS's threads.
 * Tests: lapack_provider_old_kernels_prescott, lapack_provider_old_kernels_core2.
 */
#include <cblas.h>
#include <lapacke.h>

#include "lapackInt.h"

#define LAYOUT LAPACK_COL_MAJOR
#define NB 64 /* the diagonal blocks: reference LAPACK's ILAENV block size */

static void *at(muster_dtype_t t, void *a, lapack_int ld, lapack_int i, lapack_int j) {
  return (char *)a + ((size_t)j * (size_t)ld + (size_t)i) * muster_dtype_bytes(t);
}

/* The panel P (m x nb, below the diagonal block D) := -inv(L22) P inv(D),
 * where L22 (m x m, below and right of P) already holds its inverse and D
 * (nb x nb) does not yet: a trmm, then a trsm from the right. */
static void panel(muster_dtype_t t, lapack_int ld, lapack_int m, lapack_int nb, const void *inv22,
                  const void *d, void *p) {
  static const float c1[2] = {1, 0}, cm1[2] = {-1, 0};
  static const double z1[2] = {1, 0}, zm1[2] = {-1, 0};
#define LEFT CblasColMajor, CblasLeft, CblasLower, CblasNoTrans, CblasNonUnit, m, nb
#define RIGHT CblasColMajor, CblasRight, CblasLower, CblasNoTrans, CblasNonUnit, m, nb
  switch (t) {
  case MUSTER_F32:
    cblas_strmm(LEFT, 1.0f, inv22, ld, p, ld);
    cblas_strsm(RIGHT, -1.0f, d, ld, p, ld);
    break;
  case MUSTER_F64:
    cblas_dtrmm(LEFT, 1.0, inv22, ld, p, ld);
    cblas_dtrsm(RIGHT, -1.0, d, ld, p, ld);
    break;
  case MUSTER_C64:
    cblas_ctrmm(LEFT, c1, inv22, ld, p, ld);
    cblas_ctrsm(RIGHT, cm1, d, ld, p, ld);
    break;
  default:
    cblas_ztrmm(LEFT, z1, inv22, ld, p, ld);
    cblas_ztrsm(RIGHT, zm1, d, ld, p, ld);
    break;
  }
#undef LEFT
#undef RIGHT
}

static lapack_int trtri_block(muster_dtype_t t, lapack_int nb, void *d, lapack_int ld) {
  switch (t) {
  case MUSTER_F32: return LAPACKE_strtri_work(LAYOUT, 'L', 'N', nb, d, ld);
  case MUSTER_F64: return LAPACKE_dtrtri_work(LAYOUT, 'L', 'N', nb, d, ld);
  case MUSTER_C64: return LAPACKE_ctrtri_work(LAYOUT, 'L', 'N', nb, d, ld);
  default: return LAPACKE_ztrtri_work(LAYOUT, 'L', 'N', nb, d, ld);
  }
}

static lapack_int lauum(muster_dtype_t t, lapack_int n, void *a) {
  switch (t) {
  case MUSTER_F32: return LAPACKE_slauum_work(LAYOUT, 'L', n, a, n);
  case MUSTER_F64: return LAPACKE_dlauum_work(LAYOUT, 'L', n, a, n);
  case MUSTER_C64: return LAPACKE_clauum_work(LAYOUT, 'L', n, a, n);
  default: return LAPACKE_zlauum_work(LAYOUT, 'L', n, a, n);
  }
}

/* inv(L) in place, lower (reference xTRTRI, uplo 'L', diag 'N'): the block
 * columns from the last to the first.  0; k > 0: L(k,k) (1-based) is
 * zero; < 0: LAPACKE's argument error. */
static lapack_int invert_lower(muster_dtype_t t, lapack_int n, void *a) {
  for (lapack_int j = (n - 1) / NB * NB; j >= 0; j -= NB) {
    lapack_int nb = n - j < NB ? n - j : NB, below = n - j - nb;
    if (below > 0) panel(t, n, below, nb, at(t, a, n, j + nb, j + nb), at(t, a, n, j, j), at(t, a, n, j + nb, j));
    lapack_int rc = trtri_block(t, nb, at(t, a, n, j, j), n);
    if (rc != 0) return rc > 0 ? j + rc : rc;
  }
  return 0;
}

int lp_potri_from_factor(const muster_provider_call_t *call, void *full) {
  muster_dtype_t t = call->args.dtype;
  lapack_int n = (lapack_int)call->args.n;
  lapack_int rc = invert_lower(t, n, full);
  if (rc > 0) {
    if (call->info) *call->info = rc;
    return lp_err(call, MUSTER_EPROVIDER, "LAPACKE_%ctrtri: factor singular at diagonal %d",
                  lp_prefix(t), (int)rc);
  }
  if (rc < 0) return lp_lapacke_failed(call, "trtri", rc);
  rc = lauum(t, n, full);
  return rc ? lp_lapacke_failed(call, "lauum", rc) : 0;
}
