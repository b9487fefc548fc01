/*
 * muster/parse.h - the one parser of what a user types: numbers and
 * provider (backend) names.  The runtime reads every MUSTER_* variable with
 * it (runtime/base/env.c), the tools parse their options with it, and adapters
 * may validate the same way; exported so nothing re-implements it.
 *
 * Every function reads the WHOLE string (no leading or trailing space, no
 * trailing garbage, no hex, no silent truncation to a narrower type), checks
 * the range, and on failure returns MUSTER_EINVAL with muster_last_error()
 * set to a reason that quotes the value, e.g.
 *     '4294967298' is out of range 1..64
 * The caller says what the value was (the runtime prefixes the message), e.g.
 * "MUSTER_TIMEOUT" or "--ranks".  Nothing here reads the environment.
 */
#ifndef MUSTER_PARSE_H
#define MUSTER_PARSE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "../muster.h"

/* Longest provider (backend) name: the name fields are 32 bytes with NUL. */
#define MUSTER_MAX_BACKEND 31

/* Seconds accepted for a timeout: 1 ms .. 365 days (beyond that a deadline
 * is "none": say "inf"). */
#define MUSTER_MIN_SECONDS 1e-3
#define MUSTER_MAX_SECONDS (365.0 * 24 * 3600)

/* A decimal integer: an optional '-', then 1..19 digits, in [lo, hi]. */
MUSTER_EXTERN int muster_parse_i64(const char *s, int64_t lo, int64_t hi, int64_t *out);

/* A decimal integer without sign in [0, hi] (all of uint64 when hi is
 * UINT64_MAX). */
MUSTER_EXTERN int muster_parse_u64(const char *s, uint64_t hi, uint64_t *out);

/* A comma-separated list of 1..cap integers in [lo, hi], none empty.
 * Returns the count, or MUSTER_EINVAL. */
MUSTER_EXTERN int muster_parse_i64_list(const char *s, int64_t lo, int64_t hi, int64_t *out,
                                         int cap);

/* A duration in seconds: a plain decimal number ("30", "0.5", "2e3") in
 * [MUSTER_MIN_SECONDS, MUSTER_MAX_SECONDS], or, when allow_inf, "inf" or
 * "infinity" (any case), which sets *out = 0: no deadline. */
MUSTER_EXTERN int muster_parse_seconds(const char *s, int allow_inf, double *out);

/* A backend name of len bytes at s (not necessarily NUL-terminated):
 * 1..MUSTER_MAX_BACKEND bytes of [A-Za-z0-9._-], not starting with '.'
 * (what a provider file name minus ".so" may be). */
MUSTER_EXTERN int muster_parse_backend(const char *s, size_t len);

/* Check every MUSTER_* variable the runtime reads (docs/runtime.md,
 * "Environment"): 0, or MUSTER_EINVAL naming the first bad one and quoting
 * its value.  What a tool or program calls before it starts anything. */
MUSTER_EXTERN int muster_env_check(void);

/* ---- the rules themselves, without a message ------------------------------
 * For code that cannot call libmuster: a provider links nothing of the
 * runtime, yet reads its own MUSTER_* variables by the same rules
 * (providers/common/env.h).  The functions above apply these and add the
 * message; nothing else may parse a number or a folder list its own way. */

#define MUSTER_SCAN_SYNTAX (-1) /* not of the form                        */
#define MUSTER_SCAN_RANGE (-2)  /* of the form, out of range (or too many) */
#define MUSTER_SCAN_LONG (-3)   /* a folder longer than allowed            */

/* 'value' as every message quotes a bad value: at most 48 bytes of s[0..len),
 * a byte that is not printable ASCII as '?', and "... (N bytes)" after it
 * when it was cut; into buf (cap >= 96 holds all of it).  Returns buf. */
static inline const char *muster_quote(const char *s, size_t len, char *buf, size_t cap) {
  size_t n = len < 48 ? len : 48, k = 0;
  if (cap < 3) return cap ? (buf[0] = '\0', buf) : buf;
  buf[k++] = '\'';
  for (size_t i = 0; i < n && k + 2 < cap; i++)
    buf[k++] = (s[i] >= 0x20 && s[i] < 0x7f) ? s[i] : '?';
  buf[k++] = '\'';
  buf[k] = '\0';
  if (len > n) snprintf(buf + k, cap - k, "... (%zu bytes)", len);
  return buf;
}

/* s[0..len) is 1..20 ASCII digits (no sign, space or anything else) whose
 * value is at most hi: 0 with *out, MUSTER_SCAN_SYNTAX or _RANGE. */
static inline int muster_scan_u64(const char *s, size_t len, uint64_t hi, uint64_t *out) {
  uint64_t v = 0;
  int over = 0;
  if (len == 0) return MUSTER_SCAN_SYNTAX;
  for (size_t i = 0; i < len; i++)
    if (s[i] < '0' || s[i] > '9') return MUSTER_SCAN_SYNTAX;
  for (size_t i = 0; i < len && !over; i++) {
    unsigned d = (unsigned)(s[i] - '0');
    if (v > (UINT64_MAX - d) / 10) over = 1;
    else v = v * 10 + d;
  }
  if (over || v > hi) return MUSTER_SCAN_RANGE;
  *out = v;
  return 0;
}

/* s[0..len) is an optional '-' and then as muster_scan_u64, with a value
 * in [lo, hi]: 0 with *out, MUSTER_SCAN_SYNTAX or _RANGE. */
static inline int muster_scan_i64(const char *s, size_t len, int64_t lo, int64_t hi, int64_t *out) {
  int neg = len > 0 && s[0] == '-';
  uint64_t mag;
  int rc = muster_scan_u64(s + neg, len - (size_t)neg, UINT64_MAX, &mag);
  if (rc < 0) return rc;
  if (mag > (uint64_t)INT64_MAX + (uint64_t)neg) return MUSTER_SCAN_RANGE;
  int64_t v = neg ? (int64_t)(0 - mag) : (int64_t)mag;
  if (v < lo || v > hi) return MUSTER_SCAN_RANGE;
  *out = v;
  return 0;
}

/* A folder list (MUSTER_PROVIDER_PATH, MUSTER_COST_PATH, a provider's own):
 * at most this many folders of at most this many bytes each (room is left
 * for <folder>/<routine>/<file> in PATH_MAX). */
#define MUSTER_MAX_FOLDERS 16
#define MUSTER_MAX_FOLDER_LEN 3800

/* s is 1..max_folders folders separated by ':', none empty, each at most
 * max_len bytes: 0, or MUSTER_SCAN_SYNTAX (folder *which is empty),
 * MUSTER_SCAN_RANGE (more than max_folders) or MUSTER_SCAN_LONG (folder
 * *which is longer), *which counting from 1. */
static inline int muster_scan_folders(const char *s, int max_folders, size_t max_len, int *which) {
  int k = 1;
  for (const char *e = s;; k++) {
    size_t len = 0;
    while (e[len] && e[len] != ':') len++;
    *which = k;
    if (k > max_folders) return MUSTER_SCAN_RANGE;
    if (len == 0) return MUSTER_SCAN_SYNTAX;
    if (len > max_len) return MUSTER_SCAN_LONG;
    if (!e[len]) return 0;
    e += len + 1;
  }
}

#endif
