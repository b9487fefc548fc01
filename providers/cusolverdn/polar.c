/*
 * providers/cusolverdn/polar.c - polar on the target (factors.h): the
 * right polar decomposition A = U_p H from the thin SVD A = U S V^H
 * (svd.c), as CUDA 13.0's cusolverDn has no polar routine (Xpolar is
 * not in its cusolverDn.h):
 *   U_p = U V^H        m x n, one cuBLAS gemm, into the gathered A (A's);
 *   H   = V (S V^H)    n x n: V^H copied and its rows scaled by S (a
 *                      kernel), one gemm, then made exactly Hermitian,
 *                      (H + H^H) / 2 (a kernel), into the factor buffer (B's).
 * For a wide A (m < n) U_p has orthonormal rows and H rank <= m; a
 * rank-deficient A is no error (U_p is then one of several unitary
 * factors, and U_p H = A still holds).
 */
#include "factors.h"
#include "kernels.h"

int dn_polar_make(dn_job_t *j, dn_fjob_t *f) {
  int rc = 0;
  cuc_err_t *E = j->E;
  const dn_fplan_t *p = &f->p;
  const int dt = (int)j->a->dtype;
  const int64_t m = p->o.m, n = p->o.n, k = p->o.k;
  void *u = dn_fac_at(j, f, p->u_at), *vt = dn_fac_at(j, f, p->vt_at);
  void *h = dn_fac_at(j, f, p->h_at), *svt = dn_fac_at(j, f, p->sv_at);
  CUC_CHECK(dn_svd_make(j, f));
  CUC_CHECK(dn_gemm(j, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, u, m, vt, k, j->A, j->lda)); /* U_p = U V^H */
  CUC_CU(j->dev, cudaMemcpyAsync(svt, vt, (size_t)(k * n) * j->esz, cudaMemcpyDeviceToDevice, j->d->stream));
  CUC_CHECK(dn_launched(j, "dn_scale_rows_launch", dn_scale_rows_launch(dt, svt, k, k, n, f->s, j->d->stream)));
  CUC_CHECK(dn_gemm(j, CUBLAS_OP_C, CUBLAS_OP_N, n, n, k, vt, k, svt, k, h, n)); /* H = V (S V^H) */
  CUC_CHECK(dn_launched(j, "dn_hermitize_launch", dn_hermitize_launch(dt, h, n, j->d->stream)));
out:
  return rc;
}
