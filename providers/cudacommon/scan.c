/* providers/cudacommon/scan.c - cuc_first_nonfinite (cudacommon.h): the
 * NaN/Inf check of a matrix on its GPU, one kernel (kernels.cu) and one
 * word read back. */
#include <stdint.h>

#include "cudacommon.h"

int cuc_first_nonfinite(int dev, int dtype, const void *x, int64_t ld, int64_t m, int64_t k, void **word,
                        size_t *have, cudaStream_t s, int64_t *row, int64_t *col, cuc_err_t *E) {
  int rc = 0;
  unsigned long long got = UINT64_MAX;
  *row = *col = -1;
  if (m <= 0 || k <= 0) return 0;
  CUC_CU(dev, cudaSetDevice(dev));
  CUC_CHECK(cuc_grow(dev, word, have, sizeof got, E));
  CUC_CU(dev, cudaMemsetAsync(*word, 0xff, sizeof got, s));
  CUC_CU(dev, cuc_scan_finite_launch(dtype, x, ld, m, k, (unsigned long long *)*word, s));
  CUC_CU(dev, cudaMemcpyAsync(&got, *word, sizeof got, cudaMemcpyDeviceToHost, s));
  CUC_CU(dev, cudaStreamSynchronize(s));
  if (got != UINT64_MAX) {
    *row = (int64_t)(got % (unsigned long long)m);
    *col = (int64_t)(got / (unsigned long long)m);
  }
out:
  return rc;
}
