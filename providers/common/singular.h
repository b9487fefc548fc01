/*
 * providers/common/singular.h - the singularity rule of getrs (muster.h,
 * docs/routines.md): after LU with partial pivoting, PA = LU, A is refused
 * as singular at the first column k whose pivot has
 *
 *     |U(k,k)| <= 2 n eps max_{i <= k} |U(i,k)|
 *
 * (an exact zero included; eps the dtype's real epsilon, as gels's rank
 * rule in rank.h).  Why this scale and this size:
 *   - U's own column k (on and above the diagonal) is the scale: scaling a
 *     column of A scales the same column of U and changes no pivot choice,
 *     so a well-conditioned A with columns of any magnitudes passes.  A
 *     global max_i |U(i,i)| would call columns scaled 1e-8 .. 1e8 singular.
 *   - zeroing U(k,k) changes only column k of PA, each entry by at most
 *     |U(k,k)| (|L| <= 1), and leaves it exactly singular; under the rule
 *     that change is within a few times LU's own backward error
 *     (|dA| <= gamma_n |L||U|, gamma_n ~ n eps / 2): the factors cannot tell A
 *     from a singular matrix.
 *   - a column that is a combination of earlier ones (two equal columns, a
 *     column = 2 x another) leaves a pivot at rounding level, not 0: at most
 *     0.99 n eps max|U(1:k,k)| measured (lapack, 4 dtypes, n = 2..4000),
 *     0.34 n eps from n = 16; the factor 2 keeps it under the rule
 *     (docs/routines.md has the numbers, and the false positives).
 * Every provider with getrs judges U's diagonal here, wherever it computed
 * the factor (host, or the n diagonal entries and column scales copied back
 * from GPUs).  Static inline: providers link nothing of the runtime.
 */
#ifndef MUSTER_PROVIDERS_SINGULAR_H
#define MUSTER_PROVIDERS_SINGULAR_H

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>

#include "muster.h"
#include "rank.h" /* muster__abs_at */

/* The rule as messages quote it. */
#define MUSTER__LU_RULE "2 n eps max_{i<=k} |U(i,k)|"

/* The threshold for a pivot of column scale `scale` (max_{i<=k} |U(i,k)|)
 * in an n x n factor of dtype t. */
static inline double muster__lu_floor(muster_dtype_t t, int64_t n, double scale) {
  double eps = muster_dtype_real_bytes(t) == 4 ? FLT_EPSILON : DBL_EPSILON;
  return 2.0 * (double)n * eps * scale;
}

/* 1 when pivot |U(k,k)| = ukk fails the rule against *floor (set here).
 * A NaN/Inf pivot or scale is not judged (0): callers report non-finite
 * factors as such. */
static inline int muster__lu_pivot_small(muster_dtype_t t, int64_t n, double ukk, double scale, double *floor) {
  *floor = muster__lu_floor(t, n, scale);
  return isfinite(ukk) && isfinite(*floor) && ukk <= *floor;
}

/* scale[k] = max_{i<=k} |U(i,k)| for every column k of the factored
 * column-major n x n matrix lu (leading dimension ld): the part of column
 * k on and above the diagonal.  A distributed factor takes the same max
 * over the entries each place holds (global row <= global column). */
static inline void muster__lu_scales(muster_dtype_t t, const void *lu, int64_t ld, int64_t n, double *scale) {
  for (int64_t k = 0; k < n; k++) {
    scale[k] = 0.0;
    for (int64_t i = 0; i <= k; i++) scale[k] = fmax(scale[k], muster__abs_at(t, lu, (size_t)(k * ld + i)));
  }
}

/* The first `count` entries of U's diagonal diag[0], diag[stride], ...
 * (dtype t; U is n x n) against the column scales (muster__lu_scales): the
 * first k (0-based) that fails the rule, -1 when none does; *ukk gets
 * |U(k,k)| and *floor the threshold, for the message.  count < n: a
 * library that stopped at an exact zero pivot (info = count + 1) factored
 * only the columns before it. */
static inline int64_t muster__lu_singular(muster_dtype_t t, const void *diag, int64_t stride, int64_t n,
                                          int64_t count, const double *scale, double *ukk, double *floor) {
  for (int64_t k = 0; k < count; k++) {
    *ukk = muster__abs_at(t, diag, (size_t)(k * stride));
    if (muster__lu_pivot_small(t, n, *ukk, scale[k], floor)) return k;
  }
  return -1;
}

/* The detail of a pivot that fails (k 0-based), for err under the info > 0
 * contract (muster/provider.h: the runtime words "singular"): "U(k,k) is
 * exactly zero" or "|U(k,k)| = u <= 2 n eps max_{i<=k} |U(i,k)| = f", k
 * 1-based, as every provider gives it. */
static inline void muster__lu_singular_text(char *buf, size_t len, int64_t k, double ukk, double floor) {
  long long k1 = (long long)k + 1;
  if (ukk == 0.0)
    snprintf(buf, len, "U(%lld,%lld) is exactly zero", k1, k1);
  else
    snprintf(buf, len, "|U(%lld,%lld)| = %.3g <= " MUSTER__LU_RULE " = %.3g", k1, k1, ukk, floor);
}

#endif
