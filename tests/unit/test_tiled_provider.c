/* tests/unit/test_tiled_provider.c - the tiled provider, loaded with dlopen
 * like the registry does, on a machine with or without a GPU: probe()
 * answers without initializing CUDA in this process, choose_tile() gives
 * valid tiles, estimate() has no model (its cost table decides: the table
 * is held to the 2026-11-27 measurements against cusolvermg's) and
 * refuses what the engine cannot run (its memory grows with the lookahead),
 * and solve() refuses bad calls (and bad MUSTER_TILED_* values) with a
 * message naming the rank or variable and the reason before touching a GPU. */
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#include "registry/cost.h"
#include "muster/layout.h"
#include "muster/provider.h"
#include "providers/tp_util.h"
#include "task.h"

/* The build's tiled.so as a v2 leader provider (tp_provider_v2's checks),
 * holding potrs with log det and not getrs; NULL when built without nvcc. */
static const muster_provider_v2_t *load(void **h) {
  const muster_provider_v2_t *v = tp_provider_v2("tiled", MUSTER_PROVIDER_LEADER, h);
  if (!v) return NULL;
  ASSERT(v->routines & (1u << MUSTER_POTRS));
  ASSERT(v->routines & MUSTER_CAP_LOGDET);
  ASSERT(!(v->routines & (1u << MUSTER_GETRS)));
  return v;
}

TEST_IMPL(tiled_provider_probe_and_tiles) {
  void *h = NULL;
  const muster_provider_v2_t *v = load(&h);
  if (!v) return 0;
  tp_gpu_probe_check(v->probe);
  void *ctx = NULL;
  char err[256];
  ASSERT_OK(v->init(&ctx, err, sizeof err));
  static const int64_t ns[] = {1, 7, 100, 1000, 1007, 4096, 8192, 10000, 16384, 32768, 65536, 131072};
  for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++)
    for (int R = 1; R <= 16; R++)
      for (int dt = MUSTER_F32; dt <= MUSTER_C128; dt++) {
        int64_t t = v->choose_tile(ctx, MUSTER_POTRS, (muster_dtype_t)dt, ns[i], R);
        ASSERT_GE(t, 1);
        ASSERT(muster_layout_tile_valid(ns[i], t, R));
      }
  ASSERT_EQ(v->choose_tile(ctx, MUSTER_POTRS, MUSTER_F64, 65536, 1), 1024); /* one GPU: the engine's own rule */
  v->fini(ctx);
  dlclose(h);
  return 0;
}

TEST_IMPL(tiled_provider_estimate_leaves_it_to_the_table) {
  void *h = NULL;
  const muster_provider_v2_t *v = load(&h);
  if (!v) return 0;
  muster_provider_query_t q;
  memset(&q, 0, sizeof q);
  q.routine = MUSTER_POTRS;
  q.dtype = MUSTER_F64;
  q.n = 65536;
  q.nrhs = 1;
  q.mem = MUSTER_MEM_CUDA;
  q.nranks = q.ndevices = 4;
  q.nnodes = 1;
  q.span = MUSTER_SPAN_THREADS;
  muster_provider_estimate_t est;
  ASSERT_OK(v->estimate(NULL, &q, &est));
  ASSERT(est.seconds < 0); /* no model: tiled.cost decides */
  ASSERT_STR_CONTAINS(est.note, "cost table");
  /* a quarter of A (the copy) plus the panel slots */
  ASSERT_GE(est.peak_bytes, (uint64_t)65536 * 65536 * 8 / 4);
  uint64_t at1 = est.peak_bytes; /* a deeper lookahead: one more slot (n x 1024) per step of depth */
  setenv("MUSTER_TILED_LOOKAHEAD", "3", 1);
  ASSERT_OK(v->estimate(NULL, &q, &est));
  unsetenv("MUSTER_TILED_LOOKAHEAD");
  ASSERT_EQ(est.peak_bytes, at1 + (uint64_t)2 * 1024 * 65536 * 8);
  int devs[4] = {0, 0, 1, 1};
  q.devices = devs;
  q.ndevices = 2;
  ASSERT_EQ(v->estimate(NULL, &q, &est), MUSTER_EUNSUPPORTED);
  ASSERT_STR_CONTAINS(est.note, "one GPU per rank");
  q.ndevices = 4;
  q.routine = MUSTER_SYEVD;
  ASSERT_EQ(v->estimate(NULL, &q, &est), MUSTER_EUNSUPPORTED);
  ASSERT_STR_CONTAINS(est.note, "potrs only");
  dlclose(h);
  return 0;
}

