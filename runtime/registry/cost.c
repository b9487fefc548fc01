/*
 * runtime/registry/cost.c - cost tables (see cost.h for the format and the lookup
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

#include "registry/cost.h"
#include "base/env.h"

/* ---- parsing ------------------------------------------------------------- */

/* One row from a line (comment and newline stripped).  1 parsed, 0 blank,
 * -1 bad (why set). */
static int parse_row(char *line, muster__cost_row_t *row, char *why, size_t cap) {
  char *f[8];
  int nf = 0;
  for (char *save = NULL, *tok = strtok_r(line, " \t\r", &save); tok && nf < 8;
       tok = strtok_r(NULL, " \t\r", &save))
    f[nf++] = tok;
  if (nf == 0) return 0;
  if (nf != 6 && nf != 7) {
    snprintf(why, cap, "%d fields, want 6 or 7: routine dtype ndevices n nrhs seconds [nnodes]", nf);
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
  long long nn = nf == 7 ? strtoll(f[6], &end, 10) : 1;
  if ((nf == 7 && *end) || nn < 1 || nn > 1 << 20) {
    snprintf(why, cap, "bad nnodes '%.20s' (>= 1)", f[6]);
    return -1;
  }
  *row = (muster__cost_row_t){(int)r, (int)t, (int)nd, n, nrhs, s, (int)nn, -1};
  return 1;
bad_num:
  snprintf(why, cap, "bad number in '%.20s %.20s %.20s %.20s' (ndevices >= 0, n >= 1, nrhs >= 0, "
           "seconds > 0)", f[2], f[3], f[4], f[5]);
  return -1;
}

/* The line "unmeasured WHY...": the table holds no measurement (cost.h). */
static int unmeasured(const char *line, muster__cost_t *t) {
  line += strspn(line, " \t");
  if (strncmp(line, "unmeasured", 10) || (line[10] && !strchr(" \t\r:", line[10]))) return 0;
  const char *why = line + 10 + strspn(line + 10, " \t:");
  t->unmeasured = 1;
  snprintf(t->unmeasured_why, sizeof t->unmeasured_why, "%s", why);
  char *cr = strchr(t->unmeasured_why, '\r');
  if (cr) *cr = '\0';
  return 1;
}

int muster__cost_version(const char *s) {
  long v[2] = {0, 0};
  if (!s || !*s) return -1;
  for (int f = 0; *s; f++) { /* MAJOR.MINOR, then any number of .PATCH fields */
    if (f > 0 && *s++ != '.') return -1;
    if (*s < '0' || *s > '9') return -1;
    long x = 0;
    while (*s >= '0' && *s <= '9' && x < 1000000) x = x * 10 + (*s++ - '0');
    if (x >= 1000000) return -1;
    if (f < 2) v[f] = x;
    if (f == 0 && *s != '.') return -1; /* a major alone is not a version */
  }
  if (v[1] >= 1000) return -1;
  return MUSTER__COST_VERSION((int)v[0], (int)v[1]);
}

/* The line "version MAJOR.MINOR[.PATCH...]": the version of the engine the
 * rows after it were measured with (cost.h).  1 with *ver, 0 not such a
 * line, -1 bad (why set). */
static int version_line(char *line, int *ver, char *why, size_t cap) {
  line += strspn(line, " \t");
  if (strncmp(line, "version", 7) || (line[7] && !strchr(" \t\r", line[7]))) return 0;
  char *f[3];
  int nf = 0;
  for (char *save = NULL, *tok = strtok_r(line + 7, " \t\r", &save); tok && nf < 3;
       tok = strtok_r(NULL, " \t\r", &save))
    f[nf++] = tok;
  int v = nf == 1 ? muster__cost_version(f[0]) : -1;
  if (v < 0) {
    snprintf(why, cap, "bad version line: want 'version MAJOR.MINOR[.PATCH]', got '%.40s'", nf ? f[0] : "");
    return -1;
  }
  *ver = v;
  return 1;
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
  t->unmeasured = 0;
  t->unmeasured_why[0] = '\0';
  int lineno = 0, rc = 0, ver = -1;
  for (char *line = copy; line && rc == 0; lineno++) {
    char *next = strchr(line, '\n');
    if (next) *next++ = '\0';
    char *hash = strchr(line, '#');
    if (hash) *hash = '\0';
    char msg[200];
    /* a directive line ("unmeasured", "version": d 1) holds no row */
    int d = unmeasured(line, t) ? 1 : version_line(line, &ver, msg, sizeof msg);
    int got = d ? (d < 0 ? -1 : 0) : parse_row(line, &t->rows[t->nrows], msg, sizeof msg);
    if (got > 0) t->rows[t->nrows].version = ver;
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
  if (rc == 0 && t->unmeasured && t->nrows) {
    snprintf(why, cap, "%s: marked unmeasured, yet it has %d rows (a table is one or the other)", path, t->nrows);
    rc = MUSTER_EINVAL;
  }
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
