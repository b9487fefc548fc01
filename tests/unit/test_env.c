/*
 * tests/unit/test_env.c - the one parser (runtime/base/parse.c) at its edges,
 * and every MUSTER_* variable refused by the library call that reads it
 * (MUSTER_EINVAL naming the variable and quoting the value), never a silent
 * fallback; the layout helpers for any int64 tile.
 */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/env.h"
#include "group/group.h"
#include "muster/layout.h"
#include "muster.h"
#include "muster/parse.h"
#include "providers/tp_util.h"
#include "task.h"

#define EXPECT_EINVAL(call, want)                                              \
  do {                                                                         \
    int rc__ = (call);                                                         \
    if (rc__ != MUSTER_EINVAL || !strstr(muster_last_error(), (want)))         \
      fprintf(stderr, "%s:%d: %s gave %d: \"%s\", want \"%s\"\n", __FILE__,    \
              __LINE__, #call, rc__, muster_last_error(), (want));             \
    ASSERT_EQ(rc__, MUSTER_EINVAL);                                            \
    ASSERT_STR_CONTAINS(muster_last_error(), (want));                          \
  } while (0)

TEST_IMPL(parse_numbers_edges) {
  int64_t v;
  uint64_t u;
  double d;
  ASSERT_OK(muster_parse_i64("-9223372036854775808", INT64_MIN, INT64_MAX, &v));
  ASSERT(v == INT64_MIN);
  ASSERT_OK(muster_parse_i64("9223372036854775807", INT64_MIN, INT64_MAX, &v));
  ASSERT(v == INT64_MAX);
  ASSERT_OK(muster_parse_i64("007", 0, 10, &v));
  ASSERT_EQ(v, 7);
  EXPECT_EINVAL(muster_parse_i64("9223372036854775808", INT64_MIN, INT64_MAX, &v),
                "'9223372036854775808' is out of range");
  EXPECT_EINVAL(muster_parse_i64("-9223372036854775809", INT64_MIN, INT64_MAX, &v),
                "out of range");
  EXPECT_EINVAL(muster_parse_i64("4294967298", 1, 64, &v), "'4294967298' is out of range 1..64");
  EXPECT_EINVAL(muster_parse_i64("", 1, 64, &v), "'' is empty");
  EXPECT_EINVAL(muster_parse_i64(NULL, 1, 64, &v), "no value");
  EXPECT_EINVAL(muster_parse_i64("-", 1, 64, &v), "'-' is not a decimal integer");
  EXPECT_EINVAL(muster_parse_i64("+5", 1, 64, &v), "'+5' is not a decimal integer");
  EXPECT_EINVAL(muster_parse_i64(" 5", 1, 64, &v), "' 5' is not");
  EXPECT_EINVAL(muster_parse_i64("5\t", 1, 64, &v), "'5?' is not");
  ASSERT_OK(muster_parse_u64("18446744073709551615", UINT64_MAX, &u));
  ASSERT(u == UINT64_MAX);
  EXPECT_EINVAL(muster_parse_u64("18446744073709551616", UINT64_MAX, &u), "out of range");
  EXPECT_EINVAL(muster_parse_u64("-0", UINT64_MAX, &u), "without sign");
  int64_t list[4];
  ASSERT_EQ(muster_parse_i64_list("1,2,3", 0, 9, list, 4), 3);
  ASSERT_EQ(list[2], 3);
  EXPECT_EINVAL(muster_parse_i64_list("1,2,3,4,5", 0, 9, list, 4), "more than 4 entries");
  EXPECT_EINVAL(muster_parse_i64_list("1,,2", 0, 9, list, 4), "'1,,2' has an empty entry");
  EXPECT_EINVAL(muster_parse_i64_list("1,99", 0, 9, list, 4), "entry 2 of '1,99': '99' is out");
  ASSERT_OK(muster_parse_seconds("inf", 1, &d));
  ASSERT(d == 0);
  ASSERT_OK(muster_parse_seconds("Infinity", 1, &d));
  ASSERT_OK(muster_parse_seconds("2.5e1", 0, &d));
  ASSERT(d == 25);
  ASSERT_OK(muster_parse_seconds("31536000", 0, &d));
  ASSERT_OK(muster_parse_seconds(".5", 0, &d));
  static const char *const bad_s[] = {"inf", "1e300", "nan", "0", "-1", "0x1p3", "1e", "e5", ".",
                                      "1e-4", "31536000.5", "5s", NULL};
  for (int i = 0; bad_s[i]; i++) EXPECT_EINVAL(muster_parse_seconds(bad_s[i], 0, &d), "is not");
  char long_name[64];
  memset(long_name, 'a', 32);
  long_name[32] = '\0';
  ASSERT_OK(muster_parse_backend("cusolver-mg_2.x", 15));
  EXPECT_EINVAL(muster_parse_backend(long_name, 32), "longer than 31 bytes");
  EXPECT_EINVAL(muster_parse_backend(".x", 2), "starts with '.'");
  EXPECT_EINVAL(muster_parse_backend("a/b", 3), "'a/b' is not a provider name");
  return 0;
}

struct var_case {
  const char *var, *value, *want;
};

static int join_rc(void) {
  muster_group_t *g = NULL;
  int rc = muster_group_join("envt", 0, 1, NULL, &g);
  if (g) muster_group_leave(g);
  return rc;
}

static int launch_rc(void) {
  muster_launch_t *l = NULL;
  int rc = muster_launch_open("envl", 1, NULL, MUSTER_LAUNCH_UNNAMED, &l);
  if (l) muster_launch_close(l);
  return rc;
}

static int solve_rc(void) {
  tp_problem_t p;
  tp_problem_init(&p, MUSTER_POTRS, MUSTER_F64, 8, 1, 0);
  muster_solve_result_t res;
  int rc = muster_solve_all(&p.args, p.nshards, p.shards, &res);
  tp_problem_free(&p);
  return rc;
}

static int list_rc(void) {
  muster_provider_info_t info[8];
  int rc = muster_providers_list(info, 8);
  return rc < 0 ? rc : 0;
}

/* Set each case's variable, expect every call in calls[] (NULL-ended) to
 * refuse it naming it, then restore the variable. */
static void refuse_each(const struct var_case *c, size_t n, int (*const *calls)(void)) {
  for (size_t i = 0; i < n; i++) {
    char *old = getenv(c[i].var) ? strdup(getenv(c[i].var)) : NULL;
    setenv(c[i].var, c[i].value, 1);
    for (int k = 0; calls[k]; k++) EXPECT_EINVAL(calls[k](), c[i].want);
    if (old) setenv(c[i].var, old, 1);
    else unsetenv(c[i].var);
    free(old);
  }
}

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* Each variable refused by each call that reads it. */
TEST_IMPL(env_variables_refused) {
  /* only the lapack provider: loading cusolvermg's CUDA libraries under
   * valgrind trips ld.so's own strncmp over-read */
  char dir[256], lapack[PATH_MAX];
  test_tmp_dir(dir, sizeof dir);
  snprintf(lapack, sizeof lapack, "%s/lapack.so", tp_lapack_dir());
  tp_link_abs(dir, "potrs", "lapack.so", lapack);
  setenv("MUSTER_PROVIDER_PATH", dir, 1);
  static char big[5001];
  memset(big, 'x', 5000);
  const struct var_case group_vars[] = {
      {"MUSTER_TIMEOUT", "inf5", "MUSTER_TIMEOUT: 'inf5' is not a number of seconds"},
      {"MUSTER_TIMEOUT", "1e300", "MUSTER_TIMEOUT: '1e300'"},
      {"MUSTER_TIMEOUT", "", "MUSTER_TIMEOUT is set but empty"},
      {"MUSTER_JOB", "", "MUSTER_JOB is set but empty"},
      {"MUSTER_JOB", "a.b", "MUSTER_JOB 'a.b'"},
      {"MUSTER_JOB", big, "MUSTER_JOB 'xxxxxxxxxxxxxxxx"},
      {"MUSTER_LOG", "loud", "MUSTER_LOG: 'loud' is not a log level"},
  };
  int (*const group_calls[])(void) = {join_rc, launch_rc, NULL};
  refuse_each(group_vars, COUNT(group_vars), group_calls);
  const struct var_case solve_vars[] = {
      {"MUSTER_PROVIDER", "=,=,potrs=", "MUSTER_PROVIDER: entry 1 '=' has no routine"},
      {"MUSTER_PROVIDER", big, "MUSTER_PROVIDER: entry 1: 'xxxx"},
      {"MUSTER_PROVIDER", "", "MUSTER_PROVIDER is set but empty"},
      {"MUSTER_LOG", "", "MUSTER_LOG is set but empty"},
      {"MUSTER_COST_PATH", "", "MUSTER_COST_PATH is set but empty"},
      {"MUSTER_COST_PATH", "/a::/b", "MUSTER_COST_PATH: folder 2 of '/a::/b' is empty"},
  };
  int (*const solve_calls[])(void) = {solve_rc, NULL};
  refuse_each(solve_vars, COUNT(solve_vars), solve_calls);
  const struct var_case list_vars[] = {
      {"MUSTER_PROVIDER_PATH", "", "MUSTER_PROVIDER_PATH is set but empty"},
      {"MUSTER_PROVIDER_PATH", "/a:", "MUSTER_PROVIDER_PATH: folder 2 of '/a:' is empty"},
      {"MUSTER_LOG", "5", "MUSTER_LOG: '5' is not a log level"},
      {"MUSTER_COST_PATH", ":/a", "MUSTER_COST_PATH: folder 1 of ':/a' is empty"},
  };
  int (*const list_calls[])(void) = {list_rc, NULL};
  refuse_each(list_vars, COUNT(list_vars), list_calls);
  /* a provider name passed by the caller is checked the same way */
  tp_problem_t p;
  tp_problem_init(&p, MUSTER_POTRS, MUSTER_F64, 8, 1, 0);
  p.args.provider = big;
  muster_solve_result_t res;
  EXPECT_EINVAL(muster_solve_all(&p.args, p.nshards, p.shards, &res), "longer than 31 bytes");
  tp_problem_free(&p);
  /* the tests' staging fault (comm_stage.c reads it once) is checked too */
  setenv("MUSTER_COMM_TEST_FAIL_STAGE", "64", 1);
  EXPECT_EINVAL(muster_env_check(), "MUSTER_COMM_TEST_FAIL_STAGE (tests only: a rank): '64'");
  setenv("MUSTER_COMM_TEST_FAIL_STAGE", "1", 1);
  ASSERT_OK(muster_env_check());
  unsetenv("MUSTER_COMM_TEST_FAIL_STAGE");
  /* and everything valid still works */
  ASSERT_OK(list_rc());
  ASSERT_OK(join_rc());
  ASSERT_OK(launch_rc());
  ASSERT_EQ(test_count_job_segments(test_job()), 0);
  test_remove_tree(dir);
  return 0;
}

/* MUSTER_MPI_LIB, where MPI is used (muster_comm_open of kind mpi): a
 * value that is empty, does not load or is no libmpi is MUSTER_EINVAL
 * naming the variable and the value (each used to be passed over for the
 * default libmpi.so.40, so a typo ran another MPI than the one asked for).
 * libmpi is loaded once per process: each case in its own child. */
TEST_IMPL(env_mpi_lib_refused) {
  static const struct var_case cases[] = {
      {"MUSTER_MPI_LIB", "", "MUSTER_MPI_LIB is set but empty"},
      {"MUSTER_MPI_LIB", "garbage", "MUSTER_MPI_LIB: cannot load 'garbage': garbage: "},
      {"MUSTER_MPI_LIB", "/nonexistent/libmpi.so.40", "cannot load '/nonexistent/libmpi.so.40'"},
      {"MUSTER_MPI_LIB", "/etc/passwd", "MUSTER_MPI_LIB: cannot load '/etc/passwd'"},
      {"MUSTER_MPI_LIB", "libm.so.6", "MUSTER_MPI_LIB: 'libm.so.6' is no libmpi"},
  };
  for (size_t i = 0; i < COUNT(cases); i++) {
    fflush(NULL);
    pid_t pid = fork();
    ASSERT(pid >= 0);
    if (pid == 0) {
      setenv(cases[i].var, cases[i].value, 1);
      muster_comm_opts_t o = {.kind = "mpi"};
      muster_comm_t *c = NULL;
      EXPECT_EINVAL(muster_comm_open(&o, &c), cases[i].want);
      EXPECT_EINVAL(muster_comm_open(&o, &c), cases[i].want); /* every time */
      _exit(0);
    }
    int st;
    ASSERT_EQ(waitpid(pid, &st, 0), pid);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) fprintf(stderr, "case '%s': status 0x%x\n", cases[i].value, st);
    ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  }
  /* the check of every variable refuses the empty one (it cannot know
   * whether a path loads without loading MPI) */
  setenv("MUSTER_MPI_LIB", "", 1);
  EXPECT_EINVAL(muster_env_check(), "MUSTER_MPI_LIB is set but empty");
  setenv("MUSTER_MPI_LIB", "garbage", 1);
  ASSERT_OK(muster_env_check());
  ASSERT_OK(join_rc()); /* nothing that does not use MPI minds it */
  unsetenv("MUSTER_MPI_LIB");
  return 0;
}

