/*
 * providers/common/rank.h - the rank rule of gels (muster.h): an m x n A
 * (m >= n) is refused as rank deficient when a diagonal entry of its QR
 * factor R has |R(k,k)| <= m * eps * max_i |R(i,i)| (an exact zero
 * included), the threshold numpy.linalg.lstsq and xGELSD use for the rank;
 * eps is the dtype's real epsilon.  Every provider that solves gels judges
 * R's diagonal here, wherever it computed it (the lapack provider on the
 * host, cusolverdn from the n entries copied back from its GPU).  Static
 * inline: providers link nothing of the runtime.
 */
#ifndef MUSTER_PROVIDERS_RANK_H
#define MUSTER_PROVIDERS_RANK_H

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>

#include "muster.h"

/* |x| of element i of an array of dtype t. */
static inline double muster__abs_at(muster_dtype_t t, const void *x, size_t i) {
  switch (t) {
  case MUSTER_F32: return fabs((double)((const float *)x)[i]);
  case MUSTER_F64: return fabs(((const double *)x)[i]);
  case MUSTER_C64: return hypot((double)((const float *)x)[2 * i], (double)((const float *)x)[2 * i + 1]);
  default: return hypot(((const double *)x)[2 * i], ((const double *)x)[2 * i + 1]);
  }
}

/* The rule as messages quote it. */
#define MUSTER__RANK_RULE "m * eps * max|R(i,i)|"

/* The threshold for R's diagonal of an m-row A of dtype t whose largest
 * |R(i,i)| is big: providers that find big themselves (across ranks) call
 * this, not a copy of the formula. */
static inline double muster__rank_floor(muster_dtype_t t, int64_t m, double big) {
  double eps = muster_dtype_real_bytes(t) == 4 ? FLT_EPSILON : DBL_EPSILON;
  return (double)m * eps * big;
}

/* 1 when |R(k,k)| = rkk fails the rule against floor (NaN included). */
static inline int muster__rank_fails(double rkk, double floor) { return !(rkk > floor); }

/* The detail of a column that fails (k 0-based), for err under the info > 0
 * contract (muster/provider.h: the runtime words "rank deficient"):
 * "|R(k,k)| = r <= m * eps * max|R(i,i)| = f; A is m x n", k 1-based. */
static inline void muster__rank_text(char *buf, size_t len, int64_t k, double rkk, double floor, int64_t m,
                                     int64_t n) {
  long long k1 = (long long)k + 1;
  snprintf(buf, len, "|R(%lld,%lld)| = %.3g <= " MUSTER__RANK_RULE " = %.3g; A is %lld x %lld", k1, k1, rkk,
           floor, (long long)m, (long long)n);
}

/* R's diagonal is diag[0], diag[stride], ... (n entries of dtype t; stride
 * ld + 1 on the factored matrix itself, 1 on a packed copy).  Returns the
 * first k (0-based) that fails the rule, -1 when R has full numerical
 * rank; *rkk gets |R(k,k)| and *floor the threshold, for the message. */
static inline int64_t muster__rank_deficient(muster_dtype_t t, const void *diag, int64_t stride, int64_t n,
                                             int64_t m, double *rkk, double *floor) {
  double big = 0;
  for (int64_t i = 0; i < n; i++) big = fmax(big, muster__abs_at(t, diag, (size_t)(i * stride)));
  *floor = muster__rank_floor(t, m, big);
  for (int64_t k = 0; k < n; k++) {
    *rkk = muster__abs_at(t, diag, (size_t)(k * stride));
    if (muster__rank_fails(*rkk, *floor)) return k;
  }
  return -1;
}

#endif
