/* providers/cusolverdn/kernels.h - the provider's own kernels (kernels.cu),
 * callable from C: the log det of scan.c (the NaN/Inf scan is cudacommon's). */
#ifndef MUSTER_DN_KERNELS_H
#define MUSTER_DN_KERNELS_H

#include <cuda_runtime_api.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

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
