/*
 * tests/fault/test_collective_faults.c - a rank SIGKILLed while every rank
 * is inside a collective provider (the v2 test provider, blocked until
 * cancelled, as NCCL would be): the survivors' watchdogs see the death,
 * cancel their calls, and every survivor returns MUSTER_EPEERDEAD naming
 * the dead rank within 2 s of the kill; no process hangs, nothing is left
 * in /dev/shm, and the communicators of that set of ranks are released.
 * A rank SIGSTOPped there: MUSTER_ETIMEDOUT naming it once it has been
 * stopped longer than the group's timeout.
 * The message quotes a cancelled provider only when its call did not end
 * by the cancel (it returned another code than the cancel's), whatever
 * its words: those of a call that did only word the cancel.
 */
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include "solve/engine.h"
#include "task.h"
#include "integration/test_v2_util.h"
#include "providers/tp_util.h"

/* deaf: the provider ignores cancel (TESTPROV_DEAF): each survivor leaves
 * its call running after MUSTER__ENGINE_GRACE_S and says so; its
 * communicators are kept (the call has them); it ends with exit().
 * own_rc (not 0): the cancelled call returns that code instead of the
 * cancel's, with "cancelled: " and why as its message (TESTPROV_CANCEL_RC):
 * a failure of its own, quoted.  own_msg: the cancelled call returns the
 * cancel's code with that message (TESTPROV_CANCEL_MSG): not quoted. */
static void kill_one(int victim, int R, int sig, int deaf, int own_rc, const char *own_msg) {
  char dir[256], enter[320], rel[320];
  tp_env_fresh(dir, sizeof dir);
  tp_link(dir, "potrs", "colltwo.so", "testprov_coll2.so");
  snprintf(enter, sizeof enter, "%s/enter.log", dir);
  snprintf(rel, sizeof rel, "%s/release.log", dir);
  setenv("TESTPROV_ENTER_LOG", enter, 1);
  setenv("TESTPROV_RELEASE_LOG", rel, 1);
  setenv(deaf ? "TESTPROV_DEAF" : "TESTPROV_BLOCK", "1", 1);
  char rc_text[16];
  snprintf(rc_text, sizeof rc_text, "%d", own_rc);
  if (own_rc) setenv("TESTPROV_CANCEL_RC", rc_text, 1);
  if (own_msg) setenv("TESTPROV_CANCEL_MSG", own_msg, 1);
  v2_run_t run;
  v2_init(&run, MUSTER_POTRS, R, 1);
  run.use_exit = deaf;
  run.kill_rank = victim;
  run.kill_signal = sig;
  run.timeout_s = sig == SIGSTOP ? 1.0 : 10;
  v2_run(&run);
  int want = own_rc ? own_rc : sig == SIGSTOP ? MUSTER_ETIMEDOUT : MUSTER_EPEERDEAD;
  const char *what = sig == SIGSTOP ? "has been stopped (SIGSTOP or a debugger)" : "died";
  double lo = sig == SIGSTOP ? run.timeout_s : 0, hi = sig == SIGSTOP ? run.timeout_s + 1.0 : 2.0;
  if (deaf) lo += MUSTER__ENGINE_GRACE_S, hi += MUSTER__ENGINE_GRACE_S;
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
    if (deaf) ASSERT_STR_CONTAINS(o->msg[0], "is left running on a thread of this process");
    /* why, once; the provider's words only when it failed on its own */
    const char *quote = strstr(o->msg[0], "(provider: ");
    if (own_rc) {
      ASSERT(quote != NULL);
      ASSERT_STR_CONTAINS(quote, "cancelled: ");
      ASSERT_STR_CONTAINS(quote, who);
    } else {
      ASSERT(quote == NULL);
    }
    if (own_msg) ASSERT(strstr(o->msg[0], own_msg) == NULL);
    double after = o->t_return - run.t_kill;
    fprintf(stderr, "rank %d returned %.3f s after the signal\n", r, after);
    ASSERT_DBL_LT(lo, after);
    ASSERT_DBL_LT(after, hi);
  }
  ASSERT_EQ(v2_count_lines(rel, "release "), deaf ? 0 : R - 1);
  ASSERT_EQ(test_count_job_segments(test_job()), 0);
  unsetenv("TESTPROV_BLOCK");
  unsetenv("TESTPROV_DEAF");
  unsetenv("TESTPROV_CANCEL_RC");
  unsetenv("TESTPROV_CANCEL_MSG");
  unsetenv("TESTPROV_ENTER_LOG");
  unsetenv("TESTPROV_RELEASE_LOG");
  v2_free(&run);
  test_remove_tree(dir);
}

TEST_IMPL(collective_peer_killed) {
  kill_one(1, 3, SIGKILL, 0, 0, NULL);
  return 0;
}

TEST_IMPL(collective_leader_killed) {
  kill_one(0, 2, SIGKILL, 0, 0, NULL);
  return 0;
}

TEST_IMPL(collective_peer_stopped) {
  kill_one(1, 3, SIGSTOP, 0, 0, NULL);
  return 0;
}

/* The engine stays inside its call after cancel (cuSOLVERMp after
 * ncclCommAbort, 4 x H200, 2026-11-26: the survivor spun for over 60 s):
 * each survivor still returns MUSTER_EPEERDEAD naming the dead rank, within
 * MUSTER__ENGINE_GRACE_S + 2 s of the kill, and its process ends by exit()
 * at once (engine.h). */
TEST_IMPL(collective_cancel_ignored) {
  kill_one(1, 3, SIGKILL, 1, 0, NULL);
  return 0;
}

/* A cancelled call that fails with a code of its own: its message is
 * quoted, though it repeats why the call was cancelled. */
TEST_IMPL(collective_cancel_own_failure) {
  kill_one(1, 3, SIGKILL, 0, MUSTER_EPROVIDER, NULL);
  return 0;
}

/* A call that ends by its cancel (the cancel's code) in words of its own
 * that are not why: only the runtime's why is said. */
TEST_IMPL(collective_cancel_own_words) {
  kill_one(1, 3, SIGKILL, 0, 0, "the engine stopped at the abort");
  return 0;
}
