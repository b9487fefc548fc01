/* tests/unit/test_cmg_plan.c - the cusolvermg provider's block <-> cyclic
 * copy plans, run on host buffers (the provider runs the same plans with
 * CUDA copies).  The plan code is host-only C, linked in (tests/SConscript). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cusolvermg/plan.h"
#include "muster.h"
#include "muster/layout.h"
#include "task.h"

static uint64_t rng_state;
static uint64_t rnd(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return rng_state;
}

static double val(int64_t g, int64_t row) { return (double)g * 1e6 + (double)row + 0.25; }

typedef struct bufs {
  int R;
  int64_t cap[64];
  double *user[64], *work[64], *stage;
} bufs_t;

static void check_one(int64_t n, int R, int64_t T, int64_t lda, int force, int64_t stage_cap,
                      int64_t extra) {
  muster_layout_geom_t L;
  ASSERT_OK(muster_layout_geom_init(&L, n, T, R));
  bufs_t b = {R, {0}, {0}, {0}, NULL};
  for (int r = 0; r < R; r++) {
    b.cap[r] = muster_layout_block_ncols(&L, r) + extra;
    b.user[r] = malloc((size_t)((b.cap[r] ? b.cap[r] : 1) * lda) * sizeof(double));
    ASSERT(b.user[r]);
    for (int64_t c = 0; c < b.cap[r]; c++)
      for (int64_t i = 0; i < lda; i++)
        b.user[r][c * lda + i] = c < muster_layout_block_ncols(&L, r)
                                     ? val(muster_layout_block_col0(&L, r) + c, i)
                                     : -1.0;
  }
  cmg_plan_req_t req = {n, lda, T, R, sizeof(double), b.cap, CMG_TO_CYCLIC, force, stage_cap};
  cmg_plan_t to_cyc, to_blk;
  char why[160];
  ASSERT_EQ(cmg_plan_build(&to_cyc, &req, why, sizeof why), 0);
  req.direction = CMG_TO_BLOCK;
  req.force = to_cyc.kind == CMG_PLAN_COPY ? CMG_PLAN_COPY : force;
  ASSERT_EQ(cmg_plan_build(&to_blk, &req, why, sizeof why), 0);
  ASSERT_EQ(to_blk.kind, to_cyc.kind);
  if (to_cyc.stage_bytes) ASSERT_LE(to_cyc.stage_bytes, stage_cap);
  if (force == CMG_PLAN_COPY && to_cyc.kind != CMG_PLAN_IDENTITY) ASSERT_EQ(to_cyc.kind, CMG_PLAN_COPY);
  if (to_cyc.kind == CMG_PLAN_COPY)
    for (int r = 0; r < R; r++) {
      b.work[r] = malloc((size_t)(L.local_cols * lda) * sizeof(double));
      ASSERT(b.work[r]);
      for (int64_t k = 0; k < L.local_cols * lda; k++) b.work[r][k] = -2.0;
    }
  if (to_cyc.stage_bytes || to_blk.stage_bytes) {
    int64_t sb = to_cyc.stage_bytes > to_blk.stage_bytes ? to_cyc.stage_bytes : to_blk.stage_bytes;
    b.stage = malloc((size_t)sb);
    ASSERT(b.stage);
  }
  cmg_plan_run_host(&to_cyc, (void *const *)b.user, (void *const *)b.work, b.stage);
  if (to_cyc.kind == CMG_PLAN_COPY) { /* only reads the caller's buffers: getrs factors the copy, A stays */
    for (int64_t k = 0; k < to_cyc.nops; k++) ASSERT_EQ(to_cyc.ops[k].dst.buf, CMG_WORK);
    for (int r = 0; r < R; r++)
      for (int64_t c = 0; c < b.cap[r]; c++)
        for (int64_t i = 0; i < lda; i++)
          ASSERT(b.user[r][c * lda + i] == (c < muster_layout_block_ncols(&L, r)
                                                ? val(muster_layout_block_col0(&L, r) + c, i)
                                                : -1.0));
  }
  /* cyclic: every real column in place, padding zero (copy plans) */
  for (int r = 0; r < R; r++) {
    double *cyc = to_cyc.kind == CMG_PLAN_COPY ? b.work[r] : b.user[r];
    int64_t real = muster_layout_cyclic_real_cols(&L, r);
    for (int64_t lc = 0; lc < real; lc++) {
      int64_t g = muster_layout_cyclic_global(&L, r, lc);
      ASSERT_GE(g, 0);
      for (int64_t i = 0; i < lda; i++)
        if (cyc[lc * lda + i] != val(g, i)) {
          fprintf(stderr, "n=%lld R=%d T=%lld lda=%lld kind=%d: rank %d col %lld row %lld = %g, want %g\n",
                  (long long)n, R, (long long)T, (long long)lda, to_cyc.kind, r, (long long)lc,
                  (long long)i, cyc[lc * lda + i], val(g, i));
          ASSERT(0);
        }
    }
    if (to_cyc.kind == CMG_PLAN_COPY)
      for (int64_t k = real * lda; k < L.local_cols * lda; k++) ASSERT(cyc[k] == 0.0);
  }
  if (to_cyc.kind == CMG_PLAN_COPY) /* the way back must rewrite every block column */
    for (int r = 0; r < R; r++)
      for (int64_t k = 0; k < muster_layout_block_ncols(&L, r) * lda; k++) b.user[r][k] = -3.0;
  cmg_plan_run_host(&to_blk, (void *const *)b.user, (void *const *)b.work, b.stage);
  for (int r = 0; r < R; r++)
    for (int64_t c = 0; c < muster_layout_block_ncols(&L, r); c++)
      for (int64_t i = 0; i < lda; i++)
        ASSERT(b.user[r][c * lda + i] == val(muster_layout_block_col0(&L, r) + c, i));
  for (int r = 0; r < R; r++) {
    free(b.user[r]);
    free(b.work[r]);
  }
  free(b.stage);
  cmg_plan_free(&to_cyc);
  cmg_plan_free(&to_blk);
}

