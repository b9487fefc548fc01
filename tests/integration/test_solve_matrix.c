/*
 * tests/integration/test_solve_matrix.c - every routine x dtype x mode x
 * ranks {1,2,3,4} through muster_solve with the lapack provider, with n
 * divisible and not divisible by the ranks and the tile, residual-checked
 * on fresh random inputs.
 */
#include <unistd.h>

#include "task.h"
#include "test_solve.h"
#include "providers/tp_util.h"

static const muster_dtype_t dtypes[] = {MUSTER_F32, MUSTER_F64, MUSTER_C64, MUSTER_C128};

static void matrix(muster_routine_t r, int processes) {
  setenv("MUSTER_PROVIDER_PATH", tp_lapack_dir(), 1);
  unsetenv("MUSTER_PROVIDER");
  uint64_t seed = (uint64_t)getpid() * 1000003u;
  const int64_t ns[] = {24, 37}; /* 24: divisible by 1..4; 37: by none > 1 */
  for (size_t d = 0; d < 4; d++)
    for (int R = 1; R <= 4; R++)
      for (size_t k = 0; k < 2; k++) {
        int64_t n = ns[k];
        /* alternate: the runtime's tile, and an explicit valid one */
        int64_t tile = ((d + (size_t)R + k) % 2) ? sv_odd_tile(n, R) : 0;
        sv_expect_ok(r, dtypes[d], n, R, processes, tile, seed++);
      }
  ASSERT_EQ(test_count_job_segments(test_job()), 0);
}

TEST_IMPL(solve_matrix_potrs_threads) { matrix(MUSTER_POTRS, 0); return 0; }
TEST_IMPL(solve_matrix_potrs_processes) { matrix(MUSTER_POTRS, 1); return 0; }
TEST_IMPL(solve_matrix_potri_threads) { matrix(MUSTER_POTRI, 0); return 0; }
TEST_IMPL(solve_matrix_potri_processes) { matrix(MUSTER_POTRI, 1); return 0; }
TEST_IMPL(solve_matrix_syevd_threads) { matrix(MUSTER_SYEVD, 0); return 0; }
TEST_IMPL(solve_matrix_syevd_processes) { matrix(MUSTER_SYEVD, 1); return 0; }

/* Larger n (70, tile 5), and syevd without vectors. */
TEST_IMPL(solve_larger_and_novectors) {
  setenv("MUSTER_PROVIDER_PATH", tp_lapack_dir(), 1);
  sv_expect_ok(MUSTER_POTRS, MUSTER_F64, 70, 4, 1, 5, 11);
  sv_expect_ok(MUSTER_SYEVD, MUSTER_C128, 70, 3, 0, 0, 12);
  sv_run_t run;
  memset(&run, 0, sizeof run);
  run.args.routine = MUSTER_SYEVD;
  run.args.dtype = MUSTER_F64;
  run.args.n = 40;
  run.args.flags = MUSTER_NO_VECTORS;
  run.R = 2;
  run.processes = 1;
  run.seed = 13;
  sv_run(&run);
  ASSERT_EQ(sv_same_outcome(&run), 0);
  ASSERT_OK(run.out[0].rc);
  ASSERT_DBL_LT(sv_residual(&run), chk_tolerance(MUSTER_F64, 40));
  /* A's shards untouched without vectors */
  ASSERT(memcmp(run.full, run.A, 40 * 40 * 8) == 0);
  sv_free(&run);
  return 0;
}

/* The same group used call after call (cached segment, cached mappings). */
TEST_IMPL(solve_repeated_in_one_group) {
  setenv("MUSTER_PROVIDER_PATH", tp_lapack_dir(), 1);
  for (int i = 0; i < 5; i++) sv_expect_ok(MUSTER_POTRS, MUSTER_F64, 30, 3, i % 2, 0, 100 + i);
  ASSERT_EQ(test_count_job_segments(test_job()), 0);
  return 0;
}

/* muster_solve_all: one caller holds every shard. */
TEST_IMPL(solve_all_single_caller) {
  setenv("MUSTER_PROVIDER_PATH", tp_lapack_dir(), 1);
  for (int d = 0; d < 4; d++) {
    muster_dtype_t t = dtypes[d];
    int64_t n = 33, nrhs = 2;
    size_t esz = muster_dtype_size(t);
    int R = 3;
    int64_t S = (n + R - 1) / R;
    void *A = calloc((size_t)(n * n), esz), *B = calloc((size_t)(n * nrhs), esz);
    chk_rng_t rng;
    chk_seed(&rng, 77 + (uint64_t)d);
    chk_random_hermitian(t, n, 1, &rng, A, n);
    chk_random_dense(t, n, nrhs, &rng, B, n);
    muster_shard_t sh[3];
    void *bs[3];
    for (int r = 0; r < R; r++) {
      memset(&sh[r], 0, sizeof sh[r]);
      sh[r].mem = MUSTER_MEM_HOST;
      sh[r].device = -1;
      sh[r].col0 = r * S;
      sh[r].ncols = n - r * S < S ? n - r * S : S;
      sh[r].lda = n;
      sh[r].a = malloc((size_t)(n * S) * esz);
      memcpy(sh[r].a, (char *)A + (size_t)(r * S * n) * esz, (size_t)(n * sh[r].ncols) * esz);
      bs[r] = malloc((size_t)(n * nrhs) * esz);
      memcpy(bs[r], B, (size_t)(n * nrhs) * esz);
      sh[r].b = bs[r];
      sh[r].ldb = n;
    }
    muster_solve_args_t args = {.routine = MUSTER_POTRS, .dtype = t, .n = n, .nrhs = nrhs};
    muster_solve_result_t res;
    ASSERT_OK(muster_solve_all(&args, R, sh, &res));
    ASSERT(strcmp(res.provider, "lapack") == 0);
    ASSERT_DBL_LT(chk_potrs(t, n, nrhs, A, n, bs[2], n, B, n), chk_tolerance(t, n));
    ASSERT(memcmp(bs[0], bs[2], (size_t)(n * nrhs) * esz) == 0);
    /* the same validation as the collective call */
    sh[1].lda = n - 1;
    ASSERT_EQ(muster_solve_all(&args, R, sh, &res), MUSTER_EINVAL);
    ASSERT_STR_CONTAINS(muster_last_error(), "rank 1: lda=32 < n=33");
    for (int r = 0; r < R; r++) {
      free(sh[r].a);
      free(bs[r]);
    }
    free(A);
    free(B);
  }
  return 0;
}
