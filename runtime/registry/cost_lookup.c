/*
 * runtime/registry/cost_lookup.c - the expected time of a call from a cost table
 * (cost.h has the rules): the series of one (routine, dtype, nnodes, nrhs,
 * ndevices) along n, and the model across device counts.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "registry/cost.h"

static int64_t absdiff(int64_t a, int64_t b) { return a > b ? a - b : b - a; }

/* The rows of one series. */
typedef struct series {
  int routine, dtype, nnodes, ndevices;
  int64_t nrhs;
} series_t;

static int in_series(const muster__cost_row_t *r, const series_t *k) {
  return r->routine == k->routine && r->dtype == k->dtype && r->nnodes == k->nnodes && r->nrhs == k->nrhs &&
         r->ndevices == k->ndevices;
}

/* The value of field `field` among rows where cond holds nearest `want`
 * (ties: the smaller). */
#define NEAREST(t, cond, field, want, best)                                                 \
  do {                                                                                      \
    int found_ = 0;                                                                         \
    for (int i_ = 0; i_ < (t)->nrows; i_++) {                                               \
      const muster__cost_row_t *r_ = &(t)->rows[i_];                                        \
      if (!(cond)) continue;                                                                \
      if (!found_ || absdiff(r_->field, want) < absdiff(best, want) ||                      \
          (absdiff(r_->field, want) == absdiff(best, want) && r_->field < best))            \
        best = r_->field;                                                                   \
      found_ = 1;                                                                           \
    }                                                                                       \
  } while (0)

/* The time of series k at n (rule 3-4 of cost.h); where (cap bytes) says
 * how. */
static double along_n(const muster__cost_t *t, const series_t *k, int64_t n, char *where, size_t cap) {
  int64_t lo_n = 0, hi_n = 0, min_n = 0, max_n = 0, below_max = 0;
  double lo_s = 0, hi_s = 0, min_s = 0, max_s = 0, below_max_s = 0;
  for (int i = 0; i < t->nrows; i++) { /* the last row of each n counts */
    const muster__cost_row_t *r = &t->rows[i];
    if (!in_series(r, k)) continue;
    if (r->n <= n && (!lo_n || r->n >= lo_n)) lo_n = r->n, lo_s = r->seconds;
    if (r->n >= n && (!hi_n || r->n <= hi_n)) hi_n = r->n, hi_s = r->seconds;
    if (!min_n || r->n <= min_n) min_n = r->n, min_s = r->seconds;
    if (!max_n || r->n >= max_n) max_n = r->n, max_s = r->seconds;
  }
  for (int i = 0; i < t->nrows; i++) { /* the point before the largest, for the slope */
    const muster__cost_row_t *r = &t->rows[i];
    if (in_series(r, k) && r->n < max_n && (!below_max || r->n >= below_max))
      below_max = r->n, below_max_s = r->seconds;
  }
  if (lo_n && hi_n && lo_n == hi_n) {
    snprintf(where, cap, "measured at n=%" PRId64, n);
    return lo_s;
  }
  if (lo_n && hi_n) {
    snprintf(where, cap, "interpolated between n=%" PRId64 " and %" PRId64, lo_n, hi_n);
    double f = log((double)n / lo_n) / log((double)hi_n / lo_n);
    return exp(log(lo_s) + f * (log(hi_s) - log(lo_s)));
  }
  if (!lo_n) {
    snprintf(where, cap, "below the smallest measured n=%" PRId64 ": its time", min_n);
    return min_s;
  }
  double slope = 3;
  if (below_max) slope = log(max_s / below_max_s) / log((double)max_n / below_max);
  if (!(slope >= 2)) slope = 2; /* also NaN */
  if (slope > 3) slope = 3;
  snprintf(where, cap, "extrapolated above the largest measured n=%" PRId64 " with slope %.2f", max_n, slope);
  return max_s * pow((double)n / max_n, slope);
}

/* The two measured device counts of (k but ndevices) to model d from: the
 * ones around d, else the two nearest on its side.  2 with *a < *b, else 0
 * (fewer than two counts measured). */
