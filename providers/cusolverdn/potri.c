/* providers/cusolverdn/potri.c - the inverse: potrf, then one of two
 * paths (MUSTER_DN_POTRI, dnInt.h), both giving the full Hermitian inverse
 * in every rank's A (job.h). */
#include "job.h"

/* The legacy cusolverDn<t>potri leaves the lower triangle of the inverse;
 * the upper one is mirrored from it in place on the target; then A goes
 * back to the ranks (unless the solve ran in their buffer). */
static int by_potri(dn_job_t *j) {
  int rc = 0, info = 0;
  cuc_err_t *E = j->E;
  dn_call_t m = {.op = DN_POTRI};
  CUC_CHECK(dn_run(j, &m, &info));
  CUC_CHECK(dn_info(j, DN_POTRI, info));
  CUC_CU(j->dev, cuc_mirror_lower((int)j->a->dtype, j->A, j->lda, j->a->n, 0, j->A, j->lda, j->d->stream));
  CUC_CHECK(dn_sync_solver(j));
  if (!j->shape.in_place) CUC_CHECK(dn_move_cols(j, 1, j->A, j->lda, 0, j->a->n));
out:
  return rc;
}

/* A^-1 = potrs(L, I) in panels of DN_PANEL identity columns (the
 * context's rhs buffer), each solved in place and written straight into
 * the ranks' columns: L stays on the target, nothing is mirrored, and the
 * ranks' buffers are only written (never the source). */
static int by_solves(dn_job_t *j) {
  int rc = 0, info = 0;
  cuc_err_t *E = j->E;
  int64_t n = j->a->n, W = n < DN_PANEL ? n : DN_PANEL;
  dn_call_t m = {.op = DN_POTRS, .ldb = n};
  CUC_CHECK(
      cuc_grow_checked(j->dev, &j->d->rhs, &j->d->rhs_bytes, (size_t)(n * W) * j->esz, "the identity panel", E));
  m.b = j->d->rhs;
  for (int64_t c0 = 0; c0 < n; c0 += W) {
    m.nrhs = n - c0 < W ? n - c0 : W;
    CUC_CU(j->dev, cuc_identity_panel((int)j->a->dtype, m.b, n, c0, m.nrhs, j->d->stream));
    CUC_CHECK(dn_run(j, &m, &info));
    CUC_CHECK(dn_info(j, DN_POTRS, info));
    CUC_CHECK(dn_move_cols(j, 1, m.b, n, c0, c0 + m.nrhs));
  }
out:
  return rc;
}

int dn_potri(dn_job_t *j) {
  int rc = 0;
  CUC_CHECK(dn_potrf(j));
  rc = j->shape.potri_path == DN_POTRI_SOLVE ? by_solves(j) : by_potri(j);
out:
  return rc;
}
