/* tools/muster/check.c - see check.h. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

void chk_seed(chk_rng_t *r, uint64_t seed) { r->s = seed * 0x9E3779B97F4A7C15ull + 0x2545F4914F6CDD1Dull; }

static double urand(chk_rng_t *r) { /* xorshift64*: uniform in [-1, 1) */
  r->s ^= r->s >> 12;
  r->s ^= r->s << 25;
  r->s ^= r->s >> 27;
  return (double)((r->s * 2685821657736338717ull) >> 11) / 4503599627370496.0 - 1.0;
}

static int is_complex(muster_dtype_t t) { return t == MUSTER_C64 || t == MUSTER_C128; }

double complex chk_get(muster_dtype_t t, const void *base, int64_t ld, int64_t i, int64_t j) {
  size_t k = (size_t)(j * ld + i);
  switch (t) {
  case MUSTER_F32: return ((const float *)base)[k];
  case MUSTER_F64: return ((const double *)base)[k];
  case MUSTER_C64: return ((const float complex *)base)[k];
  default: return ((const double complex *)base)[k];
  }
}

void chk_set(muster_dtype_t t, void *base, int64_t ld, int64_t i, int64_t j, double complex v) {
  size_t k = (size_t)(j * ld + i);
  switch (t) {
  case MUSTER_F32: ((float *)base)[k] = (float)creal(v); break;
  case MUSTER_F64: ((double *)base)[k] = creal(v); break;
  case MUSTER_C64: ((float complex *)base)[k] = (float complex)v; break;
  default: ((double complex *)base)[k] = v; break;
  }
}

double chk_get_real(muster_dtype_t t, const void *w, int64_t i) {
  return (t == MUSTER_F32 || t == MUSTER_C64) ? ((const float *)w)[i] : ((const double *)w)[i];
}

void chk_random_hermitian(muster_dtype_t t, int64_t n, int spd, chk_rng_t *r, void *a, int64_t lda) {
  /* spd: strictly diagonally dominant (Gershgorin), hence positive definite:
   * a diagonal of at least shift - 1 against n - 1 entries of modulus up to
   * 1 (real: shift n) or sqrt 2 (complex: shift 2n) in its row.  A shift of n left complex
   * 2 x 2 matrices indefinite 0.24% of the time (a CI failure: scalapack's
   * pzpotrf rightly said "not positive definite"). */
  const double shift = is_complex(t) ? 2.0 * (double)n : (double)n;
  for (int64_t j = 0; j < n; j++) {
    chk_set(t, a, lda, j, j, urand(r) + (spd ? shift : 0.0));
    for (int64_t i = j + 1; i < n; i++) {
      double complex v = urand(r);
      if (is_complex(t)) v += I * urand(r);
      chk_set(t, a, lda, i, j, v);
      chk_set(t, a, lda, j, i, conj(v));
    }
  }
}

void chk_random_dense(muster_dtype_t t, int64_t n, int64_t nrhs, chk_rng_t *r, void *b, int64_t ldb) {
  for (int64_t j = 0; j < nrhs; j++)
    for (int64_t i = 0; i < n; i++) {
      double complex v = urand(r);
      if (is_complex(t)) v += I * urand(r);
      chk_set(t, b, ldb, i, j, v);
    }
}

void chk_random_general(muster_dtype_t t, int64_t m, int64_t n, chk_rng_t *r, void *a, int64_t lda) {
  chk_random_dense(t, m, n, r, a, lda);
  for (int64_t i = 0; i < n && i < m; i++) chk_set(t, a, lda, i, i, chk_get(t, a, lda, i, i) + (double)n);
}

double chk_eps(muster_dtype_t t) {
  return (t == MUSTER_F32 || t == MUSTER_C64) ? FLT_EPSILON : DBL_EPSILON;
}

double chk_tolerance(muster_dtype_t t, int64_t n) {
  double tol = 64.0 * (double)n * chk_eps(t);
  return tol;
}

double chk_gels_tolerance(muster_dtype_t t, int64_t m) { return 16.0 * sqrt((double)m) * chk_eps(t); }

double chk_routine_tolerance(muster_routine_t r, muster_dtype_t t, int64_t rows) {
  return r == MUSTER_GELS ? chk_gels_tolerance(t, rows) : chk_tolerance(t, rows);
}

double chk_norm_f(muster_dtype_t t, int64_t rows, int64_t cols, const void *a, int64_t lda) {
  double s = 0;
  for (int64_t j = 0; j < cols; j++)
    for (int64_t i = 0; i < rows; i++) {
      double complex v = chk_get(t, a, lda, i, j);
      s += creal(v) * creal(v) + cimag(v) * cimag(v);
    }
  return sqrt(s);
}