/* MUSTER_TIMEOUT and opts->timeout_s: their range, and "no deadline". */
/* muster_timeout: the caller's value, else MUSTER_TIMEOUT, else the
 * default; a malformed variable is an error naming it, never 60 s. */
TEST_IMPL(env_timeout_precedence_public) {
  double t = -1;
  unsetenv("MUSTER_TIMEOUT");
  ASSERT_OK(muster_timeout(0, &t));
  ASSERT(t == MUSTER_DEFAULT_TIMEOUT_S);
  setenv("MUSTER_TIMEOUT", "7.5", 1);
  ASSERT_OK(muster_timeout(-1, &t));
  ASSERT(t == 7.5);
  ASSERT_OK(muster_timeout(2, &t)); /* the caller's wins */
  ASSERT(t == 2);
  ASSERT_OK(muster_timeout(INFINITY, &t));
  ASSERT(t == 0);
  setenv("MUSTER_TIMEOUT", "inf", 1);
  ASSERT_OK(muster_timeout(0, &t));
  ASSERT(t == 0);
  const char *bad[] = {"sixty", "", "-3", "1e300"};
  for (int i = 0; i < 4; i++) {
    setenv("MUSTER_TIMEOUT", bad[i], 1);
    t = -1;
    EXPECT_EINVAL(muster_timeout(0, &t), "MUSTER_TIMEOUT");
    ASSERT(t == -1);
    ASSERT_OK(muster_timeout(3, &t)); /* the variable is not read then */
  }
  unsetenv("MUSTER_TIMEOUT");
  EXPECT_EINVAL(muster_timeout(NAN, &t), "timeout_s");
  EXPECT_EINVAL(muster_timeout(1e-9, &t), "timeout_s");
  EXPECT_EINVAL(muster_timeout(1, NULL), "NULL");
  return 0;
}

