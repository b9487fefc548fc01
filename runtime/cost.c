/*
 * runtime/cost.c - cost tables (see cost.h for the format and the lookup
 * rules).
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cost.h"
#include "env.h"

/* ---- parsing ------------------------------------------------------------- */

/* One row from a line (comment and newline stripped).  1 parsed, 0 blank,
 * -1 bad (why set). */
static int parse_row(char *line, muster__cost_row_t *row, char *why, size_t cap) {
  char *f[7];
  int nf = 0;
  for (char *save = NULL, *tok = strtok_r(line, " \t\r", &save); tok && nf < 7;
       tok = strtok_r(NULL, " \t\r", &save))
    f[nf++] = tok;
  if (nf == 0) return 0;
  if (nf != 6) {
    snprintf(why, cap, "%d fields, want 6: routine dtype ndevices n nrhs seconds", nf);
    return -1;
  }
  muster_routine_t r;
  muster_dtype_t t;
  if (muster_routine_from_name(f[0], &r) != 0) {
    snprintf(why, cap, "unknown routine '%.32s'", f[0]);
    return -1;
  }
  if (muster_dtype_from_name(f[1], &t) != 0) {
    snprintf(why, cap, "unknown dtype '%.32s'", f[1]);
    return -1;
  }
  char *end;
  long long nd = strtoll(f[2], &end, 10);
  if (*end || nd < 0 || nd > 1 << 20) goto bad_num;
  long long n = strtoll(f[3], &end, 10);
  if (*end || n < 1) goto bad_num;
  long long nrhs = strtoll(f[4], &end, 10);
  if (*end || nrhs < 0) goto bad_num;
  double s = strtod(f[5], &end);
  if (*end || !(s > 0) || !isfinite(s)) goto bad_num;
  *row = (muster__cost_row_t){(int)r, (int)t, (int)nd, n, nrhs, s};
  return 1;
bad_num:
  snprintf(why, cap, "bad number in '%.20s %.20s %.20s %.20s' (ndevices >= 0, n >= 1, nrhs >= 0, "
           "seconds > 0)", f[2], f[3], f[4], f[5]);
  return -1;
}

int muster__cost_parse(const char *text, const char *path, muster__cost_t **out, char *why,
                       size_t cap) {
  *out = NULL;
  size_t len = strlen(text);
  char *copy = malloc(len + 1);
  muster__cost_t *t = malloc(sizeof *t + MUSTER__COST_MAX_ROWS * sizeof t->rows[0]);
  if (!copy || !t) {
    free(copy);
    free(t);
    snprintf(why, cap, "%s: out of memory", path);
    return MUSTER_ENOMEM;
  }
  memcpy(copy, text, len + 1);
  snprintf(t->path, sizeof t->path, "%s", path);
  t->nrows = 0;
  int lineno = 0, rc = 0;
  for (char *line = copy; line && rc == 0; lineno++) {
    char *next = strchr(line, '\n');
    if (next) *next++ = '\0';
    char *hash = strchr(line, '#');
    if (hash) *hash = '\0';
    char msg[200];
    int got = parse_row(line, &t->rows[t->nrows], msg, sizeof msg);
    if (got < 0) {
      snprintf(why, cap, "%s:%d: %s", path, lineno + 1, msg);
      rc = MUSTER_EINVAL;
    } else if (got > 0 && ++t->nrows == MUSTER__COST_MAX_ROWS && next && *next) {
      snprintf(why, cap, "%s: more than %d rows", path, MUSTER__COST_MAX_ROWS);
      rc = MUSTER_EINVAL;
    }
    line = next;
  }
  free(copy);
  if (rc < 0) {
    free(t);
    return rc;
  }
  *out = t;
  return 0;
}

int muster__cost_read(const char *path, muster__cost_t **out, char *why, size_t cap) {
  *out = NULL;
  /* O_NONBLOCK: a FIFO put there (or swapped in since muster__cost_find
   * saw a regular file) must not hang the provider's load; only a regular
   * file is read */
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  struct stat st;
  if (fd < 0) {
    snprintf(why, cap, "%s: %s", path, strerror(errno));
    return errno == ENOENT ? MUSTER_ENOENT : MUSTER_EACCES;
  }
  int regular = fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
  FILE *f = regular ? fdopen(fd, "r") : NULL;
  if (!f) {
    snprintf(why, cap, "%s: %s", path, regular ? strerror(errno) : "not a regular file");
    close(fd);
    return regular ? MUSTER_ENOMEM : MUSTER_EINVAL;
  }
  size_t max = (size_t)MUSTER__COST_MAX_ROWS * 128, len = 0;
  char *text = malloc(max + 1);
  if (!text) {
    fclose(f);
    snprintf(why, cap, "%s: out of memory", path);
    return MUSTER_ENOMEM;
  }
  len = fread(text, 1, max, f);
  int too_big = len == max && fgetc(f) != EOF;
  fclose(f);
  text[len] = '\0';
  int rc;
  if (too_big) {
    snprintf(why, cap, "%s: larger than %zu bytes", path, max);
    rc = MUSTER_EINVAL;
  } else {
    rc = muster__cost_parse(text, path, out, why, cap);
  }
  free(text);
  return rc;
}

