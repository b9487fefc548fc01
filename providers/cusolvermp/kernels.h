/*
 * providers/cusolvermp/kernels.h - the gathers and scatters of a
 * redistribution (kernels.cu): a rows x cols block picked out of a
 * column-major matrix by index lists (device arrays of int64 local
 * indices), packed into a dense buffer, and back.  Elements are esz bytes
 * (4, 8 or 16: every muster dtype).  Both return the launch's status
 * (cudaErrorInvalidValue for another esz or a shape out of range) and are
 * ordered on stream.
 */
#ifndef MUSTER_MP_KERNELS_H
#define MUSTER_MP_KERNELS_H

#include <cuda_runtime_api.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* dst[i + j * ldd] = src[rows[i] + cols[j] * lds]; rows / cols NULL: the
 * identity (i, j themselves). */
__attribute__((visibility("hidden"))) cudaError_t mp_gather(size_t esz, void *dst, int64_t ldd, const void *src,
                                                            int64_t lds, const int64_t *rows, const int64_t *cols,
                                                            int64_t nrows, int64_t ncols, cudaStream_t stream);

/* dst[rows[i] + cols[j] * ldd] = src[i + j * lds]; NULL lists as above. */
__attribute__((visibility("hidden"))) cudaError_t mp_scatter(size_t esz, void *dst, int64_t ldd, const void *src,
                                                             int64_t lds, const int64_t *rows, const int64_t *cols,
                                                             int64_t nrows, int64_t ncols, cudaStream_t stream);

#ifdef __cplusplus
}
#endif
#endif
