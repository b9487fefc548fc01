// providers/cusolverdn/kernels.cu - the provider's own kernels on the target
// GPU (kernels.h): potrs's log det from the factor's diagonal; R's upper
// trapezoid, a row scaling and the Hermitian part for geqrf and polar.  The
// NaN/Inf scan is cudacommon's (cuc_scan_finite_launch).
#include <cuComplex.h>
#include <cuda_runtime.h>

#include "kernels.h"
#include "muster.h"

namespace {

// The real part of an entry, in double.
__device__ __forceinline__ double real_of(float x) { return x; }
__device__ __forceinline__ double real_of(double x) { return x; }
__device__ __forceinline__ double real_of(cuFloatComplex x) { return cuCrealf(x); }
__device__ __forceinline__ double real_of(cuDoubleComplex x) { return cuCreal(x); }

constexpr int kLogdetThreads = 256;

// One block: each thread sums the logs of a strided part of the diagonal,
// then a tree in shared memory; thread 0 writes 2 * sum as R.
template <class T, class R>
__global__ void logdet_diag(const T *__restrict__ a, long long ld, long long n, R *out) {
  __shared__ double part[kLogdetThreads];
  double s = 0;
  for (long long i = threadIdx.x; i < n; i += blockDim.x) s += log(real_of(a[i * (ld + 1)]));
  part[threadIdx.x] = s;
  __syncthreads();
  for (int w = blockDim.x / 2; w > 0; w >>= 1) {
    if ((int)threadIdx.x < w) part[threadIdx.x] += part[threadIdx.x + w];
    __syncthreads();
  }
  if (threadIdx.x == 0) *out = (R)(2.0 * part[0]);
}

// Element-wise helpers on real and complex entries.
__device__ __forceinline__ float scaled(float x, float s) { return x * s; }
__device__ __forceinline__ double scaled(double x, double s) { return x * s; }
__device__ __forceinline__ cuFloatComplex scaled(cuFloatComplex x, float s) { return make_cuFloatComplex(x.x * s, x.y * s); }
__device__ __forceinline__ cuDoubleComplex scaled(cuDoubleComplex x, double s) { return make_cuDoubleComplex(x.x * s, x.y * s); }
__device__ __forceinline__ float conj_of(float x) { return x; }
__device__ __forceinline__ double conj_of(double x) { return x; }
__device__ __forceinline__ cuFloatComplex conj_of(cuFloatComplex x) { return cuConjf(x); }
__device__ __forceinline__ cuDoubleComplex conj_of(cuDoubleComplex x) { return cuConj(x); }
__device__ __forceinline__ float half_sum(float a, float b) { return 0.5f * (a + b); }
__device__ __forceinline__ double half_sum(double a, double b) { return 0.5 * (a + b); }
__device__ __forceinline__ cuFloatComplex half_sum(cuFloatComplex a, cuFloatComplex b) { return scaled(cuCaddf(a, b), 0.5f); }
__device__ __forceinline__ cuDoubleComplex half_sum(cuDoubleComplex a, cuDoubleComplex b) { return scaled(cuCadd(a, b), 0.5); }
template <class T> __device__ __forceinline__ T zero_of() { return T(); }

constexpr int kTile = 16; // 2-D launches: kTile x kTile threads a block, grid-stride loops

template <class T>
__global__ void upper(const T *src, long long lds, T *dst, long long ldd, long long rows, long long cols) {
  for (long long j = blockIdx.y * (long long)blockDim.y + threadIdx.y; j < cols; j += (long long)gridDim.y * blockDim.y)
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < rows; i += (long long)gridDim.x * blockDim.x)
      dst[i + j * ldd] = i <= j ? src[i + j * lds] : zero_of<T>();
}

template <class T, class R>
__global__ void scale_rows(T *x, long long ld, long long rows, long long cols, const R *s) {
  for (long long j = blockIdx.y * (long long)blockDim.y + threadIdx.y; j < cols; j += (long long)gridDim.y * blockDim.y)
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < rows; i += (long long)gridDim.x * blockDim.x)
      x[i + j * ld] = scaled(x[i + j * ld], s[i]);
}

// Each (i, j) with i >= j: both mirror entries from their mean.
template <class T>
__global__ void hermitize(T *h, long long n) {
  for (long long j = blockIdx.y * (long long)blockDim.y + threadIdx.y; j < n; j += (long long)gridDim.y * blockDim.y)
    for (long long i = j + blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
      T v = half_sum(h[i + j * n], conj_of(h[j + i * n]));
      h[i + j * n] = v;
      h[j + i * n] = conj_of(v);
    }
}

dim3 grid_of(long long rows, long long cols) {
  long long gx = (rows + kTile - 1) / kTile, gy = (cols + kTile - 1) / kTile;
  return dim3((unsigned)(gx < 1024 ? (gx > 0 ? gx : 1) : 1024), (unsigned)(gy < 1024 ? (gy > 0 ? gy : 1) : 1024));
}

}  // namespace

#define DN_DISPATCH(dtype, LAUNCH)                                   \
  switch (dtype) {                                                   \
  case MUSTER_F32: LAUNCH(float, float); break;                      \
  case MUSTER_F64: LAUNCH(double, double); break;                    \
  case MUSTER_C64: LAUNCH(cuFloatComplex, float); break;             \
  case MUSTER_C128: LAUNCH(cuDoubleComplex, double); break;          \
  default: return cudaErrorInvalidValue;                             \
  }                                                                  \
  return cudaGetLastError()

extern "C" cudaError_t dn_upper_launch(int dtype, const void *src, int64_t lds, void *dst, int64_t ldd, int64_t rows,
                                       int64_t cols, cudaStream_t s) {
  if (rows < 1 || cols < 1) return cudaSuccess;
#define L(T, R) upper<<<grid_of(rows, cols), dim3(kTile, kTile), 0, s>>>((const T *)src, lds, (T *)dst, ldd, rows, cols)
  DN_DISPATCH(dtype, L);
#undef L
}

extern "C" cudaError_t dn_scale_rows_launch(int dtype, void *x, int64_t ld, int64_t rows, int64_t cols,
                                            const void *sv, cudaStream_t s) {
  if (rows < 1 || cols < 1) return cudaSuccess;
#define L(T, R) scale_rows<<<grid_of(rows, cols), dim3(kTile, kTile), 0, s>>>((T *)x, ld, rows, cols, (const R *)sv)
  DN_DISPATCH(dtype, L);
#undef L
}

extern "C" cudaError_t dn_hermitize_launch(int dtype, void *h, int64_t n, cudaStream_t s) {
  if (n < 1) return cudaSuccess;
#define L(T, R) hermitize<<<grid_of(n, n), dim3(kTile, kTile), 0, s>>>((T *)h, n)
  DN_DISPATCH(dtype, L);
#undef L
}

extern "C" cudaError_t dn_logdet_launch(int dtype, const void *a, int64_t ld, int64_t n, void *out, cudaStream_t s) {
  const int t = kLogdetThreads;
  switch (dtype) {
  case MUSTER_F32: logdet_diag<<<1, t, 0, s>>>((const float *)a, ld, n, (float *)out); break;
  case MUSTER_F64: logdet_diag<<<1, t, 0, s>>>((const double *)a, ld, n, (double *)out); break;
  case MUSTER_C64: logdet_diag<<<1, t, 0, s>>>((const cuFloatComplex *)a, ld, n, (float *)out); break;
  case MUSTER_C128: logdet_diag<<<1, t, 0, s>>>((const cuDoubleComplex *)a, ld, n, (double *)out); break;
  default: return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}
