/* providers/cusolverdn/scan.c - the NaN/Inf check on the target (job.h):
 * one kernel (kernels.cu), one word read back. */
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
  CUC_CU(j->dev, dn_scan_finite_launch(dtype, x, ld, m, k, word, d->stream));
  CUC_CU(j->dev, cudaMemcpyAsync((char *)d->hscan + 8, word, sizeof *word, cudaMemcpyDeviceToHost, d->stream));
  CUC_CHECK(dn_sync_solver(j));
  memcpy(&got, (char *)d->hscan + 8, sizeof got);
  *row = got == UINT64_MAX ? -1 : (int64_t)(got % (unsigned long long)m);
  *col = got == UINT64_MAX ? -1 : (int64_t)(got / (unsigned long long)m);
out:
  return rc;
}