TEST_IMPL(cmg_plan_round_trip_random) {
  rng_state = 0x9e3779b97f4a7c15ull ^ (uint64_t)getpid();
  int runs = 0;
  for (int k = 0; k < 400; k++) {
    int R = 1 + (int)(rnd() % 8);
    int64_t n = 1 + (int64_t)(rnd() % 300);
    int64_t T = 1 + (int64_t)(rnd() % (uint64_t)n);
    int64_t lda = n + (int64_t)(rnd() % 3);
    int force = (int)(rnd() % 3); /* 0 auto, 1 in place, 2 copy */
    int64_t stage_cap = (int64_t)(8 * (1 + rnd() % 40)) * lda; /* often smaller than a unit */
    int64_t extra = (rnd() % 4 == 0) ? (int64_t)(rnd() % 40) : 0;
    check_one(n, R, T, lda, force, stage_cap, extra);
    runs++;
  }
  /* the shapes the benchmark uses, scaled down: powers of two, aligned */
  check_one(1024, 2, 64, 1024, 0, 4096, 0);
  check_one(4096, 4, 128, 4096, 0, 1 << 16, 0);
  check_one(1000, 2, 256, 1003, 0, 1 << 20, 0);
  ASSERT_EQ(runs, 400);
  return 0;
}

static int kind_of(int64_t n, int R, int64_t T, int force, int64_t *stage, int64_t *work) {
  int64_t cap[16];
  muster_layout_geom_t L;
  muster_layout_geom_init(&L, n, T, R);
  for (int r = 0; r < R; r++) cap[r] = muster_layout_block_ncols(&L, r);
  cmg_plan_req_t req = {n, n, T, R, 8, cap, CMG_TO_CYCLIC, force, 1 << 20};
  cmg_plan_t p;
  char why[160];
  ASSERT_EQ(cmg_plan_build(&p, &req, why, sizeof why), 0);
  int kind = p.kind;
  if (stage) *stage = p.stage_bytes;
  if (work) *work = p.work_bytes;
  if (kind == CMG_PLAN_IDENTITY) ASSERT_EQ(p.nops, 0);
  cmg_plan_free(&p);
  return kind;
}

TEST_IMPL(cmg_plan_kinds) {
  int64_t stage = -1, work = -1;
  ASSERT_EQ(kind_of(1000, 1, 256, 0, NULL, NULL), CMG_PLAN_IDENTITY);   /* one GPU         */
  ASSERT_EQ(kind_of(1024, 2, 512, 0, NULL, NULL), CMG_PLAN_IDENTITY);   /* T == S          */
  ASSERT_EQ(kind_of(1024, 2, 512, CMG_PLAN_COPY, NULL, NULL), CMG_PLAN_IDENTITY);
  ASSERT_EQ(kind_of(1024, 2, 256, 0, &stage, &work), CMG_PLAN_INPLACE);  /* 4 tiles swap    */
  ASSERT_EQ(work, 0);
  ASSERT_GT(stage, 0);
  ASSERT_LE(stage, 1 << 20);
  ASSERT_EQ(kind_of(1000, 2, 256, 0, NULL, &work), CMG_PLAN_COPY);      /* 512 real > 500  */
  ASSERT_EQ(work, 512 * 1000 * 8);
  ASSERT_EQ(kind_of(1024, 2, 256, CMG_PLAN_COPY, NULL, NULL), CMG_PLAN_COPY);
  /* bad shape: a message, no crash */
  int64_t cap[2] = {10, 10};
  cmg_plan_req_t req = {100, 50, 8, 2, 8, cap, CMG_TO_CYCLIC, 0, 1 << 20};
  cmg_plan_t p;
  char why[160] = "";
  ASSERT_EQ(cmg_plan_build(&p, &req, why, sizeof why), -1);
  ASSERT_STR_CONTAINS(why, "lda=50");
  req.lda = 100;
  ASSERT_EQ(cmg_plan_build(&p, &req, why, sizeof why), -1);
  ASSERT_STR_CONTAINS(why, "rank 0 holds 10 columns");
  return 0;
}
