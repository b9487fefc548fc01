/*
 * tests/integration/test_solve_singular.c - getrs's singularity rule
 * (providers/common/singular.h) through muster_solve and the lapack
 * provider, every dtype x threads and processes x 1..4 ranks:
 *   - a numerically singular A (column n/2 = column 1, or = 2 x column 1;
 *     n = 40 and 97; diagonally dominant, and random entries only, whose
 *     LU pivots as the GPU tests' does): LU leaves a pivot at rounding
 *     level there, not 0,
 *     which xGETRF does not report.  MUSTER_ESINGULAR with info = n/2 + 1
 *     and a message naming U(k,k) on every rank, B untouched (it once
 *     returned rc 0 and a huge, wrong X);
 *   - a well-conditioned A with columns scaled 1e-8 .. 1e8 (n = 40 and 97)
 *     is not called singular: the rule's scale is U's own column, not U's
 *     largest pivot.
 */
#include <math.h>
#include <unistd.h>

#include "task.h"
#include "test_solve.h"
#include "providers/tp_util.h"

static const muster_dtype_t dtypes[] = {MUSTER_F32, MUSTER_F64, MUSTER_C64, MUSTER_C128};

static void use_lapack(void) {
  setenv("MUSTER_PROVIDER_PATH", tp_lapack_dir(), 1);
  unsetenv("MUSTER_PROVIDER");
}

static void run_getrs(sv_run_t *run, muster_dtype_t t, int64_t n, int R, int processes, uint64_t seed) {
  memset(run, 0, sizeof *run);
  run->args.routine = MUSTER_GETRS;
  run->args.dtype = t;
  run->args.n = n;
  run->args.nrhs = 2;
  run->R = R;
  run->processes = processes;
  run->seed = seed;
  run->pad = n % 2; /* lda > n sometimes */
}

/* Column n/2 = dup x column 1: refused on every rank, B as it was. */
static void numerically_singular(int processes) {
  use_lapack();
  uint64_t seed = (uint64_t)getpid() * 7919u;
  const int64_t ns[] = {40, 97};
  int c = 0;
  for (size_t d = 0; d < 4; d++)
    for (size_t k = 0; k < 2; k++)
      for (int v = 0; v < 4; v++, c++) {
        sv_run_t run;
        run_getrs(&run, dtypes[d], ns[k], 1 + c % 4, processes, seed++);
        run.dup = v % 2 ? 2.0 : 1.0;
        run.plain = v / 2;
        sv_run(&run);
        ASSERT_EQ(sv_same_outcome(&run), 0);
        char pivot[64];
        snprintf(pivot, sizeof pivot, "U(%" PRId64 ",%" PRId64 ")", run.bad_minor, run.bad_minor);
        for (int r = 0; r < run.R; r++) {
          if (run.out[r].rc != MUSTER_ESINGULAR)
            fprintf(stderr, "%s n=%" PRId64 "%s column %" PRId64 " = %g x column 2, rank %d: rc %d \"%s\"\n",
                    muster_dtype_str(dtypes[d]), ns[k], run.plain ? " plain" : "", run.bad_minor, run.dup, r,
                    run.out[r].rc, run.out[r].msg);
          ASSERT_EQ(run.out[r].rc, MUSTER_ESINGULAR);
          ASSERT_EQ(run.out[r].res.info, run.bad_minor);
          ASSERT_STR_CONTAINS(run.out[r].msg, pivot);
          ASSERT_STR_CONTAINS(run.out[r].msg, "singular");
          ASSERT_STR_CONTAINS(run.out[r].msg, "LAPACKE_");
        }
        size_t bbytes = (size_t)(run.args.n * run.args.nrhs) * muster_dtype_size(run.args.dtype);
        for (int r = 0; r < run.R; r++) ASSERT(memcmp((char *)run.X + (size_t)r * bbytes, run.B, bbytes) == 0);
        sv_free(&run);
      }
  ASSERT_EQ(test_count_job_segments(test_job()), 0);
}

TEST_IMPL(solve_getrs_numerically_singular_threads) { numerically_singular(0); return 0; }
TEST_IMPL(solve_getrs_numerically_singular_processes) { numerically_singular(1); return 0; }

/* Well conditioned, badly scaled columns: solved, residual under
 * tolerance.  A rule against max|U(i,i)| would refuse every one of them
 * (|U(k,k)| / max|U(i,i)| ~ 1e-16 here). */
static void scaled_columns(int processes) {
  use_lapack();
  uint64_t seed = (uint64_t)getpid() * 104729u;
  const int64_t ns[] = {40, 97};
  int c = 0;
  for (size_t d = 0; d < 4; d++)
    for (size_t k = 0; k < 2; k++, c++) {
      sv_run_t run;
      run_getrs(&run, dtypes[d], ns[k], 1 + c % 4, processes, seed++);
      run.col_decades = 8.0;
      sv_run(&run);
      ASSERT_EQ(sv_same_outcome(&run), 0);
      if (run.out[0].rc != 0)
        fprintf(stderr, "%s n=%" PRId64 " columns 1e-8 .. 1e8: rc %d \"%s\"\n", muster_dtype_str(dtypes[d]), ns[k],
                run.out[0].rc, run.out[0].msg);
      ASSERT_OK(run.out[0].rc);
      ASSERT_DBL_LT(sv_residual(&run), chk_tolerance(dtypes[d], ns[k]));
      sv_free(&run);
    }
  ASSERT_EQ(test_count_job_segments(test_job()), 0);
}

TEST_IMPL(solve_getrs_scaled_columns_threads) { scaled_columns(0); return 0; }
TEST_IMPL(solve_getrs_scaled_columns_processes) { scaled_columns(1); return 0; }
