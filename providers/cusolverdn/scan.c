/* providers/cusolverdn/scan.c - the small kernels on the target (job.h):
 * the NaN/Inf check (one word read back) and potrs's log det (kernels.cu). */
#include <inttypes.h>
#include <string.h>

#include "job.h"
#include "kernels.h"

int dn_scan_finite(dn_job_t *j, int dtype, const void *x, int64_t ld, int64_t m, int64_t k, int64_t *row,
                   int64_t *col) {
  int rc = 0;
  cuc_err_t *E = j->E;
  dn_dev_t *d = j->d;
  /* the word follows the info int in the context's small buffer */
  unsigned long long *word = (unsigned long long *)((char *)d->scan + 8), got = 0;
  CUC_CU(j->dev, cudaMemsetAsync(word, 0xff, sizeof *word, d->stream));
  CUC_CU(j->dev, cuc_scan_finite_launch(dtype, x, ld, m, k, word, d->stream));
  CUC_CU(j->dev, cudaMemcpyAsync((char *)d->hscan + 8, word, sizeof *word, cudaMemcpyDeviceToHost, d->stream));
  CUC_CHECK(dn_sync_solver(j));
  memcpy(&got, (char *)d->hscan + 8, sizeof got);
  *row = got == UINT64_MAX ? -1 : (int64_t)(got % (unsigned long long)m);
  *col = got == UINT64_MAX ? -1 : (int64_t)(got / (unsigned long long)m);
out:
  return rc;
}

int dn_refuse_nonfinite(dn_job_t *j, const char *what, const void *x, int64_t ld, int64_t rows, int64_t cols) {
  int rc = 0;
  int64_t row, col;
  CUC_CHECK(dn_scan_finite(j, (int)j->a->dtype, x, ld, rows, cols, &row, &col));
  if (row >= 0)
    return cuc_fail(j->E, MUSTER_ENONFINITE, "NaN/Inf in %s at row %" PRId64 ", column %" PRId64 " (device %d)", what,
                    row + 1, col + 1, j->dev);
out:
  return rc;
}

int dn_logdet(dn_job_t *j, void *out) {
  int rc = 0;
  cuc_err_t *E = j->E;
  CUC_CU(j->dev, dn_logdet_launch((int)j->a->dtype, j->A, j->lda, j->a->n, out, j->d->stream));
  rc = dn_sync_solver(j); /* the copies to the ranks run on other streams */
out:
  return rc;
}