static int counts_around(const muster__cost_t *t, const series_t *k, int d, int *a, int *b) {
  int lo1 = 0, lo2 = 0, hi1 = 0, hi2 = 0; /* nearest and second nearest below d, above d */
  for (int i = 0; i < t->nrows; i++) {
    const muster__cost_row_t *r = &t->rows[i];
    series_t rk = *k;
    rk.ndevices = r->ndevices;
    int c = r->ndevices;
    if (!in_series(r, &rk) || c == d || c == lo1 || c == hi1) continue;
    if (c < d && c > lo1) lo2 = lo1, lo1 = c;
    else if (c < d && c > lo2) lo2 = c;
    else if (c > d && (!hi1 || c < hi1)) hi2 = hi1, hi1 = c;
    else if (c > d && (!hi2 || c < hi2)) hi2 = c;
  }
  if (lo1 && hi1) return *a = lo1, *b = hi1, 2;
  if (lo1 && lo2) return *a = lo2, *b = lo1, 2;
  if (hi1 && hi2) return *a = hi1, *b = hi2, 2;
  return 0;
}

/* Rule 2b: the time at d devices from measured counts a < b. */
static double across_devices(const muster__cost_t *t, series_t k, int d, int a, int b, int64_t n, char *where,
                             size_t cap) {
  char wa[160], wb[160];
  k.ndevices = a;
  double sa = along_n(t, &k, n, wa, sizeof wa);
  k.ndevices = b;
  double sb = along_n(t, &k, n, wb, sizeof wb);
  double slope = log(sb / sa) / log((double)b / a);
  const char *how = d > a && d < b ? "interpolated" : "extrapolated";
  if (!(d > a && d < b)) {
    if (!(slope <= 0)) slope = 0; /* also NaN: more devices never slower */
    if (slope < -1) slope = -1;   /* never better than linear scaling */
  }
  snprintf(where, cap, "%s in ndevices from %d and %d (slope %.2f; at %d: %.150s)", how, a, b, slope, a, wa);
  return sa * pow((double)d / a, slope);
}

int muster__cost_lookup_at(const muster__cost_t *t, int routine, int dtype, int ndevices, int nnodes, int64_t n,
                           int64_t nrhs, double *seconds, char *note, size_t cap) {
  int any = 0;
  for (int i = 0; i < t->nrows && !any; i++) any = t->rows[i].routine == routine && t->rows[i].dtype == dtype;
  if (!any) {
    snprintf(note, cap, "%s has no row for %s %s", t->path, muster_routine_str(routine) ?: "?",
             muster_dtype_str(dtype) ?: "?");
    return MUSTER_ENOENT;
  }
  series_t k = {.routine = routine, .dtype = dtype};
  NEAREST(t, r_->routine == routine && r_->dtype == dtype, nnodes, nnodes, k.nnodes);
  NEAREST(t, r_->routine == routine && r_->dtype == dtype && r_->nnodes == k.nnodes, nrhs, nrhs, k.nrhs);
  int measured = 0;
  for (int i = 0; i < t->nrows && !measured; i++) {
    series_t rk = k;
    rk.ndevices = ndevices;
    measured = in_series(&t->rows[i], &rk);
  }
  char where[400], other[160] = "";
  int a, b;
  if (measured) {
    k.ndevices = ndevices;
    *seconds = along_n(t, &k, n, where, sizeof where);
  } else if (counts_around(t, &k, ndevices, &a, &b) == 2) {
    *seconds = across_devices(t, k, ndevices, a, b, n, where, sizeof where);
  } else {
    NEAREST(t, r_->routine == routine && r_->dtype == dtype && r_->nnodes == k.nnodes && r_->nrhs == k.nrhs,
            ndevices, ndevices, k.ndevices);
    *seconds = along_n(t, &k, n, where, sizeof where);
    snprintf(other, sizeof other, "; one device count measured: nearest ndevices=%d", k.ndevices);
  }
  int o = (int)strlen(other);
  if (k.nrhs != nrhs) o += snprintf(other + o, sizeof other - (size_t)o, "; nearest measured nrhs=%" PRId64, k.nrhs);
  if (k.nnodes != nnodes && (size_t)o < sizeof other)
    snprintf(other + o, sizeof other - (size_t)o, "; measured on %d node%s, not %d: nodes are not modelled",
             k.nnodes, k.nnodes == 1 ? "" : "s", nnodes);
  const char *base = strrchr(t->path, '/');
  snprintf(note, cap, "cost table %s: %s%s", base ? base + 1 : t->path, where, other);
  return 0;
}

int muster__cost_lookup(const muster__cost_t *t, int routine, int dtype, int ndevices, int64_t n, int64_t nrhs,
                        double *seconds, char *note, size_t cap) {
  return muster__cost_lookup_at(t, routine, dtype, ndevices, 1, n, nrhs, seconds, note, cap);
}