/* y = A x for column vector x given by (base, ld, column j); y has n entries. */
static void matvec(muster_dtype_t t, int64_t n, const void *a, int64_t lda, const void *x,
                   int64_t ldx, int64_t jx, double complex *y) {
  for (int64_t i = 0; i < n; i++) y[i] = 0;
  for (int64_t k = 0; k < n; k++) {
    double complex xk = chk_get(t, x, ldx, k, jx);
    if (xk == 0) continue;
    for (int64_t i = 0; i < n; i++) y[i] += chk_get(t, a, lda, i, k) * xk;
  }
}

double chk_potrs(muster_dtype_t t, int64_t n, int64_t nrhs, const void *a, int64_t lda,
                 const void *x, int64_t ldx, const void *b, int64_t ldb) {
  double complex *y = malloc((size_t)n * sizeof *y);
  if (!y) return INFINITY;
  double r2 = 0;
  for (int64_t j = 0; j < nrhs; j++) {
    matvec(t, n, a, lda, x, ldx, j, y);
    for (int64_t i = 0; i < n; i++) {
      double complex d = y[i] - chk_get(t, b, ldb, i, j);
      r2 += creal(d) * creal(d) + cimag(d) * cimag(d);
    }
  }
  free(y);
  double den = chk_norm_f(t, n, n, a, lda) * chk_norm_f(t, n, nrhs, x, ldx);
  double res = den > 0 ? sqrt(r2) / den : INFINITY;
  return isfinite(res) ? res : INFINITY;
}

double chk_gels(muster_dtype_t t, int64_t m, int64_t n, int64_t nrhs, const void *a, int64_t lda,
                const void *x, int64_t ldx, const void *b, int64_t ldb) {
  double complex *r = malloc((size_t)m * sizeof *r);
  if (!r) return INFINITY;
  double g2 = 0;
  for (int64_t j = 0; j < nrhs; j++) {
    for (int64_t i = 0; i < m; i++) r[i] = -chk_get(t, b, ldb, i, j); /* r = A x_j - b_j */
    for (int64_t k = 0; k < n; k++) {
      double complex xk = chk_get(t, x, ldx, k, j);
      for (int64_t i = 0; i < m; i++) r[i] += chk_get(t, a, lda, i, k) * xk;
    }
    for (int64_t k = 0; k < n; k++) { /* (A^H r)_k */
      double complex g = 0;
      for (int64_t i = 0; i < m; i++) g += conj(chk_get(t, a, lda, i, k)) * r[i];
      g2 += creal(g) * creal(g) + cimag(g) * cimag(g);
    }
  }
  free(r);
  double na = chk_norm_f(t, m, n, a, lda);
  double den = na * (na * chk_norm_f(t, n, nrhs, x, ldx) + chk_norm_f(t, m, nrhs, b, ldb));
  double res = den > 0 ? sqrt(g2) / den : INFINITY;
  return isfinite(res) ? res : INFINITY;
}

double chk_logdet_hpd(muster_dtype_t t, int64_t n, const void *a, int64_t lda) {
  double complex *l = malloc((size_t)(n * n) * sizeof *l);
  if (!l) return NAN;
  double sum = 0;
  for (int64_t j = 0; j < n; j++) { /* column j of L, from the lower triangle of A */
    double d = creal(chk_get(t, a, lda, j, j));
    for (int64_t k = 0; k < j; k++) d -= creal(l[k * n + j] * conj(l[k * n + j]));
    if (!(d > 0)) {
      free(l);
      return NAN;
    }
    double ljj = sqrt(d);
    l[j * n + j] = ljj;
    sum += 2 * log(ljj);
    for (int64_t i = j + 1; i < n; i++) {
      double complex v = chk_get(t, a, lda, i, j);
      for (int64_t k = 0; k < j; k++) v -= l[k * n + i] * conj(l[k * n + j]);
      l[j * n + i] = v / ljj;
    }
  }
  free(l);
  return sum;
}

double chk_logdet_tolerance(muster_dtype_t t, int64_t n, double ref) {
  return chk_tolerance(t, n) * ((double)n + fabs(ref));
}

#define SAMPLE_COLS 32 /* columns the sampled checks take when n is large */

const char *chk_level_name(chk_level_t l) {
  return l == CHK_NONE ? "none" : l == CHK_FULL ? "full" : "residual";
}

int chk_level_from_name(const char *s, chk_level_t *out) {
  for (int l = CHK_NONE; l <= CHK_FULL; l++)
    if (!strcmp(s, chk_level_name((chk_level_t)l))) {
      *out = (chk_level_t)l;
      return 0;
    }
  return -1;
}

int64_t chk_level_columns(chk_level_t l, muster_routine_t r, int64_t n) {
  /* below these sizes every column is cheap: the check is O(n^3) but small */
  int64_t all_up_to = r == MUSTER_SYEVD ? 256 : 512;
  return l == CHK_FULL || n <= all_up_to ? n : SAMPLE_COLS;
}

