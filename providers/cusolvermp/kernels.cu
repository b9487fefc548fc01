/* providers/cusolvermp/kernels.cu - gathers and scatters by index lists
 * (kernels.h).  One thread per element, a 2-D grid of 32 x 8 blocks; x runs
 * down a column so neighbouring threads touch neighbouring rows. */
#include "kernels.h"

namespace {

struct e16 {
  double re, im;
};

template <typename T, bool SCATTER>
__global__ void move(T *dst, int64_t ldd, const T *src, int64_t lds, const int64_t *rows, const int64_t *cols,
                     int64_t nrows, int64_t ncols) {
  for (int64_t j = blockIdx.y * (int64_t)blockDim.y + threadIdx.y; j < ncols; j += (int64_t)gridDim.y * blockDim.y) {
    int64_t cj = cols ? cols[j] : j;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < nrows;
         i += (int64_t)gridDim.x * blockDim.x) {
      int64_t ri = rows ? rows[i] : i;
      if (SCATTER)
        dst[ri + cj * ldd] = src[i + j * lds];
      else
        dst[i + j * ldd] = src[ri + cj * lds];
    }
  }
}

template <bool SCATTER>
cudaError_t launch(size_t esz, void *dst, int64_t ldd, const void *src, int64_t lds, const int64_t *rows,
                   const int64_t *cols, int64_t nrows, int64_t ncols, cudaStream_t stream) {
  if (nrows <= 0 || ncols <= 0) return cudaSuccess;
  dim3 block(32, 8);
  int64_t gx = (nrows + 31) / 32, gy = (ncols + 7) / 8;
  dim3 grid((unsigned)(gx < 1024 ? gx : 1024), (unsigned)(gy < 32768 ? gy : 32768));
  switch (esz) {
  case 4:
    move<float, SCATTER><<<grid, block, 0, stream>>>((float *)dst, ldd, (const float *)src, lds, rows, cols, nrows,
                                                     ncols);
    break;
  case 8:
    move<double, SCATTER><<<grid, block, 0, stream>>>((double *)dst, ldd, (const double *)src, lds, rows, cols,
                                                      nrows, ncols);
    break;
  case 16:
    move<e16, SCATTER><<<grid, block, 0, stream>>>((e16 *)dst, ldd, (const e16 *)src, lds, rows, cols, nrows, ncols);
    break;
  default: return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

} // namespace

extern "C" cudaError_t mp_gather(size_t esz, void *dst, int64_t ldd, const void *src, int64_t lds,
                                 const int64_t *rows, const int64_t *cols, int64_t nrows, int64_t ncols,
                                 cudaStream_t stream) {
  return launch<false>(esz, dst, ldd, src, lds, rows, cols, nrows, ncols, stream);
}

extern "C" cudaError_t mp_scatter(size_t esz, void *dst, int64_t ldd, const void *src, int64_t lds,
                                  const int64_t *rows, const int64_t *cols, int64_t nrows, int64_t ncols,
                                  cudaStream_t stream) {
  return launch<true>(esz, dst, ldd, src, lds, rows, cols, nrows, ncols, stream);
}
