/*
 * tests/integration/test_cli_faults.c - `muster solve` and `muster
 * rendezvous` in processes mode when a process dies: a rank SIGKILLed
 * before it joined (MUSTER_LAUNCH_TEST_STOP holds it there), after it
 * published, during the leader's compute (the test provider's gate holds
 * the leader in the provider), the leader itself, and the launcher (the CLI).
 * Each time: the exit status, the message naming rank, pid, signal and
 * phase, the time to exit (far under MUSTER_TIMEOUT=60), no process left
 * after 5 s, and nothing in /dev/shm.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "muster.h"
#include "providers/tp_util.h"
#include "task.h"
#include "cli_run.h"
#include "test_shmdump_util.h"

static void contains_fmt(const char *hay, const char *fmt, int a, int b) {
  char want[256];
  snprintf(want, sizeof want, fmt, a, b);
  ASSERT_STR_CONTAINS(hay, want);
}

/* ---- muster solve ---------------------------------------------------------- */

/* A test provider whose leader writes its pid to `entered` and then waits
 * while `gate` exists. */
struct slow {
  char dir[256], gate[300], entered[300];
  char env_gate[340], env_entered[340];
};

static void slow_setup(struct slow *s) {
  test_tmp_dir(s->dir, sizeof s->dir);
  tp_link(s->dir, "potrs", "testprov.so", "testprov_v1.so");
  setenv("MUSTER_PROVIDER_PATH", s->dir, 1);
  snprintf(s->gate, sizeof s->gate, "%s/gate", s->dir);
  snprintf(s->entered, sizeof s->entered, "%s/entered", s->dir);
  close(open(s->gate, O_CREAT | O_WRONLY, 0600));
  snprintf(s->env_gate, sizeof s->env_gate, "TESTPROV_GATE=%s", s->gate);
  snprintf(s->env_entered, sizeof s->env_entered, "TESTPROV_ENTERED=%s", s->entered);
}

/* the leader's pid, once it is inside the provider */
static pid_t slow_leader(const struct slow *s) {
  for (double t0 = test_now(); test_now() - t0 < 20; usleep(2000)) {
    FILE *f = fopen(s->entered, "r");
    int pid = 0;
    if (f && fscanf(f, "%d", &pid) == 1 && pid > 0) {
      fclose(f);
      return pid;
    }
    if (f) fclose(f);
  }
  ASSERT(0);
  return 0;
}

static const char *const slow_argv[] = {"solve", "potrs", "--n", "48", "--ranks", "3", "--mode",
                                        "processes", "--provider", "testprov", "--json", NULL};

/* Solve run with the leader held in the provider; kill `victim` (0: the
 * leader; 1: rank 1) there; open the gate `open_after` s later (< 0: never,
 * until the end).  Returns how long the CLI took after the kill. */
static double solve_kill_in_compute(struct tool_result *res, int victim, double open_after,
                                    pid_t *victim_pid, pid_t *leader_pid) {
  struct slow s;
  struct run r;
  slow_setup(&s);
  const char *env[] = {s.env_gate, s.env_entered, NULL};
  cli_start(&r, slow_argv, env, 3);
  *leader_pid = slow_leader(&s);
  ASSERT_EQ(*leader_pid, r.kids[0]);
  *victim_pid = r.kids[victim];
  usleep(100000); /* the others wait at the barrier after the compute */
  double t_kill = test_now();
  ASSERT_EQ(kill(*victim_pid, SIGKILL), 0);
  if (open_after >= 0) {
    usleep((useconds_t)(open_after * 1e6));
    unlink(s.gate);
  }
  double took = cli_finish(&r, res, t_kill);
  unlink(s.gate);
  test_remove_tree(s.dir);
  return took;
}

