/*
 * tests/integration/test_cli_conventions.c - what every `muster`
 * subcommand and shmdump share (issue 28, item 4): GNU-style long options
 * (tools/common/cli_args.h), one-line usage errors, JSON strings that are
 * valid UTF-8 (tools/common/json_str.h), and what `muster solve` reports:
 * the tile it used, the whole choice reason, which check ran, progress on
 * stderr only.
 */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "json_str.h"
#include "providers/tp_util.h"
#include "task.h"
#include "test_shmdump_util.h"

/* Run tool `name` (muster or shmdump) with argv; r holds the result. */
static void run(struct tool_result *r, const char *name, const char *const *argv) {
  /* OpenBLAS's pool: a parent with threads forks ranks that TSan kills when
   * they start threads, and its uninstrumented pool looks racy to TSan */
  setenv("OPENBLAS_NUM_THREADS", "1", 0);
  ASSERT_EQ(tool_run(r, 60, NULL, name, argv), 0);
  ASSERT_EQ(r->timed_out, 0);
}

/* `name argv...` is a usage error: exit 2, nothing on stdout, exactly one
 * line on stderr that starts with who, holds want and points to --help. */
static void one_line_error(const char *name, const char *who, const char *const *argv, const char *want) {
  struct tool_result r;
  char hint[128];
  run(&r, name, argv);
  snprintf(hint, sizeof hint, "; see '%s --help'\n", who);
  if (r.exit_code != 2 || count_substr(r.err, "\n") != 1 || !strstr(r.err, want))
    fprintf(stderr, "%s %s: exit %d, stderr: %s\n", name, argv[0], r.exit_code, r.err);
  ASSERT_EQ(r.exit_code, 2);
  ASSERT_EQ(r.out_len, 0);
  ASSERT_EQ(count_substr(r.err, "\n"), 1);
  ASSERT(strncmp(r.err, who, strlen(who)) == 0 && r.err[strlen(who)] == ':');
  ASSERT_STR_CONTAINS(r.err, want);
  ASSERT_STR_CONTAINS(r.err, hint);
  tool_result_free(&r);
}

