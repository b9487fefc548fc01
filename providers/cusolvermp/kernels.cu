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

/* the global index of local index l: tiles dealt round-robin over np */
__device__ int64_t global_of(int64_t l, int64_t tile, int np, int me) {
  return (l / tile * np + me) * tile + l % tile;
}

template <typename T>
__global__ void zero_below(T *a, int64_t lld, int64_t lr, int64_t lc, int64_t tile, int nprow, int npcol, int myrow,
                           int mycol, int64_t n) {
  for (int64_t j = blockIdx.y * (int64_t)blockDim.y + threadIdx.y; j < lc; j += (int64_t)gridDim.y * blockDim.y) {
    int64_t gj = global_of(j, tile, npcol, mycol);
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < lr; i += (int64_t)gridDim.x * blockDim.x) {
      int64_t gi = global_of(i, tile, nprow, myrow);
      if (gi > gj && gi < n) a[i + j * lld] = T{};
    }
  }
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

extern "C" cudaError_t mp_zero_below(size_t esz, void *a, int64_t lld, int64_t lr, int64_t lc, int64_t tile, int nprow,
                                     int npcol, int myrow, int mycol, int64_t n, cudaStream_t stream) {
  if (lr <= 0 || lc <= 0) return cudaSuccess;
  if (tile < 1 || nprow < 1 || npcol < 1) return cudaErrorInvalidValue;
  dim3 block(32, 8);
  int64_t gx = (lr + 31) / 32, gy = (lc + 7) / 8;
  dim3 grid((unsigned)(gx < 1024 ? gx : 1024), (unsigned)(gy < 32768 ? gy : 32768));
  switch (esz) {
  case 4: zero_below<float><<<grid, block, 0, stream>>>((float *)a, lld, lr, lc, tile, nprow, npcol, myrow, mycol, n); break;
  case 8: zero_below<double><<<grid, block, 0, stream>>>((double *)a, lld, lr, lc, tile, nprow, npcol, myrow, mycol, n); break;
  case 16: zero_below<e16><<<grid, block, 0, stream>>>((e16 *)a, lld, lr, lc, tile, nprow, npcol, myrow, mycol, n); break;
  default: return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}
