/* providers/cusolvermg/kernels.h - the provider's CUDA kernel, callable from C. */
#ifndef MUSTER_CMG_KERNELS_H
#define MUSTER_CMG_KERNELS_H

#include <cuda_runtime_api.h>
#include <stdint.h>

#include "muster.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CMG_MAX_DEV 16 /* cuSolverMg's limit */

/* Column placement of a distributed matrix, as the mirror kernel sees it. */
typedef struct cmg_cols {
  int cyclic;          /* 0: blocks of `width` columns per rank; 1: cyclic tiles of `width` */
  int nranks;
  int64_t width;
  int64_t lda;
  void *ptr[CMG_MAX_DEV];
} cmg_cols_t;

/* Mirror the strictly lower triangle (conjugated) into the upper one, for
 * the columns rank `rank` owns; reads peers' memory (peer access on). */
__attribute__((visibility("hidden"))) cudaError_t cmg_symmetrize(int dtype, int64_t n,
                                                                 const cmg_cols_t *cols, int rank,
                                                                 cudaStream_t stream);

#ifdef __cplusplus
}
#endif
#endif
