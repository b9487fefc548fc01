/* tools/muster/opts.c - option values and the environment (opts.h). */
#include <stdio.h>
#include <string.h>

#include "launch.h"
#include "muster/parse.h"
#include "opts.h"
#include "muster/parse.h"

static int report(const char *who, const char *opt) {
  fprintf(stderr, "%s: %s: %s\n", who, opt, muster_last_error());
  return -1;
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
    fprintf(stderr, "muster: %s\n", muster_last_error());
    return -1;
  }
  if (ml_test_stop_rank(&rank) < 0) return report("muster", "MUSTER_LAUNCH_TEST_STOP");
  return 0;
}
