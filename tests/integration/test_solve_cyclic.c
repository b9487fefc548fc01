/*
 * tests/integration/test_solve_cyclic.c - shards already in the 1-D block-
 * cyclic layout (MUSTER_LAYOUT_CYCLIC with the tile they are laid out
 * with), through the collective solve in threads mode and through
 * muster_solve_all; results converted back with muster_layout_* and
 * residual-checked.
 */
#include <stdlib.h>

#include "task.h"
#include "test_solve.h"
#include "providers/tp_util.h"

enum { R = 3 };

typedef struct cyc {
  muster_routine_t routine;
  int64_t n, tile, lc;
  void *cyc[R], *b[R];
  int rc[R];
  char msg[R][300];
} cyc_t;

static int rank_fn(int rank, int device, void *arg) {
  cyc_t *c = arg;
  muster_group_t *g;
  muster_group_opts_t opts = {.job = NULL, .timeout_s = 10, .device = device};
  int rc = muster_group_join("cyclic", rank, R, &opts, &g);
  if (rc == 0) {
    muster_solve_args_t args = {.routine = c->routine, .dtype = MUSTER_F64, .n = c->n, .nrhs = 1,
                                .tile = c->tile, .layout = MUSTER_LAYOUT_CYCLIC};
    muster_shard_t sh = {.mem = MUSTER_MEM_HOST, .device = -1, .a = c->cyc[rank], .lda = c->n,
                         .col0 = 0, .ncols = c->lc, .b = c->b[rank], .ldb = c->n};
    rc = muster_solve(g, &args, &sh, NULL);
    muster_group_leave(g);
  }
  c->rc[rank] = rc;
  snprintf(c->msg[rank], sizeof c->msg[rank], "%s", rc ? muster_last_error() : "");
  return 0;
}

static void run(muster_routine_t routine, int collective) {
  const int64_t n = 37, tile = 3; /* valid for (37, 3); n is no multiple of it */
  ASSERT_OK(muster_layout_check_tile(n, tile, R));
  cyc_t c = {.routine = routine, .n = n, .tile = tile, .lc = muster_layout_local_cols(n, tile, R)};
  int64_t S = (n + R - 1) / R;
  double *A = malloc((size_t)(n * n) * sizeof *A), *B = malloc((size_t)n * sizeof *B);
  chk_rng_t rng;
  chk_seed(&rng, 31 + (uint64_t)routine);
  chk_random_hermitian(MUSTER_F64, n, 1, &rng, A, n);
  chk_random_dense(MUSTER_F64, n, 1, &rng, B, n);
  void *blk[R];
  for (int r = 0; r < R; r++) {
    blk[r] = calloc((size_t)(n * S), sizeof(double));
    int64_t c0 = r * S, nc = n - c0 < S ? n - c0 : S;
    memcpy(blk[r], A + c0 * n, (size_t)(n * nc) * sizeof(double));
    c.cyc[r] = calloc((size_t)(n * c.lc), sizeof(double));
    c.b[r] = malloc((size_t)n * sizeof(double));
    memcpy(c.b[r], B, (size_t)n * sizeof(double));
  }
  ASSERT_OK(muster_layout_block_to_cyclic(MUSTER_F64, n, n, tile, R, blk, c.cyc));
  if (collective) {
    int devices[R] = {-1, -1, -1};
    ASSERT_OK(muster_run_on_devices(R, devices, rank_fn, &c));
    for (int r = 0; r < R; r++) {
      if (c.rc[r]) fprintf(stderr, "rank %d: %s\n", r, c.msg[r]);
      ASSERT_EQ(c.rc[r], 0);
    }
  } else {
    muster_shard_t sh[R];
    for (int r = 0; r < R; r++)
      sh[r] = (muster_shard_t){.mem = MUSTER_MEM_HOST, .device = -1, .a = c.cyc[r], .lda = n,
                               .ncols = c.lc, .b = c.b[r], .ldb = n};
    muster_solve_args_t args = {.routine = routine, .dtype = MUSTER_F64, .n = n, .nrhs = 1,
                                .tile = tile, .layout = MUSTER_LAYOUT_CYCLIC};
    ASSERT_OK(muster_solve_all(&args, R, sh, NULL));
  }
  double tol = chk_tolerance(MUSTER_F64, n);
  if (routine == MUSTER_POTRS) {
    for (int r = 0; r < R; r++) ASSERT_DBL_LT(chk_potrs(MUSTER_F64, n, 1, A, n, c.b[r], n, B, n), tol);
  } else {
    ASSERT_OK(muster_layout_cyclic_to_block(MUSTER_F64, n, n, tile, R, c.cyc, blk));
    double *inv = malloc((size_t)(n * n) * sizeof *inv);
    for (int r = 0; r < R; r++) {
      int64_t c0 = r * S, nc = n - c0 < S ? n - c0 : S;
      memcpy(inv + c0 * n, blk[r], (size_t)(n * nc) * sizeof(double));
    }
    ASSERT_DBL_LT(chk_potri(MUSTER_F64, n, A, n, inv, n), tol);
    free(inv);
  }
  /* a wrong local width is refused */
  if (!collective) {
    muster_shard_t sh[R];
    for (int r = 0; r < R; r++)
      sh[r] = (muster_shard_t){.mem = MUSTER_MEM_HOST, .device = -1, .a = c.cyc[r], .lda = n,
                               .ncols = c.lc - 1, .b = c.b[r], .ldb = n};
    muster_solve_args_t args = {.routine = routine, .dtype = MUSTER_F64, .n = n, .nrhs = 1,
                                .tile = tile, .layout = MUSTER_LAYOUT_CYCLIC};
    ASSERT_EQ(muster_solve_all(&args, R, sh, NULL), MUSTER_EINVAL);
    ASSERT_STR_CONTAINS(muster_last_error(), "cyclic layout");
    args.tile = 0;
    ASSERT_EQ(muster_solve_all(&args, R, sh, NULL), MUSTER_ETILE);
  }
  for (int r = 0; r < R; r++) {
    free(blk[r]);
    free(c.cyc[r]);
    free(c.b[r]);
  }
  free(A);
  free(B);
}

TEST_IMPL(solve_cyclic_layout) {
  setenv("MUSTER_PROVIDER_PATH", tp_lapack_dir(), 1);
  run(MUSTER_POTRS, 1);
  run(MUSTER_POTRI, 1);
  run(MUSTER_POTRS, 0);
  run(MUSTER_POTRI, 0);
  ASSERT_EQ(test_count_job_segments(test_job()), 0);
  return 0;
}