TEST_IMPL(cli_options_gnu_style) {
  setenv("MUSTER_PROVIDER_PATH", tp_lapack_dir(), 1);
  struct tool_result r;
  /* --n=64 and --n 64 run the same solve; "--" ends the options */
  const char *const forms[][12] = {
      {"solve", "potrs", "--n=64", "--ranks=2", "--seed=3", "--json", NULL},
      {"solve", "potrs", "--n", "64", "--ranks", "2", "--seed", "3", "--json", NULL},
      {"solve", "--n", "64", "--ranks", "2", "--seed=3", "--json", "--", "potrs", NULL},
  };
  for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++) {
    run(&r, "muster", forms[i]);
    if (r.exit_code != 0) fprintf(stderr, "form %zu: %s%s\n", i, r.out, r.err);
    ASSERT_EQ(r.exit_code, 0);
    ASSERT(json_valid(r.out));
    ASSERT_STR_CONTAINS(r.out, "\"routine\":\"potrs\",\"n\":64,");
    ASSERT_STR_CONTAINS(r.out, "\"seed\":3,");
    ASSERT_STR_CONTAINS(r.out, "\"ok\":true");
    tool_result_free(&r);
  }
  /* after "--" a word that looks like an option is an operand */
  const char *const dashdash[] = {"solve", "potrs", "--", "--n", NULL};
  one_line_error("muster", "muster solve", dashdash, "one ROUTINE only, not '--n' too");
  /* the messages, for every subcommand and shmdump */
  const char *const unknown[] = {"solve", "potrs", "--n", "8", "--x", NULL};
  one_line_error("muster", "muster solve", unknown, "unknown option '--x'");
  const char *const unknown_eq[] = {"solve", "potrs", "--bogus=3", NULL};
  one_line_error("muster", "muster solve", unknown_eq, "unknown option '--bogus'");
  const char *const missing[] = {"solve", "potrs", "--n", NULL};
  one_line_error("muster", "muster solve", missing, "option '--n' needs a value");
  const char *const flag_value[] = {"solve", "potrs", "--json=yes", NULL};
  one_line_error("muster", "muster solve", flag_value, "option '--json' takes no value");
  const char *const bad_value[] = {"solve", "potrs", "--n=0", NULL};
  one_line_error("muster", "muster solve", bad_value, "--n: '0' is out of range 1..65536");
  const char *const bad_check[] = {"solve", "potrs", "--check=most", NULL};
  one_line_error("muster", "muster solve", bad_check, "--check none, residual or full, not 'most'");
  const char *const no_routine[] = {"solve", "--n", "8", NULL};
  one_line_error("muster", "muster solve", no_routine, "which ROUTINE (potrs, potri, syevd, getrs, gels)?");
  const char *const rv[] = {"rendezvous", "--rounds=5", "--x", NULL};
  one_line_error("muster", "muster rendezvous", rv, "unknown option '--x'");
  const char *const bench[] = {"bench", "--reps", NULL};
  one_line_error("muster", "muster bench", bench, "option '--reps' needs a value");
  const char *const cal[] = {"bench", "--calibrate", "--provider=lapack", "--frob", NULL};
  one_line_error("muster", "muster bench --calibrate", cal, "unknown option '--frob'");
  const char *const prov[] = {"providers", "--x", NULL};
  one_line_error("muster", "muster providers", prov, "unknown option '--x'");
  const char *const sub[] = {"solver", NULL};
  one_line_error("muster", "muster", sub, "unknown subcommand 'solver'");
  const char *const sd[] = {"--job", NULL};
  one_line_error("shmdump", "shmdump", sd, "option '--job' needs a value");
  const char *const sd2[] = {"--dir=/dev/shm", "--x", NULL};
  one_line_error("shmdump", "shmdump", sd2, "unknown option '--x'");
  /* --opt=value works in the other parsers too */
  const char *const sd_eq[] = {"--dir=/nonexistent-muster-dir", "--json", NULL};
  run(&r, "shmdump", sd_eq);
  ASSERT_EQ(r.exit_code, 1); /* DIR unreadable, not a usage error */
  tool_result_free(&r);
  ASSERT_EQ(test_count_job_segments(test_job()), 0);
  return 0;
}

#define ASSERT_STR_EQ(a, b)                                                        \
  do {                                                                             \
    if (strcmp((a), (b)) != 0) fprintf(stderr, "got  %s\nwant %s\n", (a), (b));   \
    ASSERT(strcmp((a), (b)) == 0);                                                 \
  } while (0)

/* A copy of file from at to (a listing shows a link's target instead). */
static void copy_file(const char *from, const char *to) {
  char buf[65536];
  FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
  ASSERT(in && out);
  for (size_t n; (n = fread(buf, 1, sizeof buf, in)) > 0;) ASSERT_EQ(fwrite(buf, 1, n, out), n);
  fclose(in);
  ASSERT_EQ(fclose(out), 0);
}

/* s through json_put_str, into buf */
static void json_of(const char *s, char *buf, size_t cap) {
  FILE *f = fmemopen(buf, cap, "w");
  ASSERT(f != NULL);
  json_put_str(f, s, SIZE_MAX);
  ASSERT_EQ(fclose(f), 0);
}