TEST_IMPL(cli_solve_rank_killed_before_join) {
  setenv("MUSTER_PROVIDER_PATH", tp_lapack_dir(), 1);
  const char *argv[] = {"solve", "potrs", "--n", "64", "--ranks", "3", "--mode", "processes",
                        "--provider", "lapack", "--json", NULL};
  const char *env[] = {"MUSTER_LAUNCH_TEST_STOP=1", NULL};
  struct run r;
  struct tool_result res;
  cli_start(&r, argv, env, 3);
  pid_t victim = cli_stopped_kid(&r);
  ASSERT_EQ(victim, r.kids[1]);
  usleep(100000); /* ranks 0 and 2 wait for it at their first barrier */
  double t_kill = test_now();
  ASSERT_EQ(kill(victim, SIGKILL), 0);
  double took = cli_finish(&r, &res, t_kill);
  ASSERT_EQ(res.exit_code, 1);
  ASSERT_DBL_LT(took, 3.0);
  ASSERT(json_valid(res.out));
  ASSERT_STR_CONTAINS(res.out, "\"ok\":false");
  ASSERT_STR_CONTAINS(res.out, "\"error\":\"peer died\"");
  ASSERT_STR_CONTAINS(res.out, "\"fates\":[{\"rank\":0,");
  contains_fmt(res.out, "\"message\":\"rank %d (pid %d) was killed by signal 9 (Killed) before it "
               "joined group cli", 1, victim);
  contains_fmt(res.err, "muster solve: rank %d (pid %d) was killed by signal 9 (Killed) before "
               "it joined group cli", 1, victim);
  /* the survivors failed at once, on the launcher's word */
  contains_fmt(res.err, "it said: peer died: rank %d (pid %d) was killed by signal 9", 1, victim);
  tool_result_free(&res);
  return 0;
}

/* Rank 1 is killed while the leader computes: exit 1, and the message is
 * its fate (it waits at the barrier after the compute). */
static double rank1_killed(struct tool_result *res, double open_after, pid_t *leader) {
  pid_t victim;
  double took = solve_kill_in_compute(res, 1, open_after, &victim, leader);
  ASSERT_EQ(res->exit_code, 1);
  ASSERT_STR_CONTAINS(res->out, "\"error\":\"peer died\"");
  contains_fmt(res->out, "\"message\":\"rank %d (pid %d) was killed by signal 9 (Killed) while "
               "waiting at barrier", 1, victim);
  return took;
}

/* Rank 1 published its shard and waits for the leader's result when it is
 * killed; the leader then finishes: its next barrier fails, exit 1 (the
 * run used to pass, or print ok:false with no error). */
TEST_IMPL(cli_solve_rank_killed_after_publish) {
  struct tool_result res;
  pid_t leader;
  ASSERT_DBL_LT(rank1_killed(&res, 0.2, &leader), 3.0);
  ASSERT_STR_CONTAINS(res.err, "it said: peer died: rank 1 (pid ");
  ASSERT(strstr(res.err, "killed by the launcher") == NULL); /* all ended on their own */
  tool_result_free(&res);
  return 0;
}

/* The same with the leader stuck in the provider: it cannot notice, so the
 * launcher kills it after its 5 s grace. */
TEST_IMPL(cli_solve_rank_killed_during_compute) {
  struct tool_result res;
  pid_t leader;
  double took = rank1_killed(&res, -1, &leader);
  ASSERT_DBL_LT(4.0, took);
  ASSERT_DBL_LT(took, 10.0);
  contains_fmt(res.err, "rank %d (pid %d) was killed by signal 9 (Killed) past barrier", 0, leader);
  ASSERT_STR_CONTAINS(res.err, "still running 5 s after the first failure; killed by the launcher");
  ASSERT_STR_CONTAINS(res.out, "\"killed\":true");
  tool_result_free(&res);
  return 0;
}

/* The leader dies inside the provider: the others fail at once with its
 * pid, signal and phase. */
TEST_IMPL(cli_solve_leader_killed) {
  struct tool_result res;
  pid_t victim, leader;
  double took = solve_kill_in_compute(&res, 0, -1, &victim, &leader);
  ASSERT_EQ(res.exit_code, 1);
  ASSERT_DBL_LT(took, 3.0);
  contains_fmt(res.out, "\"message\":\"rank %d (pid %d) was killed by signal 9 (Killed) past "
               "barrier", 0, leader);
  contains_fmt(res.err, "it said: peer died: rank %d (pid %d) was killed by signal 9 (Killed) past "
               "barrier", 0, leader);
  ASSERT(strstr(res.err, "killed by the launcher") == NULL);
  tool_result_free(&res);
  return 0;
}

/* Kill the CLI itself: every rank dies with it (they would have run to the
 * end), nothing is left in /dev/shm.  Once inside the provider, and once
 * with a rank held before it joined (the group never formed). */
static void launcher_killed(int before_join) {
  ASSERT_EQ(prctl(PR_SET_CHILD_SUBREAPER, 1), 0); /* the orphans come to us */
  struct slow s;
  struct run r;
  slow_setup(&s);
  const char *env[] = {s.env_gate, s.env_entered, "MUSTER_LAUNCH_TEST_STOP=2", NULL};
  if (!before_join) env[2] = NULL;
  cli_start(&r, slow_argv, env, 3);
  if (before_join) cli_stopped_kid(&r);
  else slow_leader(&s);
  cli_kill(&r);
  unlink(s.gate);
  test_remove_tree(s.dir);
}

