/*
 * tests/integration/test_solve_v2.c - the leader-decides protocol end to
 * end with the ABI v2 test providers, in threads and processes mode:
 * a v2 leader provider chosen and run (the second call of a group without
 * the extra round: the debug log says so), the leader's choice winning over
 * a rank's own environment, collective providers with block and cyclic
 * pieces and a bootstrap over the group, info and failures on one rank,
 * spans.
 */
#include <sys/stat.h>
#include <unistd.h>

#include "task.h"
#include "muster.h"
#include "providers/tp_util.h"
#include "test_v2_util.h"

static char dir[256], logs[320];

static void setup(void) {
  tp_env_fresh(dir, sizeof dir);
  snprintf(logs, sizeof logs, "%s/logs", dir);
  mkdir(logs, 0700);
#ifdef __SANITIZE_THREAD__
  setenv("OPENBLAS_NUM_THREADS", "1", 0);
#endif
}

static void teardown(void) {
  test_remove_tree(dir);
  ASSERT_EQ(test_count_job_segments(test_job()), 0);
}

static void run_it(void *arg) { v2_run(arg); }

static void leader_v2(int processes) {
  setup();
  tp_link(dir, "potrs", "testprov.so", "testprov_v1.so");  /* v1, priority 10, marker 1 */
  tp_link(dir, "potrs", "leadtwo.so", "testprov_lead2.so"); /* v2, priority 30, marker 3 */
  v2_run_t run;
  v2_init(&run, MUSTER_POTRS, 3, processes);
  run.calls = 3;
  setenv("MUSTER_LOG", "debug", 1);
  static char log[65536];
  v2_capture_stderr(run_it, &run, log, sizeof log);
  unsetenv("MUSTER_LOG");
  for (int k = 0; k < run.calls; k++) {
    v2_expect_all(&run, k, 0, NULL);
    for (int r = 0; r < run.R; r++) {
      ASSERT(!strcmp(run.out[r].res[k].provider, "leadtwo"));
      ASSERT_STR_CONTAINS(run.out[r].res[k].reason, "higher priority (30, testprov has 10)");
      ASSERT(run.out[r].marker[k] == 3.0); /* the leader wrote every rank's b */
    }
  }
  /* first call: nobody could guess, the ranks exported again; then the
   * guess holds and the leader runs it at once, on every rank's word */
  const char *p = log;
  int again = 0, direct = 0;
  while ((p = strstr(p, "the leader chose leadtwo"))) {
    const char *eol = strchr(p, '\n');
    char line[512];
    snprintf(line, sizeof line, "%.*s", (int)(eol ? eol - p : (long)strlen(p)), p);
    again += strstr(line, "exporting again") != NULL;
    direct += strstr(line, "no extra round") != NULL;
    p += 10;
  }
  ASSERT_EQ(again, run.R);
  ASSERT_EQ(direct, run.R * (run.calls - 1));
  v2_free(&run);
  teardown();
}

TEST_IMPL(solve_v2_leader_threads) {
  leader_v2(0);
  return 0;
}

TEST_IMPL(solve_v2_leader_processes) {
  leader_v2(1);
  return 0;
}

/* Ranks whose environments force different providers: the leader's wins. */
TEST_IMPL(solve_v2_leader_decides) {
  setup();
  tp_link(dir, "potrs", "testprov.so", "testprov_v1.so");
  tp_link(dir, "potrs", "leadtwo.so", "testprov_lead2.so");
  v2_run_t run;
  v2_init(&run, MUSTER_POTRS, 3, 1);
  run.calls = 2;
  run.env_rank[0] = "MUSTER_PROVIDER=potrs=testprov";
  run.env_rank[1] = "MUSTER_PROVIDER=leadtwo";
  v2_run(&run);
  for (int k = 0; k < 2; k++) {
    v2_expect_all(&run, k, 0, NULL);
    for (int r = 0; r < run.R; r++) {
      ASSERT(!strcmp(run.out[r].res[k].provider, "testprov"));
      ASSERT_STR_CONTAINS(run.out[r].res[k].reason, "forced by MUSTER_PROVIDER");
      ASSERT(run.out[r].marker[k] == 1.0);
    }
  }
  v2_free(&run);
  teardown();
  return 0;
}