TEST_IMPL(cli_json_strings_utf8) {
  char buf[256];
  /* UTF-8 as it is; '"', '\\' and control bytes escaped */
  json_of("a\xc3\xa9\"\\\x01\x7f\xe2\x82\xac\xf0\x9f\x98\x80", buf, sizeof buf);
  ASSERT_STR_EQ(buf, "\"a\xc3\xa9\\\"\\\\\\u0001\\u007f\xe2\x82\xac\xf0\x9f\x98\x80\"");
  /* every byte of ill-formed UTF-8 is U+FFFD: a stray continuation, a
   * lone lead byte, an overlong '/', a surrogate, past U+10FFFF, 0xff, a
   * sequence cut short at the end */
  json_of("\x80|\xc3(|\xc0\xaf|\xed\xa0\x80|\xf4\x90\x80\x80|\xff|\xe2\x82", buf, sizeof buf);
#define R "\xef\xbf\xbd"
  ASSERT_STR_EQ(buf, "\"" R "|" R "(|" R R "|" R R R "|" R R R R "|" R "|" R R "\"");
#undef R
  /* a real one: a provider folder named with é, a control byte and a
   * byte that is no UTF-8; python's json decodes it to that path */
  char dir[256], odd[400], from[PATH_MAX + 64], to[PATH_MAX + 64], cmd[PATH_MAX + 4096];
  test_tmp_dir(dir, sizeof dir);
  snprintf(odd, sizeof odd, "%s/d\xc3\xa9\x01\xff", dir);
  ASSERT_EQ(mkdir(odd, 0700), 0);
  snprintf(to, sizeof to, "%s/potrs", odd);
  ASSERT_EQ(mkdir(to, 0700), 0);
  snprintf(from, sizeof from, "%s/testprov_v1.so", tp_build_dir());
  snprintf(to, sizeof to, "%s/potrs/testprov.so", odd);
  copy_file(from, to);
  tool_path("muster", from, sizeof from);
  setenv("MUSTER_PROVIDER_PATH", odd, 1);
  snprintf(cmd, sizeof cmd,
           "command -v python3 >/dev/null || exit 77; '%s' providers --json | python3 -c '"
           "import json,sys; d=json.load(sys.stdin); p=d[\"providers\"][0][\"path\"]; "
           "sys.exit(0 if \"/d\\u00e9\\x01\\ufffd/potrs/\" in p else 3)'", from);
  int st = system(cmd);
  ASSERT(WIFEXITED(st));
  if (WEXITSTATUS(st) == 77) fprintf(stderr, "no python3: the round trip is not checked\n");
  else ASSERT_EQ(WEXITSTATUS(st), 0);
  test_remove_tree(dir);
  return 0;
}

/* The reason in the JSON: "reason":"..." whole, though longer than the
 * MUSTER_MAX_REASON bytes of res.reason (four unavailable providers make
 * it so on any machine), in threads and processes mode: rank 0's
 * muster_solve_reason, not the choice asked again (which on 2 GPUs named
 * another engine than the one that ran, in a second "choice" log line:
 * run-cli-gpu.sh, 4 x H200, 2026-11-26).  So the log holds exactly one
 * choice for the run's memory: the leader's. */
static int reason_whole_in(const char *mode, const char *const provs[][2]) {
  const char *const argv[] = {"solve", "potrs", "--n", "32", "--ranks", "2", "--mode", mode, "--json", NULL};
  struct tool_result r;
  run(&r, "muster", argv);
  ASSERT_EQ(r.exit_code, 0);
  ASSERT(json_valid(r.out));
  ASSERT_STR_CONTAINS(r.out, "\"provider\":\"lapack\"");
  const char *start = strstr(r.out, "\"reason\":\"");
  ASSERT(start != NULL);
  start += strlen("\"reason\":\"");
  const char *end = strchr(start, '"');
  ASSERT(end != NULL);
  size_t len = (size_t)(end - start);
  fprintf(stderr, "%s: reason %zu bytes\n", mode, len);
  ASSERT(len >= MUSTER_MAX_REASON);
  ASSERT(strncmp(end - 3, "...", 3) != 0);
  for (int i = 0; i < 4; i++) {
    char note[128];
    snprintf(note, sizeof note, "not %s: probe: TESTPROV_UNAVAILABLE names %s", provs[i][0], provs[i][0]);
    ASSERT(memmem(start, len, note, strlen(note)) != NULL);
  }
  int choices = 0;
  for (const char *l = r.err; (l = strstr(l, "choice for potrs f64 n=32 ")) != NULL; l++) {
    const char *eol = strchr(l, '\n');
    size_t n = eol ? (size_t)(eol - l) : strlen(l);
    choices += memmem(l, n, ", host memory,", 14) && memmem(l, n, " wins: ", 7);
  }
  if (choices != 1) fprintf(stderr, "%s: %d host-memory choices logged:\n%s", mode, choices, r.err);
  ASSERT_EQ(choices, 1);
  tool_result_free(&r);
  return 0;
}

