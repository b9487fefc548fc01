/*
 * tests/fault/test_comm_local_faults.c - a rank SIGKILLed inside a one-node
 * call of muster_solve_comm (runtime/solve/comm_local.c): 3 forked ranks of
 * a kind store comm, the leader provider testprov forced, its solve held
 * on a gate file (TESTPROV_GATE) once the leader is inside
 * (TESTPROV_ENTERED):
 *   - the leader killed there: both others return MUSTER_EPEERDEAD naming
 *     rank 0 within 2 s (the group's liveness; the timeout is 2 s);
 *   - rank 2 killed while the leader computes, the gate then opened: rank 1
 *     returns MUSTER_EPEERDEAD naming rank 2 within 2 s of the kill, the
 *     leader within 2 s of the gate;
 *   - every rank reaped (none left), nothing of the job in /dev/shm.
 */
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include "task.h"
#include "integration/comm_local_util.h"
#include "providers/tp_util.h"

enum { R = 3, N = 10 };

typedef struct out {
  int rc, done;
  char msg[700];
  double t_return;
} out_t;

static void kill_rank(muster_comm_t *c, int rank, int size, void *arg) {
  out_t *o = (out_t *)arg + rank;
  void *a, *b;
  cl_problem(MUSTER_POTRS, MUSTER_F64, N, 1, 5, &a, &b);
  muster_shard_t s = cl_shard(MUSTER_F64, N, 1, a, b, size, rank, 0);
  muster_solve_args_t args = {.routine = MUSTER_POTRS, .dtype = MUSTER_F64, .n = N, .nrhs = 1,
                              .provider = "testprov"};
  muster_solve_result_t res;
  o->rc = muster_solve_comm(c, &args, &s, &res);
  snprintf(o->msg, sizeof o->msg, "%s", o->rc ? muster_last_error() : "");
  o->t_return = test_now();
  o->done = 1;
  cl_shard_free(&s, 0);
  free(a);
  free(b);
}

static void expect_named(const out_t *o, int r, int victim, double since) {
  char who[32];
  snprintf(who, sizeof who, "rank %d (pid ", victim);
  if (o->rc != MUSTER_EPEERDEAD) fprintf(stderr, "rank %d: %d %s\n", r, o->rc, o->msg);
  ASSERT(o->done);
  ASSERT_EQ(o->rc, MUSTER_EPEERDEAD);
  ASSERT_STR_CONTAINS(o->msg, who);
  ASSERT_STR_CONTAINS(o->msg, "died");
  fprintf(stderr, "rank %d returned %.3f s after: %s\n", r, o->t_return - since, o->msg);
  ASSERT_DBL_LT(o->t_return - since, 2.0);
}

static int kill_case(int victim) {
  char dir[256], entered[320], gate[320];
  cl_setup(dir, sizeof dir);
  tp_link(dir, "potrs", "testprov.so", "testprov_v1.so");
  snprintf(entered, sizeof entered, "%s/entered", dir);
  snprintf(gate, sizeof gate, "%s/gate", dir);
  tp_write_file(gate, "closed\n");
  setenv("TESTPROV_ENTERED", entered, 1);
  setenv("TESTPROV_GATE", gate, 1);
  out_t *out = cl_shared(sizeof(out_t) * R);
  pid_t pids[R];
  cl_fork(dir, R, 2, kill_rank, out, NULL, pids);
  double t0 = test_now();
  struct stat st;
  while (stat(entered, &st) != 0) { /* the leader is inside the provider */
    ASSERT_DBL_LT(test_now() - t0, 10);
    usleep(2000);
  }
  double t_kill = test_now();
  ASSERT(kill(pids[victim], SIGKILL) == 0);
  double t_gate = t_kill;
  if (victim != 0) { /* the leader goes on after a while, and meets the dead rank */
    usleep(300000);
    t_gate = test_now();
  }
  unlink(gate);
  cl_wait(R, pids, victim);
  for (int r = 0; r < R; r++)
    if (r != victim) expect_named(&out[r], r, victim, r == 0 ? t_gate : t_kill);
  ASSERT_EQ(test_count_job_segments(test_job()), 0);
  unsetenv("TESTPROV_ENTERED");
  unsetenv("TESTPROV_GATE");
  cl_unshare(out, sizeof(out_t) * R);
  test_remove_tree(dir);
  return 0;
}

TEST_IMPL(comm_local_leader_killed) { return kill_case(0); }
TEST_IMPL(comm_local_rank_killed) { return kill_case(2); }
