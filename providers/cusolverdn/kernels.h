/* providers/cusolverdn/kernels.h - the provider's own kernels (kernels.cu),
 * callable from C: the log det of scan.c, and the element-wise steps of
 * geqrf and polar (factors.c); the NaN/Inf scan is cudacommon's. */
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

/* dst (rows x cols, ld ldd) <- the upper trapezoid of src (ld lds), zeros
 * below the diagonal: R from geqrf's output.  src == dst (same ld) zeroes
 * in place.  Ordered on stream. */
__attribute__((visibility("hidden"))) cudaError_t dn_upper_launch(int dtype, const void *src, int64_t lds, void *dst,
                                                                  int64_t ldd, int64_t rows, int64_t cols,
                                                                  cudaStream_t stream);

/* x (rows x cols, ld ld) <- diag(s) x: row i times the real s[i] (a float
 * for f32/c64, a double for f64/c128).  Ordered on stream. */
__attribute__((visibility("hidden"))) cudaError_t dn_scale_rows_launch(int dtype, void *x, int64_t ld, int64_t rows,
                                                                       int64_t cols, const void *s,
                                                                       cudaStream_t stream);

/* h (n x n, ld n) <- (h + h^H) / 2: exactly Hermitian (a real diagonal),
 * where a product left it so only to rounding.  Ordered on stream. */
__attribute__((visibility("hidden"))) cudaError_t dn_hermitize_launch(int dtype, void *h, int64_t n,
                                                                      cudaStream_t stream);

#ifdef __cplusplus
}
#endif
#endif