TEST_IMPL(cli_solve_launcher_killed) {
  launcher_killed(0);
  launcher_killed(1);
  return 0;
}

/* ---- muster rendezvous ----------------------------------------------------- */

static const char *const rv_argv[] = {"rendezvous", "--ranks", "3", "--mode", "processes",
                                      "--rounds", "10000000", "--cycles", "0", NULL};

TEST_IMPL(cli_rendezvous_rank_killed_before_join) {
  const char *env[] = {"MUSTER_LAUNCH_TEST_STOP=2", NULL};
  struct run r;
  struct tool_result res;
  cli_start(&r, rv_argv, env, 3);
  pid_t victim = cli_stopped_kid(&r);
  ASSERT_EQ(victim, r.kids[2]);
  usleep(100000);
  double t_kill = test_now();
  ASSERT_EQ(kill(victim, SIGKILL), 0);
  double took = cli_finish(&r, &res, t_kill);
  ASSERT_EQ(res.exit_code, 1);
  ASSERT_DBL_LT(took, 3.0);
  contains_fmt(res.err, "peer died: rank %d (pid %d) was killed by signal 9 (Killed) before it "
               "joined group rendezvous.", 2, victim);
  ASSERT_EQ(count_substr(res.err, "peer died: rank 2 (pid"), 2); /* both survivors */
  ASSERT(strstr(res.err, "still running") == NULL);
  tool_result_free(&res);
  return 0;
}

TEST_IMPL(cli_rendezvous_leader_killed) {
  struct run r;
  struct tool_result res;
  cli_start(&r, rv_argv, NULL, 3);
  usleep(300000); /* well into the rounds */
  double t_kill = test_now();
  ASSERT_EQ(kill(r.kids[0], SIGKILL), 0);
  double took = cli_finish(&r, &res, t_kill);
  ASSERT_EQ(res.exit_code, 1);
  ASSERT_DBL_LT(took, 3.0);
  contains_fmt(res.err, "peer died: rank %d (pid %d) was killed by signal 9 (Killed) ", 0,
               r.kids[0]);
  ASSERT_EQ(count_substr(res.err, "peer died: rank 0 (pid"), 2);
  ASSERT(strstr(res.err, "still running") == NULL);
  tool_result_free(&res);
  return 0;
}

