/*
 * providers/cusolvermg/diag.h - what a factor's diagonal says, read from a
 * host copy of its n entries (leader_solve.c's cmg_solve_diag fetches them
 * from the tiles on the GPUs: one strided copy per tile, no pass over the
 * matrix).  Pure host arithmetic, no CUDA, so it is unit-tested on machines
 * without a GPU (tests/unit/test_cmg_diag.c compiles diag.c in).
 *
 *   potrf   L's diagonal: the first entry that is not positive (the leading
 *           minor that failed, when cuSolverMg does not say), and
 *           log det A = 2 sum log L(k,k)
 *   getrf   U's diagonal: the first exact zero (a singular A, when
 *           cuSolverMg does not say) and the first NaN/Inf (NaN in A
 *           reaches U's diagonal through the elimination)
 */
#ifndef MUSTER_CMG_DIAG_H
#define MUSTER_CMG_DIAG_H

#include <stdint.h>

#include "muster.h"

enum {
  CMG_DIAG_NOT_POSITIVE, /* real part <= 0, or NaN                         */
  CMG_DIAG_ZERO,         /* exactly 0 (both parts for a complex type)      */
  CMG_DIAG_NONFINITE     /* NaN or Inf in either part                      */
};

/* The first k (0-based) whose entry d[k] (dtype t, n entries) is `what`
 * (CMG_DIAG_*), or -1 when none is. */
int64_t cmg_diag_first(muster_dtype_t t, const void *d, int64_t n, int what);

/* log det A = 2 sum_k log re L(k,k) from a Cholesky factor's diagonal,
 * summed in double whatever t.  Its entries must all be positive (the
 * factorization succeeded). */
double cmg_diag_chol_logdet(muster_dtype_t t, const void *d, int64_t n);

#endif
