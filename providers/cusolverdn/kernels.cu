// providers/cusolverdn/kernels.cu - the provider's kernels on the target GPU
// (kernels.h): the first NaN/Inf of a matrix (a result, or the diagonal of
// a factor), found with one atomicMin on a word the host reads back (no
// copy of the matrix); and potrs's log det from the factor's diagonal.
#include <cuComplex.h>
#include <cuda_runtime.h>

#include "kernels.h"
#include "muster.h"

namespace {

// Complex entries are finite when both parts are.
__device__ __forceinline__ bool finite(float x) { return isfinite(x); }
__device__ __forceinline__ bool finite(double x) { return isfinite(x); }
__device__ __forceinline__ bool finite(cuFloatComplex x) { return isfinite(cuCrealf(x)) && isfinite(cuCimagf(x)); }
__device__ __forceinline__ bool finite(cuDoubleComplex x) { return isfinite(cuCreal(x)) && isfinite(cuCimag(x)); }

template <class T>
__global__ void scan_finite(const T *__restrict__ x, long long ld, long long m, long long total,
                            unsigned long long *out) {
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < total;
       i += (long long)gridDim.x * blockDim.x) {
    long long c = i / m, r = i % m;
    if (!finite(x[c * ld + r])) atomicMin(out, (unsigned long long)i);
  }
}

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

unsigned blocks_for(long long work) {
  long long b = (work + 255) / 256;
  return (unsigned)(b < 1 ? 1 : b > 4096 ? 4096 : b);
}

}  // namespace

extern "C" cudaError_t dn_scan_finite_launch(int dtype, const void *x, int64_t ld, int64_t m, int64_t k,
                                             unsigned long long *out, cudaStream_t s) {
  long long total = (long long)m * k;
  if (total <= 0) return cudaSuccess;
  unsigned g = blocks_for(total);
  switch (dtype) {
  case MUSTER_F32: scan_finite<<<g, 256, 0, s>>>((const float *)x, ld, m, total, out); break;
  case MUSTER_F64: scan_finite<<<g, 256, 0, s>>>((const double *)x, ld, m, total, out); break;
  case MUSTER_C64: scan_finite<<<g, 256, 0, s>>>((const cuFloatComplex *)x, ld, m, total, out); break;
  case MUSTER_C128: scan_finite<<<g, 256, 0, s>>>((const cuDoubleComplex *)x, ld, m, total, out); break;
  default: return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
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