/* The library's version: the header's it was built with, in both forms. */
TEST_IMPL(version_runtime) {
  ASSERT(!strcmp(muster_version(), MUSTER_VERSION_STRING));
  ASSERT_EQ(muster_version_number(), MUSTER_VERSION_NUMBER);
  int major = -1, minor = -1, patch = -1;
  ASSERT_EQ(sscanf(muster_version(), "%d.%d.%d", &major, &minor, &patch), 3);
  ASSERT_EQ(muster_version_number(), major * 1000000 + minor * 1000 + patch);
  ASSERT_EQ(major, MUSTER_VERSION_MAJOR);
  return 0;
}

TEST_IMPL(env_timeout_range) {
  const char *job;
  double t;
  muster_group_opts_t o = {.job = NULL, .timeout_s = 0, .device = -1};
  setenv("MUSTER_TIMEOUT", "inf", 1);
  ASSERT_OK(muster__group_check_args("g", 0, 2, NULL, &job, &t));
  ASSERT(t == 0);
  setenv("MUSTER_TIMEOUT", "0.25", 1);
  ASSERT_OK(muster__group_check_args("g", 0, 2, &o, &job, &t));
  ASSERT(t == 0.25);
  unsetenv("MUSTER_TIMEOUT");
  ASSERT_OK(muster__group_check_args("g", 0, 2, NULL, &job, &t));
  ASSERT(t == MUSTER_DEFAULT_TIMEOUT_S);
  ASSERT(!strcmp(job, "default") || !strcmp(job, test_job()));
  o.timeout_s = INFINITY;
  ASSERT_OK(muster__group_check_args("g", 0, 2, &o, &job, &t));
  ASSERT(t == 0);
  const double bad[] = {NAN, 1e300, 1e-9, MUSTER_MAX_SECONDS * 2};
  for (int i = 0; i < 4; i++) {
    o.timeout_s = bad[i];
    EXPECT_EINVAL(muster__group_check_args("g", 0, 2, &o, &job, &t), "timeout_s");
  }
  /* a join with no deadline passes rounds as usual */
  muster_group_t *g;
  o.timeout_s = INFINITY;
  ASSERT_OK(muster_group_join("inf", 0, 1, &o, &g));
  ASSERT_OK(muster_group_barrier(g));
  ASSERT_OK(muster_group_leave(g));
  muster_group_cache_flush();
  return 0;
}

