/* tools/muster/opts.c - option values and the environment (opts.h). */
#include <stdio.h>
#include <string.h>

#include <inttypes.h>

#include "cli_args.h"
#include "launch.h"
#include "muster.h"
#include "muster/layout.h"
#include "muster/parse.h"
#include "opts.h"

static int report(const char *who, const char *opt) {
  cli_usage_error(who, "%s: %s", opt, muster_last_error());
  return -1;
}

/* s appended to buf (cap bytes, used so far) */
static void append(char *buf, size_t cap, size_t *used, const char *s) {
  size_t len = strlen(s);
  if (*used + len >= cap) len = cap - 1 - *used;
  memcpy(buf + *used, s, len);
  *used += len;
  buf[*used] = '\0';
}

const char *opt_routine_names(char *buf, size_t cap, const char *sep, unsigned without) {
  size_t used = 0;
  buf[0] = '\0';
#define ROUTINE_NAME(NAME, value, name, ...)                                   \
  if (!(muster_routine_takes(value) & without))                                \
    append(buf, cap, &used, used ? sep : ""), append(buf, cap, &used, name);
  MUSTER_ROUTINE_MAP(ROUTINE_NAME)
#undef ROUTINE_NAME
  return buf;
}

const char *opt_dtype_names(char *buf, size_t cap, const char *sep) {
  size_t used = 0;
  buf[0] = '\0';
#define DTYPE_NAME(NAME, value, name, ...) \
  append(buf, cap, &used, used ? sep : ""), append(buf, cap, &used, name);
  MUSTER_DTYPE_MAP(DTYPE_NAME)
#undef DTYPE_NAME
  return buf;
}

int64_t opt_gels_rows(int64_t m, int64_t n) { return m ? m : 2 * n <= OPT_MAX_N ? 2 * n : OPT_MAX_N; }

int opt_gels_m(const char *who, int routine, int64_t m, const int64_t *ns, int nn) {
  if (m && !(muster_routine_takes(routine) & MUSTER_TAKES_M)) {
    cli_usage_error(who, "--m is the row count of a non-square A (gels, geqrf, gesvd, polar); %s's A "
                    "is n x n: leave --m out", muster_routine_name((muster_routine_t)routine));
    return -1;
  }
  muster_shape_t shape;
  for (int i = 0; routine == MUSTER_GELS && i < nn; i++)
    if (muster_routine_shape(routine, ns[i], 1, opt_gels_rows(m, ns[i]), &shape) != 0) {
      cli_usage_error(who, "gels: --m %" PRId64 " < --n %" PRId64 ": A must be tall (m >= n); a wide A "
                      "has no unique least-squares solution", m, ns[i]);
      return -1;
    }
  return 0;
}

int opt_i64(const char *who, const char *opt, const char *v, int64_t lo, int64_t hi,
            int64_t *out) {
  return muster_parse_i64(v, lo, hi, out) < 0 ? report(who, opt) : 0;
}

int opt_int(const char *who, const char *opt, const char *v, int lo, int hi, int *out) {
  int64_t x;
  if (opt_i64(who, opt, v, lo, hi, &x) < 0) return -1;
  *out = (int)x;
  return 0;
}

int opt_u64(const char *who, const char *opt, const char *v, uint64_t *out) {
  return muster_parse_u64(v, UINT64_MAX, out) < 0 ? report(who, opt) : 0;
}

int opt_i64_list(const char *who, const char *opt, const char *v, int64_t lo, int64_t hi,
                 int64_t *out, int cap) {
  int n = muster_parse_i64_list(v, lo, hi, out, cap);
  return n < 0 ? report(who, opt) : n;
}

int opt_backend(const char *who, const char *opt, const char *v) {
  return muster_parse_backend(v, strlen(v)) < 0 ? report(who, opt) : 0;
}

int opt_check_env(void) {
  int rank;
  if (muster_env_check() < 0) {
    cli_usage_error("muster", "%s", muster_last_error());
    return -1;
  }
  if (ml_test_stop_rank(&rank) < 0) return report("muster", "MUSTER_LAUNCH_TEST_STOP");
  if (ml_test_fork_fail_rank(&rank) < 0) return report("muster", "MUSTER_LAUNCH_TEST_FORK_FAIL");
  return 0;
}
