/* tests/unit/test_dn_provider.c - the cusolverdn provider, loaded with
 * dlopen like the registry does, on a machine with or without a GPU:
 * both ABI structs, probe() without initializing CUDA here, and the
 * argument checks of solve() and local_export(), whose messages name the
 * rank and the reason (estimate(): test_dn_estimate.c).  The GPU side is tests/gpu (gpu-test --provider
 * cusolverdn). */
#include <dlfcn.h>
#include <limits.h>
#include <stdlib.h>

#include "muster/layout.h"
#include "muster/provider.h"
#include "providers/tp_util.h"
#include "task.h"
#include "test_dn_util.h"

TEST_IMPL(dn_provider_structs_and_probe) {
  const muster_provider_v2_t *v;
  void *h;
  v = tp_provider_v2("cusolverdn", MUSTER_PROVIDER_LEADER, &h);
  if (!h) return 0;
  ASSERT_EQ(v->routines, (1u << MUSTER_POTRS) | (1u << MUSTER_POTRI) | (1u << MUSTER_SYEVD) | (1u << MUSTER_GETRS) |
                             (1u << MUSTER_GELS) | (1u << MUSTER_GEQRF) | (1u << MUSTER_GESVD) |
                             (1u << MUSTER_POLAR) | MUSTER_CAP_LOGDET);
  ASSERT_EQ(v->dtypes, (1u << MUSTER_F32) | (1u << MUSTER_F64) | (1u << MUSTER_C64) | (1u << MUSTER_C128));
  ASSERT_EQ(v->mem_kinds, 1u << MUSTER_MEM_CUDA);
  ASSERT_EQ(v->spans, MUSTER_SPAN_THREADS | MUSTER_SPAN_PROCESSES);
  ASSERT(v->estimate && v->solve && v->local_export && v->leader_import && v->forget_peer);
  ASSERT(!v->collective_solve && !v->cancel);
  /* the v1 struct, for runtimes that load v1 only: the same hooks */
  const muster_provider_v1_t *v1 = dlsym(h, MUSTER_PROVIDER_SYMBOL_V1);
  ASSERT(v1);
  ASSERT_EQ(v1->abi_version, MUSTER_PROVIDER_V1_ABI);
  ASSERT(!strcmp(v1->name, v->name));
  ASSERT(v1->solve == v->solve && v1->probe == v->probe && v1->leader_import == v->leader_import);
  ASSERT(v1->priority < 100); /* cusolvermg stays a v1 runtime's default */
  ASSERT(dlsym(h, "muster_cusolverdn_stats"));

  tp_gpu_probe_check(v->probe);

  void *ctx = NULL;
  char err[256];
  ASSERT_OK(v->init(&ctx, err, sizeof err));
  static const int64_t ns[] = {1, 7, 1000, 1537, 65536};
  for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++)
    for (int R = 1; R <= 8; R++) { /* blocks move whole: the block width, always valid */
      int64_t t = v->choose_tile(ctx, MUSTER_POTRS, MUSTER_F64, ns[i], R);
      ASSERT_EQ(t, muster_ceil_div(ns[i], R));
      ASSERT(muster_layout_tile_valid(ns[i], t, R));
    }
  v->fini(ctx);
  dlclose(h);
  return 0;
}

/* ---- solve's and local_export's checks ----------------------------------------------- */

typedef struct call {
  muster_provider_call_t c;
  muster_shard_t s[4];
  int64_t info;
  char err[512];
  double a[4][64], b[64], w[8];
} call_t;

/* potrs f64 n = 8 over R block shards on devices 0..R-1 (host buffers
 * posing as device memory: the checks never touch them). */
static void call_init(call_t *x, muster_routine_t rt, int R) {
  memset(x, 0, sizeof *x);
  x->c.args.routine = rt;
  x->c.args.dtype = MUSTER_F64;
  x->c.args.n = 8;
  x->c.args.nrhs = 1;
  x->c.args.layout = MUSTER_LAYOUT_BLOCK;
  x->c.nshards = R;
  x->c.shards = x->s;
  x->c.info = &x->info;
  x->c.err = x->err;
  x->c.errlen = sizeof x->err;
  for (int r = 0; r < R; r++) {
    int64_t S = muster_ceil_div(8, R);
    x->s[r] = (muster_shard_t){MUSTER_MEM_CUDA, r, x->a[r], 8, r * S, 8 - r * S < S ? 8 - r * S : S,
                               x->b, 8, x->w, NULL};
  }
}

