/*
 * tests/integration/test_cli_numbers.c - every number and name option of
 * `muster solve`, `muster bench` and `muster rendezvous`, and every MUSTER_*
 * variable the CLI reads, fed malformed, empty, negative, huge and
 * overflowing values: each must be exit 2 with a message naming the option
 * (or variable) and quoting the value, never a silent truncation, a
 * fallback or a crash (the ASan+UBSan suite runs this too).  Values that
 * would be accepted start a tiny run, which exits 0: the test then fails.
 */
#include <string.h>

#include "muster.h"
#include "providers/tp_util.h"
#include "task.h"
#include "test_shmdump_util.h"

/* integers no option accepts (every range here is within 0..2^63-1 and
 * excludes -1 and 2^32+2) */
static const char *const bad_ints[] = {
    "", "abc", "-1", "-1x", "0x10", " 5", "5 ", "+5", "1e3", "1.5", "4294967298",
    "-4294967295", "9223372036854775807", "9223372036854775808", "-9223372036854775809",
    "99999999999999999999", "1\n2", NULL};
/* --seed takes all of uint64: only these are bad */
static const char *const bad_u64[] = {"", "abc", "-1", "0x10", " 5", "+5", "1e3",
                                      "18446744073709551616", "99999999999999999999", NULL};
static const char *const bad_lists[] = {"", ",", "1,", ",1", "1,,2", "1;2", "1 2", "-1",
                                        "4294967298", "99999999999999999999", "1,0x2", NULL};
static const char *const bad_names[] = {"", "a/b", "a b", ".hidden", "=,=,potrs=", "lapack,x",
                                        "x\001y", NULL /* + a 5000-byte one */};

/* --modes: names of `muster bench`'s modes, each known (an unknown one ran
 * nothing and exited 0 with an empty table) */
static const char *const bad_modes[] = {"", "bogus", "lapacke,", ",lapacke", "lapacke,,muster-threads",
                                        "muster-threads,bogus", "x\001y", NULL};

struct opt_case {
  const char *const *args;  /* a valid, tiny run, before the option */
  const char *opt;
  const char *const *bad;
};

static const char *const solve[] = {"solve", "potrs", "--n", "16", "--ranks", "2", NULL};
static const char *const gels[] = {"solve", "gels", "--n", "16", "--ranks", "2", NULL};
static const char *const bench[] = {"bench", "--n", "16", "--reps", "1", "--modes",
                                    "muster-threads", NULL};
static const char *const bench_gels[] = {"bench", "--routine", "gels", "--n", "16", "--reps", "1",
                                         "--modes", "muster-threads", NULL};
static const char *const cal[] = {"bench", "--calibrate", "--provider", "lapack", "--n", "16",
                                  "--ranks", "1", "--reps", "1", "--out", "-", NULL};
static const char *const rdv[] = {"rendezvous", "--ranks", "1", "--rounds", "1", NULL};

static const struct opt_case cases[] = {
    {solve, "--n", bad_ints},        {solve, "--nrhs", bad_ints},
    {solve, "--tile", bad_ints},     {solve, "--ranks", bad_ints},
    {solve, "--reps", bad_ints},     {solve, "--warmup", bad_ints},
    {solve, "--seed", bad_u64},      {solve, "--devices", bad_lists},
    {solve, "--provider", bad_names}, {gels, "--m", bad_ints},
    {bench, "--n", bad_lists},       {bench, "--ranks", bad_ints},
    {bench, "--nrhs", bad_ints},     {bench, "--reps", bad_ints},
    {bench, "--warmup", bad_ints},   {bench, "--seed", bad_u64},
    {bench_gels, "--m", bad_ints},   {bench, "--modes", bad_modes},
    {cal, "--n", bad_lists},         {cal, "--ranks", bad_lists},
    {cal, "--nrhs", bad_ints},       {cal, "--reps", bad_ints},
    {cal, "--warmup", bad_ints},     {cal, "--devices", bad_lists},
    {cal, "--provider", bad_names},
    {rdv, "--ranks", bad_ints},      {rdv, "--rounds", bad_ints},
    {rdv, "--warmup", bad_ints},     {rdv, "--cycles", bad_ints},
    {rdv, "--payload", bad_ints},
};

