/*
 * providers/common/env.h - a provider's own MUSTER_* variables, read by the
 * runtime's rules (runtime/base/env.h): unset is the default; set, the value
 * must be valid, and set but empty is invalid too.  A bad value is
 * MUSTER_EINVAL with why = "VAR: 'value' is not ..." (the runtime's quoting,
 * muster/parse.h), never a quiet fall back to the default.  The parsing is
 * muster/parse.h's (muster_scan_*): the one rule of the runtime and the
 * CLI.  Static inline: providers link nothing of the runtime.
 */
#ifndef MUSTER_PROVIDERS_ENV_H
#define MUSTER_PROVIDERS_ENV_H

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "muster.h"
#include "muster/parse.h"

/* *value = VAR's value, NULL when unset; MUSTER_EINVAL when set but empty. */
static inline int prov_env_get(const char *var, const char **value, char *why, size_t len) {
  *value = getenv(var);
  if (*value && !**value) {
    snprintf(why, len, "%s is set but empty (unset it for the default)", var);
    return MUSTER_EINVAL;
  }
  return 0;
}

/* why = "VAR: 'value' <what>"; MUSTER_EINVAL */
static inline int prov_env_bad(const char *var, const char *value, const char *what, char *why,
                               size_t len) {
  char q[96];
  snprintf(why, len, "%s: %s %s", var, muster_quote(value, strlen(value), q, sizeof q), what);
  return MUSTER_EINVAL;
}

/* The integer `value` of VAR in [lo, hi] (muster_scan_i64). */
static inline int prov_env_int_of(const char *var, const char *value, int64_t lo, int64_t hi,
                                  int64_t *out, char *why, size_t len) {
  if (!*value) {
    snprintf(why, len, "%s is set but empty (unset it for the default)", var);
    return MUSTER_EINVAL;
  }
  if (muster_scan_i64(value, strlen(value), lo, hi, out) == 0) return 0;
  char what[96];
  snprintf(what, sizeof what, "is not an integer in %" PRId64 "..%" PRId64, lo, hi);
  return prov_env_bad(var, value, what, why, len);
}

/* VAR as an integer in [lo, hi]; *out = dflt when unset. */
static inline int prov_env_int(const char *var, int64_t lo, int64_t hi, int64_t dflt, int64_t *out,
                               char *why, size_t len) {
  const char *v = getenv(var);
  *out = dflt;
  return v ? prov_env_int_of(var, v, lo, hi, out, why, len) : 0;
}

/* VAR as one of words[] (NULL-ended, compared exactly): *idx its index,
 * dflt when unset. */
static inline int prov_env_word(const char *var, const char *const *words, int dflt, int *idx,
                                char *why, size_t len) {
  const char *v;
  int rc = prov_env_get(var, &v, why, len);
  *idx = dflt;
  if (rc < 0 || !v) return rc;
  char what[160] = "is not ";
  for (int i = 0; words[i]; i++) {
    if (!strcmp(v, words[i])) {
      *idx = i;
      return 0;
    }
    size_t k = strlen(what);
    snprintf(what + k, sizeof what - k, "%s%s", i == 0 ? "" : words[i + 1] ? ", " : " or ", words[i]);
  }
  return prov_env_bad(var, v, what, why, len);
}

/* VAR as a 0/1 switch: *on = dflt when unset. */
static inline int prov_env_switch(const char *var, int dflt, int *on, char *why, size_t len) {
  static const char *const words[] = {"0", "1", NULL};
  return prov_env_word(var, words, dflt, on, why, len);
}

/* The process grid `value` of VAR: "PxQ", P and Q integers >= 1 with
 * P * Q = nranks. */
static inline int prov_env_grid_of(const char *var, const char *value, int nranks, int *nprow,
                                   int *npcol, char *why, size_t len) {
  const char *x = strchr(value, 'x');
  int64_t p = 0, q = 0;
  if (!*value) {
    snprintf(why, len, "%s is set but empty (unset it for the default)", var);
    return MUSTER_EINVAL;
  }
  if (!x || muster_scan_i64(value, (size_t)(x - value), 1, nranks, &p) < 0 ||
      muster_scan_i64(x + 1, strlen(x + 1), 1, nranks, &q) < 0 || p * q != nranks) {
    char what[96];
    snprintf(what, sizeof what, "is not PxQ with P*Q = %d (the number of ranks)", nranks);
    return prov_env_bad(var, value, what, why, len);
  }
  *nprow = (int)p;
  *npcol = (int)q;
  return 0;
}

/* VAR as a list of folders separated by ':' (MUSTER_PROVIDER_PATH's rule,
 * muster_scan_folders); *value NULL when unset. */
static inline int prov_env_folders(const char *var, const char **value, char *why, size_t len) {
  int rc = prov_env_get(var, value, why, len), k = 0;
  if (rc < 0 || !*value) return rc;
  rc = muster_scan_folders(*value, MUSTER_MAX_FOLDERS, MUSTER_MAX_FOLDER_LEN, &k);
  if (rc == 0) return 0;
  char what[96];
  if (rc == MUSTER_SCAN_RANGE) snprintf(what, sizeof what, "has more than %d folders", MUSTER_MAX_FOLDERS);
  else if (rc == MUSTER_SCAN_LONG)
    snprintf(what, sizeof what, "has a folder (%d) longer than %d bytes", k, MUSTER_MAX_FOLDER_LEN);
  else snprintf(what, sizeof what, "has an empty folder (%d): a leading, trailing or doubled ':'", k);
  return prov_env_bad(var, *value, what, why, len);
}

#endif
