/* providers/cusolverdn/potrs.c - the Cholesky drivers: potrf with its
 * checks (also the first half of potri), and potrs with X replicated to
 * every rank, log det A (MUSTER_LOGDET) likewise, and L scattered back
 * (job.h). */
#include <inttypes.h>

#include "job.h"

/* Where potrf stopped on NaN/Inf input rather than on a matrix that is
 * not positive definite.  A NaN/Inf in A's lower triangle turns up in L:
 * in its row's later entries and on that row's diagonal (every later entry
 * of the row is computed from it).  So: info 0 with a NaN/Inf on the
 * diagonal, or info k > 0 with one on the diagonal before row k, or in row
 * k left of the failing pivot, is NaN/Inf input.  The failing pivot itself
 * is not looked at: what cusolverDn leaves there for a negative pivot is
 * its business.  *row: the first such row (1-based), 0 for none. */
static int nonfinite_row(dn_job_t *j, int info, int64_t *row) {
  int rc = 0;
  int64_t r, k, n = info > 0 ? info - 1 : j->a->n;
  *row = 0;
  CUC_CHECK(dn_scan_finite(j, (int)j->a->dtype, j->A, j->lda + 1, 1, n, &r, &k));
  if (k >= 0) {
    *row = k + 1;
    return 0;
  }
  if (info > 1) { /* row info-1 (0-based), columns 0 .. info-2 */
    CUC_CHECK(dn_scan_finite(j, (int)j->a->dtype, (char *)j->A + (size_t)(info - 1) * j->esz, j->lda, 1, info - 1,
                             &r, &k));
    if (k >= 0) *row = info;
  }
out:
  return rc;
}

/* potrf on j->A: 0, MUSTER_ENONFINITE (NaN/Inf in A, as the lapack provider
 * reports it), or info k > 0 as MUSTER_ENOTPD (leading minor k). */
int dn_potrf(dn_job_t *j) {
  int rc = 0, info = 0;
  int64_t row;
  dn_call_t m = {.op = DN_POTRF};
  CUC_CHECK(dn_run(j, &m, &info));
  CUC_CHECK(nonfinite_row(j, info, &row));
  if (row > 0) {
    *j->call->info = 0;
    return cuc_fail(j->E, MUSTER_ENONFINITE, "NaN/Inf in A: %s on device %d found it in row %" PRId64 " of the factor "
                    "(info %d)", dn_op_name(DN_POTRF), j->dev, row, info);
  }
  rc = dn_info(j, DN_POTRF, info);
out:
  return rc;
}

/* log det A from the factor's diagonal into a rank's w on the target (the
 * home rank's) or the context's w buffer, then into every rank's w. */
static int put_logdet(dn_job_t *j) {
  int rc = 0;
  void *out = j->home >= 0 ? j->call->shards[j->home].w : NULL;
  if (!out) {
    CUC_CHECK(cuc_grow_checked(j->dev, &j->d->w, &j->d->w_bytes, j->rsz, "the log det", j->E));
    out = j->d->w;
  }
  CUC_CHECK(dn_logdet(j, out));
  rc = dn_replicate_w(j, out, 1);
out:
  return rc;
}

int dn_potrs(dn_job_t *j) {
  int rc = 0, info = 0;
  int64_t row, col;
  dn_call_t m = {.op = DN_POTRS, .nrhs = j->a->nrhs};
  CUC_CHECK(dn_potrf(j));
  CUC_CHECK(dn_rhs_on_target(j, &m.b, &m.ldb));
  CUC_CHECK(dn_run(j, &m, &info));
  CUC_CHECK(dn_info(j, DN_POTRS, info));
  CUC_CHECK(dn_scan_finite(j, (int)j->a->dtype, m.b, m.ldb, j->a->n, j->a->nrhs, &row, &col));
  if (row >= 0)
    return cuc_fail(j->E, MUSTER_ENONFINITE, "NaN/Inf in the solution X at row %" PRId64 ", column %" PRId64
                    " (NaN/Inf in B?)", row + 1, col + 1);
  CUC_CHECK(dn_replicate_x(j, m.b, m.ldb));
  if (j->a->flags & MUSTER_LOGDET) CUC_CHECK(put_logdet(j));
  /* MUSTER_NO_FACTOR: the caller wants X only, A's content is then
   * unspecified: the gathered copy's factor stays on the target */
  if (!j->shape.in_place && !(j->a->flags & MUSTER_NO_FACTOR)) CUC_CHECK(dn_move_cols(j, 1, j->A, j->lda, 0, j->a->n));
out:
  return rc;
}
