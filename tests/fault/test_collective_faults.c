/*
 * tests/fault/test_collective_faults.c - a rank SIGKILLed while every rank
 * is inside a collective provider (the v2 test provider, blocked until
 * cancelled, as NCCL would be): the survivors' watchdogs see the death,
 * cancel their calls, and every survivor returns MUSTER_EPEERDEAD naming
 * the dead rank within 2 s of the kill; no process hangs, nothing is left
 * in /dev/shm, and the communicators of that set of ranks are released.
 * A rank SIGSTOPped there: MUSTER_ETIMEDOUT naming it once it has been
 * stopped longer than the group's timeout.
 */
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include "task.h"
#include "integration/test_v2_util.h"
#include "providers/tp_util.h"

static void kill_one(int victim, int R, int sig) {
  char dir[256], enter[320], rel[320];
  tp_env_fresh(dir, sizeof dir);
  tp_link(dir, "potrs", "colltwo.so", "testprov_coll2.so");
  snprintf(enter, sizeof enter, "%s/enter.log", dir);
  snprintf(rel, sizeof rel, "%s/release.log", dir);
  setenv("TESTPROV_ENTER_LOG", enter, 1);
  setenv("TESTPROV_RELEASE_LOG", rel, 1);
  setenv("TESTPROV_BLOCK", "1", 1);
  v2_run_t run;
  v2_init(&run, MUSTER_POTRS, R, 1);
  run.kill_rank = victim;
  run.kill_signal = sig;
  run.timeout_s = sig == SIGSTOP ? 1.0 : 10;
  v2_run(&run);
  int want = sig == SIGSTOP ? MUSTER_ETIMEDOUT : MUSTER_EPEERDEAD;
  const char *what = sig == SIGSTOP ? "has been stopped (SIGSTOP or a debugger)" : "died";
  double lo = sig == SIGSTOP ? run.timeout_s : 0, hi = sig == SIGSTOP ? run.timeout_s + 1.0 : 2.0;
  char who[32];
  snprintf(who, sizeof who, "rank %d (pid", victim);
  for (int r = 0; r < R; r++) {
    if (r == victim) continue;
    const v2_rank_out_t *o = &run.out[r];
    ASSERT(o->done);
    if (o->rc[0] != want || !strstr(o->msg[0], who) || !strstr(o->msg[0], what))
      fprintf(stderr, "rank %d: %d %s\n", r, o->rc[0], o->msg[0]);
    ASSERT_EQ(o->rc[0], want);
    ASSERT_STR_CONTAINS(o->msg[0], who);
    ASSERT_STR_CONTAINS(o->msg[0], what);
    ASSERT_STR_CONTAINS(o->msg[0], "was cancelled");
    double after = o->t_return - run.t_kill;
    fprintf(stderr, "rank %d returned %.3f s after the signal\n", r, after);
    ASSERT_DBL_LT(lo, after);
    ASSERT_DBL_LT(after, hi);
  }
  ASSERT_EQ(v2_count_lines(rel, "release "), R - 1);
  ASSERT_EQ(test_count_job_segments(test_job()), 0);
  unsetenv("TESTPROV_BLOCK");
  unsetenv("TESTPROV_ENTER_LOG");
  unsetenv("TESTPROV_RELEASE_LOG");
  v2_free(&run);
  test_remove_tree(dir);
}

TEST_IMPL(collective_peer_killed) {
  kill_one(1, 3, SIGKILL);
  return 0;
}

TEST_IMPL(collective_leader_killed) {
  kill_one(0, 2, SIGKILL);
  return 0;
}

TEST_IMPL(collective_peer_stopped) {
  kill_one(1, 3, SIGSTOP);
  return 0;
}
