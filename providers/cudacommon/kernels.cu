// providers/cudacommon/kernels.cu - the kernels GPU providers share
// (cudacommon.h, "kernels").
//
// cuc_identity_panel: a panel of identity columns, the right-hand side of
// an inverse computed by solves (cusolvermg's potri on 2+ GPUs, cusolverdn's
// potri "solve" path).
//
// cuc_mirror_lower: the upper triangle of a block of columns of a Hermitian
// matrix from its lower counterpart (the potri routines leave only the
// lower triangle).  The kernel reads `stage` and writes `dst`, both local
// memory of the GPU it runs on: cusolvermg first gathers the lower rows of a
// tile into a staging buffer with copies (which reach peers' and
// IPC-mapped memory alike), cusolverdn passes the matrix itself (stage =
// dst, lds = lda).  32x32 tiles through shared memory keep the read of
// stage (contiguous in c) and the write of dst (contiguous in i) coalesced.
//
// cuc_scan_finite_launch: the first NaN/Inf of a matrix (an input, a
// result, a factor's diagonal), found with one atomicMin on a word the host
// reads back (cuc_first_nonfinite, scan.c): no copy of the matrix.
//
// cuc_upper_colmax_launch: the largest |U(i,k)|, i <= k, of each column k
// of a piece of an LU factor (getrs's singularity rule,
// providers/common/singular.h): one block per column, a warp reduction,
// one atomicMax per warp on the bits of a non-negative double.
#include <cuComplex.h>
#include <cuda_runtime.h>

#include "cudacommon.h"

namespace {

// Complex entries are finite when both parts are.
__device__ __forceinline__ bool finite(float x) { return isfinite(x); }
__device__ __forceinline__ bool finite(double x) { return isfinite(x); }
__device__ __forceinline__ bool finite(cuFloatComplex x) { return isfinite(cuCrealf(x)) && isfinite(cuCimagf(x)); }
__device__ __forceinline__ bool finite(cuDoubleComplex x) { return isfinite(cuCreal(x)) && isfinite(cuCimag(x)); }

__device__ __forceinline__ double absv(float x) { return fabs((double)x); }
__device__ __forceinline__ double absv(double x) { return fabs(x); }
__device__ __forceinline__ double absv(cuFloatComplex x) { return hypot((double)cuCrealf(x), (double)cuCimagf(x)); }
__device__ __forceinline__ double absv(cuDoubleComplex x) { return hypot(cuCreal(x), cuCimag(x)); }

// blockDim.x a multiple of 32.  Local rows map to increasing global rows,
// so a thread stops at its first row below the diagonal.  fmax drops NaN.
template <class T>
__global__ void upper_colmax(const T *__restrict__ a, long long ld, long long rows, long long cols, cuc_cyclic_t rmap,
                             cuc_cyclic_t cmap, long long n, unsigned long long *out) {
  for (long long c = blockIdx.x; c < cols; c += gridDim.x) {
    const long long g = cuc_cyclic_global(cmap, c);
    if (g >= n) continue; // padding: the same for the whole block
    double big = 0.0;
    for (long long r = (long long)blockIdx.y * blockDim.x + threadIdx.x; r < rows;
         r += (long long)gridDim.y * blockDim.x) {
      if (cuc_cyclic_global(rmap, r) > g) break;
      big = fmax(big, absv(a[c * ld + r]));
    }
    for (int off = 16; off > 0; off >>= 1) big = fmax(big, __shfl_down_sync(0xffffffffu, big, off));
    if ((threadIdx.x & 31) == 0 && big > 0.0) atomicMax(out + g, (unsigned long long)__double_as_longlong(big));
  }
}

template <class T>
__global__ void scan_finite(const T *__restrict__ x, long long ld, long long m, long long total,
                            unsigned long long *out) {
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < total;
       i += (long long)gridDim.x * blockDim.x) {
    long long c = i / m, r = i % m;
    if (!finite(x[c * ld + r])) atomicMin(out, (unsigned long long)i);
  }
}

__device__ __forceinline__ float conjv(float x) { return x; }
__device__ __forceinline__ double conjv(double x) { return x; }
__device__ __forceinline__ cuFloatComplex conjv(cuFloatComplex x) { return cuConjf(x); }
__device__ __forceinline__ cuDoubleComplex conjv(cuDoubleComplex x) { return cuConj(x); }

template <class T>
__global__ void mirror(const T *stage, long long lds, long long wc, long long row0, T *dst, long long lda) {
  __shared__ T tile[32][33];
  const long long c0 = (long long)blockIdx.x * 32;  // columns of dst (rows of stage)
  const long long i0 = (long long)blockIdx.y * 32;  // rows of dst (columns of stage)
  const int tx = threadIdx.x, ty = threadIdx.y;
  const long long rows = row0 + wc;
  if (i0 >= row0 + c0 + 31) return;  // every (i, c) of this block has i >= row0 + c: lower part
  for (int k = ty; k < 32; k += 8) {  // tile[k][tx] = stage(c0 + tx, i0 + k)
    long long c = c0 + tx, i = i0 + k;
    if (c < wc && i < rows && i < row0 + c) tile[k][tx] = stage[i * lds + c];
  }
  __syncthreads();
  for (int k = ty; k < 32; k += 8) {  // dst(i0 + tx, c0 + k) = conj(stage(c0 + k, i0 + tx))
    long long c = c0 + k, i = i0 + tx;
    if (c < wc && i < row0 + c) dst[c * lda + i] = conjv(tile[tx][k]);
  }
}

