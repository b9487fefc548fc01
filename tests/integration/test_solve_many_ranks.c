/*
 * tests/integration/test_solve_many_ranks.c - solves with many ranks, up to
 * MUSTER_MAX_RANKS, residual-checked.
 *
 * Why: in process mode every rank of the harness holds a, b and w in three
 * muster_shard_alloc regions, so the leader maps 3 regions per peer (66 at
 * 23 ranks, 189 at 64).  A bounded mapping cache with eviction once
 * unmapped regions the running solve still used: a SEGV in the leader from
 * 23 ranks up, or a wrong answer ("not positive definite") at 64.  Small n
 * keeps these quick on 2 cores; n = 1000 at 23 ranks is the case that was
 * reported (columns not a multiple of the ranks).
 */
#include <unistd.h>

#include "task.h"
#include "test_solve.h"
#include "providers/tp_util.h"

static const muster_routine_t routines[] = {MUSTER_POTRS, MUSTER_POTRI, MUSTER_SYEVD};

static void setup(void) {
  setenv("MUSTER_PROVIDER_PATH", tp_lapack_dir(), 1);
  setenv("MUSTER_PROVIDER", "lapack", 1);
}

/* Every routine at R ranks, n columns, one dtype; runtime's tile. */
static void every_routine(int R, int processes, int64_t n, muster_dtype_t t, uint64_t seed) {
  for (int i = 0; i < 3; i++) sv_expect_ok(routines[i], t, n, R, processes, 0, seed + (uint64_t)i);
}

TEST_IMPL(solve_many_ranks_processes_23) {
  setup();
  sv_expect_ok(MUSTER_POTRS, MUSTER_F64, 1000, 23, 1, 0, 5);
  every_routine(23, 1, 64, MUSTER_F64, 23);
  ASSERT_EQ(test_count_job_segments(test_job()), 0);
  return 0;
}

TEST_IMPL(solve_many_ranks_processes_33) {
  setup();
  every_routine(33, 1, 70, MUSTER_C128, 33);
  every_routine(33, 1, 33, MUSTER_F32, 330);
  ASSERT_EQ(test_count_job_segments(test_job()), 0);
  return 0;
}

TEST_IMPL(solve_many_ranks_processes_64) {
  setup();
  every_routine(MUSTER_MAX_RANKS, 1, 64, MUSTER_F64, 64);
  /* 100 columns: ranks 0..49 hold 2, the others none */
  sv_expect_ok(MUSTER_POTRS, MUSTER_C64, 100, MUSTER_MAX_RANKS, 1, 0, 640);
  ASSERT_EQ(test_count_job_segments(test_job()), 0);
  return 0;
}

TEST_IMPL(solve_many_ranks_threads_64) {
  setup();
  every_routine(MUSTER_MAX_RANKS, 0, 64, MUSTER_F64, 6400);
  sv_expect_ok(MUSTER_SYEVD, MUSTER_C128, 100, MUSTER_MAX_RANKS, 0, 0, 6401);
  ASSERT_EQ(test_count_job_segments(test_job()), 0);
  return 0;
}

/* Every documented rank count in threads mode; in process mode (a fork
 * per rank: slow under the sanitizers) the counts around the old limit
 * (21 peers x 3 regions = 63 mappings) and around powers of two.  potrs;
 * the other routines at the counts above.  n = 67 divides by none of them
 * but 1 and 67. */
TEST_IMPL(solve_every_rank_count) {
  setup();
  static const int procs[] = {1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 21, 22, 23, 24, 31, 32, 47, 48, 63};
  for (int R = 1; R <= MUSTER_MAX_RANKS; R++)
    sv_expect_ok(MUSTER_POTRS, MUSTER_F64, 67, R, 0, 0, 7000 + (uint64_t)R);
  for (size_t i = 0; i < sizeof procs / sizeof procs[0]; i++)
    sv_expect_ok(MUSTER_POTRS, MUSTER_F64, 67, procs[i], 1, 0, 8000 + (uint64_t)procs[i]);
  ASSERT_EQ(test_count_job_segments(test_job()), 0);
  return 0;
}