/* "'<value>'" as the parser quotes it (48 bytes at most, '?' for bytes
 * that are not printable) */
static void quoted(const char *v, char *buf, size_t cap) {
  size_t n = strlen(v) < 48 ? strlen(v) : 48, k = 0;
  buf[k++] = '\'';
  for (size_t i = 0; i < n && k + 2 < cap; i++) buf[k++] = (v[i] >= 0x20 && v[i] < 0x7f) ? v[i] : '?';
  buf[k++] = '\'';
  buf[k] = '\0';
}

static int refused(const char *const *args, const char *opt, const char *value,
                   const char *const *env, const char *want) {
  const char *argv[32];
  int n = 0;
  for (int i = 1; args[i - 1] && n < 28; i++) argv[n++] = args[i - 1];
  if (opt) {
    argv[n++] = opt;
    argv[n++] = value;
  }
  argv[n] = NULL;
  struct tool_result r;
  ASSERT_EQ(tool_run(&r, 60, env, "muster", argv), 0);
  int ok = r.exit_code == 2 && r.out_len == 0 && strstr(r.err, want) != NULL;
  if (!ok)
    fprintf(stderr, "%s %s '%.60s' %s: exit %d, want 2 and \"%.80s\"; stderr: %.300s\n", args[0],
            opt ? opt : "", value ? value : "", env ? env[0] : "", r.exit_code, want, r.err);
  tool_result_free(&r);
  return ok;
}

TEST_IMPL(cli_options_refuse_bad_numbers) {
  setenv("MUSTER_PROVIDER_PATH", tp_lapack_dir(), 1);
  unsetenv("MUSTER_PROVIDER");
  static char huge[5001];
  memset(huge, '7', 5000);
  int failures = 0, runs = 0;
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    const struct opt_case *oc = &cases[c];
    for (int i = 0; i == 0 || oc->bad[i - 1]; i++) {
      const char *v = oc->bad[i] ? oc->bad[i] : huge; /* the list, then a 5000-byte value */
      char q[64], want[128];
      quoted(v, q, sizeof q);
      snprintf(want, sizeof want, "%s: %s", oc->opt, v[0] ? "" : "''");
      failures += !refused(oc->args, oc->opt, v, NULL, want) ||
                  !refused(oc->args, oc->opt, v, NULL, q); /* names it, quotes the value */
      runs++;
    }
  }
  fprintf(stderr, "%d bad option values, %d not refused as they should\n", runs, failures);
  ASSERT_EQ(failures, 0);
  return 0;
}

struct env_case {
  const char *var, *value, *want;
};