void chk_logdet_bounds(muster_dtype_t t, int64_t n, const void *a, int64_t lda, double *lo, double *hi) {
  double l = 0, h = 0;
  for (int64_t i = 0; i < n; i++) {
    double d = creal(chk_get(t, a, lda, i, i)), r = 0;
    for (int64_t j = 0; j < n; j++)
      if (j != i) r += cabs(chk_get(t, a, lda, i, j));
    h += log(d);
    l += d > r ? log(d - r) : -INFINITY;
  }
  *lo = l;
  *hi = h;
}

/* Column k of `cols` spread over [0, n): all of them when cols >= n. */
static int64_t spread(int64_t n, int64_t cols, int64_t k, int64_t *count) {
  if (cols >= n || cols < 2) {
    *count = cols >= n ? n : 1;
    return cols >= n ? k : 0;
  }
  *count = cols;
  return (k * (n - 1)) / (cols - 1);
}

double chk_potri(muster_dtype_t t, int64_t n, const void *a, int64_t lda, const void *inv,
                 int64_t ldi) {
  return chk_potri_cols(t, n, a, lda, inv, ldi, chk_level_columns(CHK_RESIDUAL, MUSTER_POTRI, n));
}

double chk_potri_cols(muster_dtype_t t, int64_t n, const void *a, int64_t lda, const void *inv,
                      int64_t ldi, int64_t cols) {
  double complex *y = malloc((size_t)n * sizeof *y);
  if (!y) return INFINITY;
  double na = chk_norm_f(t, n, n, a, lda), worst = 0;
  int64_t count = 0;
  for (int64_t k = 0; k == 0 || k < count; k++) {
    int64_t j = spread(n, cols, k, &count);
    matvec(t, n, a, lda, inv, ldi, j, y);
    double r2 = 0, c2 = 0;
    for (int64_t i = 0; i < n; i++) {
      double complex d = y[i] - (i == j ? 1.0 : 0.0);
      r2 += creal(d) * creal(d) + cimag(d) * cimag(d);
      double complex v = chk_get(t, inv, ldi, i, j);
      c2 += creal(v) * creal(v) + cimag(v) * cimag(v);
    }
    double res = sqrt(r2) / (na * sqrt(c2));
    if (!isfinite(res)) res = INFINITY;
    if (res > worst) worst = res;
  }
  free(y);
  return worst;
}

double chk_syevd(muster_dtype_t t, int64_t n, const void *a, int64_t lda, const void *v,
                 int64_t ldv, const void *w) {
  return chk_syevd_cols(t, n, a, lda, v, ldv, w, chk_level_columns(CHK_RESIDUAL, MUSTER_SYEVD, n));
}

double chk_syevd_cols(muster_dtype_t t, int64_t n, const void *a, int64_t lda, const void *v,
                      int64_t ldv, const void *w, int64_t cols) {
  double worst = 0, na = chk_norm_f(t, n, n, a, lda);
  for (int64_t i = 1; i < n; i++)
    if (!(chk_get_real(t, w, i) >= chk_get_real(t, w, i - 1))) return INFINITY; /* ascending */
  if (!v) { /* eigenvalues only: their sum is the trace */
    double tr = 0, sum = 0, scale = 0;
    for (int64_t i = 0; i < n; i++) {
      tr += creal(chk_get(t, a, lda, i, i));
      sum += chk_get_real(t, w, i);
      scale += fabs(chk_get_real(t, w, i));
    }
    double res = fabs(tr - sum) / (scale > 0 ? scale : 1);
    return isfinite(res) ? res : INFINITY;
  }
  double complex *y = malloc((size_t)n * sizeof *y);
  if (!y) return INFINITY;
  int64_t count = 0, *picked = malloc((size_t)(cols < n ? cols : n) * sizeof *picked);
  if (!picked) {
    free(y);
    return INFINITY;
  }
  for (int64_t k = 0; k == 0 || k < count; k++) {
    int64_t j = spread(n, cols, k, &count);
    picked[k] = j;
    matvec(t, n, a, lda, v, ldv, j, y);
    double lj = chk_get_real(t, w, j), r2 = 0;
    for (int64_t i = 0; i < n; i++) {
      double complex d = y[i] - lj * chk_get(t, v, ldv, i, j);
      r2 += creal(d) * creal(d) + cimag(d) * cimag(d);
    }
    double res = sqrt(r2) / (na > 0 ? na : 1);
    if (!isfinite(res)) res = INFINITY;
    if (res > worst) worst = res;
  }
  /* orthonormality of the sampled columns */
  for (int64_t p = 0; p < count; p++)
    for (int64_t q = p; q < count; q++) {
      double complex d = 0;
      for (int64_t i = 0; i < n; i++)
        d += conj(chk_get(t, v, ldv, i, picked[p])) * chk_get(t, v, ldv, i, picked[q]);
      double res = cabs(d - (p == q ? 1.0 : 0.0));
      if (!isfinite(res)) res = INFINITY;
      if (res > worst) worst = res;
    }
  free(y);
  free(picked);
  return worst;
}