TEST_IMPL(cli_rendezvous_launcher_killed) {
  ASSERT_EQ(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
  struct run r;
  cli_start(&r, rv_argv, NULL, 3);
  usleep(300000);
  cli_kill(&r);
  return 0;
}

/* The leader is stopped (SIGSTOP, a debugger) inside the provider, with
 * MUSTER_TIMEOUT=1.  The others wait for its compute without a deadline of
 * their own, yet a stopped leader must not hold them forever: they fail
 * with MUSTER_ETIMEDOUT naming it as stopped once it has been stopped for
 * the timeout; then, with no other rank left running, the launcher kills
 * it (it used to wait for it forever: found by the storm, seed 2). */
TEST_IMPL(cli_solve_leader_stopped) {
  struct slow s;
  struct run r;
  struct tool_result res;
  slow_setup(&s);
  const char *env[] = {s.env_gate, s.env_entered, "MUSTER_TIMEOUT=1", NULL};
  cli_start(&r, slow_argv, env, 3);
  pid_t leader = slow_leader(&s);
  ASSERT_EQ(leader, r.kids[0]);
  double t_stop = test_now();
  ASSERT_EQ(kill(leader, SIGSTOP), 0);
  double took = cli_finish(&r, &res, t_stop);
  ASSERT_EQ(res.exit_code, 1);
  ASSERT_DBL_LT(1.0, took);
  ASSERT_DBL_LT(took, 5.0); /* 1 s for the others, then at once; slack */
  contains_fmt(res.err, "it said: timed out waiting for peers: rank %d (pid %d, device -1) is stopped", 0,
               leader);
  ASSERT_STR_CONTAINS(res.err, "more than the timeout (1.0 s), while group cli");
  /* its fate once: stopped, where, killed at once since the run had failed */
  contains_fmt(res.err, "\nmuster solve: rank %d (pid %d) was stopped (SIGSTOP or a debugger) past "
               "barrier 3 of group cli", 0, leader);
  ASSERT_STR_CONTAINS(res.err, " (computing, or between calls); killed by the launcher (SIGKILL) once "
                      "the run had failed: stopped, it could not end on its own\n");
  ASSERT(strstr(res.err, "did not report") == NULL && strstr(res.err, "was killed by signal") == NULL);
  tool_result_free(&res);
  unlink(s.gate);
  test_remove_tree(s.dir);
  return 0;
}

/* The hostile run's case: a rank stopped (SIGSTOP) where the others will
 * wait for it, MUSTER_TIMEOUT=3.  Rank 2 waits at the barrier after its
 * shard while the leader computes; it is stopped there, then the leader
 * finishes, which releases rank 2 from that barrier but it cannot move on;
 * ranks 0 and 1 go on to the next rep and wait for it.  They fail after the
 * timeout naming it stopped, and the launcher then kills it at once: the
 * command ends about T after the stop, not T + min(T, 5) (65 s by
 * default).  Each rank's fate is one line, said once and consistent with
 * what the others said of it: rank 2 "was stopped ... after it was
 * released from barrier K", never "still running 5 s after the first
 * failure" nor "while waiting at barrier K", and no "it said: peer died:
 * rank 2 did not report" quoted for a rank that said nothing. */
TEST_IMPL(cli_solve_rank_stopped) {
  struct slow s;
  struct run r;
  struct tool_result res;
  slow_setup(&s);
  const char *argv[] = {"solve", "potrs", "--n", "48", "--ranks", "3", "--mode", "processes",
                        "--provider", "testprov", "--reps", "2", "--json", NULL};
  const char *env[] = {s.env_gate, s.env_entered, "MUSTER_TIMEOUT=3", NULL};
  cli_start(&r, argv, env, 3);
  ASSERT_EQ(slow_leader(&s), r.kids[0]);
  usleep(100000); /* ranks 1 and 2 wait for the leader's result */
  pid_t victim = r.kids[2];
  double t_stop = test_now();
  ASSERT_EQ(kill(victim, SIGSTOP), 0);
  while (tool_proc_state(victim) != 'T') usleep(1000);
  unlink(s.gate); /* the leader finishes: rank 2 is released, stopped */
  double took = cli_finish(&r, &res, t_stop);
  ASSERT_EQ(res.exit_code, 1);
  ASSERT_DBL_LT(3.0, took);
  ASSERT_DBL_LT(took, 5.0);
  char group[64], head[160], *line;
  snprintf(group, sizeof group, "group cli%d_0", (int)r.pid);
  snprintf(head, sizeof head, "\nmuster solve: rank 2 (pid %d) was stopped (SIGSTOP or a debugger) "
           "after it was released from barrier ", (int)victim);
  ASSERT((line = strstr(res.err, head)) != NULL);
  int k = atoi(line + strlen(head));
  ASSERT_GT(k, 0);
  char want[600];
  snprintf(want, sizeof want, "%s%d of %s, before it moved on; killed by the launcher (SIGKILL) "
           "once the run had failed: stopped, it could not end on its own\n", head, k, group);
  ASSERT_STR_CONTAINS(res.err, want);
  /* the others: what they said of it, the same barrier */
  for (int i = 0; i < 2; i++) {
    snprintf(want, sizeof want, "\nmuster solve: rank %d (pid %d) exited with status 1 after it "
             "left %s; it said: timed out waiting for peers: rank 2 missing after ", i,
             (int)r.kids[i], group);
    ASSERT_STR_CONTAINS(res.err, want);
  }
  snprintf(want, sizeof want, "at barrier %d of %s (generation ", k + 1, group);
  ASSERT_EQ(count_substr(res.err, want), 2);
  snprintf(want, sizeof want, "rank 2 (pid %d, device -1) is stopped (SIGSTOP?); it was released "
           "from barrier %d (generation ", (int)victim, k);
  ASSERT_EQ(count_substr(res.err, want), 2);
  /* the summary is rank 2's fate; one fate line per rank */
  snprintf(want, sizeof want, "muster solve: potrs f64 n=48 ranks=3 mode=processes: timed out "
           "waiting for peers: rank 2 (pid %d) was stopped (SIGSTOP or a debugger) after it was "
           "released from barrier %d", (int)victim, k);
  ASSERT_STR_CONTAINS(res.err, want);
  snprintf(want, sizeof want, "\nmuster solve: rank 2 (pid %d)", (int)victim);
  ASSERT_EQ(count_substr(res.err, want), 1);
  ASSERT(strstr(res.err, "still running") == NULL);
  ASSERT(strstr(res.err, "did not report") == NULL);
  ASSERT(strstr(res.err, "while waiting at barrier") == NULL);
  ASSERT(json_valid(res.out));
  ASSERT_STR_CONTAINS(res.out, "\"error\":\"timed out waiting for peers\"");
  snprintf(want, sizeof want, "{\"rank\":2,\"pid\":%d,\"exit\":-1,\"signal\":9,\"died\":true,"
           "\"killed\":true,", (int)victim);
  ASSERT_STR_CONTAINS(res.out, want);
  tool_result_free(&res);
  test_remove_tree(s.dir);
  return 0;
}

/* After a death, a rank still running (the leader inside the provider)
 * and one stopped (SIGSTOP) are both killed after the 5 s grace: each
 * fate says which it was, the stopped one never "still running". */
TEST_IMPL(cli_solve_stopped_in_grace) {
  struct slow s;
  struct run r;
  struct tool_result res;
  slow_setup(&s);
  const char *env[] = {s.env_gate, s.env_entered, NULL};
  cli_start(&r, slow_argv, env, 3);
  ASSERT_EQ(slow_leader(&s), r.kids[0]);
  usleep(100000);
  ASSERT_EQ(kill(r.kids[2], SIGSTOP), 0);
  while (tool_proc_state(r.kids[2]) != 'T') usleep(1000);
  double t_kill = test_now();
  ASSERT_EQ(kill(r.kids[1], SIGKILL), 0);
  double took = cli_finish(&r, &res, t_kill);
  ASSERT_EQ(res.exit_code, 1);
  ASSERT_DBL_LT(4.0, took);
  ASSERT_DBL_LT(took, 10.0);
  contains_fmt(res.err, "\nmuster solve: rank %d (pid %d) was killed by signal 9 (Killed) past "
               "barrier", 0, r.kids[0]);
  ASSERT_STR_CONTAINS(res.err, "; it was still running 5 s after the first failure; killed by the "
                      "launcher\n");
  contains_fmt(res.err, "\nmuster solve: rank %d (pid %d) was stopped (SIGSTOP or a debugger) while "
               "waiting at barrier", 2, r.kids[2]);
  ASSERT_STR_CONTAINS(res.err, "; killed by the launcher (SIGKILL) 5 s after the first failure: "
                      "stopped, it could not end on its own\n");
  ASSERT_EQ(count_substr(res.err, "still running"), 1);
  unlink(s.gate);
  tool_result_free(&res);
  test_remove_tree(s.dir);
  return 0;
}

/* A rank stopped when the others finish cleanly (released from its last
 * barrier, it never left): no rank failed, so the launcher waits
 * MUSTER_TIMEOUT=2 after the others ended, then kills it: a finished job
 * does not wait forever for a rank someone stopped (the storm found that
 * hang).  Its fate says so once. */
TEST_IMPL(cli_solve_rank_stopped_after_finish) {
  struct slow s;
  struct run r;
  struct tool_result res;
  slow_setup(&s);
  const char *env[] = {s.env_gate, s.env_entered, "MUSTER_TIMEOUT=2", NULL};
  cli_start(&r, slow_argv, env, 3);
  ASSERT_EQ(slow_leader(&s), r.kids[0]);
  usleep(100000);
  pid_t victim = r.kids[2];
  ASSERT_EQ(kill(victim, SIGSTOP), 0);
  while (tool_proc_state(victim) != 'T') usleep(1000);
  double t_open = test_now();
  unlink(s.gate);
  double took = cli_finish(&r, &res, t_open);
  ASSERT_EQ(res.exit_code, 1);
  ASSERT_DBL_LT(2.0, took);
  ASSERT_DBL_LT(took, 5.0);
  for (int i = 0; i < 2; i++)
    contains_fmt(res.err, "\nmuster solve: rank %d (pid %d) exited with status 0 after it left group "
                 "cli", i, r.kids[i]);
  contains_fmt(res.err, "\nmuster solve: rank %d (pid %d) was stopped (SIGSTOP or a debugger) after "
               "it was released from barrier ", 2, victim);
  ASSERT_STR_CONTAINS(res.err, ", before it moved on; killed by the launcher (SIGKILL) after it had "
                      "been stopped for 2.");
  ASSERT_STR_CONTAINS(res.err, " s while no other rank ran and none had failed (more than "
                      "MUSTER_TIMEOUT)\n");
  ASSERT(strstr(res.err, "still running") == NULL && strstr(res.err, "did not report") == NULL);
  tool_result_free(&res);
  test_remove_tree(s.dir);
  return 0;
}