TEST_IMPL(cli_env_refuse_bad_values) {
  static char big[6000], many[200], longdir[4000];
  memset(big, 'x', 5000);
  for (int i = 0; i < 17; i++) strcat(many, i ? ":/d" : "/d");
  memset(longdir, 'd', 3900);
  longdir[0] = '/';
  const struct env_case cases_env[] = {
      {"MUSTER_TIMEOUT", "", "MUSTER_TIMEOUT is set but empty"},
      {"MUSTER_TIMEOUT", "abc", "MUSTER_TIMEOUT: 'abc' is not a number of seconds"},
      {"MUSTER_TIMEOUT", "1e300", "MUSTER_TIMEOUT: '1e300' is not a number of seconds"},
      {"MUSTER_TIMEOUT", "31536001", "MUSTER_TIMEOUT: '31536001' is not"},
      {"MUSTER_TIMEOUT", "-1", "MUSTER_TIMEOUT: '-1' is not"},
      {"MUSTER_TIMEOUT", "0", "MUSTER_TIMEOUT: '0' is not"},
      {"MUSTER_TIMEOUT", "nan", "MUSTER_TIMEOUT: 'nan' is not"},
      {"MUSTER_TIMEOUT", "0x10", "MUSTER_TIMEOUT: '0x10' is not"},
      {"MUSTER_TIMEOUT", "5 ", "MUSTER_TIMEOUT: '5 ' is not"},
      {"MUSTER_TIMEOUT", "1e-9", "MUSTER_TIMEOUT: '1e-9' is not"},
      {"MUSTER_JOB", "", "MUSTER_JOB is set but empty"},
      {"MUSTER_JOB", "a/b", "MUSTER_JOB 'a/b'"},
      {"MUSTER_JOB", "a.b", "MUSTER_JOB 'a.b'"},
      {"MUSTER_JOB", "a b", "MUSTER_JOB 'a b'"},
      {"MUSTER_JOB", big, "MUSTER_JOB 'xxxxxxxx"},
      {"MUSTER_LOG", "", "MUSTER_LOG is set but empty"},
      {"MUSTER_LOG", "verbose", "MUSTER_LOG: 'verbose' is not a log level"},
      {"MUSTER_LOG", "5", "MUSTER_LOG: '5' is not a log level"},
      {"MUSTER_PROVIDER", "", "MUSTER_PROVIDER is set but empty"},
      {"MUSTER_PROVIDER", "=,=,potrs=", "MUSTER_PROVIDER: entry 1 '=' has no routine"},
      {"MUSTER_PROVIDER", "potrs=", "MUSTER_PROVIDER: entry 1: '' is an empty provider name"},
      {"MUSTER_PROVIDER", "pot=x", "MUSTER_PROVIDER: entry 1 'pot=x' names no routine"},
      {"MUSTER_PROVIDER", "potrs=a,potrs=b", "entry 2 'potrs=b' repeats a routine"},
      {"MUSTER_PROVIDER", "a,b", "entry 2 'b' is a second bare NAME"},
      {"MUSTER_PROVIDER", "lapack,", "MUSTER_PROVIDER: entry 2: '' is an empty provider name"},
      {"MUSTER_PROVIDER", big, "MUSTER_PROVIDER: entry 1: 'xxxxxxxx"},
      {"MUSTER_PROVIDER_PATH", "", "MUSTER_PROVIDER_PATH is set but empty"},
      {"MUSTER_PROVIDER_PATH", ":", "MUSTER_PROVIDER_PATH: folder 1 of ':' is empty"},
      {"MUSTER_PROVIDER_PATH", "/a::/b", "MUSTER_PROVIDER_PATH: folder 2 of '/a::/b' is empty"},
      {"MUSTER_PROVIDER_PATH", many, "MUSTER_PROVIDER_PATH: more than 16 folders in '/d:/d"},
      {"MUSTER_PROVIDER_PATH", longdir, "MUSTER_PROVIDER_PATH: folder 1 ('/ddddd"},
      {"MUSTER_COST_PATH", "", "MUSTER_COST_PATH is set but empty"},
      {"MUSTER_COST_PATH", "/a:", "MUSTER_COST_PATH: folder 2 of '/a:' is empty"},
      {"MUSTER_COST_PATH", many, "MUSTER_COST_PATH: more than 16 folders"},
      {"MUSTER_MPI_ABORT", "yes", "MUSTER_MPI_ABORT: 'yes' is not 0 or 1"},
      {"MUSTER_MPI_ABORT", "", "MUSTER_MPI_ABORT is set but empty"},
      {"MUSTER_MPI_HEARTBEAT", "2", "MUSTER_MPI_HEARTBEAT: '2' is not 0 or 1"},
      {"MUSTER_MPI_HEARTBEAT", "", "MUSTER_MPI_HEARTBEAT is set but empty"},
      {"MUSTER_LAUNCH_TEST_STOP", "", "MUSTER_LAUNCH_TEST_STOP: '' is empty"},
      {"MUSTER_LAUNCH_TEST_STOP", "-1", "MUSTER_LAUNCH_TEST_STOP: '-1' is out of range 0..1023"},
      {"MUSTER_LAUNCH_TEST_STOP", "99999999999999999999", "MUSTER_LAUNCH_TEST_STOP: '99999"},
      {"MUSTER_LAUNCH_TEST_FORK_FAIL", "", "MUSTER_LAUNCH_TEST_FORK_FAIL: '' is empty"},
      {"MUSTER_LAUNCH_TEST_FORK_FAIL", "x", "MUSTER_LAUNCH_TEST_FORK_FAIL: 'x' is not"},
  };
  int failures = 0, n = (int)(sizeof cases_env / sizeof cases_env[0]);
  for (int i = 0; i < n; i++) {
    char kv[6100];
    snprintf(kv, sizeof kv, "%s=%s", cases_env[i].var, cases_env[i].value);
    const char *env[] = {kv, NULL};
    /* every subcommand checks the environment before anything else */
    failures += !refused(rdv, NULL, NULL, env, cases_env[i].want);
    failures += !refused(solve, NULL, NULL, env, cases_env[i].want);
  }
  fprintf(stderr, "%d bad variable values, %d not refused as they should\n", n, failures);
  ASSERT_EQ(failures, 0);
  /* shmdump's one value with a rule: --job */
  static const char *const bad_jobs[] = {"a/b", "a.b", "a b", big, NULL};
  for (int i = 0; bad_jobs[i]; i++) {
    struct tool_result r;
    const char *argv[] = {"--job", bad_jobs[i], NULL};
    ASSERT_EQ(tool_run(&r, 30, NULL, "shmdump", argv), 0);
    if (r.exit_code != 2) fprintf(stderr, "shmdump --job '%.40s': exit %d\n", bad_jobs[i], r.exit_code);
    ASSERT_EQ(r.exit_code, 2);
    ASSERT_STR_CONTAINS(r.err, "shmdump: --job: job name");
    tool_result_free(&r);
  }
  /* MUSTER_MPI_LIB where MPI is used (--launcher mpi, no mpirun: MPI
   * would start as a singleton): exit 2 naming it, before MPI starts;
   * every value fell back to libmpi.so.40 and ran with exit 0 */
  static const char *const solve_mpi[] = {"solve", "potrs", "--n", "16", "--launcher", "mpi", NULL};
  const struct env_case mpi_libs[] = {
      {"MUSTER_MPI_LIB", "", "muster: MUSTER_MPI_LIB is set but empty"},
      {"MUSTER_MPI_LIB", "garbage", "MUSTER_MPI_LIB: cannot load 'garbage'"},
      {"MUSTER_MPI_LIB", "/nonexistent/libmpi.so", "MUSTER_MPI_LIB: cannot load '/nonexistent/libmpi.so'"},
      {"MUSTER_MPI_LIB", "libm.so.6", "MUSTER_MPI_LIB: 'libm.so.6' is no libmpi"},
  };
  for (size_t i = 0; i < sizeof mpi_libs / sizeof mpi_libs[0]; i++) {
    char kv[200];
    snprintf(kv, sizeof kv, "%s=%s", mpi_libs[i].var, mpi_libs[i].value);
    const char *env[] = {kv, NULL};
    failures += !refused(solve_mpi, NULL, NULL, env, mpi_libs[i].want);
  }
  ASSERT_EQ(failures, 0);
  /* the accepted forms still run */
  const char *ok_env[] = {"MUSTER_TIMEOUT=inf", "MUSTER_LOG=WARN", "MUSTER_JOB=j_1",
                          "MUSTER_MPI_LIB=garbage" /* no MPI used: not looked at */, NULL};
  struct tool_result r;
  const char *argv[] = {"rendezvous", "--ranks", "2", "--rounds", "3", NULL};
  ASSERT_EQ(tool_run(&r, 60, ok_env, "muster", argv), 0);
  ASSERT_EQ(r.exit_code, 0);
  tool_result_free(&r);
  return 0;
}
