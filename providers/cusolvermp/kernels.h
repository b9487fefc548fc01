/*
 * providers/cusolvermp/kernels.h - the gathers and scatters of a
 * redistribution (kernels.cu), and gels's clearing of a triangle: a rows x cols block picked out of a
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

/* Zero this rank's entries of a 2-D block-cyclic matrix (square tile,
 * grid nprow x npcol, this rank at myrow, mycol; local piece lr x lc,
 * leading dimension lld) that lie below the diagonal in its first n rows:
 * global (i, j) with j < i < n.  gels (gels.c) turns geqrf's output into R
 * alone, so that an unpivoted LU solve on it is R's triangular solve. */
__attribute__((visibility("hidden"))) cudaError_t mp_zero_below(size_t esz, void *a, int64_t lld, int64_t lr,
                                                                int64_t lc, int64_t tile, int nprow, int npcol,
                                                                int myrow, int mycol, int64_t n, cudaStream_t stream);

#ifdef __cplusplus
}
#endif
#endif
