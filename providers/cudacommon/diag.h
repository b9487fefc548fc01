/*
 * providers/cudacommon/diag.h - what a factor's diagonal says, read from a
 * host copy of its entries (the GPU providers fetch them from the tiles on
 * the GPUs, one strided copy per tile, no pass over the matrix: cusolvermg
 * all n of them, cusolvermp each rank its own).  Pure host arithmetic, no
 * CUDA, so it is unit-tested on machines without a GPU
 * (tests/unit/test_cuc_diag.c links its host object, providers/cudacommon/SConscript).
 *
 *   potrf   L's diagonal: the first entry that is not positive (the leading
 *           minor that failed, when cuSolverMg does not say), and
 *           log det A = 2 sum log L(k,k)
 *   getrf   U's diagonal: the first exact zero (a singular A, when
 *           cuSolverMg does not say) and the first NaN/Inf (NaN in A
 *           reaches U's diagonal through the elimination)
 */
#ifndef MUSTER_CUC_DIAG_H
#define MUSTER_CUC_DIAG_H

#include <stdint.h>

#include "muster.h"

#define CUC_DIAG_HIDDEN __attribute__((visibility("hidden")))

enum {
  CUC_DIAG_NOT_POSITIVE, /* real part <= 0, or NaN                         */
  CUC_DIAG_ZERO,         /* exactly 0 (both parts for a complex type)      */
  CUC_DIAG_NONFINITE     /* NaN or Inf in either part                      */
};

/* The first k (0-based) whose entry d[k] (dtype t, n entries) is `what`
 * (CUC_DIAG_*), or -1 when none is. */
CUC_DIAG_HIDDEN int64_t cuc_diag_first(muster_dtype_t t, const void *d, int64_t n, int what);

/* log det A = 2 sum_k log re L(k,k) from (a part of) a Cholesky factor's
 * diagonal, summed in double whatever t.  Its entries must all be
 * positive (the factorization succeeded). */
CUC_DIAG_HIDDEN double cuc_diag_chol_logdet(muster_dtype_t t, const void *d, int64_t n);

#endif