// One thread per panel row; the ones sit at (c0 + k, k).
template <class T>
__global__ void identity(T *__restrict__ panel, long long lda, long long c0, long long w, T one, T zero) {
  const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= lda) return;
  for (long long k = 0; k < w; k++) panel[k * lda + i] = (i == c0 + k) ? one : zero;
}

}  // namespace

extern "C" cudaError_t cuc_identity_panel(int dtype, void *panel, int64_t lda, int64_t c0, int64_t w,
                                          cudaStream_t stream) {
  if (lda <= 0 || w <= 0) return cudaSuccess;
  const unsigned block = 256;
  const unsigned grid = (unsigned)((lda + block - 1) / block);
  switch (dtype) {
  case MUSTER_F32: identity<float><<<grid, block, 0, stream>>>((float *)panel, lda, c0, w, 1.0f, 0.0f); break;
  case MUSTER_F64: identity<double><<<grid, block, 0, stream>>>((double *)panel, lda, c0, w, 1.0, 0.0); break;
  case MUSTER_C64:
    identity<cuFloatComplex><<<grid, block, 0, stream>>>((cuFloatComplex *)panel, lda, c0, w, make_cuFloatComplex(1, 0),
                                                         make_cuFloatComplex(0, 0));
    break;
  case MUSTER_C128:
    identity<cuDoubleComplex><<<grid, block, 0, stream>>>((cuDoubleComplex *)panel, lda, c0, w,
                                                          make_cuDoubleComplex(1, 0), make_cuDoubleComplex(0, 0));
    break;
  default: return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

extern "C" cudaError_t cuc_mirror_lower(int dtype, const void *stage, int64_t lds, int64_t wc, int64_t row0, void *dst,
                                        int64_t lda, cudaStream_t stream) {
  long long rows = row0 + wc;
  long long gy = (rows + 31) / 32, gx = (wc + 31) / 32;
  if (wc <= 0) return cudaSuccess;
  if (gy > 65535 || gx > 2147483647LL) return cudaErrorInvalidValue;  // rows > 2 097 120
  dim3 grid((unsigned)gx, (unsigned)gy), block(32, 8);
  switch (dtype) {
  case MUSTER_F32:
    mirror<float><<<grid, block, 0, stream>>>((const float *)stage, lds, wc, row0, (float *)dst, lda);
    break;
  case MUSTER_F64:
    mirror<double><<<grid, block, 0, stream>>>((const double *)stage, lds, wc, row0, (double *)dst, lda);
    break;
  case MUSTER_C64:
    mirror<cuFloatComplex><<<grid, block, 0, stream>>>((const cuFloatComplex *)stage, lds, wc, row0,
                                                       (cuFloatComplex *)dst, lda);
    break;
  case MUSTER_C128:
    mirror<cuDoubleComplex><<<grid, block, 0, stream>>>((const cuDoubleComplex *)stage, lds, wc, row0,
                                                        (cuDoubleComplex *)dst, lda);
    break;
  default: return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

extern "C" cudaError_t cuc_scan_finite_launch(int dtype, const void *x, int64_t ld, int64_t m, int64_t k,
                                              unsigned long long *out, cudaStream_t s) {
  long long total = (long long)m * k;
  if (total <= 0) return cudaSuccess;
  long long b = (total + 255) / 256;
  unsigned g = (unsigned)(b < 1 ? 1 : b > 4096 ? 4096 : b);
  switch (dtype) {
  case MUSTER_F32: scan_finite<<<g, 256, 0, s>>>((const float *)x, ld, m, total, out); break;
  case MUSTER_F64: scan_finite<<<g, 256, 0, s>>>((const double *)x, ld, m, total, out); break;
  case MUSTER_C64: scan_finite<<<g, 256, 0, s>>>((const cuFloatComplex *)x, ld, m, total, out); break;
  case MUSTER_C128: scan_finite<<<g, 256, 0, s>>>((const cuDoubleComplex *)x, ld, m, total, out); break;
  default: return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

extern "C" cudaError_t cuc_upper_colmax_launch(int dtype, const void *a, int64_t ld, int64_t rows, int64_t cols,
                                               cuc_cyclic_t rmap, cuc_cyclic_t cmap, int64_t n,
                                               unsigned long long *out, cudaStream_t s) {
  if (rows <= 0 || cols <= 0) return cudaSuccess;
  if (rmap.nb <= 0 || cmap.nb <= 0 || rmap.nprocs <= 0 || cmap.nprocs <= 0) return cudaErrorInvalidValue;
  const unsigned block = 256;
  long long gy = (rows + 4 * block - 1) / (4 * block); // about 4 rows per thread
  dim3 grid((unsigned)(cols < 65536 ? cols : 65536), (unsigned)(gy < 1 ? 1 : gy > 64 ? 64 : gy));
#define COLMAX_ARGS(T)                                                                                       \
  (const T *)a, ld, rows, cols, rmap, cmap, n, out
  switch (dtype) {
  case MUSTER_F32: upper_colmax<<<grid, block, 0, s>>>(COLMAX_ARGS(float)); break;
  case MUSTER_F64: upper_colmax<<<grid, block, 0, s>>>(COLMAX_ARGS(double)); break;
  case MUSTER_C64: upper_colmax<<<grid, block, 0, s>>>(COLMAX_ARGS(cuFloatComplex)); break;
  case MUSTER_C128: upper_colmax<<<grid, block, 0, s>>>(COLMAX_ARGS(cuDoubleComplex)); break;
  default: return cudaErrorInvalidValue;
  }
#undef COLMAX_ARGS
  return cudaGetLastError();
}
