/*
 * tools/muster/check.h - random test matrices and residual checks in plain
 * C (no BLAS), shared by `muster solve`, `muster bench` and the solve tests
 * (tests/integration/test_solve_check.c compiles check.c in).
 *
 * Matrices are column-major, any of the four dtypes; arithmetic is done in
 * double complex.  Generation is O(n^2) (N=4096 in well under a second);
 * checks of potri/syevd sample columns when n is large so they stay O(n^2).
 */
#ifndef MUSTER_CHECK_H
#define MUSTER_CHECK_H

#include <complex.h>
#include <stdint.h>

#include "muster.h"

typedef struct chk_rng { uint64_t s; } chk_rng_t;
void chk_seed(chk_rng_t *r, uint64_t seed);

/* Hermitian n x n with entries in [-1,1) (+ i[-1,1) off the diagonal for
 * complex dtypes); spd != 0 adds n (real) or 2n (complex) to the diagonal,
 * which makes it strictly diagonally dominant, hence positive definite and
 * well conditioned. */
void chk_random_hermitian(muster_dtype_t t, int64_t n, int spd, chk_rng_t *r, void *a, int64_t lda);
/* n x nrhs with entries in [-1,1). */
void chk_random_dense(muster_dtype_t t, int64_t n, int64_t nrhs, chk_rng_t *r, void *b, int64_t ldb);

/* General m x n (m >= n) with entries in [-1,1) (+ i[-1,1) for complex
 * dtypes) and n added to each A(i,i), i < n: well conditioned (its top n x n
 * block is diagonally dominant), neither symmetric nor definite.  For
 * getrs (m = n) and gels (m >= n). */
void chk_random_general(muster_dtype_t t, int64_t m, int64_t n, chk_rng_t *r, void *a, int64_t lda);

/* Element access in double complex. */
double complex chk_get(muster_dtype_t t, const void *base, int64_t ld, int64_t i, int64_t j);
void chk_set(muster_dtype_t t, void *base, int64_t ld, int64_t i, int64_t j, double complex v);
double chk_get_real(muster_dtype_t t, const void *w, int64_t i); /* eigenvalue i */

/* ||A||_F of rows x cols A (ld lda). */
double chk_norm_f(muster_dtype_t t, int64_t rows, int64_t cols, const void *a, int64_t lda);

/* Unit roundoff of the dtype, and the tolerance the checks use:
 * 64 * n * eps (f32: at least 1e-4 absolute floor for tiny n). */
double chk_eps(muster_dtype_t t);
double chk_tolerance(muster_dtype_t t, int64_t n);

/* potrs: ||A X - B||_F / (||A||_F ||X||_F) */
double chk_potrs(muster_dtype_t t, int64_t n, int64_t nrhs, const void *a, int64_t lda,
                 const void *x, int64_t ldx, const void *b, int64_t ldb);
/* getrs: the same residual as potrs, A general (an alias, for the reader) */
#define chk_getrs chk_potrs
/* gels (m x n A, m >= n): the normal-equations residual
 * ||A^H (A X - B)||_F / (||A||_F (||A||_F ||X||_F + ||B||_F)), which is
 * O(eps) for the least-squares X whatever the residual A X - B itself is. */
double chk_gels(muster_dtype_t t, int64_t m, int64_t n, int64_t nrhs, const void *a, int64_t lda,
                const void *x, int64_t ldx, const void *b, int64_t ldb);
/* The tolerance of chk_gels: 16 sqrt(m) eps.  Householder QR's X is the
 * exact least-squares solution of (A + dA, B + dB) with |dA|, |dB| of
 * gamma ~ eps relative (Higham, Thm 20.3), so
 * A^H (A X - B) = -dA^H (A X - B) - A^H (dA X - dB) + O(gamma^2) and the
 * ratio is at most about 2 gamma: no condition number of A enters (the
 * A^H A in front of X's error cancels the (A^H A)^-1 in it), unlike any
 * bound on X's error.  gamma's worst case grows like m n eps, the rounding
 * of m-term sums in practice like sqrt(m) eps.  Measured with the lapack
 * provider (4 dtypes, m x n from 1 x 1 to 3000 x 20, well conditioned,
 * random, and with rows or columns graded 1e-3 .. 1e3; 3,500 to 4,300
 * solves per dtype): at most 1.4 eps (m <= 7), falling with m (at most
 * 0.3 eps from m = 150): 12x below the bound or more everywhere.  A relative 1e-3 fails in f32 and c64 up to m =
 * 275 000 (64 m eps, the bound before, let it through from m = 132). */
