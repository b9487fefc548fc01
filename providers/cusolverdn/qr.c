/*
 * providers/cusolverdn/qr.c - geqrf on the target (factors.h): A = Q R by
 * cusolverDnXgeqrf on the gathered m x n A (any shape), then Q made
 * explicit by the legacy <t>orgqr / <t>ungqr (the 64-bit API has none):
 *   thin, m >= n   R (n x n) copied out of the upper triangle into the
 *                  factor buffer (B's), then Q (m x n) formed over the
 *                  reflectors in the gathered A (A's);
 *   m < n or full  the k = min(m, n) reflectors copied into the factor
 *                  buffer and Q (m x m) formed there (B's), then R zeroed
 *                  below its diagonal in place (A's, m x n).
 * Everything on the solver stream, in that order.  A rank-deficient A is
 * no error: Q R = A all the same.
 */
#include "factors.h"
#include "kernels.h"

int dn_qr_make(dn_job_t *j, dn_fjob_t *f) {
  int rc = 0, info = 0;
  cuc_err_t *E = j->E;
  const muster_outputs_t *o = &f->p.o;
  const int dt = (int)j->a->dtype;
  const int64_t m = o->m, n = o->n, k = o->k;
  void *other = dn_fac_at(j, f, f->p.b_at);
  dn_call_t qr = {.op = DN_GEQRF}, q = {.op = DN_ORGQR, .rows = m, .k = k};
  CUC_CHECK(dn_run(j, &qr, &info));
  CUC_CHECK(dn_info(j, DN_GEQRF, info));
  if (o->a_holds == MUSTER_FACTOR_Q) { /* B: R (n x n); A: Q (m x n) */
    CUC_CHECK(dn_launched(j, "dn_upper_launch (R)", dn_upper_launch(dt, j->A, j->lda, other, n, n, n, j->d->stream)));
    q.b = j->A;
    q.ldb = j->lda;
    q.cols = n;
  } else { /* B: Q (m x m) from the reflectors, columns past k start as zeros */
    CUC_CU(j->dev, cudaMemsetAsync(other, 0, (size_t)(m * m) * j->esz, j->d->stream));
    CUC_CU(j->dev, cudaMemcpyAsync(other, j->A, (size_t)(m * k) * j->esz, cudaMemcpyDeviceToDevice, j->d->stream));
    q.b = other;
    q.ldb = m;
    q.cols = m;
  }
  CUC_CHECK(dn_run(j, &q, &info)); /* ordered after the copies above: one stream */
  CUC_CHECK(dn_info(j, DN_ORGQR, info));
  if (o->a_holds == MUSTER_FACTOR_R) /* R over the reflectors: zeros below the diagonal */
    CUC_CHECK(dn_launched(j, "dn_upper_launch (R in place)",
                          dn_upper_launch(dt, j->A, j->lda, j->A, j->lda, m, n, j->d->stream)));
out:
  return rc;
}
