/* tests/unit/test_cmg_provider.c - the cusolvermg provider, loaded with
 * dlopen like the registry does, on a machine with or without a GPU:
 * probe() answers without crashing and without initializing CUDA in this
 * process, choose_tile() gives valid tiles, and solve() refuses what it
 * cannot do with a message naming the rank and the reason. */
#include <dlfcn.h>
#include <stdlib.h>

#include "muster/layout.h"
#include "muster/provider.h"
#include "providers/tp_util.h"
#include "task.h"

static void *load(const muster_provider_v1_t **v) {
  void *h = test_provider_dlopen("cusolvermg");
  *v = NULL;
  if (!h) return NULL;
  *v = dlsym(h, MUSTER_PROVIDER_SYMBOL_V1);
  ASSERT(*v);
  ASSERT_EQ((*v)->abi_version, MUSTER_PROVIDER_V1_ABI);
  ASSERT_EQ((*v)->struct_size, sizeof(muster_provider_v1_t));
  ASSERT(!strcmp((*v)->name, "cusolvermg"));
  return h;
}

TEST_IMPL(cmg_provider_probe) {
  const muster_provider_v1_t *v;
  void *h = load(&v);
  if (!h) return 0;
  tp_gpu_probe_check(v->probe);
  dlclose(h);
  return 0;
}

TEST_IMPL(cmg_provider_choose_tile) {
  const muster_provider_v1_t *v;
  void *h = load(&v);
  if (!h) return 0;
  void *ctx = NULL;
  char err[256];
  ASSERT_OK(v->init(&ctx, err, sizeof err));
  static const int64_t ns[] = {1, 7, 100, 1000, 1007, 4096, 8192, 10000, 16384, 32768, 65536, 131072};
  for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++)
    for (int R = 1; R <= 16; R++)
      for (int rt = MUSTER_POTRS; rt <= MUSTER_GETRS; rt++) {
        int64_t t = v->choose_tile(ctx, (muster_routine_t)rt, MUSTER_F64, ns[i], R);
        ASSERT_GE(t, 1);
        ASSERT(muster_layout_tile_valid(ns[i], t, R));
        if (rt == MUSTER_SYEVD) ASSERT_LE(t, 1024);
        if (rt == MUSTER_GETRS) ASSERT_LE(t, 512); /* cusolverMgGetrf refuses larger (measured) */
      }
  /* big matrices on 2 GPUs get big tiles that divide the block width */
  int64_t t = v->choose_tile(ctx, MUSTER_POTRS, MUSTER_F64, 32768, 2);
  ASSERT_GE(t, 1024);
  ASSERT_EQ(16384 % t, 0);
  v->fini(ctx);
  dlclose(h);
  return 0;
}

TEST_IMPL(cmg_provider_refuses_host_memory) {
  const muster_provider_v1_t *v;
  void *h = load(&v);
  if (!h) return 0;
  void *ctx = NULL;
  char err[256] = "";
  ASSERT_OK(v->init(&ctx, err, sizeof err));
  double a[16], b[4];
  muster_shard_t s = {MUSTER_MEM_HOST, -1, a, 4, 0, 4, b, 4, NULL, NULL};
  int64_t info = -5;
  muster_provider_call_t call = tp_one_shard_call(MUSTER_POTRS, 4, 1, &s, &info, err, sizeof err);
  int rc = v->solve(ctx, &call);
  ASSERT_EQ(rc, MUSTER_EUNSUPPORTED);
  ASSERT_STR_CONTAINS(err, "rank 0");
  ASSERT_STR_CONTAINS(err, "not CUDA device memory");
  call.nshards = 17; /* cuSolverMg's limit is 16 */
  ASSERT_EQ(v->solve(ctx, &call), MUSTER_EINVAL);
  ASSERT_STR_CONTAINS(err, "cusolvermg: 17 ranks: cuSolverMg takes 1 to 16 GPUs");
  size_t len = 99;
  ASSERT_EQ(v->local_export(ctx, &s, 1, err, sizeof err, &len, err, sizeof err), MUSTER_EUNSUPPORTED);
  ASSERT_EQ(len, 0);
  /* the shared GPU code (providers/cudacommon) names the provider */
  ASSERT_STR_CONTAINS(err, "cusolvermg: shard memory kind 1 is not CUDA device memory");
  v->fini(ctx);
  dlclose(h);
  return 0;
}

/* getrs and potrs's log det: what solve() refuses before touching a GPU
 * (the checks run on the shards' fields only), each message naming the
 * rank and what is missing. */
TEST_IMPL(cmg_provider_refuses_bad_getrs_logdet) {
  const muster_provider_v1_t *v;
  void *h = load(&v);
  if (!h) return 0;
  void *ctx = NULL;
  char err[256] = "";
  ASSERT_OK(v->init(&ctx, err, sizeof err));
  ASSERT(v->routines & (1u << MUSTER_GETRS));
  ASSERT(v->routines & MUSTER_CAP_LOGDET);
  static double a[64], b[8], w[1]; /* never dereferenced: the checks fail first */
  muster_shard_t s = {MUSTER_MEM_CUDA, 0, a, 8, 0, 8, b, 8, w, NULL};
  int64_t info = -5;
  muster_provider_call_t call = tp_one_shard_call(MUSTER_GETRS, 8, 0, &s, &info, err, sizeof err);
  ASSERT_EQ(v->solve(ctx, &call), MUSTER_EINVAL); /* nrhs 0 */
  ASSERT_STR_CONTAINS(err, "getrs: nrhs=0 out of range");
  call.args.nrhs = 2;
  s.b = NULL;
  ASSERT_EQ(v->solve(ctx, &call), MUSTER_EINVAL);
  ASSERT_STR_CONTAINS(err, "rank 0 (device 0): getrs needs b with ldb >= n");
  s.b = b;
  s.ldb = 7;
  ASSERT_EQ(v->solve(ctx, &call), MUSTER_EINVAL);
  ASSERT_STR_CONTAINS(err, "getrs needs b with ldb >= n");
  s.ldb = 8;
  call.args.flags = MUSTER_LOGDET; /* log det comes with potrs only */
  ASSERT_EQ(v->solve(ctx, &call), MUSTER_EINVAL);
  ASSERT_STR_CONTAINS(err, "MUSTER_LOGDET is for potrs, not getrs");
  call.args.routine = MUSTER_POTRS;
  s.w = NULL;
  ASSERT_EQ(v->solve(ctx, &call), MUSTER_EINVAL);
  ASSERT_STR_CONTAINS(err, "rank 0 (device 0): potrs with MUSTER_LOGDET needs w");
  /* a tile cusolverMgGetrf would refuse: said before any GPU work */
  call = tp_one_shard_call(MUSTER_GETRS, 600, 1, &s, &info, err, sizeof err);
  ASSERT_EQ(v->solve(ctx, &call), MUSTER_ETILE);
  ASSERT_STR_CONTAINS(err, "getrs: tile 600 > 512, the largest cuSolverMg's getrf takes");
  v->fini(ctx);
  dlclose(h);
  return 0;
}
