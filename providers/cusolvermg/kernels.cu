// providers/cusolvermg/kernels.cu - the provider's one kernel: mirror the
// lower triangle of a distributed Hermitian matrix into its upper triangle
// (cuSolverMg's potri leaves only the lower triangle of A^-1).
//
// 32x32 tiles through shared memory so that both the read of A(c, i) (a row
// segment of the lower triangle, possibly on a peer GPU over NVLink) and the
// write of A(i, c) are coalesced.  Each device writes only the columns it
// owns and reads only the strictly lower triangle, which nobody writes, so
// all devices run at once without ordering.
#include <cuComplex.h>
#include <cuda_runtime.h>

#include "kernels.h"

namespace {

struct Where {
  int cyclic, nranks;
  long long width, lda;
};

__device__ __forceinline__ void owner(const Where &w, long long col, int *rank, long long *lcol) {
  if (w.cyclic) {
    long long j = col / w.width;
    *rank = (int)(j % w.nranks);
    *lcol = (j / w.nranks) * w.width + col % w.width;
  } else {
    *rank = (int)(col / w.width);
    *lcol = col % w.width;
  }
}

__device__ __forceinline__ float conjv(float x) { return x; }
__device__ __forceinline__ double conjv(double x) { return x; }
__device__ __forceinline__ cuFloatComplex conjv(cuFloatComplex x) { return cuConjf(x); }
__device__ __forceinline__ cuDoubleComplex conjv(cuDoubleComplex x) { return cuConj(x); }

struct Ptrs {
  void *p[CMG_MAX_DEV];
};

template <class T>
__global__ void mirror(long long n, Where w, Ptrs ptrs, int me) {
  __shared__ T tile[32][33];
  const long long i0 = (long long)blockIdx.x * 32;  // rows of the output (upper part)
  const long long c0 = (long long)blockIdx.y * 32;  // columns of the output
  if (i0 > c0 + 31) return;                          // entirely lower: nothing to write
  const int tx = threadIdx.x, ty = threadIdx.y;
  // read A(c0+tx, i0+k) (k = ty, ty+8, ...): column i0+k, rows c0..c0+31
  for (int k = ty; k < 32; k += 8) {
    long long col = i0 + k, row = c0 + tx;
    if (col < n && row < n && row > col) {
      int r;
      long long lc;
      owner(w, col, &r, &lc);
      tile[k][tx] = ((const T *)ptrs.p[r])[lc * w.lda + row];
    }
  }
  __syncthreads();
  // write A(i0+tx, c0+k) = conj(A(c0+k, i0+tx)) = conj(tile[tx][k])
  for (int k = ty; k < 32; k += 8) {
    long long col = c0 + k, row = i0 + tx;
    if (col >= n || row >= n || row >= col) continue;
    int r;
    long long lc;
    owner(w, col, &r, &lc);
    if (r != me) continue;
    ((T *)ptrs.p[r])[lc * w.lda + row] = conjv(tile[tx][k]);
  }
}

}  // namespace

extern "C" cudaError_t cmg_symmetrize(int dtype, int64_t n, const cmg_cols_t *cols, int rank,
                                      cudaStream_t stream) {
  Where w{cols->cyclic, cols->nranks, (long long)cols->width, (long long)cols->lda};
  Ptrs p;
  for (int r = 0; r < CMG_MAX_DEV; r++) p.p[r] = r < cols->nranks ? cols->ptr[r] : nullptr;
  long long tiles = (n + 31) / 32;
  if (tiles > 65535) return cudaErrorInvalidValue;  // grid.y limit: n > 2 097 120
  dim3 grid((unsigned)tiles, (unsigned)tiles), block(32, 8);
  switch (dtype) {
  case MUSTER_F32: mirror<float><<<grid, block, 0, stream>>>(n, w, p, rank); break;
  case MUSTER_F64: mirror<double><<<grid, block, 0, stream>>>(n, w, p, rank); break;
  case MUSTER_C64: mirror<cuFloatComplex><<<grid, block, 0, stream>>>(n, w, p, rank); break;
  case MUSTER_C128: mirror<cuDoubleComplex><<<grid, block, 0, stream>>>(n, w, p, rank); break;
  default: return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}