/* gels f64, A 10 x 8 (m = ldb = lda = 10) over R block shards. */
static void gels_init(call_t *x, int R) {
  call_init(x, MUSTER_GELS, R);
  for (int r = 0; r < R; r++) x->s[r].lda = x->s[r].ldb = 10;
}

static void expect(const muster_provider_v2_t *v, void *ctx, call_t *x, int code, const char *msg) {
  int rc = v->solve(ctx, &x->c);
  if (rc != code || !strstr(x->err, msg)) {
    fprintf(stderr, "solve returned %d, expected %d; message \"%s\" should contain \"%s\"\n", rc, code, x->err, msg);
    ASSERT(0);
  }
  ASSERT(!strncmp(x->err, "cusolverdn: ", 12));
}

TEST_IMPL(dn_provider_refuses_bad_calls) {
  void *h, *ctx;
  const muster_provider_v2_t *v = dn_open(&h, &ctx);
  if (!v) return 0;
  char err[256] = "";
  call_t x;
  call_init(&x, MUSTER_POTRS, 2);
  x.s[1].mem = MUSTER_MEM_HOST;
  expect(v, ctx, &x, MUSTER_EUNSUPPORTED, "rank 1: shard memory kind 1 is not CUDA device memory");
  call_init(&x, MUSTER_POTRS, 2);
  x.c.nshards = MUSTER_MAX_RANKS + 1;
  expect(v, ctx, &x, MUSTER_EINVAL, "65 ranks: takes 1 to 64");
  call_init(&x, MUSTER_POTRS, 2);
  x.s[1].col0 = 3;
  expect(v, ctx, &x, MUSTER_EINVAL, "rank 1 (device 1): block shard holds columns [3, +4), the block layout of n=8 "
                                    "over 2 ranks puts [4, +4) there");
  call_init(&x, MUSTER_POTRS, 2);
  x.s[0].lda = 7;
  expect(v, ctx, &x, MUSTER_EINVAL, "rank 0 (device 0): lda=7 < n=8");
  call_init(&x, MUSTER_POTRS, 2);
  x.s[1].b = NULL;
  expect(v, ctx, &x, MUSTER_EINVAL, "rank 1 (device 1): potrs needs b with ldb >= n");
  call_init(&x, MUSTER_SYEVD, 2);
  x.s[0].w = NULL;
  expect(v, ctx, &x, MUSTER_EINVAL, "rank 0 (device 0): syevd needs w");
  call_init(&x, MUSTER_POTRS, 2);
  x.c.args.layout = MUSTER_LAYOUT_CYCLIC;
  x.c.args.tile = 0;
  expect(v, ctx, &x, MUSTER_ETILE, "cyclic layout: tile 0 out of range");
  x.c.args.tile = 3; /* 3 tiles over 2 ranks: rank 0 holds 2 tiles = 6 columns */
  expect(v, ctx, &x, MUSTER_EINVAL, "rank 0 (device 0): cyclic shard of 4 columns, tile 3 needs 5");
  call_init(&x, MUSTER_POTRI, 1);
  x.c.args.n = (int64_t)INT_MAX + 1;
  x.s[0].lda = x.c.args.n;
  x.s[0].ncols = x.c.args.n;
  expect(v, ctx, &x, MUSTER_EINVAL, "out of range 1..2147483647 (the legacy potri takes int)");
  call_init(&x, MUSTER_POTRS, 2);
  setenv("MUSTER_DN_DEVICE", "-1", 1);
  expect(v, ctx, &x, MUSTER_EINVAL, "MUSTER_DN_DEVICE: '-1' is not an integer in 0..63");
  setenv("MUSTER_DN_DEVICE", "", 1);
  expect(v, ctx, &x, MUSTER_EINVAL, "MUSTER_DN_DEVICE is set but empty");
  unsetenv("MUSTER_DN_DEVICE");
  setenv("MUSTER_DN_POTRI", "inverse", 1);
  expect(v, ctx, &x, MUSTER_EINVAL, "MUSTER_DN_POTRI: 'inverse' is not auto, potri or solve");
  unsetenv("MUSTER_DN_POTRI");
  /* getrs, gels, log det */
  call_init(&x, MUSTER_GETRS, 2);
  x.c.args.flags = MUSTER_LOGDET;
  expect(v, ctx, &x, MUSTER_EINVAL, "MUSTER_LOGDET is for potrs only (getrs)");
  x.c.args.flags = 0x100;
  expect(v, ctx, &x, MUSTER_EUNSUPPORTED, "flags 0x100 not implemented");
  call_init(&x, MUSTER_GETRS, 2);
  x.s[1].b = NULL;
  expect(v, ctx, &x, MUSTER_EINVAL, "rank 1 (device 1): getrs needs b with ldb >= n");
  call_init(&x, MUSTER_GETRS, 2);
  x.c.args.nrhs = 0;
  expect(v, ctx, &x, MUSTER_EINVAL, "getrs: nrhs=0 out of range");
  call_init(&x, MUSTER_POTRS, 2);
  x.c.args.flags = MUSTER_LOGDET;
  x.s[1].w = NULL;
  expect(v, ctx, &x, MUSTER_EINVAL, "rank 1 (device 1): potrs with MUSTER_LOGDET needs w (one real)");
  gels_init(&x, 2);
  x.s[0].ldb = x.s[1].ldb = 7; /* m < n: a wide A */
  expect(v, ctx, &x, MUSTER_EINVAL, "gels: m = rank 0's ldb = 7 out of range n=8..2147483647");
  gels_init(&x, 2);
  x.s[1].ldb = 11;
  expect(v, ctx, &x, MUSTER_EINVAL, "rank 1 (device 1): gels: ldb=11 but rank 0's is 10 (ldb is m");
  gels_init(&x, 2);
  x.s[1].lda = 9; /* A has m = 10 rows */
  expect(v, ctx, &x, MUSTER_EINVAL, "rank 1 (device 1): lda=9 < m=10");
  gels_init(&x, 1);
  x.c.args.n = (int64_t)INT_MAX + 1;
  expect(v, ctx, &x, MUSTER_EINVAL, "out of range 1..2147483647 (the legacy ormqr takes int)");
  /* a well-formed call on a machine without a GPU fails at the first CUDA
   * call, naming the device (on a GPU machine these fake pointers would be
   * used: gpu-test covers that side): every routine's checks pass */
  char why[256];
  if (v->probe(why, sizeof why) < 0) {
    call_init(&x, MUSTER_POTRS, 2);
    expect(v, ctx, &x, MUSTER_ECUDA, "device 0: cudaSetDevice(dev) failed");
    x.c.args.flags = MUSTER_LOGDET;
    expect(v, ctx, &x, MUSTER_ECUDA, "device 0: cudaSetDevice(dev) failed");
    call_init(&x, MUSTER_GETRS, 2);
    expect(v, ctx, &x, MUSTER_ECUDA, "device 0: cudaSetDevice(dev) failed");
    gels_init(&x, 2);
    expect(v, ctx, &x, MUSTER_ECUDA, "device 0: cudaSetDevice(dev) failed");
    gels_init(&x, 1);
    x.c.args.flags = MUSTER_NO_FACTOR;
    expect(v, ctx, &x, MUSTER_ECUDA, "device 0: cudaSetDevice(dev) failed");
  }
  /* every rank's local_export refuses host memory, in the provider's name */
  size_t len = 99;
  muster_shard_t host = x.s[0];
  host.mem = MUSTER_MEM_HOST;
  ASSERT_EQ(v->local_export(ctx, &host, 1, err, sizeof err, &len, err, sizeof err), MUSTER_EUNSUPPORTED);
  ASSERT_EQ(len, 0);
  ASSERT_STR_CONTAINS(err, "cusolverdn: shard memory kind 1 is not CUDA device memory");
  dn_close(v, h, ctx);
  return 0;
}

