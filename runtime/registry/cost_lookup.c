/*
 * runtime/registry/cost_lookup.c - the expected time of a call from a cost table
 * (cost.h has the rules): the rows of one engine version, the series of one
 * (routine, dtype, nnodes, nrhs, ndevices) along n, and the model across
 * device counts.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "muster/append.h"
#include "registry/cost.h"

static int64_t absdiff(int64_t a, int64_t b) { return a > b ? a - b : b - a; }

/* The rows of one series. */
typedef struct series {
  int routine, dtype, version, nnodes, ndevices;
  int64_t nrhs;
} series_t;

static int in_series(const muster__cost_row_t *r, const series_t *k) {
  return r->routine == k->routine && r->dtype == k->dtype && r->version == k->version && r->nnodes == k->nnodes &&
         r->nrhs == k->nrhs && r->ndevices == k->ndevices;
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

/* The order in which the versions of rows are tried for an engine of
 * version lv (-1 unknown), rule 1b of cost.h: lv's own, then rows without
 * a version, then the others, nearest lv first (lv unknown: the newest
 * first), ties the newer.  Compared as (class, distance, -version). */
typedef struct vkey {
  int cls, dist, neg;
} vkey_t;

static vkey_t vkey(int v, int lv) {
  if (lv >= 0 && v == lv) return (vkey_t){0, 0, 0};
  if (v < 0) return (vkey_t){1, 0, 0};
  return (vkey_t){2, lv >= 0 ? abs(v - lv) : 0, -v};
}

static int vless(vkey_t a, vkey_t b) {
  if (a.cls != b.cls) return a.cls < b.cls;
  if (a.dist != b.dist) return a.dist < b.dist;
  return a.neg < b.neg;
}

/* The version after `prev` (NULL: the first) in that order among the rows
 * of (routine, dtype): 1 with *v, 0 when there is none. */
static int next_version(const muster__cost_t *t, int routine, int dtype, int lv, const vkey_t *prev, int *v) {
  int found = 0;
  vkey_t best = {0, 0, 0};
  for (int i = 0; i < t->nrows; i++) {
    const muster__cost_row_t *r = &t->rows[i];
    if (r->routine != routine || r->dtype != dtype) continue;
    vkey_t k = vkey(r->version, lv);
    if ((prev && !vless(*prev, k)) || (found && !vless(k, best))) continue;
    best = k;
    *v = r->version;
    found = 1;
  }
  return found;
}

/* Rule 2 within the rows of version k->version: the nnodes, then the nrhs
 * nearest the call's. */
static void nearest_key(const muster__cost_t *t, series_t *k, int nnodes, int64_t nrhs) {
  int routine = k->routine, dtype = k->dtype, ver = k->version;
  NEAREST(t, r_->routine == routine && r_->dtype == dtype && r_->version == ver, nnodes, nnodes, k->nnodes);
  NEAREST(t, r_->routine == routine && r_->dtype == dtype && r_->version == ver && r_->nnodes == k->nnodes, nrhs,
          nrhs, k->nrhs);
}

/* Does series k (but ndevices) hold ndevices, measured? */
static int measured_at(const muster__cost_t *t, series_t k, int ndevices) {
  k.ndevices = ndevices;
  for (int i = 0; i < t->nrows; i++)
    if (in_series(&t->rows[i], &k)) return 1;
  return 0;
}

/* Rule 1b: the version whose rows answer the call (key k filled for it),
 * and whether the engine's own version lv has rows of (routine, dtype). */
static int pick_version(const muster__cost_t *t, int lv, int ndevices, int nnodes, int64_t nrhs, series_t *k,
                        int *lv_rows) {
  vkey_t prev;
  int v, first = 0, have = 0, a, b;
  *lv_rows = 0;
  for (const vkey_t *pp = NULL; next_version(t, k->routine, k->dtype, lv, pp, &v); prev = vkey(v, lv), pp = &prev) {
    if (lv >= 0 && v == lv) *lv_rows = 1;
    if (!have) first = v, have = 1;
    k->version = v;
    nearest_key(t, k, nnodes, nrhs);
    if (measured_at(t, *k, ndevices) || counts_around(t, k, ndevices, &a, &b) == 2) return v;
  }
  k->version = first;
  nearest_key(t, k, nnodes, nrhs);
  return first;
}

/* What the note says of the rows' version, when they are not the engine's
 * (cost.h rule 1b). */
static void version_note(char *out, size_t cap, int used, int lv, int lv_rows, const char *engine,
                         const series_t *k, int ndevices) {
  if (used == lv || (used < 0 && !lv_rows)) return;
  if (used >= 0) muster__append(out, cap, "; rows of version %d.%d", used / 1000, used % 1000);
  else muster__append(out, cap, "; rows of no recorded version");
  if (lv < 0) muster__append(out, cap, ": the engine's version is not known");
  else if (lv_rows) muster__append(out, cap, ": the loaded %.24s has none near ndevices=%d", engine, ndevices);
  else
    muster__append(out, cap, ": the loaded %.24s has no %s %s row", engine, muster_routine_str(k->routine) ?: "?",
                   muster_dtype_str(k->dtype) ?: "?");
}

int muster__cost_lookup_ver(const muster__cost_t *t, const char *engine, int routine, int dtype, int ndevices,
                            int nnodes, int64_t n, int64_t nrhs, double *seconds, char *note, size_t cap) {
  int any = 0;
  for (int i = 0; i < t->nrows && !any; i++) any = t->rows[i].routine == routine && t->rows[i].dtype == dtype;
  if (!any) {
    snprintf(note, cap, "%s has no row for %s %s", t->path, muster_routine_str(routine) ?: "?",
             muster_dtype_str(dtype) ?: "?");
    return MUSTER_ENOENT;
  }
  series_t k = {.routine = routine, .dtype = dtype};
  int lv = muster__cost_version(engine), lv_rows;
  int used = pick_version(t, lv, ndevices, nnodes, nrhs, &k, &lv_rows);
  char where[400], other[320] = "";
  int a, b;
  version_note(other, sizeof other, used, lv, lv_rows, engine, &k, ndevices);
  if (measured_at(t, k, ndevices)) {
    k.ndevices = ndevices;
    *seconds = along_n(t, &k, n, where, sizeof where);
  } else if (counts_around(t, &k, ndevices, &a, &b) == 2) {
    *seconds = across_devices(t, k, ndevices, a, b, n, where, sizeof where);
  } else {
    NEAREST(t, r_->routine == routine && r_->dtype == dtype && r_->version == used && r_->nnodes == k.nnodes &&
                   r_->nrhs == k.nrhs,
            ndevices, ndevices, k.ndevices);
    *seconds = along_n(t, &k, n, where, sizeof where);
    muster__append(other, sizeof other, "; one device count measured: nearest ndevices=%d", k.ndevices);
  }
  if (k.nrhs != nrhs) muster__append(other, sizeof other, "; nearest measured nrhs=%" PRId64, k.nrhs);
  if (k.nnodes != nnodes)
    muster__append(other, sizeof other, "; measured on %d node%s, not %d: nodes are not modelled", k.nnodes,
                   k.nnodes == 1 ? "" : "s", nnodes);
  const char *base = strrchr(t->path, '/');
  snprintf(note, cap, "cost table %s: %s%s", base ? base + 1 : t->path, where, other);
  return 0;
}

int muster__cost_lookup_at(const muster__cost_t *t, int routine, int dtype, int ndevices, int nnodes, int64_t n,
                           int64_t nrhs, double *seconds, char *note, size_t cap) {
  return muster__cost_lookup_ver(t, NULL, routine, dtype, ndevices, nnodes, n, nrhs, seconds, note, cap);
}

int muster__cost_lookup(const muster__cost_t *t, int routine, int dtype, int ndevices, int64_t n, int64_t nrhs,
                        double *seconds, char *note, size_t cap) {
  return muster__cost_lookup_at(t, routine, dtype, ndevices, 1, n, nrhs, seconds, note, cap);
}