void muster__cost_free(muster__cost_t *t) { free(t); }

/* ---- finding the file ----------------------------------------------------------- */

static int try_file(const char *dir, size_t dirlen, const char *backend, char *out, size_t cap) {
  struct stat st;
  if (dirlen == 0) return 0;
  snprintf(out, cap, "%.*s/%s.cost", (int)dirlen, dir, backend);
  return stat(out, &st) == 0 && S_ISREG(st.st_mode);
}

int muster__cost_find(const char *backend, const char *listed_dir, const char *real_so, char *out,
                      size_t cap) {
  const char *env = NULL;
  if (muster__env_cost_path(&env) < 0) env = NULL; /* refused where it is checked (registry) */
  for (const char *s = env; s && *s;) {
    const char *e = strchr(s, ':');
    size_t l = e ? (size_t)(e - s) : strlen(s);
    if (try_file(s, l, backend, out, cap)) return 1;
    s = e ? e + 1 : s + l;
  }
  if (listed_dir && try_file(listed_dir, strlen(listed_dir), backend, out, cap)) return 1;
  const char *slash = real_so ? strrchr(real_so, '/') : NULL;
  if (slash && try_file(real_so, (size_t)(slash - real_so), backend, out, cap)) return 1;
  out[0] = '\0';
  return 0;
}

/* ---- lookup ------------------------------------------------------------------------ */

static int64_t absdiff(int64_t a, int64_t b) { return a > b ? a - b : b - a; }

/* The value of field `get` among rows of (routine, dtype[, ndevices]) nearest
 * `want` (ties: the smaller). */
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

int muster__cost_lookup(const muster__cost_t *t, int routine, int dtype, int ndevices, int64_t n,
                        int64_t nrhs, double *seconds, char *note, size_t cap) {
  int any = 0;
  for (int i = 0; i < t->nrows && !any; i++) any = t->rows[i].routine == routine && t->rows[i].dtype == dtype;
  if (!any) {
    snprintf(note, cap, "%s has no row for %s %s", t->path, muster_routine_str(routine) ?: "?",
             muster_dtype_str(dtype) ?: "?");
    return MUSTER_ENOENT;
  }
  int nd = 0;
  int64_t rh = 0;
  NEAREST(t, r_->routine == routine && r_->dtype == dtype, ndevices, ndevices, nd);
  NEAREST(t, r_->routine == routine && r_->dtype == dtype && r_->ndevices == nd, nrhs, nrhs, rh);
  /* the measured points of that series, the last row of each n counting */
  int64_t lo_n = 0, hi_n = 0, min_n = 0, max_n = 0, below_max = 0;
  double lo_s = 0, hi_s = 0, min_s = 0, max_s = 0, below_max_s = 0;
  for (int i = 0; i < t->nrows; i++) {
    const muster__cost_row_t *r = &t->rows[i];
    if (r->routine != routine || r->dtype != dtype || r->ndevices != nd || r->nrhs != rh) continue;
    if (r->n <= n && (!lo_n || r->n >= lo_n)) lo_n = r->n, lo_s = r->seconds;
    if (r->n >= n && (!hi_n || r->n <= hi_n)) hi_n = r->n, hi_s = r->seconds;
    if (!min_n || r->n <= min_n) min_n = r->n, min_s = r->seconds;
    if (!max_n || r->n >= max_n) max_n = r->n, max_s = r->seconds;
  }
  for (int i = 0; i < t->nrows; i++) { /* the point before the largest, for the slope */
    const muster__cost_row_t *r = &t->rows[i];
    if (r->routine == routine && r->dtype == dtype && r->ndevices == nd && r->nrhs == rh &&
        r->n < max_n && (!below_max || r->n >= below_max))
      below_max = r->n, below_max_s = r->seconds;
  }
  char where[160];
  if (lo_n && hi_n) {
    if (lo_n == hi_n) {
      *seconds = lo_s;
      snprintf(where, sizeof where, "measured at n=%" PRId64, n);
    } else {
      double f = log((double)n / lo_n) / log((double)hi_n / lo_n);
      *seconds = exp(log(lo_s) + f * (log(hi_s) - log(lo_s)));
      snprintf(where, sizeof where, "interpolated between n=%" PRId64 " and %" PRId64, lo_n, hi_n);
    }
  } else if (!lo_n) {
    *seconds = min_s;
    snprintf(where, sizeof where, "below the smallest measured n=%" PRId64 ": its time", min_n);
  } else {
    double slope = 3;
    if (below_max) slope = log(max_s / below_max_s) / log((double)max_n / below_max);
    if (!(slope >= 2)) slope = 2; /* also NaN */
    if (slope > 3) slope = 3;
    *seconds = max_s * pow((double)n / max_n, slope);
    snprintf(where, sizeof where, "extrapolated above the largest measured n=%" PRId64
             " with slope %.2f", max_n, slope);
  }
  char other[96] = "";
  if (nd != ndevices || rh != nrhs)
    snprintf(other, sizeof other, "; nearest measured ndevices=%d nrhs=%" PRId64, nd, rh);
  const char *base = strrchr(t->path, '/');
  snprintf(note, cap, "cost table %s: %s%s", base ? base + 1 : t->path, where, other);
  return 0;
}
