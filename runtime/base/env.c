/* runtime/base/env.c - the MUSTER_* environment variables (env.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/env.h"
#include "muster/parse.h"

int muster__env_get(const char *var, const char **value) {
  *value = getenv(var);
  if (*value && !**value)
    return muster__err(MUSTER_EINVAL, "%s is set but empty (unset it for the default)", var);
  return MUSTER_OK;
}

int muster__env_timeout(double *seconds) {
  const char *s;
  int rc = muster__env_get("MUSTER_TIMEOUT", &s);
  if (rc < 0) return rc;
  if (!s) {
    *seconds = MUSTER_DEFAULT_TIMEOUT_S;
    return MUSTER_OK;
  }
  rc = muster_parse_seconds(s, 1, seconds);
  return rc < 0 ? muster__err_prefix(rc, "MUSTER_TIMEOUT") : rc;
}

/* The one precedence rule for a deadline (muster.h): a caller's value,
 * else the variable, else the default. */
int muster_timeout(double requested_s, double *seconds) {
  double t = requested_s;
  if (!seconds) return muster__err(MUSTER_EINVAL, "muster_timeout: seconds is NULL");
  if (t != t || (t > MUSTER_MAX_SECONDS && t != INFINITY) || (t > 0 && t < MUSTER_MIN_SECONDS))
    return muster__err(MUSTER_EINVAL, "timeout_s %g out of range (%g..%.0f s, INFINITY for none, <= 0 for "
                       "$MUSTER_TIMEOUT)", t, MUSTER_MIN_SECONDS, MUSTER_MAX_SECONDS);
  if (t > 0) {
    *seconds = t == INFINITY ? 0 : t;
    return MUSTER_OK;
  }
  return muster__env_timeout(seconds);
}

int muster__env_check_log(void) {
  const char *s;
  int rc = muster__env_get("MUSTER_LOG", &s);
  if (rc < 0 || !s || muster__log_level_of(s) >= 0) return rc;
  return muster__err(MUSTER_EINVAL, "MUSTER_LOG: '%.48s' is not a log level (error, warn, info "
                     "or debug)", s);
}

/* ---- MUSTER_PROVIDER ---------------------------------------------------- */

static int bad_entry(int k, const char *e, size_t len, const char *why) {
  return muster__err(MUSTER_EINVAL, "MUSTER_PROVIDER: entry %d '%.*s' %s (the form is NAME or "
                     "ROUTINE=NAME[,...], ROUTINE one of potrs, potri, syevd)", k,
                     (int)(len < 48 ? len : 48), e, why);
}

/* One entry e[0..len): its routine (0: a bare NAME) and name. */
static int provider_entry(int k, const char *e, size_t len, int *routine, const char **name,
                          size_t *nlen) {
  const char *eq = memchr(e, '=', len);
  *routine = 0;
  *name = e;
  *nlen = len;
  if (eq) {
    char r[16];
    size_t rlen = (size_t)(eq - e);
    muster_routine_t id;
    if (rlen == 0) return bad_entry(k, e, len, "has no routine before '='");
    if (rlen >= sizeof r) return bad_entry(k, e, len, "names no routine");
    memcpy(r, e, rlen);
    r[rlen] = '\0';
    if (muster_routine_from_name(r, &id) < 0) return bad_entry(k, e, len, "names no routine");
    *routine = (int)id;
    *name = eq + 1;
    *nlen = len - rlen - 1;
  }
  int rc = muster_parse_backend(*name, *nlen);
  return rc < 0 ? muster__err_prefix(rc, "MUSTER_PROVIDER: entry %d", k) : rc;
}

