/*
 * providers/lapack/lapackInt.h - private to the lapack provider.
 *
 * The provider gathers every rank's host shard into one packed column-major
 * n x n matrix (lda = n), runs LAPACKE on it, and scatters the result back.
 * shards.c moves columns (block or cyclic, via runtime/layout.h's inline
 * helpers) and checks inputs; lapack.c holds the hooks and the routines.
 */
#ifndef MUSTER_LAPACK_INT_H
#define MUSTER_LAPACK_INT_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "muster/provider.h"
#include "muster/layout.h"
#include "../common/finite.h" /* muster__find_nonfinite */

#define LP_HIDDEN __attribute__((visibility("hidden")))

/* Write the provider's message into call->err (when there is one) and
 * return code. */
LP_HIDDEN int lp_err(const muster_provider_call_t *call, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Check the shards against args (memory kind, pointers, lda/ldb, columns
 * covering [0, n) exactly once, cyclic widths).  0 or a code + message. */
LP_HIDDEN int lp_check_shards(const muster_provider_call_t *call);

/* full (n x n, lda n) <- the lower triangle of every shard's A (all LAPACK
 * reads with uplo = 'L'; the upper triangle of full is left as it was),
 * checking each column as it lands: 1 and the first NaN/Inf's global
 * (row, col) (the gather stops there), or 0. */
LP_HIDDEN int lp_gather_lower(const muster_provider_call_t *call, void *full, size_t esz,
                              int64_t *row, int64_t *col);
/* Every shard's A <- full: the lower triangle only, or everything. */
LP_HIDDEN void lp_scatter(const muster_provider_call_t *call, const void *full, size_t esz,
                          int lower);

/* Rank whose shard holds global column gcol (for messages). */
LP_HIDDEN int lp_owner(const muster_provider_call_t *call, int64_t gcol);


#endif