TEST_IMPL(cli_json_reason_whole) {
  char dir[256], path[PATH_MAX + 300];
  test_tmp_dir(dir, sizeof dir);
  static const char *const provs[][2] = {
      {"testprov", "testprov_v1.so"}, {"otherprov", "testprov_other.so"},
      {"leadtwo", "testprov_lead2.so"}, {"threadsonly", "testprov_threads2.so"}};
  for (int i = 0; i < 4; i++) {
    char link[64];
    snprintf(link, sizeof link, "%s.so", provs[i][0]);
    tp_link(dir, "potrs", link, provs[i][1]);
  }
  snprintf(path, sizeof path, "%s:%s", dir, tp_lapack_dir());
  setenv("MUSTER_PROVIDER_PATH", path, 1);
  setenv("TESTPROV_UNAVAILABLE", "testprov,otherprov,leadtwo,threadsonly", 1);
  setenv("MUSTER_LOG", "info", 1);
  int rc = reason_whole_in("threads", provs);
  if (rc == 0) rc = reason_whole_in("processes", provs);
  unsetenv("MUSTER_LOG");
  unsetenv("TESTPROV_UNAVAILABLE");
  test_remove_tree(dir);
  ASSERT_EQ(test_count_job_segments(test_job()), 0);
  return rc;
}

/* The tile the solve used, in the JSON and the text: the one given, and
 * the provider's choice when none is (never 0). */
TEST_IMPL(cli_solve_reports_tile) {
  setenv("MUSTER_PROVIDER_PATH", tp_lapack_dir(), 1);
  struct tool_result r;
  const char *const given[] = {"solve", "potrs", "--n", "64", "--ranks", "2", "--tile", "7", "--json", NULL};
  run(&r, "muster", given);
  ASSERT_EQ(r.exit_code, 0);
  ASSERT_STR_CONTAINS(r.out, "\"tile\":7,");
  tool_result_free(&r);
  const char *const text[] = {"solve", "potrs", "--n", "64", "--ranks", "2", "--tile=7", NULL};
  run(&r, "muster", text);
  ASSERT_EQ(r.exit_code, 0);
  ASSERT_STR_CONTAINS(r.out, " tile=7 ");
  tool_result_free(&r);
  const char *const chosen[] = {"solve", "getrs", "--n", "100", "--ranks", "3", "--mode", "processes", "--json", NULL};
  run(&r, "muster", chosen);
  ASSERT_EQ(r.exit_code, 0);
  double tile = json_number(r.out, "tile");
  ASSERT(isfinite(tile) && tile >= 1 && tile <= 100);
  tool_result_free(&r);
  ASSERT_EQ(test_count_job_segments(test_job()), 0);
  return 0;
}

/* --check: the JSON says which ran.  potrs --logdet at n = 3000 checks in
 * O(n^2) by default (its O(n^3) reference took a minute); full computes
 * the reference; none checks nothing and still reports the solve. */
TEST_IMPL(cli_solve_check_levels) {
  setenv("MUSTER_PROVIDER_PATH", tp_lapack_dir(), 1);
  struct tool_result r;
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
  const char *n_big = "1500"; /* n = 3000 took 60 s of TSan's 90 */
#else
  const char *n_big = "3000";
#endif
  const char *const big[] = {"solve", "potrs", "--n", n_big, "--ranks", "1", "--logdet", "--quiet", "--json", NULL};
  run(&r, "muster", big);
  ASSERT_EQ(r.exit_code, 0);
  ASSERT_STR_CONTAINS(r.out, "\"check\":\"residual\"");
  ASSERT(strstr(r.out, "logdet_reference") == NULL);
  ASSERT(isfinite(json_number(r.out, "logdet_lower_bound")));
  ASSERT(json_number(r.out, "residual") < json_number(r.out, "tolerance"));
  tool_result_free(&r);
  const char *const full[] = {"solve", "potrs", "--n", "60", "--ranks", "2", "--logdet", "--check=full", "--json", NULL};
  run(&r, "muster", full);
  ASSERT_EQ(r.exit_code, 0);
  ASSERT_STR_CONTAINS(r.out, "\"check\":\"full\"");
  ASSERT(isfinite(json_number(r.out, "logdet_reference")));
  tool_result_free(&r);
  static const char *const routines[] = {"potri", "syevd"};
  for (int i = 0; i < 2; i++) { /* n > 512 (potri), 256 (syevd): the default samples columns, full takes all */
    const char *const a[] = {"solve", routines[i], "--n", "520", "--ranks", "2", "--check", "full", "--json", NULL};
    run(&r, "muster", a);
    ASSERT_EQ(r.exit_code, 0);
    ASSERT_STR_CONTAINS(r.out, "\"check\":\"full\"");
    ASSERT_STR_CONTAINS(r.out, "\"ok\":true");
    tool_result_free(&r);
  }
  const char *const none[] = {"solve", "syevd", "--n", "40", "--ranks", "2", "--check=none", "--json", NULL};
  run(&r, "muster", none);
  ASSERT_EQ(r.exit_code, 0);
  ASSERT_STR_CONTAINS(r.out, "\"check\":\"none\",\"residual\":null");
  ASSERT_STR_CONTAINS(r.out, "\"ok\":true");
  tool_result_free(&r);
  ASSERT_EQ(test_count_job_segments(test_job()), 0);
  return 0;
}