/* A collective provider, every routine, block and cyclic pieces. */
static void collective(int processes) {
  setup();
  tp_link(dir, "potrs", "testprov.so", "testprov_v1.so"); /* priority 10, no time */
  tp_link(dir, "potrs", "colltwo.so", "testprov_coll2.so"); /* priority 5, timed below */
  tp_link(dir, "potri", "colltwo.so", "testprov_coll2.so");
  tp_link(dir, "syevd", "colltwo.so", "testprov_coll2.so");
  setenv("TESTPROV_EST", "colltwo=0.004", 1);
  static const muster_routine_t routines[] = {MUSTER_POTRS, MUSTER_POTRI, MUSTER_SYEVD};
  for (int i = 0; i < 3; i++)
    for (int cyclic = 0; cyclic < 2; cyclic++) {
      v2_run_t run;
      v2_init(&run, routines[i], 3, processes);
      run.calls = 2;
      run.args.n = 11; /* not divisible by 3 nor by the tile */
      if (cyclic) {
        run.args.layout = MUSTER_LAYOUT_CYCLIC;
        run.args.tile = 2;
      }
      v2_run(&run);
      for (int k = 0; k < 2; k++) {
        v2_expect_all(&run, k, 0, NULL);
        for (int r = 0; r < run.R; r++) {
          const muster_solve_result_t *res = &run.out[r].res[k];
          ASSERT(!strcmp(res->provider, "colltwo"));
          ASSERT_STR_CONTAINS(res->reason, routines[i] == MUSTER_POTRS ? "fastest known: 0.004 s"
                                                                       : "the only provider that can run it");
          ASSERT_STR_CONTAINS(res->reason, "0.004 s (estimate: TESTPROV_EST says 0.004");
          ASSERT_EQ(res->tile, cyclic ? 2 : 4); /* the dist's nb */
          ASSERT(run.out[r].marker[k] == 4.0);  /* each rank wrote its own */
        }
      }
      v2_free(&run);
    }
  unsetenv("TESTPROV_EST");
  teardown();
}

TEST_IMPL(solve_v2_collective_threads) {
  collective(0);
  return 0;
}

TEST_IMPL(solve_v2_collective_processes) {
  collective(1);
  return 0;
}

/* info > 0 is the same on every rank and no failure of the group: the next
 * call in the same group runs. */
TEST_IMPL(solve_v2_collective_info) {
  setup();
  tp_link(dir, "potrs", "colltwo.so", "testprov_coll2.so");
  for (int processes = 0; processes < 2; processes++) {
    setenv("TESTPROV_INFO", "2", 1);
    v2_run_t run;
    v2_init(&run, MUSTER_POTRS, 2, processes);
    run.calls = 2;
    v2_run(&run);
    v2_expect_all(&run, 0, MUSTER_ENOTPD, "not positive definite (leading minor 2)");
    v2_expect_all(&run, 1, MUSTER_ENOTPD, "leading minor 2");
    ASSERT_EQ(run.out[0].res[0].info, 2);
    v2_free(&run);
  }
  unsetenv("TESTPROV_INFO");
  teardown();
  return 0;
}

/* One rank's engine fails while the others are blocked in theirs: the
 * group is poisoned, the watchdogs cancel the others, everyone returns an
 * error naming the failing rank within 2 s, and the communicators of that
 * set are released. */
static void one_rank_fails(int processes) {
  setup();
  tp_link(dir, "potrs", "colltwo.so", "testprov_coll2.so");
  char rel[400];
  snprintf(rel, sizeof rel, "%s/release.log", logs);
  setenv("TESTPROV_RELEASE_LOG", rel, 1);
  setenv("TESTPROV_BLOCK", "1", 1);
  setenv("TESTPROV_FAIL_RANK", "1", 1);
  v2_run_t run;
  v2_init(&run, MUSTER_POTRS, 3, processes);
  double t0 = test_now();
  v2_run(&run);
  double took = test_now() - t0;
  ASSERT_EQ(run.out[1].rc[0], MUSTER_EPROVIDER);
  ASSERT_STR_CONTAINS(run.out[1].msg[0], "TESTPROV_FAIL_RANK");
  for (int r = 0; r < run.R; r += 2) {
    ASSERT_EQ(run.out[r].rc[0], MUSTER_EPROVIDER);
    ASSERT_STR_CONTAINS(run.out[r].msg[0], "was cancelled");
    ASSERT_STR_CONTAINS(run.out[r].msg[0], "rank 1 (pid");
    ASSERT_STR_CONTAINS(run.out[r].msg[0], "TESTPROV_FAIL_RANK");
  }
  ASSERT_DBL_LT(took, 2.0 + 1.0); /* + the time to start the ranks */
  ASSERT_EQ(v2_count_lines(rel, "release "), run.R);
  unsetenv("TESTPROV_BLOCK");
  unsetenv("TESTPROV_FAIL_RANK");
  unsetenv("TESTPROV_RELEASE_LOG");
  v2_free(&run);
  teardown();
}

TEST_IMPL(solve_v2_collective_rank_fails_threads) {
  one_rank_fails(0);
  return 0;
}

TEST_IMPL(solve_v2_collective_rank_fails_processes) {
  one_rank_fails(1);
  return 0;
}

/* A provider that runs threads only is left out in processes mode. */
TEST_IMPL(solve_v2_spans) {
  setup();
  tp_link(dir, "potrs", "testprov.so", "testprov_v1.so");        /* priority 10 */
  tp_link(dir, "potrs", "threadsonly.so", "testprov_threads2.so"); /* priority 50, marker 6 */
  for (int processes = 0; processes < 2; processes++) {
    v2_run_t run;
    v2_init(&run, MUSTER_POTRS, 2, processes);
    v2_run(&run);
    v2_expect_all(&run, 0, 0, NULL);
    ASSERT(!strcmp(run.out[1].res[0].provider, processes ? "testprov" : "threadsonly"));
    ASSERT(run.out[1].marker[0] == (processes ? 1.0 : 6.0));
    if (processes)
      ASSERT_STR_CONTAINS(run.out[1].res[0].reason, "not threadsonly: does not run processes of one node");
    v2_free(&run);
  }
  teardown();
  return 0;
}
