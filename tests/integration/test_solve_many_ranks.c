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

static void setup(void) {
  setenv("MUSTER_PROVIDER_PATH", tp_lapack_dir(), 1);
  setenv("MUSTER_PROVIDER", "lapack", 1);
}

/* One case: every routine (ALL) or one, at R ranks; runtime's tile. */
enum { ALL = 0, P = 1, T = 0 };
struct many_case {
  int routine;
  muster_dtype_t dtype;
  int64_t n;
  int R, processes;
  uint64_t seed;
};

static int run_cases(const struct many_case *c, size_t k) {
  static const muster_routine_t all[] = {MUSTER_POTRS, MUSTER_POTRI, MUSTER_SYEVD};
  setup();
  for (size_t i = 0; i < k; i++)
    for (int r = 0; r < 3; r++)
      if (c[i].routine == ALL || c[i].routine == (int)all[r])
        sv_expect_ok(all[r], c[i].dtype, c[i].n, c[i].R, c[i].processes, 0, c[i].seed + (uint64_t)r);
  ASSERT_EQ(test_count_job_segments(test_job()), 0);
  return 0;
}
#define RUN_CASES(c) run_cases(c, sizeof c / sizeof c[0])

TEST_IMPL(solve_many_ranks_processes_23) {
  static const struct many_case c[] = {{MUSTER_POTRS, MUSTER_F64, 1000, 23, P, 5}, /* reported */
                                       {ALL, MUSTER_F64, 64, 23, P, 23}};
  return RUN_CASES(c);
}

TEST_IMPL(solve_many_ranks_processes_33) {
  static const struct many_case c[] = {{ALL, MUSTER_C128, 70, 33, P, 33},
                                       {ALL, MUSTER_F32, 33, 33, P, 330}};
  return RUN_CASES(c);
}

TEST_IMPL(solve_many_ranks_processes_64) {
  /* 100 columns: ranks 0..49 hold 2, the others none */
  static const struct many_case c[] = {{ALL, MUSTER_F64, 64, MUSTER_MAX_RANKS, P, 64},
                                       {MUSTER_POTRS, MUSTER_C64, 100, MUSTER_MAX_RANKS, P, 640}};
  return RUN_CASES(c);
}

TEST_IMPL(solve_many_ranks_threads_64) {
  static const struct many_case c[] = {{ALL, MUSTER_F64, 64, MUSTER_MAX_RANKS, T, 6400},
                                       {MUSTER_SYEVD, MUSTER_C128, 100, MUSTER_MAX_RANKS, T, 6401}};
  return RUN_CASES(c);
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
