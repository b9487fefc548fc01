// providers/cusolverdn/kernels.cu - the provider's check on the target GPU
// (kernels.h): the first NaN/Inf of a matrix (a result, or the diagonal of
// a factor), found with one atomicMin on a word the host reads back (no
// copy of the matrix).
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
