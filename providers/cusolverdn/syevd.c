/* providers/cusolverdn/syevd.c - the eigensolver: cusolverDnXsyevd
 * (vectors unless MUSTER_NO_VECTORS), the eigenvalues checked and copied
 * to every rank's w, the vectors scattered back (job.h). */
#include <inttypes.h>

#include "job.h"

int dn_syevd(dn_job_t *j) {
  int rc = 0, info = 0;
  int64_t k, unused;
  const int vectors = !(j->a->flags & MUSTER_NO_VECTORS);
  dn_call_t m = {.op = DN_SYEVD, .jobz = vectors ? CUSOLVER_EIG_MODE_VECTOR : CUSOLVER_EIG_MODE_NOVECTOR};
  if (j->home >= 0) { /* the eigenvalues land in a rank's w on the target */
    m.w = j->call->shards[j->home].w;
  } else {
    CUC_CHECK(
        cuc_grow_checked(j->dev, &j->d->w, &j->d->w_bytes, (size_t)j->a->n * j->rsz, "the eigenvalues", j->E));
    m.w = j->d->w;
  }
  CUC_CHECK(dn_run(j, &m, &info));
  CUC_CHECK(dn_info(j, DN_SYEVD, info));
  CUC_CHECK(dn_scan_finite(j, j->rsz == 4 ? MUSTER_F32 : MUSTER_F64, m.w, j->a->n, j->a->n, 1, &k, &unused));
  if (k >= 0)
    return cuc_fail(j->E, MUSTER_ENONFINITE, "NaN/Inf in the eigenvalues at %" PRId64 " (NaN/Inf in A?)", k + 1);
  CUC_CHECK(dn_replicate_w(j, m.w, j->a->n));
  /* with MUSTER_NO_VECTORS A's content is unspecified: nothing goes back */
  if (vectors && !j->shape.in_place) CUC_CHECK(dn_move_cols(j, 1, j->A, j->lda, 0, j->a->n));
out:
  return rc;
}
