/*
 * providers/lapack/lapackInt.h - private to the lapack provider.
 *
 * The provider gathers every rank's host shard into one packed column-major
 * n x n matrix (lda = n), runs LAPACKE on it, and scatters the result back.
 * shards.c moves columns (block or cyclic, via runtime/base/layout.h's inline
 * helpers) and checks inputs; lapack.c holds the hooks and the routines.
 */
#ifndef MUSTER_LAPACK_INT_H
#define MUSTER_LAPACK_INT_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <lapacke.h>

#include "muster/provider.h"
#include "muster/layout.h"
#include "../common/finite.h" /* muster__find_nonfinite */

#define LP_HIDDEN __attribute__((visibility("hidden")))

/* Every buffer handed to LAPACK/BLAS is allocated with this much slack past
 * its end.  Why: OpenBLAS 0.3.21's Haswell gemv kernels (cgemv_n under
 * cgebrd/clabrd, seen by valgrind on 2026-11-27) read up to 32 bytes past
 * the end of the matrix they are given; a large buffer (mmap'd, ending on a
 * page boundary) then faults now and then (1 run in 12 of the c64 gesvd
 * cases of gpu-dn-selfcheck crashed; none with the slack).  One page. */
#define LP_OVERREAD_PAD 4096
static inline void *lp_alloc(size_t bytes) { return malloc(bytes + LP_OVERREAD_PAD); }

/* Write the provider's message into call->err (when there is one) and
 * return code. */
LP_HIDDEN int lp_err(const muster_provider_call_t *call, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Check the shards against args and the shape rank 0's ldb gives (memory
 * kind, pointers, lda/ldb, gels's m the same on every rank, columns
 * covering [0, n) exactly once, cyclic widths).  0 or a code + message. */
LP_HIDDEN int lp_check_shards(const muster_provider_call_t *call, const muster_shape_t *sh0);

/* full (rows x n, ld rows) <- every shard's A, all of it (getrs, gels):
 * 1 and the first NaN/Inf's global (row, col), or 0. */
LP_HIDDEN int lp_gather_full(const muster_provider_call_t *call, void *full, int64_t rows,
                             size_t esz, int64_t *row, int64_t *col);

/* full (n x n, lda n) <- the lower triangle of every shard's A (all LAPACK
 * reads with uplo = 'L'; the upper triangle of full is left as it was),
 * checking each column as it lands: 1 and the first NaN/Inf's global
 * (row, col) (the gather stops there), or 0. */
LP_HIDDEN int lp_gather_lower(const muster_provider_call_t *call, void *full, size_t esz,
                              int64_t *row, int64_t *col);
/* Every shard's A <- full: the lower triangle only, or everything. */
LP_HIDDEN void lp_scatter(const muster_provider_call_t *call, const void *full, size_t esz,
                          int lower);

/* Every shard's A <- full (rows x n, ld rows): whole columns. */
LP_HIDDEN void lp_scatter_rows(const muster_provider_call_t *call, const void *full, int64_t rows,
                               size_t esz);

/* Rank whose shard holds global column gcol (for messages). */
LP_HIDDEN int lp_owner(const muster_provider_call_t *call, int64_t gcol);


/* ---- shared by the routines (lapack.c, general.c) ------------------------ */

/* LAPACK routine prefix of a dtype: s, d, c, z. */
static inline char lp_prefix(muster_dtype_t t) { return "?sdcz"[t]; }

/* A LAPACKE failure that is not a matrix property: an argument error
 * (info < 0) or LAPACKE's own workspace allocation failing. */
LP_HIDDEN int lp_lapacke_failed(const muster_provider_call_t *call, const char *what, int info);

/* A result with NaN/Inf is an error (MUSTER_ENONFINITE), never a success. */
LP_HIDDEN int lp_check_result(const muster_provider_call_t *call, muster_dtype_t t, const char *what,
                              const void *m, int64_t rows, int64_t cols);

/* *x <- a packed malloc'ed copy of rank 0's B (rows x nrhs; B is replicated,
 * rank 0's copy is the input), refused with NaN/Inf.  0 or a code. */
LP_HIDDEN int lp_take_b(const muster_provider_call_t *call, int64_t rows, size_t esz, void **x);

/* Every shard's B <- the first `rows` rows of x (ld ldx): X on every rank. */
LP_HIDDEN void lp_put_x(const muster_provider_call_t *call, const void *x, int64_t ldx,
                        int64_t rows, size_t esz);

/* potri after potrf: full (n x n, ld n) holds L; its lower triangle <-
 * that of inv(A) = inv(L)^H inv(L) (inverse.c).  0 or a code + message. */
LP_HIDDEN int lp_potri_from_factor(const muster_provider_call_t *call, void *full);

/* getrf + getrs (getrs) and geqrf + ormqr/unmqr + trtrs (gels) on full,
 * the gathered A (ld = its rows); A's shards are never written. */
LP_HIDDEN int lp_run_getrs(const muster_provider_call_t *call, void *full, size_t esz);
LP_HIDDEN int lp_run_gels(const muster_provider_call_t *call, void *full, int64_t m, size_t esz);

/* ---- geqrf, gesvd, polar (factors.c, qr.c, svd.c, polar.c) ---------------- */

/* xGEQRF on a (m x n, ld m), tau: min(m, n) scalars (also gels's). */
LP_HIDDEN lapack_int lp_geqrf(muster_dtype_t t, lapack_int m, lapack_int n, void *a, void *tau);

/* The computed factors, each packed (ld = its rows): the one for A (NULL
 * when A keeps its values), those for B in muster_outputs_t's order, the
 * reals for W. */
typedef struct lp_factors {
  const void *a;
  const void *b[2];
  const void *w;
} lp_factors_t;

/* *full <- a malloc'ed m x n gather of A (ld m), refused with NaN/Inf
 * (MUSTER_ENONFINITE naming the element and its rank).  The caller frees
 * *full, also on error. */
LP_HIDDEN int lp_factor_begin(const muster_provider_call_t *call, const muster_outputs_t *o, void **full);
/* rc (an earlier failure), or MUSTER_ENONFINITE when a factor has NaN/Inf;
 * else the factors written where o says (A's shards, every B, every W)
 * and 0. */
LP_HIDDEN int lp_factor_end(const muster_provider_call_t *call, const muster_outputs_t *o,
                            const lp_factors_t *f, int rc);

/* The thin ('S'), full ('A') or values-only ('N') SVD of full (m x n, ld
 * m, destroyed): s (min(m,n) reals), u (ld m), vt (ld: its rows).  0, or
 * MUSTER_EPROVIDER with *info when it does not converge. */
LP_HIDDEN int lp_svd(const muster_provider_call_t *call, char job, int64_t m, int64_t n, void *full,
                     void *s, void *u, void *vt);

/* The routines, with o from muster_routine_outputs (m = rank 0's ldb). */
LP_HIDDEN int lp_run_geqrf(const muster_provider_call_t *call, const muster_outputs_t *o);
LP_HIDDEN int lp_run_gesvd(const muster_provider_call_t *call, const muster_outputs_t *o);
LP_HIDDEN int lp_run_polar(const muster_provider_call_t *call, const muster_outputs_t *o);

#endif