/* Progress: a line per phase on stderr (--progress: from the start), none
 * on stdout, none with --quiet, none for a short run by default. */
TEST_IMPL(cli_solve_progress_on_stderr) {
  setenv("MUSTER_PROVIDER_PATH", tp_lapack_dir(), 1);
  struct tool_result r;
  static const char *const modes[] = {"threads", "processes"};
  for (int i = 0; i < 2; i++) { /* processes: rank 0's own process says which rep */
    const char *const a[] = {"solve", "potrs", "--n", "50", "--mode", modes[i], "--reps", "2", "--warmup", "1",
                             "--progress", "--json", NULL};
    run(&r, "muster", a);
    ASSERT_EQ(r.exit_code, 0);
    ASSERT(json_valid(r.out));
    ASSERT_STR_CONTAINS(r.err, "muster solve: generating (");
    ASSERT_STR_CONTAINS(r.err, "muster solve: solving rep 1/3 (");
    ASSERT_STR_CONTAINS(r.err, "muster solve: solving rep 3/3 (");
    ASSERT_STR_CONTAINS(r.err, "muster solve: checking (");
    ASSERT(strstr(r.out, "generating") == NULL && strstr(r.out, "solving rep") == NULL);
    tool_result_free(&r);
  }
  const char *const quiet[] = {"solve", "potrs", "--n", "50", "--progress", "--quiet", "--json", NULL};
  run(&r, "muster", quiet);
  ASSERT_EQ(r.exit_code, 0);
  ASSERT_EQ(r.err_len, 0);
  tool_result_free(&r);
  const char *const quick[] = {"solve", "potrs", "--n", "50", NULL};
  run(&r, "muster", quick);
  ASSERT_EQ(r.exit_code, 0);
  if (r.seconds < 1.5) ASSERT(strstr(r.err, "generating") == NULL); /* a loaded machine may take 2 s */
  tool_result_free(&r);
  ASSERT_EQ(test_count_job_segments(test_job()), 0);
  return 0;
}

/* The help is written from the routine and dtype tables: every routine
 * in muster --help's MUSTER_PROVIDER text and solve's list. */
TEST_IMPL(cli_help_from_tables) {
  struct tool_result r;
  const char *const top[] = {"--help", NULL};
  run(&r, "muster", top);
  ASSERT_EQ(r.exit_code, 0);
  ASSERT_STR_CONTAINS(r.out, "(ROUTINE potrs|potri|syevd|getrs|gels, each once;");
  ASSERT_STR_CONTAINS(r.out, "--dtype f32|f64|c64|c128");
  tool_result_free(&r);
  const char *const solve[] = {"solve", "--help", NULL};
  run(&r, "muster", solve);
  ASSERT_EQ(r.exit_code, 0);
  ASSERT_STR_CONTAINS(r.out, "ROUTINE: one of potrs, potri, syevd, getrs, gels.");
  ASSERT_STR_CONTAINS(r.out, "--check none|residual|full");
  tool_result_free(&r);
  return 0;
}
