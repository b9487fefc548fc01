/*
 * tests/fault/test_comm_local_stage.c - a rank whose staging fails in a
 * one-node call of muster_solve_comm (runtime/solve/comm_local.c,
 * comm_stage.c): 3 forked ranks of a kind store comm (store timeout 30 s),
 * lapack the faster (the one-node route), rank 2's region failing once
 * (the test-only MUSTER_COMM_TEST_FAIL_STAGE=2):
 *   - at a first call (round 3, the meeting, says it): ranks 0 and 1 fail
 *     within 3 s, naming rank 2 and the staging;
 *   - at a repeat (the kept choice: no meeting round; rank 2's pieces were
 *     muster_shard_alloc memory at the first call, plain memory now, so
 *     only now does it stage): rank 2 poisons the comm's group, and ranks
 *     0 and 1 fail within 3 s naming it, in one store round;
 *   - the next call solves (residual) on every rank; nothing of the job
 *     in /dev/shm.
 */
#include "task.h"
#include "integration/comm_local_util.h"
#include "../../tools/muster/check.h"

enum { R = 3, N = 21, NRHS = 1, CALLS = 3 };

typedef struct out {
  int rc[CALLS];
  double took[CALLS];
  long rounds[CALLS];
  double res[CALLS];
  char msg[CALLS][700];
} out_t;

typedef struct shared {
  uint64_t seed;
  int kept; /* the fault at the repeat: call 0 with rank 2's pieces in shared memory */
  out_t out[R];
} shared_t;

static void stage_rank(muster_comm_t *c, int rank, int size, void *arg) {
  shared_t *sh = arg;
  out_t *o = &sh->out[rank];
  for (int k = 0; k < CALLS; k++) {
    void *a, *b;
    cl_problem(MUSTER_POTRS, MUSTER_F64, N, NRHS, sh->seed + (uint64_t)k, &a, &b);
    int shm = rank == 1 || (sh->kept && k == 0 && rank == 2); /* plain memory is staged */
    muster_shard_t s = cl_shard(MUSTER_F64, N, NRHS, a, b, size, rank, shm);
    muster_solve_args_t args = {.routine = MUSTER_POTRS, .dtype = MUSTER_F64, .n = N, .nrhs = NRHS};
    muster_solve_result_t res;
    long before = cl_store_rounds();
    double t0 = test_now();
    o->rc[k] = muster_solve_comm(c, &args, &s, &res);
    o->took[k] = test_now() - t0;
    o->rounds[k] = cl_store_rounds() - before;
    snprintf(o->msg[k], sizeof o->msg[k], "%s", o->rc[k] ? muster_last_error() : res.provider);
    o->res[k] = o->rc[k] ? -1 : chk_potrs(MUSTER_F64, N, NRHS, a, N, s.b, N, b, N);
    cl_shard_free(&s, shm);
    free(a);
    free(b);
  }
}

static int stage_case(int kept) {
  char dir[256];
  cl_setup(dir, sizeof dir);
  cl_write_tables(dir, R, N, 1);
  setenv("MUSTER_COMM_TEST_FAIL_STAGE", "2", 1); /* each rank reads it at its first staging */
  shared_t *sh = cl_shared(sizeof *sh);
  sh->seed = test_seed("MUSTER_TEST_SEED");
  sh->kept = kept;
  pid_t pids[R];
  cl_fork(dir, R, 30, stage_rank, sh, NULL, pids);
  cl_wait(R, pids, -1);
  int bad = kept ? 1 : 0; /* the call that meets the fault */
  for (int r = 0; r < R; r++) {
    const out_t *o = &sh->out[r];
    for (int k = 0; k < CALLS; k++)
      fprintf(stderr, "%s: rank %d call %d: rc %d, %.3f s, %ld store rounds: %s\n", kept ? "kept" : "first", r, k,
              o->rc[k], o->took[k], o->rounds[k], o->msg[k]);
    ASSERT_EQ(o->rc[bad], MUSTER_ENOMEM);
    ASSERT_STR_CONTAINS(o->msg[bad], "staging");
    ASSERT_STR_CONTAINS(o->msg[bad], "MUSTER_COMM_TEST_FAIL_STAGE=2");
    if (r != 2) {
      ASSERT_STR_CONTAINS(o->msg[bad], kept ? "rank 2 (pid" : "rank 2 of comm local");
      ASSERT_DBL_LT(o->took[bad], 3.0);
    }
    if (kept) ASSERT_EQ(o->rounds[bad], 1); /* the kept choice ran: the fault was on its path */
    for (int k = bad + 1; k < CALLS; k++) {
      ASSERT_EQ(o->rc[k], 0);
      ASSERT_DBL_LT(o->res[k], chk_routine_tolerance(MUSTER_POTRS, MUSTER_F64, N));
    }
  }
  ASSERT_EQ(test_count_job_segments(test_job()), 0);
  unsetenv("MUSTER_COMM_TEST_FAIL_STAGE");
  cl_unshare(sh, sizeof *sh);
  test_remove_tree(dir);
  return 0;
}

TEST_IMPL(comm_local_stage_fails_first_call) { return stage_case(0); }
TEST_IMPL(comm_local_stage_fails_kept_call) { return stage_case(1); }
