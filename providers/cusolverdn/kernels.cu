// providers/cusolverdn/kernels.cu - the provider's own kernel on the target
// GPU (kernels.h): potrs's log det from the factor's diagonal.  The NaN/Inf
// scan is cudacommon's (cuc_scan_finite_launch).
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

}  // namespace

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
