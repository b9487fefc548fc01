/* providers/cusolvermg/kernels.h - the provider's CUDA kernels, callable from C. */
#ifndef MUSTER_CMG_KERNELS_H
#define MUSTER_CMG_KERNELS_H

#include <cuda_runtime_api.h>
#include <stdint.h>

#include "muster.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CMG_MAX_DEV 16 /* cuSolverMg's limit */

/* Upper triangle of one column tile from its gathered lower counterpart:
 * dst(i, c) = conj(stage(c, i)) for 0 <= c < wc, 0 <= i < row0 + c, where
 * stage is wc x (row0 + wc) with leading dimension wc (stage(c, i) =
 * A(row0 + c, i), the tile's rows of the lower triangle, gathered from
 * every GPU by copies) and dst points at the tile's first column (rows
 * from 0, leading dimension lda).  Only local memory: works for IPC
 * mappings, which a kernel of another GPU may not reach. */
__attribute__((visibility("hidden"))) cudaError_t cmg_mirror_tile(int dtype, const void *stage, int64_t wc,
                                                                  int64_t row0, void *dst, int64_t lda,
                                                                  cudaStream_t stream);

/* Columns c0 .. c0 + w - 1 of the n x n identity as an lda x w panel:
 * panel(c0 + k, k) = 1 for k < w, every other entry of the lda x w panel
 * 0 (rows n .. lda - 1 included).  Ordered on stream. */
__attribute__((visibility("hidden"))) cudaError_t cmg_identity_panel(int dtype, void *panel, int64_t lda,
                                                                     int64_t c0, int64_t w,
                                                                     cudaStream_t stream);

#ifdef __cplusplus
}
#endif
#endif
