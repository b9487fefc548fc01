/*
 * tests/integration/test_examples.c - runs the programs of docs/examples
 * (built into <build>/examples; run here from their copies in
 * <build>/tests/examples) and checks their exit status and output:
 * an example that no longer builds, runs or says what its README promises
 * fails here.  Each example checks its own results (residuals, payloads);
 * these tests check that it said so, printed nothing on stderr, and that a
 * failure is reported with muster_last_error().
 */
#include "task.h"
#include "test_shmdump_util.h"

#define RUN_TIMEOUT 50

/* The examples' copies for the tests, <build>/tests/examples (tool_path:
 * beside run-tests, so a copied build folder's bin, lib and tests run them;
 * docs/examples/SConscript). */
#define EXAMPLES "tests/examples/"
#define EXAMPLE(name) EXAMPLES name

/* Run example `name` with argv and env ("K=V"; both NULL-terminated, env
 * may be NULL) into *r; the run must have ended by itself. */
static void run_example(struct tool_result *r, const char *name, const char *const *argv,
                        const char *const *env) {
  /* OpenBLAS's own thread pool is not TSan-instrumented: its work would
   * read as races in the TSan build (as in the other lapack tests). */
  setenv("OPENBLAS_NUM_THREADS", "1", 0);
  ASSERT_EQ(tool_run(r, RUN_TIMEOUT, env, name, argv), 0);
  ASSERT_EQ(r->timed_out, 0);
}

/* Run it and require success: exit 0, nothing on stderr, `ok` (its final
 * line) in the output and `says` exactly `times` times. */
static void run_ok(const char *name, const char *const *argv, const char *const *env,
                   const char *ok, const char *says, int times) {
  struct tool_result r;
  run_example(&r, name, argv, env);
  if (r.exit_code != 0 || r.err_len != 0 || !strstr(r.out, ok))
    fprintf(stderr, "exit %d\n--- stdout:\n%s--- stderr:\n%s", r.exit_code, r.out, r.err);
  ASSERT_EQ(r.exit_code, 0);
  ASSERT_EQ(r.err_len, 0);
  ASSERT_STR_CONTAINS(r.out, ok);
  ASSERT_EQ(count_substr(r.out, says), times);
  tool_result_free(&r);
}

/* Every rank read every payload and agreed with the leader. */
static void group_example(const char *mode, int nranks) {
  char n[16], ok[128], line[128];
  snprintf(n, sizeof n, "%d", nranks);
  snprintf(ok, sizeof ok, "group: %d %s met, exchanged, agreed with the leader and left: ok",
           nranks, mode);
  snprintf(line, sizeof line, "read all %d payloads, sum %d, as the leader's", nranks,
           nranks * (nranks - 1) / 2);
  const char *argv[] = {mode, n, NULL};
  run_ok(EXAMPLE("group"), argv, NULL, ok, line, nranks);
}

TEST_IMPL(examples_group_threads) {
  group_example("threads", 4);
  return 0;
}

TEST_IMPL(examples_group_processes) {
  group_example("processes", 3);
  return 0;
}

/* The examples check their results (residuals): "ok" means they held. */
TEST_IMPL(examples_solve) {
  const char *argv[] = {"103", "4", NULL};
  run_ok(EXAMPLE("solve"), argv, NULL, "solve: ok", "solve: potrs f64 n=103 nrhs=3 on 4 threads", 1);
  return 0;
}

TEST_IMPL(examples_solve_all) {
  const char *argv[] = {"60", "3", NULL};
  run_ok(EXAMPLE("solve_all"), argv, NULL, "solve_all: ok", "syevd f64 n=60 over 3 shards", 1);
  return 0;
}

TEST_IMPL(examples_run_on_devices) {
  const char *argv[] = {"4", NULL};
  run_ok(EXAMPLE("run_on_devices"), argv, NULL, "run_on_devices: ok",
         "rank 1's failure came back: 7, \"rank 1 (device -1) returned 7", 1);
  return 0;
}

TEST_IMPL(examples_store) {
  const char *argv[] = {"3", NULL};
  run_ok(EXAMPLE("store"), argv, NULL, "store: ok", "store: rank ", 3);
  return 0;
}

/* MUSTER_PROVIDER_PATH=<build>/<dir> for the provider example. */
static void provider_path(char *buf, size_t cap, const char *dir) {
  char path[1200];
  tool_path(dir, path, sizeof path);
  snprintf(buf, cap, "MUSTER_PROVIDER_PATH=%s", path);
}

TEST_IMPL(examples_provider) {
  char env0[1300];
  provider_path(env0, sizeof env0, EXAMPLES "providers");
  const char *env[] = {env0, NULL}, *argv[] = {"50", "2", NULL};
  run_ok(EXAMPLE("provider"), argv, env, "provider: potrs f64 n=50 by \"example\" for 2 processes",
         ": provider example, scaled residual", 2);
  return 0;
}

/* Only the real providers on the path: muster_solve finds no "example", and
 * every rank says so with the code and muster_last_error(). */
TEST_IMPL(examples_provider_not_registered) {
  struct tool_result r;
  char env0[1300];
  provider_path(env0, sizeof env0, "lib/muster/providers");
  const char *env[] = {env0, NULL}, *argv[] = {"50", "2", NULL};
  run_example(&r, EXAMPLE("provider"), argv, env);
  ASSERT_EQ(r.exit_code, 1);
  ASSERT_EQ(count_substr(r.err, "muster_solve(g, &args, &mine, &res) failed: MUSTER_ENOPROVIDER"), 2);
  ASSERT_EQ(count_substr(r.err, "provider 'example' (args.provider) does not provide potrs"), 2);
  ASSERT(strstr(r.out, "ok") == NULL);
  tool_result_free(&r);
  return 0;
}
