/*
 * tools/muster/check_qr.h - residual checks of geqrf, gesvd and polar, in
 * plain C like check.h (double complex arithmetic, any dtype), shared by
 * `muster solve` and the tests (which compile check_qr.c in).
 *
 * Every check returns the largest of a few relative quantities, each a
 * backward error or a loss of orthogonality: ||A - Q R||_F / ||A||_F and
 * ||Q^H Q - I||_max for Householder QR, ||A - U S V^H||_F / ||A||_F and the
 * orthogonality of U and V for the SVD, ||A - U_p H||_F / ||A||_F, the
 * orthogonality of U_p and ||H - H^H||_F / ||H||_F for the polar factors.
 * None of them grows with cond(A) (the algorithms are backward stable and
 * their factors orthonormal to rounding whatever A is, rank-deficient
 * included), so chk_factor_tolerance has no condition factor: it is
 * chk_tolerance (64 max(m, n) eps).  A structural error (R not upper
 * triangular, singular values not descending or negative, H's diagonal not
 * real) returns INFINITY.  Each check is O(m n k), k = min(m, n).
 */
#ifndef MUSTER_CHECK_QR_H
#define MUSTER_CHECK_QR_H

#include "check.h"

/* A (m x n) = Q R with Q m x q (q = k or m), R q x n upper trapezoidal. */
double chk_qr(muster_dtype_t t, int64_t m, int64_t n, const void *a, int64_t lda, const void *q,
              int64_t ldq, int64_t qcols, const void *r, int64_t ldr);
/* A = U S V^H on the first k singular triplets: u m x ucols (ucols k or
 * m), vh vrows x n (vrows k or n), s k reals of the dtype's precision,
 * descending and >= 0.  u and vh NULL (values only): sum s_i^2 against
 * ||A||_F^2, relative. */
double chk_svd(muster_dtype_t t, int64_t m, int64_t n, const void *a, int64_t lda, const void *s,
               const void *u, int64_t ldu, int64_t ucols, const void *vh, int64_t ldvh, int64_t vrows);
/* A = U_p H: up m x n (orthonormal columns, or rows when m < n), h n x n
 * Hermitian with a diagonal real and nonnegative to rounding (within
 * chk_factor_tolerance ||H||_F). */
double chk_polar(muster_dtype_t t, int64_t m, int64_t n, const void *a, int64_t lda, const void *up,
                 int64_t ldup, const void *h, int64_t ldh);
/* The result of a geqrf, gesvd or polar call (routine and flags as
 * passed) on a (m x n, ld m), read where muster_routine_outputs puts it:
 * after, A's factor as the shards held it reassembled (m x n, ld m), b
 * rank 0's B (packed, ld m), w its W.  The routine's check above; a
 * changed A where the rule keeps it, or no such routine: INFINITY. */
double chk_factors(muster_dtype_t t, int routine, unsigned flags, int64_t m, int64_t n, const void *a,
                   const void *after, const void *b, const void *w);
/* The tolerance of the three: chk_tolerance(t, max(m, n)). */
double chk_factor_tolerance(muster_dtype_t t, int64_t m, int64_t n);

#endif
