/*
 * providers/cusolverdn/svd.c - gesvd on the target (factors.h), and the
 * thin SVD polar.c builds on: cusolverDnXgesvd (QR iteration), jobs 'N'
 * (values only), 'S' (thin) or 'A' (full), into the factor buffer's U
 * (m x ucols) and V^H (vrows x n) in their standard form, the k singular
 * values into the target's w buffer.
 *
 * cusolverDn's gesvd takes m >= n only.  A wide A (m < n) is factored
 * through its conjugate transpose (factplan.h): T = A^H (n x m, tall,
 * cuBLAS geam), T = U' S V'^H by Xgesvd, and since A = V' S U'^H, A's U is
 * (V'^H)^H (m x ucols) and A's V^H is U'^H (vrows x n): two more geam.
 * The singular values are those of A either way.  The gathered A is
 * overwritten (Xgesvd destroys its input); gesvd's thin and full forms
 * need nothing more: factplan placed U and V^H where the rule wants them.
 */
#include "factors.h"

int dn_svd_make(dn_job_t *j, dn_fjob_t *f) {
  int rc = 0, info = 0;
  const dn_fplan_t *p = &f->p;
  const int64_t m = p->o.m, n = p->o.n;
  const int vectors = p->jobu != 'N';
  dn_call_t sv = {.op = DN_GESVD, .jobu = (signed char)p->jobu, .jobvt = (signed char)p->jobvt, .rows = p->sm,
                  .cols = p->sn, .w = f->s, .ldu = p->sm, .ldvt = p->sn};
  if (!p->wide) { /* Xgesvd on A itself, the vectors straight into place */
    sv.b = j->A;
    sv.ldb = j->lda;
    sv.u = vectors ? dn_fac_at(j, f, p->u_at) : NULL;
    sv.vt = vectors ? dn_fac_at(j, f, p->vt_at) : NULL;
    CUC_CHECK(dn_run(j, &sv, &info));
    return dn_info(j, DN_GESVD, info);
  }
  /* wide: T = A^H, U' (n x vrows, ld n) and V'^H (ucols = m x m, ld m) */
  void *t = dn_fac_at(j, f, p->t_at);
  CUC_CHECK(dn_conj_transpose(j, j->A, j->lda, m, n, t, n));
  sv.b = t;
  sv.ldb = n;
  sv.u = vectors ? dn_fac_at(j, f, p->x1_at) : NULL;
  sv.vt = vectors ? dn_fac_at(j, f, p->x2_at) : NULL;
  CUC_CHECK(dn_run(j, &sv, &info));
  CUC_CHECK(dn_info(j, DN_GESVD, info));
  if (vectors) {
    CUC_CHECK(dn_conj_transpose(j, sv.vt, m, p->ucols, m, dn_fac_at(j, f, p->u_at), m));         /* U   */
    CUC_CHECK(dn_conj_transpose(j, sv.u, n, n, p->vrows, dn_fac_at(j, f, p->vt_at), p->vrows)); /* V^H */
  }
out:
  return rc;
}