/* geqrf, gesvd, polar: A m x n (m = ldb = lda) over R block shards, B
 * packed with nrhs columns. */
static void factor_init(call_t *x, muster_routine_t rt, int R, int64_t m, int64_t nrhs) {
  call_init(x, rt, R);
  x->c.args.nrhs = nrhs;
  for (int r = 0; r < R; r++) x->s[r].lda = x->s[r].ldb = m;
}

/* geqrf, gesvd, polar: estimate() gives them the memory rule and a (not
 * yet calibrated) time, gesvd's values need no B; solve() checks the
 * flags each takes, B's width for the factors, ldb = m on every rank. */
TEST_IMPL(dn_provider_factor_calls) {
  void *h, *ctx;
  const muster_provider_v2_t *v = dn_open(&h, &ctx);
  if (!v) return 0;
  char why[256];
  query_t q;
  muster_provider_estimate_t est;
  const uint64_t n = 8192, mat = n * n * 8;
  double t[4];
  static const struct {
    muster_routine_t rt;
    unsigned flags;
    int64_t nrhs;
  } forms[4] = {{MUSTER_GEQRF, 0, 8192}, {MUSTER_GESVD, MUSTER_NO_VECTORS, 0}, {MUSTER_GESVD, 0, 8192},
                {MUSTER_POLAR, 0, 8192}};
  for (int i = 0; i < 4; i++) {
    dn_query(&q, forms[i].rt, MUSTER_F64, (int64_t)n, 2, dn_dev01, 100.0);
    q.q.flags = forms[i].flags;
    q.q.nrhs = forms[i].nrhs;
    ASSERT_OK(v->estimate(ctx, &q.q, &est));
    ASSERT_STR_CONTAINS(est.note, "m taken as n");
    ASSERT(est.seconds > 0);
    t[i] = est.seconds;
    /* the gathered A, and (but for the values) a factor buffer of at least
     * one n x n factor: never in place, nothing is written before all is made */
    ASSERT_GT(est.peak_bytes, forms[i].nrhs ? 2 * mat : mat);
    dn_query(&q, forms[i].rt, MUSTER_F64, (int64_t)n, 1, dn_dev01, 100.0);
    q.q.flags = forms[i].flags;
    q.q.nrhs = forms[i].nrhs;
    ASSERT_OK(v->estimate(ctx, &q.q, &est));
    ASSERT(!strstr(est.note, "in place"));
  }
  ASSERT(t[1] < t[2] && t[2] < t[3]); /* values < vectors < polar (the SVD and two products) */
  /* memory: the polar's four n x n buffers do not fit 2 GB */
  dn_query(&q, MUSTER_POLAR, MUSTER_F64, (int64_t)n, 1, dn_dev01, 2.0);
  q.q.nrhs = (int64_t)n;
  ASSERT_EQ(v->estimate(ctx, &q.q, &est), MUSTER_EUNSUPPORTED);
  ASSERT_STR_CONTAINS(est.note, "2.00 GB free");

  call_t x;
  factor_init(&x, MUSTER_GEQRF, 2, 10, 7); /* thin, tall: R (8 x 8) in B needs 7 columns of 10 */
  x.c.args.nrhs = 6;
  expect(v, ctx, &x, MUSTER_EINVAL, "geqrf: nrhs=6: B (m=10 rows, packed) needs 7 columns for its factors");
  factor_init(&x, MUSTER_POLAR, 2, 10, 7);
  x.c.args.flags = MUSTER_FULL_MATRICES;
  expect(v, ctx, &x, MUSTER_EINVAL, "polar: flags 0x8 not taken (no flags)");
  factor_init(&x, MUSTER_GESVD, 2, 10, 20);
  x.c.args.flags = MUSTER_LOGDET;
  expect(v, ctx, &x, MUSTER_EINVAL, "MUSTER_LOGDET is for potrs only (gesvd)");
  factor_init(&x, MUSTER_GESVD, 2, 10, 0);
  x.c.args.flags = MUSTER_NO_VECTORS;
  x.s[1].w = NULL;
  expect(v, ctx, &x, MUSTER_EINVAL, "rank 1 (device 1): gesvd needs w");
  factor_init(&x, MUSTER_GEQRF, 2, 4, 4); /* wide 4 x 8: R over A, Q (4 x 4) in B */
  x.s[1].ldb = 5;
  expect(v, ctx, &x, MUSTER_EINVAL, "rank 1 (device 1): geqrf: ldb=5 but rank 0's is 4 (ldb is m");
  factor_init(&x, MUSTER_GEQRF, 2, 4, 4);
  x.s[0].lda = 3;
  expect(v, ctx, &x, MUSTER_EINVAL, "rank 0 (device 0): lda=3 < m=4");
  factor_init(&x, MUSTER_GESVD, 1, 0, 1);
  expect(v, ctx, &x, MUSTER_EINVAL, "gesvd: m = rank 0's ldb = 0 out of range 1..2147483647");
  if (v->probe(why, sizeof why) < 0) { /* well-formed: the first CUDA call fails, naming the device */
    factor_init(&x, MUSTER_GEQRF, 2, 4, 4);
    expect(v, ctx, &x, MUSTER_ECUDA, "device 0: cudaSetDevice(dev) failed");
    factor_init(&x, MUSTER_GESVD, 2, 10, 0);
    x.c.args.flags = MUSTER_NO_VECTORS;
    x.s[0].b = x.s[1].b = NULL;
    expect(v, ctx, &x, MUSTER_ECUDA, "device 0: cudaSetDevice(dev) failed");
    factor_init(&x, MUSTER_POLAR, 2, 4, 16); /* wide: H (8 x 8) needs 16 columns of 4 */
    expect(v, ctx, &x, MUSTER_ECUDA, "device 0: cudaSetDevice(dev) failed");
  }
  dn_close(v, h, ctx);
  return 0;
}

