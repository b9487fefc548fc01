/* providers/cusolverdn/kernels.h - the provider's own kernels (kernels.cu),
 * callable from C: the NaN/Inf check and the log det of scan.c. */
#ifndef MUSTER_DN_KERNELS_H
#define MUSTER_DN_KERNELS_H

#include <cuda_runtime_api.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* out[0] = the smallest column-major index c * m + r of an m x k matrix
 * (leading dimension ld) whose entry is NaN or Inf (a complex entry: either
 * part), UINT64_MAX where none; out must be set to all ones before
 * (cudaMemsetAsync 0xff).  dtype: muster's value (f32 / f64 for
 * eigenvalues).  The diagonal of an n x n matrix is m = 1, k = n,
 * ld = lda + 1. */
__attribute__((visibility("hidden"))) cudaError_t dn_scan_finite_launch(int dtype, const void *x, int64_t ld,
                                                                        int64_t m, int64_t k,
                                                                        unsigned long long *out,
                                                                        cudaStream_t stream);

/* out (device) = 2 sum_i log re(a(i,i)) of an n x n Cholesky factor a
 * (leading dimension ld), summed in double by one block: a float for
 * f32/c64, a double for f64/c128.  Ordered on stream; no host sync.  The
 * diagonal is known positive (potrf succeeded).  Nothing here is
 * cusolverdn's own: it could move to providers/cudacommon for the other
 * GPU providers. */
__attribute__((visibility("hidden"))) cudaError_t dn_logdet_launch(int dtype, const void *a, int64_t ld, int64_t n,
                                                                   void *out, cudaStream_t stream);

#ifdef __cplusplus
}
#endif
#endif