TEST_IMPL(tiled_provider_refuses_bad_calls) {
  void *h = NULL;
  const muster_provider_v2_t *v = load(&h);
  if (!v) return 0;
  void *ctx = NULL;
  char err[256] = "";
  ASSERT_OK(v->init(&ctx, err, sizeof err));
  static double a[64], b[8], w[1]; /* never dereferenced: the checks fail first */
  muster_shard_t s = {MUSTER_MEM_HOST, -1, a, 8, 0, 8, b, 8, w, NULL};
  int64_t info = -5;
  muster_provider_call_t call = tp_one_shard_call(MUSTER_POTRS, 8, 1, &s, &info, err, sizeof err);
  ASSERT_EQ(v->solve(ctx, &call), MUSTER_EUNSUPPORTED);
  ASSERT_STR_CONTAINS(err, "tiled: rank 0: shard memory kind 1 is not CUDA device memory");
  ASSERT_EQ(info, 0);
  s.mem = MUSTER_MEM_CUDA;
  s.device = 0;
  call.nshards = 17;
  ASSERT_EQ(v->solve(ctx, &call), MUSTER_EINVAL);
  ASSERT_STR_CONTAINS(err, "17 ranks: the engine takes 1 to 16 GPUs");
  call.nshards = 1;
  call.args.nrhs = 0;
  ASSERT_EQ(v->solve(ctx, &call), MUSTER_EINVAL);
  ASSERT_STR_CONTAINS(err, "potrs: nrhs=0 out of range");
  call.args.nrhs = 1;
  call.args.flags = MUSTER_LOGDET;
  s.w = NULL;
  ASSERT_EQ(v->solve(ctx, &call), MUSTER_EINVAL);
  ASSERT_STR_CONTAINS(err, "rank 0 (device 0): potrs with MUSTER_LOGDET needs w");
  s.w = w;
  call.args.flags = 0;
  s.lda = 7;
  ASSERT_EQ(v->solve(ctx, &call), MUSTER_EINVAL);
  ASSERT_STR_CONTAINS(err, "lda=7");
  s.lda = 8;
  call.args.routine = MUSTER_GETRS;
  ASSERT_EQ(v->solve(ctx, &call), MUSTER_EUNSUPPORTED);
  ASSERT_STR_CONTAINS(err, "routine getrs");
  call.args.routine = MUSTER_POTRS; /* the schedule's knobs: a bad value names the variable */
  static const char *const bad[][3] = {{"MUSTER_TILED_LOOKAHEAD", "5", "is not an integer in 1..4"},
                                       {"MUSTER_TILED_LOOKAHEAD", "0", "is not an integer in 1..4"},
                                       {"MUSTER_TILED_PRIORITY", "2", "is not 0 or 1"},
                                       {"MUSTER_TILED_OVERLAP", "yes", "is not 0 or 1"}};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    setenv(bad[i][0], bad[i][1], 1);
    ASSERT_EQ(v->solve(ctx, &call), MUSTER_EINVAL);
    ASSERT_STR_CONTAINS(err, bad[i][0]);
    ASSERT_STR_CONTAINS(err, bad[i][2]);
    unsetenv(bad[i][0]);
  }
  v->fini(ctx);
  dlclose(h);
  return 0;
}

/* The shipped tables as the choice reads them: on 2 and 4 GPUs tiled is
 * expected faster than cusolvermg for f64 potrs from n = 16384 up (as
 * measured side by side on 4 x H200, 2026-11-27), and cusolvermg keeps the
 * small calls (below tiled's smallest row its time stands); the f32, c64
 * and c128 rows are there too. */
TEST_IMPL(tiled_table_against_cmg) {
  char why[256], note[256], path[PATH_MAX];
  muster__cost_t *tl = NULL, *mg = NULL;
  test_data_path(path, sizeof path, "providers/tiled/tiled.cost");
  ASSERT_OK(muster__cost_read(path, &tl, why, sizeof why));
  test_data_path(path, sizeof path, "providers/cusolvermg/cusolvermg.cost");
  ASSERT_OK(muster__cost_read(path, &mg, why, sizeof why));
  static const struct {
    int gpus;
    int64_t n;
    int tiled_wins;
  } want[] = {{2, 16384, 1}, {2, 32768, 1}, {2, 65536, 1}, {4, 16384, 1}, {4, 32768, 1}, {4, 8192, 0}, {2, 8192, 0}};
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
    double t = 0, m = 0;
    ASSERT_OK(muster__cost_lookup(tl, MUSTER_POTRS, MUSTER_F64, want[i].gpus, want[i].n, 1, &t, note, sizeof note));
    ASSERT_OK(muster__cost_lookup(mg, MUSTER_POTRS, MUSTER_F64, want[i].gpus, want[i].n, 1, &m, note, sizeof note));
    fprintf(stderr, "potrs f64 n=%lld on %d GPUs: tiled %.4f s, cusolvermg %.4f s\n", (long long)want[i].n,
            want[i].gpus, t, m);
    ASSERT_EQ(t < m, want[i].tiled_wins);
  }
  /* the other dtypes' rows (2 and 4 GPUs, measured the same day): read as written */
  double t = 0;
  ASSERT_OK(muster__cost_lookup(tl, MUSTER_POTRS, MUSTER_C128, 4, 32768, 1, &t, note, sizeof note));
  ASSERT(t > 0.3196 && t < 0.3198);
  ASSERT_OK(muster__cost_lookup(tl, MUSTER_POTRS, MUSTER_F32, 2, 16384, 1, &t, note, sizeof note));
  ASSERT(t > 0.0323 && t < 0.0325);
  muster__cost_free(tl);
  muster__cost_free(mg);
  return 0;
}
