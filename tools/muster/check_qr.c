/* tools/muster/check_qr.c - see check_qr.h. */
#include <math.h>
#include <stdlib.h>

#include <string.h>

#include "check_qr.h"
#include "muster/layout.h" /* muster_routine_outputs */

/* ||A - B diag(d) C||_F / ||A||_F: B rows x inner, C inner x cols, d NULL
 * for none (reals of t's precision otherwise). */
static double product_residual(muster_dtype_t t, int64_t rows, int64_t cols, int64_t inner,
                               const void *a, int64_t lda, const void *b, int64_t ldb,
                               const double *d, const void *c, int64_t ldc) {
  double s = 0, na = chk_norm_f(t, rows, cols, a, lda);
  for (int64_t j = 0; j < cols; j++)
    for (int64_t i = 0; i < rows; i++) {
      double complex v = chk_get(t, a, lda, i, j);
      for (int64_t l = 0; l < inner; l++)
        v -= chk_get(t, b, ldb, i, l) * (d ? d[l] : 1.0) * chk_get(t, c, ldc, l, j);
      s += creal(v) * creal(v) + cimag(v) * cimag(v);
    }
  return na > 0 ? sqrt(s) / na : sqrt(s);
}

/* max |X^H X - I| over the cols columns of X (rows x cols), or with `rows_of`
 * over its rows (X X^H - I, rows x rows). */
static double orthogonality(muster_dtype_t t, int64_t rows, int64_t cols, const void *x, int64_t ldx,
                            int rows_of) {
  int64_t count = rows_of ? rows : cols, len = rows_of ? cols : rows;
  double worst = 0;
  for (int64_t p = 0; p < count; p++)
    for (int64_t q = p; q < count; q++) {
      double complex dot = 0;
      for (int64_t l = 0; l < len; l++)
        dot += rows_of ? chk_get(t, x, ldx, p, l) * conj(chk_get(t, x, ldx, q, l))
                       : conj(chk_get(t, x, ldx, l, p)) * chk_get(t, x, ldx, l, q);
      double e = cabs(dot - (p == q ? 1.0 : 0.0));
      if (e > worst) worst = e;
    }
  return worst;
}

static double max2(double a, double b) { return a > b ? a : b; }

double chk_qr(muster_dtype_t t, int64_t m, int64_t n, const void *a, int64_t lda, const void *q,
              int64_t ldq, int64_t qcols, const void *r, int64_t ldr) {
  for (int64_t j = 0; j < n; j++)
    for (int64_t i = j + 1; i < qcols; i++)
      if (chk_get(t, r, ldr, i, j) != 0) return INFINITY; /* R upper trapezoidal */
  return max2(product_residual(t, m, n, qcols, a, lda, q, ldq, NULL, r, ldr),
              orthogonality(t, m, qcols, q, ldq, 0));
}

double chk_svd(muster_dtype_t t, int64_t m, int64_t n, const void *a, int64_t lda, const void *s,
               const void *u, int64_t ldu, int64_t ucols, const void *vh, int64_t ldvh, int64_t vrows) {
  int64_t k = m < n ? m : n;
  double *d = malloc((size_t)k * sizeof *d), sum2 = 0, res;
  if (!d) return INFINITY;
  for (int64_t i = 0; i < k; i++) {
    d[i] = chk_get_real(t, s, i);
    sum2 += d[i] * d[i];
    if (!(d[i] >= 0) || (i > 0 && d[i] > d[i - 1])) {
      free(d);
      return INFINITY; /* not descending, negative or NaN */
    }
  }
  if (!u || !vh) {
    double na = chk_norm_f(t, m, n, a, lda);
    res = na > 0 ? fabs(sum2 - na * na) / (na * na) : sqrt(sum2);
  } else {
    res = max2(product_residual(t, m, n, k, a, lda, u, ldu, d, vh, ldvh),
               max2(orthogonality(t, m, ucols, u, ldu, 0), orthogonality(t, vrows, n, vh, ldvh, 1)));
  }
  free(d);
  return res;
}

double chk_polar(muster_dtype_t t, int64_t m, int64_t n, const void *a, int64_t lda, const void *up,
                 int64_t ldup, const void *h, int64_t ldh) {
  double asym = 0, nh = chk_norm_f(t, n, n, h, ldh);
  for (int64_t j = 0; j < n; j++) {
    double complex hjj = chk_get(t, h, ldh, j, j);
    double floor = chk_factor_tolerance(t, m, n) * nh;
    if (fabs(cimag(hjj)) > floor || creal(hjj) < -floor) return INFINITY;
    for (int64_t i = j + 1; i < n; i++) {
      double complex e = chk_get(t, h, ldh, i, j) - conj(chk_get(t, h, ldh, j, i));
      asym += 2 * (creal(e) * creal(e) + cimag(e) * cimag(e));
    }
  }
  double res = product_residual(t, m, n, n, a, lda, up, ldup, NULL, h, ldh);
  res = max2(res, orthogonality(t, m, n, up, ldup, m < n));
  return max2(res, nh > 0 ? sqrt(asym) / nh : 0);
}

double chk_factor_tolerance(muster_dtype_t t, int64_t m, int64_t n) {
  return chk_tolerance(t, m > n ? m : n);
}

double chk_factors(muster_dtype_t t, int routine, unsigned flags, int64_t m, int64_t n, const void *a,
                   const void *after, const void *b, const void *w) {
  size_t esz = muster_dtype_size(t);
  muster_outputs_t o;
  if (muster_routine_outputs(routine, flags, m, n, &o) < 0) return INFINITY;
  const char *p0 = (const char *)b + (size_t)o.part[0].offset * esz;
  const char *p1 = (const char *)b + (size_t)o.part[1].offset * esz;
  if (!o.a_holds && memcmp(after, a, (size_t)(m * n) * esz)) return INFINITY;
  switch (routine) {
  case MUSTER_GEQRF:
    return o.a_holds == MUSTER_FACTOR_Q ? chk_qr(t, m, n, a, m, after, m, n, p0, n)
                                        : chk_qr(t, m, n, a, m, p0, m, m, after, m);
  case MUSTER_GESVD:
    if (o.nparts == 0) return chk_svd(t, m, n, a, m, w, NULL, 0, 0, NULL, 0, 0);
    if (o.nparts == 2) return chk_svd(t, m, n, a, m, w, p0, m, m, p1, n, n);
    if (m >= n) return chk_svd(t, m, n, a, m, w, after, m, n, p0, n, n);
    return chk_svd(t, m, n, a, m, w, p0, m, m, after, m, m);
  default: return chk_polar(t, m, n, a, m, after, m, p0, n);
  }
}
