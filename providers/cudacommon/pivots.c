/* providers/cudacommon/pivots.c - cuc_upper_colmax (cudacommon.h): the
 * column scales of getrs's singularity rule (providers/common/singular.h)
 * from a piece of an LU factor on its GPU, one kernel (kernels.cu) and n
 * words read back. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cudacommon.h"

int cuc_upper_colmax(int dev, int dtype, const void *a, int64_t ld, int64_t rows, int64_t cols, cuc_cyclic_t rmap,
                     cuc_cyclic_t cmap, int64_t n, void **buf, size_t *have, cudaStream_t s, double *host,
                     cuc_err_t *E) {
  int rc = 0;
  size_t bytes = (size_t)n * sizeof(double);
  double *got = malloc(bytes ? bytes : 1);
  if (!got) return cuc_fail(E, MUSTER_ENOMEM, "cannot allocate %lld column scales", (long long)n);
  CUC_CU(dev, cudaSetDevice(dev));
  CUC_CHECK(cuc_grow(dev, buf, have, bytes, E));
  CUC_CU(dev, cudaMemsetAsync(*buf, 0, bytes, s));
  CUC_CU(dev, cuc_upper_colmax_launch(dtype, a, ld, rows, cols, rmap, cmap, n, (unsigned long long *)*buf, s));
  CUC_CU(dev, cudaMemcpyAsync(got, *buf, bytes, cudaMemcpyDeviceToHost, s));
  CUC_CU(dev, cudaStreamSynchronize(s));
  for (int64_t k = 0; k < n; k++) host[k] = fmax(host[k], got[k]);
out:
  free(got);
  return rc;
}
