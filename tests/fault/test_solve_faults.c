/*
 * tests/fault/test_solve_faults.c - the leader dies during a solve in
 * process mode: a provider that crashes in the leader (SIGKILL, SIGSEGV),
 * and a leader SIGKILLed from outside while its provider runs.  The
 * survivors must return MUSTER_EPEERDEAD naming rank 0, quickly, and
 * nothing may be left in /dev/shm once they have freed their shards.
 */
#include <signal.h>
#include <unistd.h>

#include "task.h"
#include "integration/test_solve.h"
#include "providers/tp_util.h"

static char dir[256];

static void use_testprov(void) {
  test_tmp_dir(dir, sizeof dir);
  tp_link(dir, "potrs", "testprov.so", "testprov_v1.so");
  setenv("MUSTER_PROVIDER_PATH", dir, 1);
  unsetenv("MUSTER_PROVIDER");
}

static void survivors_see_dead_leader(const sv_run_t *run) {
  ASSERT_EQ(sv_same_outcome(run), 0);
  for (int r = 1; r < run->R; r++) {
    ASSERT(run->out[r].done);
    ASSERT_EQ(run->out[r].rc, MUSTER_EPEERDEAD);
    ASSERT_STR_CONTAINS(run->out[r].msg, "rank 0");
  }
  ASSERT(!run->out[0].done); /* the leader never got back */
}

static void crash_case(const char *env) {
  use_testprov();
  sv_run_t run;
  memset(&run, 0, sizeof run);
  run.args.routine = MUSTER_POTRS;
  run.args.dtype = MUSTER_F64;
  run.args.n = 24;
  run.R = 3;
  run.processes = 1;
  run.seed = 3;
  run.env_leader = env;
  run.leader_dies = 1;
  double t0 = test_now();
  sv_run(&run);
  survivors_see_dead_leader(&run);
  for (int r = 1; r < run.R; r++) ASSERT_DBL_LT(run.out[r].t_return - t0, 3.0);
  sv_free(&run);
  ASSERT_EQ(test_count_job_segments(test_job()), 0);
  test_remove_tree(dir);
}

TEST_IMPL(solve_provider_sigkill_in_leader) {
  crash_case("TESTPROV_CRASH=kill");
  return 0;
}

TEST_IMPL(solve_provider_segv_in_leader) {
  crash_case("TESTPROV_CRASH=segv");
  return 0;
}

/* SIGKILL of the leader while its provider runs (it waits on a gate). */
TEST_IMPL(solve_leader_sigkill_mid_solve) {
  use_testprov();
  char gate[300];
  snprintf(gate, sizeof gate, "%s/gate", dir);
  FILE *f = fopen(gate, "w");
  ASSERT(f != NULL);
  fclose(f);
  setenv("TESTPROV_GATE", gate, 1);
  sv_run_t run;
  memset(&run, 0, sizeof run);
  run.args.routine = MUSTER_POTRS;
  run.args.dtype = MUSTER_F64;
  run.args.n = 40;
  run.R = 4;
  run.processes = 1;
  run.seed = 4;
  run.kill_leader_after_s = 0.5;
  sv_run(&run);
  survivors_see_dead_leader(&run);
  for (int r = 1; r < run.R; r++) {
    double after = run.out[r].t_return - run.t_kill;
    ASSERT(after > 0);        /* they did wait for the leader */
    ASSERT_DBL_LT(after, 2.0); /* and learnt of its death quickly */
  }
  sv_free(&run);
  unlink(gate);
  unsetenv("TESTPROV_GATE");
  ASSERT_EQ(test_count_job_segments(test_job()), 0);
  test_remove_tree(dir);
  return 0;
}