int muster__env_provider_choice(const char *routine, char *out, size_t cap) {
  const char *s;
  int rc = muster__env_get("MUSTER_PROVIDER", &s);
  if (cap) out[0] = '\0';
  if (rc < 0 || !s) return rc;
  char bare[MUSTER_MAX_BACKEND + 1] = "", mine[MUSTER_MAX_BACKEND + 1] = "";
  unsigned seen = 0;
  int k = 1;
  for (const char *e = s;; k++) {
    const char *comma = strchr(e, ',');
    size_t len = comma ? (size_t)(comma - e) : strlen(e);
    const char *name;
    size_t nlen;
    int r;
    if ((rc = provider_entry(k, e, len, &r, &name, &nlen)) < 0) return rc;
    if (seen & (1u << r))
      return bad_entry(k, e, len, r ? "repeats a routine" : "is a second bare NAME");
    seen |= 1u << r;
    if (r == 0 || (routine && !strcmp(routine, muster_routine_name((muster_routine_t)r)))) {
      char *dst = r ? mine : bare;
      memcpy(dst, name, nlen);
      dst[nlen] = '\0';
    }
    if (!comma) break;
    e = comma + 1;
  }
  const char *pick = mine[0] ? mine : bare;
  if (strlen(pick) >= cap) return muster__err(MUSTER_EINVAL, "MUSTER_PROVIDER: no room for '%s'", pick);
  memcpy(out, pick, strlen(pick) + 1);
  return MUSTER_OK;
}

/* ---- folder lists: MUSTER_PROVIDER_PATH, MUSTER_COST_PATH --------------- */

static int folders(const char *var, int max_folders, const char **value) {
  const char *s;
  int rc = muster__env_get(var, &s), k = 0;
  *value = NULL;
  if (rc < 0 || !s) return rc;
  switch (muster_scan_folders(s, max_folders, MUSTER_MAX_PROVIDER_DIR, &k)) {
  case MUSTER_SCAN_RANGE:
    return muster__err(MUSTER_EINVAL, "%s: more than %d folders in '%.48s...'", var, max_folders, s);
  case MUSTER_SCAN_SYNTAX:
    return muster__err(MUSTER_EINVAL, "%s: folder %d of '%.200s' is empty (a leading, trailing "
                       "or doubled ':')", var, k, s);
  case MUSTER_SCAN_LONG: {
    const char *f = s;
    for (int i = 1; i < k; i++) f = strchr(f, ':') + 1;
    return muster__err(MUSTER_EINVAL, "%s: folder %d ('%.48s...') is %zu bytes, more than %d", var,
                       k, f, strcspn(f, ":"), MUSTER_MAX_PROVIDER_DIR);
  }
  }
  *value = s;
  return MUSTER_OK;
}

int muster__env_provider_path(const char **value) {
  return folders("MUSTER_PROVIDER_PATH", MUSTER_MAX_PROVIDER_DIRS, value);
}

int muster__env_cost_path(const char **value) {
  return folders("MUSTER_COST_PATH", MUSTER_MAX_PROVIDER_DIRS, value);
}

/* A 0-or-1 variable: *on = 1 unless it says 0. */
static int flag(const char *name, int *on) {
  const char *s;
  int rc = muster__env_get(name, &s);
  *on = 1;
  if (rc < 0 || !s) return rc;
  if (strcmp(s, "0") && strcmp(s, "1")) return muster__err(MUSTER_EINVAL, "%s: '%.48s' is not 0 or 1", name, s);
  *on = s[0] == '1';
  return MUSTER_OK;
}

int muster__env_mpi_lib(const char **value) { return muster__env_get("MUSTER_MPI_LIB", value); }
int muster__env_mpi_abort(int *on) { return flag("MUSTER_MPI_ABORT", on); }
int muster__env_mpi_heartbeat(int *on) { return flag("MUSTER_MPI_HEARTBEAT", on); }

int muster__env_comm_test_fail_stage(int *rank) {
  const char *s;
  int64_t r;
  int rc = muster__env_get("MUSTER_COMM_TEST_FAIL_STAGE", &s);
  *rank = -1;
  if (rc < 0 || !s) return rc;
  if ((rc = muster_parse_i64(s, 0, MUSTER_MAX_RANKS - 1, &r)) < 0)
    return muster__err_prefix(rc, "MUSTER_COMM_TEST_FAIL_STAGE (tests only: a rank)");
  *rank = (int)r;
  return MUSTER_OK;
}