double chk_gels_tolerance(muster_dtype_t t, int64_t m);
/* The tolerance of routine r's residual (chk_potrs, chk_getrs, chk_gels,
 * chk_potri, chk_syevd) for a matrix of `rows` rows: chk_gels_tolerance
 * for gels, else chk_tolerance. */
double chk_routine_tolerance(muster_routine_t r, muster_dtype_t t, int64_t rows);
/* log det A of a Hermitian positive definite A by an independent Cholesky
 * in double complex (plain C, O(n^3): for checks), NAN if it is not PD. */
double chk_logdet_hpd(muster_dtype_t t, int64_t n, const void *a, int64_t lda);
/* Tolerance of a log det computed in dtype t: n log terms, each with a
 * relative error of O(n eps) for the well-conditioned test matrices. */
double chk_logdet_tolerance(muster_dtype_t t, int64_t n, double ref);

/* How much `muster solve` checks (--check): nothing; the O(n^2)-per-rhs
 * residuals (potri and syevd on 32 columns spread over A when n is large,
 * log det against bounds); or in full (every column of potri and syevd,
 * log det against an independent O(n^3) Cholesky).  The tolerances are the
 * same at every level (chk_routine_tolerance, chk_logdet_tolerance). */
typedef enum chk_level { CHK_NONE = 0, CHK_RESIDUAL = 1, CHK_FULL = 2 } chk_level_t;
/* "none", "residual", "full" */
const char *chk_level_name(chk_level_t l);
/* 0 with *out, or -1 for a name that is none of them */
int chk_level_from_name(const char *s, chk_level_t *out);
/* The columns of potri's and syevd's checks at level l for n (n: all). */
int64_t chk_level_columns(chk_level_t l, muster_routine_t r, int64_t n);

/* log det A of a strictly diagonally dominant Hermitian positive definite
 * A lies in [*lo, *hi], in O(n^2): Hadamard's inequality (det A <= prod
 * a_ii) above, Ostrowski's (det A >= prod (a_ii - r_i), r_i the sum of
 * |a_ij| off the diagonal of row i) below; *lo is -INFINITY when A is not
 * strictly dominant.  The default check of potrs --logdet (the random test
 * matrices are dominant); --check=full compares with chk_logdet_hpd. */
void chk_logdet_bounds(muster_dtype_t t, int64_t n, const void *a, int64_t lda, double *lo, double *hi);

/* potri: max over sampled columns j of ||A inv_j - e_j|| / (||A||_F ||inv_j||)  (all
 * columns when n <= 512) */
double chk_potri(muster_dtype_t t, int64_t n, const void *a, int64_t lda, const void *inv,
                 int64_t ldi);
/* The same on `cols` columns spread over [0, n) (all when cols >= n). */
double chk_potri_cols(muster_dtype_t t, int64_t n, const void *a, int64_t lda, const void *inv,
                      int64_t ldi, int64_t cols);
/* syevd: max(||A v_j - l_j v_j|| / ||A||_F, |v_i^H v_j - d_ij|) over sampled j
 * (all when n <= 256), and w ascending; vectors NULL: only the eigenvalue
 * sum against trace(A) and ordering. */
double chk_syevd(muster_dtype_t t, int64_t n, const void *a, int64_t lda, const void *v,
                 int64_t ldv, const void *w);
/* The same on `cols` columns spread over [0, n) (all when cols >= n; the
 * orthonormality check is O(cols^2 n)). */
double chk_syevd_cols(muster_dtype_t t, int64_t n, const void *a, int64_t lda, const void *v,
                      int64_t ldv, const void *w, int64_t cols);

#endif
