/* runtime/base/parse.c - numbers and backend names as users type them (parse.h). */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/error.h"
#include "muster/parse.h"

/* ASCII only: the caller's locale must not change what is accepted */
static int is_digit(int c) { return c >= '0' && c <= '9'; }
static int is_alnum(int c) { return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

static int bad(const char *s, size_t len, const char *why) {
  char q[96];
  return muster__err(MUSTER_EINVAL, "%s %s", muster_quote(s, len, q, sizeof q), why);
}

static int range_error(const char *s, size_t len, int64_t lo, int64_t hi) {
  char why[96];
  snprintf(why, sizeof why, "is out of range %" PRId64 "..%" PRId64, lo, hi);
  return bad(s, len, why);
}

/* One integer of s[0..len) in [lo, hi] (muster_scan_i64's rule). */
static int parse_i64_n(const char *s, size_t len, int64_t lo, int64_t hi, int64_t *out) {
  if (len == 0) return bad(s, len, "is empty (an integer is needed)");
  int rc = muster_scan_i64(s, len, lo, hi, out);
  if (rc == MUSTER_SCAN_SYNTAX) return bad(s, len, "is not a decimal integer");
  if (rc < 0) return range_error(s, len, lo, hi);
  return MUSTER_OK;
}

int muster_parse_i64(const char *s, int64_t lo, int64_t hi, int64_t *out) {
  if (!s) return muster__err(MUSTER_EINVAL, "no value (an integer is needed)");
  return parse_i64_n(s, strlen(s), lo, hi, out);
}

int muster_parse_u64(const char *s, uint64_t hi, uint64_t *out) {
  if (!s) return muster__err(MUSTER_EINVAL, "no value (an integer is needed)");
  size_t len = strlen(s);
  if (len == 0) return bad(s, len, "is empty (an integer is needed)");
  int rc = muster_scan_u64(s, len, hi, out);
  if (rc == MUSTER_SCAN_SYNTAX) return bad(s, len, "is not a decimal integer without sign");
  if (rc < 0) {
    char why[64];
    snprintf(why, sizeof why, "is out of range 0..%" PRIu64, hi);
    return bad(s, len, why);
  }
  return MUSTER_OK;
}

int muster_parse_i64_list(const char *s, int64_t lo, int64_t hi, int64_t *out, int cap) {
  if (!s) return muster__err(MUSTER_EINVAL, "no value (a list of integers is needed)");
  size_t total = strlen(s);
  int n = 0;
  for (const char *p = s;; n++) {
    const char *comma = strchr(p, ',');
    size_t len = comma ? (size_t)(comma - p) : strlen(p);
    if (n == cap) {
      char why[64];
      snprintf(why, sizeof why, "has more than %d entries", cap);
      return bad(s, total, why);
    }
    if (len == 0) return bad(s, total, "has an empty entry");
    int rc = parse_i64_n(p, len, lo, hi, &out[n]);
    if (rc < 0) {
      char q[96];
      return muster__err_prefix(rc, "entry %d of %s", n + 1, muster_quote(s, total, q, sizeof q));
    }
    if (!comma) return n + 1;
    p = comma + 1;
  }
}

/* [digits][.digits][e[+-]digits] with at least one digit before the
 * exponent: what strtod reads, minus hex, inf, nan and spaces. */
static int plain_decimal(const char *s) {
  const char *p = s;
  int mant = 0;
  while (is_digit(*p)) p++, mant++;
  if (*p == '.')
    for (p++; is_digit(*p); p++) mant++;
  if (!mant) return 0;
  if (*p == 'e' || *p == 'E') {
    p++;
    if (*p == '+' || *p == '-') p++;
    if (!is_digit(*p)) return 0;
    while (is_digit(*p)) p++;
  }
  return *p == '\0';
}

int muster_parse_seconds(const char *s, int allow_inf, double *out) {
  if (!s) return muster__err(MUSTER_EINVAL, "no value (seconds are needed)");
  size_t len = strlen(s);
  if (len == 0) return bad(s, len, "is empty (seconds are needed)");
  if (allow_inf && (!strcasecmp(s, "inf") || !strcasecmp(s, "infinity"))) {
    *out = 0;
    return MUSTER_OK;
  }
  char why[128];
  snprintf(why, sizeof why, "is not a number of seconds in %g..%.0f%s", MUSTER_MIN_SECONDS,
           MUSTER_MAX_SECONDS, allow_inf ? " (or inf: no deadline)" : "");
  if (!plain_decimal(s)) return bad(s, len, why);
  errno = 0;
  double v = strtod(s, NULL);
  if (!isfinite(v) || v < MUSTER_MIN_SECONDS || v > MUSTER_MAX_SECONDS) return bad(s, len, why);
  *out = v;
  return MUSTER_OK;
}

int muster_parse_backend(const char *s, size_t len) {
  if (len == 0) return bad(s, len, "is an empty provider name");
  if (len > MUSTER_MAX_BACKEND) {
    char why[64];
    snprintf(why, sizeof why, "is longer than %d bytes (a provider name)", MUSTER_MAX_BACKEND);
    return bad(s, len, why);
  }
  if (s[0] == '.') return bad(s, len, "starts with '.' (a provider name)");
  for (size_t i = 0; i < len; i++) {
    unsigned char c = (unsigned char)s[i];
    if (!is_alnum(c) && c != '_' && c != '-' && c != '.')
      return bad(s, len, "is not a provider name (letters, digits, '.', '_', '-')");
  }
  return MUSTER_OK;
}
