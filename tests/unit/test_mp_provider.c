/* tests/unit/test_mp_provider.c - the cusolvermp provider loaded with
 * dlopen on a machine without a GPU: its struct, and which NCCL and
 * cuSOLVERMp it takes or refuses over stand-in libraries
 * (tests/providers/fake_mp.c) laid out as a user has them (MUSTER_MP_LIBDIR,
 * a Python environment's nvidia-* wheels with their metadata folders), with
 * the message probe(), estimate() and collective_solve() give, and the
 * release muster_provider_engine_version reports.  The
 * libraries load once per process, so every case runs in a forked child. */
#include <dlfcn.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "muster/layout.h"
#include "muster/provider.h"
#include "providers/tp_util.h"
#include "task.h"

static char fakes[PATH_MAX]; /* <build>/tests/providers/fakemp */
/* the stand-in cuSOLVERMp make_site copies: solver/ (every symbol) or
 * solver08/ (no Gesvd, no Polar: as 0.8 is) */
static const char *solver_dir = "solver";

static void find_fakes(void) {
  char exe[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  ASSERT(n > 0);
  exe[n] = '\0';
  *strrchr(exe, '/') = '\0';
  snprintf(fakes, sizeof fakes, "%.4000s/providers/fakemp", exe);
}

/* A wheel tree: <root>/site/nvidia/cu13/lib/libcusolverMp.so.0 with the
 * metadata folder of version `ver` (NULL: no solver at all). */
static void make_site(const char *root, const char *ver) {
  char cmd[3 * PATH_MAX];
  snprintf(cmd, sizeof cmd, "rm -rf %s && mkdir -p %s/site/nvidia/cu13/lib", root, root);
  ASSERT_EQ(system(cmd), 0);
  if (!ver) return;
  snprintf(cmd, sizeof cmd,
           "cp %s/%s/libcusolverMp.so.0 %s/site/nvidia/cu13/lib/ && "
           "mkdir -p %s/site/nvidia_cusolvermp_cu13-%s.dist-info",
           fakes, solver_dir, root, root, ver);
  ASSERT_EQ(system(cmd), 0);
}

/* Only what the case lays out is found: no Python, CUDA or HPC SDK of this
 * machine (the loader's own search still runs, after the fakes). */
static void isolate(const char *root, const char *nccl) {
  char v[PATH_MAX + 64];
  snprintf(v, sizeof v, "%s/%s", fakes, nccl);
  setenv("MUSTER_MP_LIBDIR", v, 1);
  snprintf(v, sizeof v, "%s/site", root);
  setenv("PYTHONPATH", v, 1);
  setenv("PATH", "/nonexistent", 1);
  setenv("HOME", root, 1);
  setenv("CUDA_HOME", root, 1);
  setenv("NVHPC_ROOT", root, 1);
  unsetenv("VIRTUAL_ENV");
  unsetenv("CONDA_PREFIX");
  unsetenv("LD_LIBRARY_PATH");
  unsetenv("MUSTER_MP_DISABLE");
}

static void *mp_handle; /* the provider load() opened */

static const muster_provider_v2_t *load(void) {
  const muster_provider_v2_t *v = tp_provider_v2("cusolvermp", MUSTER_PROVIDER_COLLECTIVE, &mp_handle);
  if (!v) _exit(0); /* built without nvcc: nothing to test */
  ASSERT(v->collective_solve && v->cancel && v->release_comms && v->estimate);
  ASSERT(!v->solve && !v->choose_tile);
  return v;
}

static int one_rank_allgather(void *ctx, const void *mine, void *all, size_t len, char *err, size_t errlen) {
  memcpy(all, mine, len);
  return 0;
}

static muster_provider_query_t query(int64_t n, int nranks, const uint64_t *free_b) {
  muster_provider_query_t q;
  memset(&q, 0, sizeof q);
  q.routine = MUSTER_POTRS;
  q.dtype = MUSTER_F64;
  q.n = n;
  q.nrhs = 1;
  q.mem = MUSTER_MEM_CUDA;
  q.nranks = nranks;
  q.ndevices = nranks;
  q.nnodes = 1;
  q.span = nranks > 1 ? MUSTER_SPAN_PROCESSES : MUSTER_SPAN_THREADS;
  q.free_bytes = free_b;
  return q;
}

/* What the provider's muster_provider_engine_version (provider.h) says:
 * its code, the version in out ("" when none). */
static int engine_version(void *ctx, char *out, size_t cap) {
  muster_provider_engine_version_fn f =
      (muster_provider_engine_version_fn)dlsym(mp_handle, MUSTER_PROVIDER_SYMBOL_ENGINE_VERSION);
  ASSERT(f != NULL);
  out[0] = '\0';
  return f(ctx, out, cap);
}

/* probe, estimate and a 1-rank collective_solve must all refuse with
 * `code` and a message holding `want`. */
static void expect_refused_as(int code, const char *want) {
  const muster_provider_v2_t *v = load();
  char why[2048] = "";
  ASSERT_EQ(v->probe(why, sizeof why) < 0, 1);
  void *ctx = NULL;
  char err[2048] = "";
  ASSERT_EQ(v->init(&ctx, err, sizeof err), 0);
  muster_provider_query_t q = query(1000, 1, NULL);
  muster_provider_estimate_t est;
  ASSERT_EQ(v->estimate(ctx, &q, &est), code);
  ASSERT_STR_CONTAINS(est.note, want);
  char ver[32];
  ASSERT_EQ(engine_version(ctx, ver, sizeof ver), MUSTER_ENOENT); /* no engine: no version */
  ASSERT(!ver[0]);
  muster_shard_t s = {.mem = MUSTER_MEM_CUDA, .device = 0, .a = (void *)16, .lda = 8, .b = (void *)16, .ldb = 8};
  muster_bootstrap_t b = {.rank = 0, .size = 1, .kind = "group", .key = 42, .allgather = one_rank_allgather};
  int64_t info = 7, tile = -1;
  muster_collective_call_t call = {.args = {.routine = MUSTER_POTRS, .dtype = MUSTER_F64, .n = 8, .nrhs = 1},
                                   .mine = &s, .dist = muster_layout_block_dist(8, 1, 0, 8), .boot = &b,
                                   .info = &info, .tile_used = &tile, .err = err, .errlen = sizeof err};
  ASSERT_EQ(v->collective_solve(ctx, &call), code);
  ASSERT_STR_CONTAINS(err, "cusolvermp: ");
  ASSERT_STR_CONTAINS(err, want);
  ASSERT_EQ(info, MUSTER_PROVIDER_REFUSED_ALIKE); /* refused in its agreed check: the set holds */
  v->cancel(ctx, &call, MUSTER_EPEERDEAD, "late cancel: must do no harm");
  v->release_comms(ctx, 42);
  v->fini(ctx);
  fprintf(stderr, "  refused as expected: %s\n", err);
}

static void expect_refused(const char *want) { expect_refused_as(MUSTER_EUNSUPPORTED, want); }

/* fn(want) in a child isolated to root's layout (PYTHONPATH pp, NULL: root/site). */
static void child(void (*fn)(const char *), const char *root, const char *nccl, const char *pp,
                  const char *want) {
  pid_t pid = fork();
  ASSERT(pid >= 0);
  if (pid == 0) {
    isolate(root, nccl);
    if (pp) setenv("PYTHONPATH", pp, 1);
    fn(want);
    _exit(0);
  }
  int st = 0;
  ASSERT_EQ(waitpid(pid, &st, 0), pid);
  ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

static void in_child(void (*fn)(const char *), const char *root, const char *nccl, const char *solver_ver,
                     const char *want) {
  make_site(root, solver_ver);
  child(fn, root, nccl, NULL, want);
}

TEST_IMPL(mp_provider_refusals) {
  find_fakes();
  char root[PATH_MAX];
  test_tmp_dir(root, sizeof root);
  /* 0.9 needs NCCL >= 2.29: the 2.28.9 the GPU machines have is refused by name */
  in_child(expect_refused, root, "nccl22809", "0.9.1.9318", "needs NCCL >= 2.29.0, this process has 2.28.9");
  /* 0.8 needs NCCL >= 2.27 */
  in_child(expect_refused, root, "nccl22605", "0.8.0.3126", "needs NCCL >= 2.27.0, this process has 2.26.5");
  /* a release nobody knows */
  in_child(expect_refused, root, "nccl22809", "0.7.2.1", "cuSOLVERMp 0.7.2 is not a release this provider runs");
  /* no cuSOLVERMp at all: the message names the NCCL found and the folders searched */
  in_child(expect_refused, root, "nccl22809", NULL, "no usable cuSOLVERMp with NCCL 2.28.9");
  test_remove_tree(root);
  return 0;
}

/* A one-rank gels (n = 8, lda 12) with ldb and a layout of `dist_m` rows:
 * MUSTER_EINVAL naming `want` (NULL: the shape fits, and lda 12 < 16 rows
 * is what is refused), info MUSTER_PROVIDER_REFUSED_ALIKE, before
 * CUDA is touched. */
static void expect_gels_refused(const muster_provider_v2_t *v, void *ctx, int64_t ldb, int64_t dist_m,
                                const char *want) {
  char err[1024] = "";
  muster_shard_t s = {.mem = MUSTER_MEM_CUDA, .device = 0, .a = (void *)16, .lda = 12, .b = (void *)16, .ldb = ldb};
  muster_bootstrap_t b = {.rank = 0, .size = 1, .kind = "group", .key = 43, .allgather = one_rank_allgather};
  int64_t info = 7, tile = -1;
  muster_collective_call_t call = {.args = {.routine = MUSTER_GELS, .dtype = MUSTER_C64, .n = 8, .nrhs = 2},
                                   .mine = &s, .dist = muster_layout_block_dist(8, 1, 0, 12), .boot = &b,
                                   .info = &info, .tile_used = &tile, .err = err, .errlen = sizeof err};
  call.dist.m = call.dist.mb = dist_m;
  ASSERT_EQ(v->collective_solve(ctx, &call), MUSTER_EINVAL);
  ASSERT_STR_CONTAINS(err, want ? want : "with lld 12 for 16 local rows");
  ASSERT_EQ(info, MUSTER_PROVIDER_REFUSED_ALIKE); /* refused in its agreed check: the set holds */
  fprintf(stderr, "  gels refused as expected: %s\n", err);
}

/* A one-rank geqrf, gesvd or polar (n = 8, m = ldb = 12, block layout,
 * w given) with flags, nrhs and b: `code` naming `want` (NULL: the call
 * fits, and lda 10 < 12 rows is what is refused: MUSTER_EINVAL; else lda
 * is 12), info MUSTER_PROVIDER_REFUSED_ALIKE, before CUDA is touched. */
static void expect_o_refused(const muster_provider_v2_t *v, void *ctx, muster_routine_t routine, unsigned flags,
                             int64_t nrhs, void *bp, int code, const char *want) {
  char err[1024] = "";
  int64_t lda = want ? 12 : 10;
  muster_shard_t s = {.mem = MUSTER_MEM_CUDA, .device = 0, .a = (void *)16, .lda = lda, .b = bp, .ldb = 12,
                      .w = (void *)16};
  muster_bootstrap_t b = {.rank = 0, .size = 1, .kind = "group", .key = 44, .allgather = one_rank_allgather};
  int64_t info = 7, tile = -1;
  muster_collective_call_t call = {.args = {.routine = routine, .dtype = MUSTER_F64, .n = 8, .nrhs = nrhs,
                                            .flags = flags},
                                   .mine = &s, .dist = muster_layout_block_dist(8, 1, 0, lda), .boot = &b,
                                   .info = &info, .tile_used = &tile, .err = err, .errlen = sizeof err};
  call.dist.m = call.dist.mb = 12;
  ASSERT_EQ(v->collective_solve(ctx, &call), code);
  ASSERT_STR_CONTAINS(err, want ? want : "with lld 10 for 12 local rows");
  ASSERT_EQ(info, MUSTER_PROVIDER_REFUSED_ALIKE); /* refused in its agreed check: the set holds */
  fprintf(stderr, "  %s refused as expected: %s\n", muster_routine_str(routine), err);
}
#define expect_geqrf_refused(v, ctx, flags, nrhs, bp, want) \
  expect_o_refused(v, ctx, MUSTER_GEQRF, flags, nrhs, bp, MUSTER_EINVAL, want)

/* gesvd and polar on 0.8 (the fake's release): estimate() and the solve
 * refuse both, naming 0.9.1, so the choice passes over cusolvermp; their
 * flags and B are checked first (thin: V^H or H 8 x 8 in 12-row columns,
 * 6 of them; full: U 12 x 12 and V^H 8 x 8, 18; values only: none, b NULL). */
static void expect_svd_on_08(const muster_provider_v2_t *v, void *ctx) {
  muster_provider_estimate_t est;
  static const muster_routine_t both[] = {MUSTER_GESVD, MUSTER_POLAR};
  for (int i = 0; i < 2; i++) {
    muster_provider_query_t q = query(1000, 1, NULL);
    q.routine = both[i];
    ASSERT_EQ(v->estimate(ctx, &q, &est), MUSTER_EUNSUPPORTED);
    ASSERT_STR_CONTAINS(est.note, "needs cuSOLVERMp 0.9.1");
  }
  void *bp = (void *)16;
  const int E = MUSTER_EINVAL, U = MUSTER_EUNSUPPORTED;
  expect_o_refused(v, ctx, MUSTER_GESVD, 0, 6, bp, U, "gesvd needs cuSOLVERMp 0.9.1 (cusolverMpGesvd)");
  expect_o_refused(v, ctx, MUSTER_POLAR, 0, 6, bp, U, "polar needs cuSOLVERMp 0.9.1 (cusolverMpPolar)");
  expect_o_refused(v, ctx, MUSTER_GESVD, MUSTER_NO_VECTORS, 0, NULL, U, "needs cuSOLVERMp 0.9.1");
  expect_o_refused(v, ctx, MUSTER_GESVD, MUSTER_LOGDET, 6, bp, E, "MUSTER_NO_VECTORS only, not flags 0x4");
  expect_o_refused(v, ctx, MUSTER_GESVD, 0, 5, bp, E, "gesvd's B needs 6 columns of m = 12 rows");
  expect_o_refused(v, ctx, MUSTER_GESVD, MUSTER_FULL_MATRICES, 17, bp, E, "gesvd's B needs 18 columns");
  expect_o_refused(v, ctx, MUSTER_POLAR, 0, 6, NULL, E, "polar's B needs 6 columns of m = 12 rows");
  expect_o_refused(v, ctx, MUSTER_POLAR, MUSTER_NO_VECTORS, 6, bp, E, "polar takes no flags, not flags 0x1");
  expect_o_refused(v, ctx, MUSTER_GESVD, MUSTER_NO_VECTORS, 0, NULL, E, NULL); /* values only: B unused */
}

/* geqrf: estimate() takes it on one process and on 2 (the fake is 0.8,
 * whose QR the release table saw right on 1 x Q grids), refuses a 2x1
 * grid unless MUSTER_MP_QR_GRIDS=1 (a malformed value named);
 * collective_solve refuses flags it does not take and a B too small for
 * its factor (thin: R 8 x 8 in 12-row columns, 6 of them; full: Q 12 x 12). */
static void expect_geqrf(const muster_provider_v2_t *v, void *ctx) {
  muster_provider_estimate_t est;
  muster_provider_query_t q = query(1000, 2, NULL);
  q.routine = MUSTER_GEQRF;
  ASSERT_EQ(v->estimate(ctx, &q, &est), 0);
  setenv("MUSTER_MP_GRID", "2x1", 1);
  ASSERT_EQ(v->estimate(ctx, &q, &est), MUSTER_EUNSUPPORTED);
  ASSERT_STR_CONTAINS(est.note, "geqrf on a 2x1 grid");
  setenv("MUSTER_MP_QR_GRIDS", "1", 1);
  ASSERT_EQ(v->estimate(ctx, &q, &est), 0);
  setenv("MUSTER_MP_QR_GRIDS", "yes", 1);
  ASSERT_EQ(v->estimate(ctx, &q, &est), MUSTER_EINVAL);
  ASSERT_STR_CONTAINS(est.note, "MUSTER_MP_QR_GRIDS: 'yes' is not 0 or 1");
  unsetenv("MUSTER_MP_QR_GRIDS");
  unsetenv("MUSTER_MP_GRID");
  q = query(1000, 1, NULL);
  q.routine = MUSTER_GEQRF;
  ASSERT_EQ(v->estimate(ctx, &q, &est), 0);
  void *bp = (void *)16;
  expect_geqrf_refused(v, ctx, MUSTER_NO_VECTORS, 6, bp, "takes MUSTER_FULL_MATRICES only, not flags 0x1");
  expect_geqrf_refused(v, ctx, 0, 5, bp, "geqrf's B needs 6 columns of m = 12 rows");
  expect_geqrf_refused(v, ctx, MUSTER_FULL_MATRICES, 6, bp, "geqrf's B needs 12 columns of m = 12 rows");
  expect_geqrf_refused(v, ctx, 0, 6, NULL, "b NULL");
  expect_geqrf_refused(v, ctx, 0, 6, bp, NULL);
  expect_geqrf_refused(v, ctx, MUSTER_FULL_MATRICES, 12, bp, NULL);
}

static void expect_loaded(const char *unused) {
  const muster_provider_v2_t *v = load();
  void *ctx = NULL;
  char err[512];
  ASSERT_EQ(v->init(&ctx, err, sizeof err), 0);
  /* 8 ranks, 2x4 grid, n = 20000 f64: about 400 MB of A per rank */
  uint64_t plenty[8], little[8];
  for (int r = 0; r < 8; r++) plenty[r] = 80ull << 30, little[r] = 80ull << 30;
  little[5] = 200ull << 20;
  muster_provider_query_t q = query(20000, 8, plenty);
  muster_provider_estimate_t est;
  ASSERT_EQ(v->estimate(ctx, &q, &est), 0);
  ASSERT(est.seconds < 0);
  ASSERT_STR_CONTAINS(est.note, "2x4 grid");
  ASSERT_GT(est.peak_bytes, 20000ull * 20000 * 8 / 8);
  q.free_bytes = little;
  ASSERT_EQ(v->estimate(ctx, &q, &est), MUSTER_EUNSUPPORTED);
  ASSERT_STR_CONTAINS(est.note, "rank 5 needs");
  /* one process per GPU */
  q = query(1000, 2, NULL);
  q.span = MUSTER_SPAN_THREADS;
  ASSERT_EQ(v->estimate(ctx, &q, &est), MUSTER_EUNSUPPORTED);
  ASSERT_STR_CONTAINS(est.note, "one process per GPU");
  q = query(1000, 2, NULL);
  q.ndevices = 1;
  ASSERT_EQ(v->estimate(ctx, &q, &est), MUSTER_EUNSUPPORTED);
  ASSERT_STR_CONTAINS(est.note, "2 ranks on 1 GPUs");
  /* syevd on a tile that is not a power of two */
  setenv("MUSTER_MP_TILE", "96", 1);
  q = query(1000, 2, NULL);
  q.routine = MUSTER_SYEVD;
  ASSERT_EQ(v->estimate(ctx, &q, &est), MUSTER_ETILE);
  ASSERT_STR_CONTAINS(est.note, "power of two");
  unsetenv("MUSTER_MP_TILE");
  setenv("MUSTER_MP_GRID", "3x3", 1);
  q = query(1000, 8, NULL);
  ASSERT_EQ(v->estimate(ctx, &q, &est), MUSTER_EINVAL);
  ASSERT_STR_CONTAINS(est.note, "MUSTER_MP_GRID: '3x3' is not PxQ with P*Q = 8");
  unsetenv("MUSTER_MP_GRID");
  /* every variable of a call, malformed: refused naming it (each used to
   * be taken: anything but "0" was blocking, anything but "1" no copy,
   * strtoll took " 64", and "" was the default) */
  static const struct { const char *var, *value, *want; } bad[] = {
      {"MUSTER_MP_GRID", "", "MUSTER_MP_GRID is set but empty"},
      {"MUSTER_MP_GRID", " 2x4", "MUSTER_MP_GRID: ' 2x4' is not PxQ"},
      {"MUSTER_MP_TILE", "+64", "MUSTER_MP_TILE: '+64' is not an integer in 1.."},
      {"MUSTER_MP_SCRATCH_MB", " 64", "MUSTER_MP_SCRATCH_MB: ' 64' is not an integer in 1..1073741824"},
      {"MUSTER_MP_SCRATCH_MB", "", "MUSTER_MP_SCRATCH_MB is set but empty"},
      {"MUSTER_MP_COPY", "yes", "MUSTER_MP_COPY: 'yes' is not 0 or 1"},
      {"MUSTER_MP_NCCL_BLOCKING", "false", "MUSTER_MP_NCCL_BLOCKING: 'false' is not 0 or 1"},
      {"MUSTER_MP_NCCL_BLOCKING", "", "MUSTER_MP_NCCL_BLOCKING is set but empty"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    setenv(bad[i].var, bad[i].value, 1);
    q = query(1000, 8, NULL);
    ASSERT_EQ(v->estimate(ctx, &q, &est), MUSTER_EINVAL);
    ASSERT_STR_CONTAINS(est.note, bad[i].want);
    unsetenv(bad[i].var);
  }
  /* a non-blocking communicator: refused on more than one process by 0.8
   * (the fake's release; its solvers failed on one), taken on one */
  setenv("MUSTER_MP_NCCL_BLOCKING", "0", 1);
  q = query(1000, 2, NULL);
  ASSERT_EQ(v->estimate(ctx, &q, &est), MUSTER_EUNSUPPORTED);
  ASSERT_STR_CONTAINS(est.note, "non-blocking NCCL communicator (MUSTER_MP_NCCL_BLOCKING=0) on 2 processes");
  q = query(1000, 1, NULL);
  ASSERT_EQ(v->estimate(ctx, &q, &est), 0);
  unsetenv("MUSTER_MP_NCCL_BLOCKING");
  q = query(1000, 2, NULL);
  ASSERT_EQ(v->estimate(ctx, &q, &est), 0);
  /* gels: refused on more than one process (plan.h: mp_refused; 0.8's QR
   * was seen wrong there), taken on one; its shape refused by
   * collective_solve before any GPU work */
  q = query(1000, 2, NULL);
  q.routine = MUSTER_GELS;
  ASSERT_EQ(v->estimate(ctx, &q, &est), MUSTER_EUNSUPPORTED);
  ASSERT_STR_CONTAINS(est.note, "gels on 2 processes");
  q = query(1000, 1, NULL);
  q.routine = MUSTER_GELS;
  ASSERT_EQ(v->estimate(ctx, &q, &est), 0);
  expect_gels_refused(v, ctx, 7, 7, "no shape from n 8, ldb 7 (gels: m = ldb >= n;"); /* m < n */
  expect_gels_refused(v, ctx, 16, 12, "does not fit 1 ranks of 16 x 8"); /* ldb 16, the layout's m 12 */
  expect_gels_refused(v, ctx, 16, 16, NULL);                             /* fits: refused for lda only */
  expect_geqrf(v, ctx);
  expect_svd_on_08(v, ctx);
  v->fini(ctx);
}

TEST_IMPL(mp_provider_loads_and_estimates) {
  find_fakes();
  char root[PATH_MAX];
  test_tmp_dir(root, sizeof root);
  /* NCCL 2.28.9 + cuSOLVERMp 0.8.0 from a wheel: taken */
  in_child(expect_loaded, root, "nccl22809", "0.8.0.3126", NULL);
  test_remove_tree(root);
  return 0;
}

static void expect_disabled(const char *want) {
  setenv("MUSTER_MP_DISABLE", "1", 1);
  expect_refused(want);
}

/* The libraries' variables, malformed: MUSTER_EINVAL naming them from
 * probe, estimate and solve (MUSTER_MP_DISABLE=yes or "false" turned the
 * provider off; an empty folder of MUSTER_MP_LIBDIR was skipped).  The
 * libraries are looked for once per process: each case in a child. */
static const char *env_case[2];

static void expect_env_refused(const char *want) {
  setenv(env_case[0], env_case[1], 1);
  expect_refused_as(MUSTER_EINVAL, want);
}

TEST_IMPL(mp_provider_env_refused) {
  find_fakes();
  char root[PATH_MAX];
  test_tmp_dir(root, sizeof root);
  static const char *const cases[][3] = {
      {"MUSTER_MP_DISABLE", "yes", "MUSTER_MP_DISABLE: 'yes' is not 0 or 1"},
      {"MUSTER_MP_DISABLE", "", "MUSTER_MP_DISABLE is set but empty"},
      {"MUSTER_MP_LIBDIR", "/a::/b", "MUSTER_MP_LIBDIR: '/a::/b' has an empty folder (2)"},
      {"MUSTER_MP_LIBDIR", "", "MUSTER_MP_LIBDIR is set but empty"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    env_case[0] = cases[i][0];
    env_case[1] = cases[i][1];
    in_child(expect_env_refused, root, "nccl22809", "0.8.0.3126", cases[i][2]);
  }
  test_remove_tree(root);
  return 0;
}

/* Two Python environments, 0.9.1 with cuBLASMp 0.10 first, 0.8.0 second
 * (<root>/s091/site, <root>/s08/site on PYTHONPATH): the solver loaded
 * (this process's maps) is `want`'s, and cuBLASMp with it only for 0.9.1. */
static void expect_chosen(const char *want) {
  const muster_provider_v2_t *v = load();
  void *ctx = NULL;
  char err[512];
  ASSERT_EQ(v->init(&ctx, err, sizeof err), 0);
  muster_provider_query_t q = query(1000, 1, NULL);
  muster_provider_estimate_t est;
  ASSERT_EQ(v->estimate(ctx, &q, &est), 0);
  int new = !strcmp(want, "0.9.1"), lacks = strstr(want, "lacks") != NULL;
  /* the release loaded is the engine version its cost table's rows are chosen by */
  char ver[32];
  ASSERT_OK(engine_version(ctx, ver, sizeof ver));
  ASSERT(!strcmp(ver, new ? "0.9.1" : "0.8.0"));
  /* a 0.9.1 passed over for its missing symbols was opened to look */
  if (!lacks) ASSERT_EQ(tp_maps_has("/s091/site/nvidia/cu13/lib/libcusolverMp.so.0"), new);
  if (!lacks) ASSERT_EQ(tp_maps_has("/s091/site/nvidia/cublasmp/cu13/lib/libcublasmp.so.0"), new);
  ASSERT_EQ(tp_maps_has("/s08/site/nvidia/cu13/lib/libcusolverMp.so.0"), !new);
  /* gesvd and polar: 0.9.1's (taken by estimate), refused with 0.8 */
  static const muster_routine_t both[] = {MUSTER_GESVD, MUSTER_POLAR};
  for (int i = 0; i < 2; i++) {
    q.routine = both[i];
    ASSERT_EQ(v->estimate(ctx, &q, &est), new ? 0 : MUSTER_EUNSUPPORTED);
    if (!new) ASSERT_STR_CONTAINS(est.note, "needs cuSOLVERMp 0.9.1 (cusolverMp");
    if (!new) ASSERT_STR_CONTAINS(est.note, "the one loaded is 0.8");
  }
  v->fini(ctx);
}

/* 0.9.1 is taken where its NCCL is (2.30.7), with its cuBLASMp; with the
 * GPU machines' NCCL 2.28.9 it is refused before anything of it loads, and
 * 0.8.0 further on the path is taken: both releases work, the newer first. */
TEST_IMPL(mp_provider_prefers_091_when_it_runs) {
  find_fakes();
  char root[PATH_MAX], sub[PATH_MAX + 8], cmd[5 * PATH_MAX], pp[2 * PATH_MAX + 32];
  test_tmp_dir(root, sizeof root);
  snprintf(sub, sizeof sub, "%s/s08", root);
  make_site(sub, "0.8.0.3126");
  snprintf(sub, sizeof sub, "%s/s091", root);
  make_site(sub, "0.9.1.9318.post1");
  snprintf(cmd, sizeof cmd, "mkdir -p %s/site/nvidia/cublasmp/cu13/lib %s/site/nvidia_cublasmp_cu13-0.10.0.3695.dist-info "
           "&& cp %s/cublasmp/libcublasmp.so.0 %s/site/nvidia/cublasmp/cu13/lib/", sub, sub, fakes, sub);
  ASSERT_EQ(system(cmd), 0);
  snprintf(pp, sizeof pp, "%s/s091/site:%s/s08/site", root, root);
  static const char *const cases[][2] = {{"nccl23007", "0.9.1"}, {"nccl22809", "0.8.0"}};
  for (int i = 0; i < 2; i++) child(expect_chosen, root, cases[i][0], pp, cases[i][1]);
  /* a 0.9.1 without Gesvd and Polar (0.9 must have them) is passed over:
   * 0.8.0 (whose lack of them is fine) is taken even with 0.9.1's NCCL */
  solver_dir = "solver08";
  snprintf(cmd, sizeof cmd, "cp %s/solver08/libcusolverMp.so.0 %s/site/nvidia/cu13/lib/", fakes, sub);
  ASSERT_EQ(system(cmd), 0);
  snprintf(sub, sizeof sub, "%s/s08", root);
  make_site(sub, "0.8.0.3126");
  child(expect_chosen, root, "nccl23007", pp, "0.8.0 (0.9.1 lacks Gesvd)");
  solver_dir = "solver";
  test_remove_tree(root);
  return 0;
}

TEST_IMPL(mp_provider_disabled) {
  find_fakes();
  char root[PATH_MAX];
  test_tmp_dir(root, sizeof root);
  in_child(expect_disabled, root, "nccl22809", "0.8.0.3126", "disabled by MUSTER_MP_DISABLE=1");
  test_remove_tree(root);
  return 0;
}