/* Tile helpers and the public check for any int64 tile: no overflow (this
 * runs under UBSan), the nearest valid tiles still named. */
TEST_IMPL(layout_tile_any_int64) {
  const int64_t tiles[] = {INT64_MAX, INT64_MAX - 1, INT64_MIN, INT64_MIN + 1, -1, 0,
                           (int64_t)1 << 62};
  for (size_t i = 0; i < sizeof tiles / sizeof tiles[0]; i++) {
    int64_t t = tiles[i];
    ASSERT_EQ(muster_layout_tile_valid(100, t, 2), 0);
    int64_t below = muster_layout_tile_below(100, t, 2), above = muster_layout_tile_above(100, t, 2);
    if (t > 50) {
      ASSERT_EQ(below, 50);
      ASSERT_EQ(above, 0);
    } else {
      ASSERT_EQ(below, 0);
      ASSERT_EQ(above, 1);
    }
    ASSERT_EQ(muster_layout_check_tile(100, t, 2), MUSTER_ETILE);
    ASSERT_STR_CONTAINS(muster_last_error(), "nearest valid");
  }
  ASSERT_EQ(muster_layout_check_tile(100, INT64_MAX, 2), MUSTER_ETILE);
  ASSERT_STR_CONTAINS(muster_last_error(), "tile 9223372036854775807 invalid for n=100, ranks=2: "
                                           "nearest valid 50");
  return 0;
}
