/*
 * tests/gpu/gpu_dn.c - the cusolverdn provider's GPU cases (gpu_dn.h):
 *   - every routine (potrs, potri, syevd, syevd values only) x dtype x
 *     {threads, processes} x {1 rank on 1 GPU (solved in place), 2 ranks on
 *     1 GPU, 2 ranks on 2 GPUs}, n = 1000 or 1537 (lda = n + 3), block or
 *     1-D cyclic layout (tile 96), each solved twice: residuals checked on
 *     every rank, the second solve creates nothing, the counters say
 *     whether it ran in place and copied, and (processes: a fresh leader)
 *     the device bytes the provider holds stay within estimate()'s peak;
 *   - potri's two paths: the legacy potri (MUSTER_DN_POTRI=potri) in the
 *     grid above, potrs against identity panels (the default up to n =
 *     8192, or MUSTER_DN_POTRI=solve; n = 2100: two panels) for every dtype,
 *     muster_solve_all, a target GPU holding no rank (MUSTER_DN_DEVICE=1),
 *     MUSTER_NO_FACTOR, not positive definite, NaN in A or B;
 *   - memory: a solve whose gathered matrix does not fit in what is free
 *     fails with MUSTER_ENOMEM naming the bytes (the caller's data intact,
 *     a later solve succeeds), and estimate() refuses it, and a matrix
 *     larger than the GPU, from the GPU's real free memory;
 *   - estimate()'s workspace bound against cusolverDn's _bufferSize for
 *     every routine and dtype up to n = 32768;
 *   - a rank SIGKILLed mid-solve (1 GPU and 2 GPUs, leader and not): a
 *     surviving non-leader errs within 2 s, /dev/shm is left clean;
 *   - getrs, gels, log det (gpu_dn_general.c) and geqrf, gesvd, polar
 *     (gpu_dn_factors.c).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>
#include <cusolverDn.h>

#include "cudacommon.h" /* cuc_cuda_type, cuc_real_type */
#include "gpu_dn.h"
#include "gpu_dn_util.h"
#include "gpu_util.h"
#include "muster/provider.h"

enum { S_HANDLES, S_ALLOCS, S_PEER, S_IPC_OPENS, S_IPC_CLOSES, S_SOLVES, S_COPIES, S_IN_PLACE, S_TARGET_BYTES };
static const char *const dn_stat_names[] = {"handles",    "allocs", "peer",     "ipc_opens",   "ipc_closes",
                                            "solves",     "copies", "in_place", "target_bytes"};
static int dn_check(const tcase_t *c, const uint64_t *before, const uint64_t *after);
static const gprov_t dn = {"cusolverdn", "muster_cusolverdn_stats", 9, dn_stat_names, 0xf, S_SOLVES, dn_check};

/* ---- checks around every solve ----------------------------------------------------- */

/* The target the provider should pick: MUSTER_DN_DEVICE, else rank 0's. */
static int target_of(const tcase_t *c) {
  const char *e = getenv("MUSTER_DN_DEVICE");
  return e && *e ? atoi(e) : c->devs[0];
}

static void query_of(const tcase_t *c, muster_provider_query_t *q, int *devs, uint64_t *free_b) {
  memset(q, 0, sizeof *q);
  q->routine = c->routine;
  q->dtype = c->dtype;
  q->n = c->n;
  q->nrhs = muster_routine_nrhs(c->routine, c->nrhs);
  q->flags = c->flags;
  q->mem = MUSTER_MEM_CUDA;
  q->nranks = c->R;
  q->span = c->mode == M_PROCS ? MUSTER_SPAN_PROCESSES : MUSTER_SPAN_THREADS;
  for (int r = 0; r < c->R; r++) devs[r] = c->devs[r];
  q->devices = devs;
  q->free_bytes = free_b;
  q->ndevices = c->ngpus;
}

static const muster_provider_v2_t *provider(void) {
  return (const muster_provider_v2_t *)gc_provider_symbol(&dn, MUSTER_PROVIDER_SYMBOL_V2);
}

static int dn_check(const tcase_t *c, const uint64_t *before, const uint64_t *after) {
  /* potri's path: forced, or (auto) the solve path up to n = 8192 for real
   * dtypes (providers/cusolverdn/dnInt.h, dn_potri_path) */
  const char *path = getenv("MUSTER_DN_POTRI");
  int real = c->dtype == MUSTER_F32 || c->dtype == MUSTER_F64;
  int solve_path = path && strcmp(path, "auto") ? !strcmp(path, "solve") : c->n <= 8192 && real;
  int in_place = c->R == 1 && target_of(c) == c->devs[0] && !(c->routine == MUSTER_POTRI && solve_path);
  uint64_t got = after[S_IN_PLACE] - before[S_IN_PLACE], copies = after[S_COPIES] - before[S_COPIES];
  if (got != (uint64_t)in_place || (in_place && copies != 0) || (!in_place && copies < (uint64_t)c->R)) {
    fprintf(stderr, "    %s: in-place solves +%llu (expected %d), copies +%llu\n", c->name, (unsigned long long)got,
            in_place, (unsigned long long)copies);
    return 1;
  }
  if (c->mode != M_PROCS) return 0; /* held bytes: only a fresh process holds nothing of earlier cases */
  const muster_provider_v2_t *v = provider();
  muster_provider_query_t q;
  muster_provider_estimate_t est;
  int devs[GC_MAX_RANKS];
  query_of(c, &q, devs, NULL);
  if (!v || v->estimate(NULL, &q, &est) != 0 || after[S_TARGET_BYTES] == 0 || after[S_TARGET_BYTES] > est.peak_bytes) {
    fprintf(stderr, "    %s: the provider holds %llu bytes on the target, estimate's peak %llu (%s)\n", c->name,
            (unsigned long long)after[S_TARGET_BYTES], v ? (unsigned long long)est.peak_bytes : 0ull,
            v ? est.note : "no muster_provider_v2 symbol");
    return 1;
  }
  return 0;
}

/* ---- memory ----------------------------------------------------------------------------- */

#define MCK(call)                                                                                  \
  do {                                                                                             \
    cudaError_t st_ = (call);                                                                      \
    if (st_ != cudaSuccess) {                                                                      \
      fprintf(stderr, "    memory: %s:%d %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(st_)); \
      goto out;                                                                                    \
    }                                                                                              \
  } while (0)
#define MFAIL(...)                                                                                 \
  do {                                                                                             \
    fprintf(stderr, "    memory: " __VA_ARGS__);                                                   \
    goto out;                                                                                      \
  } while (0)

/* potrs f64 on 2 ranks of GPU 0 (block shards, lda = n) through
 * muster_solve_all. */
static int solve_two(int64_t n, void *const *a, void *const *b, muster_solve_result_t *res) {
  muster_shard_t sh[2];
  muster_solve_args_t args = {MUSTER_POTRS, MUSTER_F64, n, 1, 0, MUSTER_LAYOUT_BLOCK, 0, "cusolverdn"};
  int64_t S = (n + 1) / 2;
  for (int r = 0; r < 2; r++)
    sh[r] = (muster_shard_t){MUSTER_MEM_CUDA, 0, a[r], n, r * S, r ? n - S : S, b[r], n, NULL, NULL};
  return muster_solve_all(&args, 2, sh, res);
}

/* Two block shards of an SPD n x n f64 matrix and its B on GPU 0. */
static cudaError_t make_two(int64_t n, void **a, void **b, uint64_t seed) {
  int64_t S = (n + 1) / 2;
  cudaError_t st = cudaSuccess;
  for (int r = 0; r < 2 && st == cudaSuccess; r++) {
    gu_cols_t cols = {0, 2, r, r * S, 0};
    st = cudaMalloc(&a[r], (size_t)(n * S) * 8);
    if (st == cudaSuccess) st = cudaMalloc(&b[r], (size_t)n * 8);
    if (st == cudaSuccess) st = gu_fill_matrix(MUSTER_F64, a[r], n, n, r ? n - S : S, cols, seed, (double)n, 0);
    if (st == cudaSuccess) st = gu_fill_vectors(MUSTER_F64, b[r], n, n, 1, seed + 1, 0);
  }
  return st == cudaSuccess ? cudaDeviceSynchronize() : st;
}

static int estimate_free(int64_t n, uint64_t free_b, muster_provider_estimate_t *est) {
  const muster_provider_v2_t *v = provider();
  int devs[2] = {0, 0};
  uint64_t fr[2] = {free_b, free_b};
  muster_provider_query_t q = {.routine = MUSTER_POTRS, .dtype = MUSTER_F64, .n = n, .nrhs = 1,
                               .layout = MUSTER_LAYOUT_BLOCK, .mem = MUSTER_MEM_CUDA, .nranks = 2,
                               .ndevices = 1, .nnodes = 1, .span = MUSTER_SPAN_THREADS, .devices = devs,
                               .free_bytes = fr};
  return v ? v->estimate(NULL, &q, est) : -999;
}

/* The gathered matrix does not fit in what is free: solve() fails with
 * MUSTER_EUNSUPPORTED naming the bytes (the choice asks estimate() first),
 * estimate() refuses the call, the caller's
 * B is intact, and once memory is back the same call succeeds.  Then a
 * matrix 4x the GPU's memory is refused by estimate(). */
static int dn_memory(const tcase_t *c, int ndev) {
  const int64_t n = 4096;
  const size_t mat = (size_t)(n * n) * 8;
  void *a[2] = {NULL, NULL}, *b[2] = {NULL, NULL}, *a0[2] = {NULL, NULL}, *b0[2] = {NULL, NULL}, *ballast = NULL;
  void *borig = NULL; /* B as make_two made it (seed 7 + 1) */
  char *h1 = malloc((size_t)n * 8), *h2 = malloc((size_t)n * 8);
  size_t free_b = 0, total = 0;
  muster_solve_result_t res;
  muster_provider_estimate_t est;
  double o[3];
  int fail = 1, rc;
  (void)c;
  (void)ndev;
  MCK(cudaSetDevice(0));
  MCK(make_two(n, a, b, 7));
  MCK(make_two(64, a0, b0, 9));
  MCK(cudaMalloc(&borig, (size_t)n * 8));
  MCK(gu_fill_vectors(MUSTER_F64, borig, n, n, 1, 8, 0));
  /* a first, small solve: handle and streams exist before memory runs short */
  if ((rc = solve_two(64, a0, b0, &res)) != 0) MFAIL("warm-up solve: %d %s\n", rc, muster_last_error());
  MCK(cudaMemGetInfo(&free_b, &total));
  size_t want = free_b - mat / 2; /* half the gathered matrix stays free */
  while (cudaMalloc(&ballast, want) != cudaSuccess && want > mat) want -= 64 << 20;
  (void)cudaGetLastError();
  MCK(cudaMemGetInfo(&free_b, &total));
  if (!ballast || free_b >= mat) MFAIL("could not leave less than %zu bytes free (%zu free)\n", mat, free_b);
  MCK(cudaMemcpy(h1, b[0], (size_t)n * 8, cudaMemcpyDeviceToHost));
  rc = solve_two(n, a, b, &res);
  /* the engine choice asks estimate() before anything is exported: the
   * refusal is MUSTER_EUNSUPPORTED with the estimate's reason (docs/choice.md,
   * "Forcing one"), and nothing of the caller's is touched */
  if (rc != MUSTER_EUNSUPPORTED || !strstr(muster_last_error(), "estimate refused: needs") ||
      !strstr(muster_last_error(), "GB free"))
    MFAIL("short of memory: solve returned %d (%s): %s\n", rc, muster_strerror(rc), muster_last_error());
  printf("    short of memory: %s\n", muster_last_error());
  MCK(cudaMemcpy(h2, b[0], (size_t)n * 8, cudaMemcpyDeviceToHost));
  if (memcmp(h1, h2, (size_t)n * 8)) MFAIL("the refused solve changed B\n");
  if ((rc = estimate_free(n, free_b, &est)) != MUSTER_EUNSUPPORTED || !strstr(est.note, "GB free"))
    MFAIL("estimate with %zu bytes free returned %d: %s\n", free_b, rc, est.note);
  printf("    estimate: %s\n", est.note);
  MCK(cudaFree(ballast));
  ballast = NULL;
  MCK(cudaMemGetInfo(&free_b, &total));
  if ((rc = estimate_free(n, free_b, &est)) != 0) MFAIL("estimate with memory back: %d %s\n", rc, est.note);
  if ((rc = solve_two(n, a, b, &res)) != 0) MFAIL("with memory back: %d %s\n", rc, muster_last_error());
  MCK(gu_check_potrs(MUSTER_F64, n, 1, b[0], n, borig, n, 7, (double)n, o));
  if (!(o[0] / (o[2] * o[1] * n * gu_eps(MUSTER_F64)) < GC_TOL)) MFAIL("residual %g after the refusal\n", o[0]);
  /* larger than the GPU altogether: n^2 * 8 = 4 x its memory */
  int64_t big = (int64_t)(2.0 * sqrt((double)total / 8.0));
  if ((rc = estimate_free(big, free_b, &est)) != MUSTER_EUNSUPPORTED || !strstr(est.note, "needs"))
    MFAIL("n=%lld on a %zu-byte GPU: estimate returned %d: %s\n", (long long)big, total, rc, est.note);
  printf("    n=%lld: %s\n", (long long)big, est.note);
  fail = 0;
out:
  if (ballast) cudaFree(ballast);
  for (int r = 0; r < 2; r++) {
    cudaFree(a[r]);
    cudaFree(b[r]);
    cudaFree(a0[r]);
    cudaFree(b0[r]);
  }
  cudaFree(borig);
  free(h1);
  free(h2);
  return fail;
}

/* ---- the workspace bound ----------------------------------------------------------------- */

/* gels's Q^H B by the legacy ormqr/unmqr, m = n, one rhs: its lwork in bytes. */
static cusolverStatus_t ormqr_ws(cusolverDnHandle_t h, int dt, int n, void *d, size_t *bytes) {
  int lw = 0;
  cusolverStatus_t st;
  switch (dt) {
  case MUSTER_F32: st = cusolverDnSormqr_bufferSize(h, CUBLAS_SIDE_LEFT, CUBLAS_OP_T, n, 1, n, d, n, d, d, n, &lw); break;
  case MUSTER_F64: st = cusolverDnDormqr_bufferSize(h, CUBLAS_SIDE_LEFT, CUBLAS_OP_T, n, 1, n, d, n, d, d, n, &lw); break;
  case MUSTER_C64: st = cusolverDnCunmqr_bufferSize(h, CUBLAS_SIDE_LEFT, CUBLAS_OP_C, n, 1, n, d, n, d, d, n, &lw); break;
  default: st = cusolverDnZunmqr_bufferSize(h, CUBLAS_SIDE_LEFT, CUBLAS_OP_C, n, 1, n, d, n, d, d, n, &lw); break;
  }
  *bytes = (size_t)lw * gu_esz(dt);
  return st;
}

/* cusolverDn's device workspace for what the provider calls: potrs =
 * Xpotrf (Xpotrs takes none), potri = max(Xpotrf, <t>potri), syevd =
 * Xsyevd (jobz as asked), getrs = Xgetrf, gels = max(Xgeqrf, ormqr) with
 * m = n (what estimate() assumes).  -1 on failure. */
static int64_t dn_ws(cusolverDnHandle_t h, cusolverDnParams_t p, muster_routine_t rt, int dt, int64_t n,
                     unsigned flags, void *dummy) {
  size_t dev = 0, host = 0, more = 0;
  int lw = 0;
  cusolverStatus_t st;
  cublasFillMode_t lo = CUBLAS_FILL_MODE_LOWER;
  cudaDataType t = cuc_cuda_type(dt);
  if (rt == MUSTER_SYEVD) {
    cusolverEigMode_t jobz = (flags & MUSTER_NO_VECTORS) ? CUSOLVER_EIG_MODE_NOVECTOR : CUSOLVER_EIG_MODE_VECTOR;
    st = cusolverDnXsyevd_bufferSize(h, p, jobz, lo, n, t, dummy, n, cuc_real_type(dt), dummy, t, &dev, &host);
    return st == CUSOLVER_STATUS_SUCCESS ? (int64_t)dev : -1;
  }
  if (rt == MUSTER_GETRS) {
    st = cusolverDnXgetrf_bufferSize(h, p, n, n, t, dummy, n, t, &dev, &host);
    return st == CUSOLVER_STATUS_SUCCESS ? (int64_t)dev : -1;
  }
  if (rt == MUSTER_GELS) {
    st = cusolverDnXgeqrf_bufferSize(h, p, n, n, t, dummy, n, t, dummy, t, &dev, &host);
    if (st == CUSOLVER_STATUS_SUCCESS) st = ormqr_ws(h, dt, (int)n, dummy, &more);
    return st == CUSOLVER_STATUS_SUCCESS ? (int64_t)(dev > more ? dev : more) : -1;
  }
  st = cusolverDnXpotrf_bufferSize(h, p, lo, n, t, dummy, n, t, &dev, &host);
  if (st != CUSOLVER_STATUS_SUCCESS) return -1;
  if (rt == MUSTER_POTRI) {
    switch (dt) {
    case MUSTER_F32: st = cusolverDnSpotri_bufferSize(h, lo, (int)n, dummy, (int)n, &lw); break;
    case MUSTER_F64: st = cusolverDnDpotri_bufferSize(h, lo, (int)n, dummy, (int)n, &lw); break;
    case MUSTER_C64: st = cusolverDnCpotri_bufferSize(h, lo, (int)n, dummy, (int)n, &lw); break;
    default: st = cusolverDnZpotri_bufferSize(h, lo, (int)n, dummy, (int)n, &lw); break;
    }
    if (st != CUSOLVER_STATUS_SUCCESS) return -1;
    if ((size_t)lw * gu_esz(dt) > dev) dev = (size_t)lw * gu_esz(dt);
  }
  return (int64_t)dev;
}

/* estimate()'s peak for one rank on the target (solved in place: the peak
 * is the workspace bound plus fixed bytes; getrs and gels with
 * MUSTER_NO_FACTOR) must cover cusolverDn's own workspace, for every
 * routine and dtype up to n = 32768. */
static int dn_workspace(const tcase_t *c, int ndev) {
  gd_ws_t w;
  int fail = gd_ws_open(&w, c);
  cusolverDnHandle_t h = w.h;
  cusolverDnParams_t p = w.p;
  void *dummy = w.dummy;
  const muster_provider_v2_t *v = fail ? NULL : w.v;
  (void)ndev;
  static const int64_t ns[] = {1000, 4096, 16384, 32768};
  static const muster_routine_t rts[6] = {MUSTER_POTRS, MUSTER_POTRI, MUSTER_SYEVD, MUSTER_SYEVD, MUSTER_GETRS,
                                          MUSTER_GELS};
  static const unsigned fls[6] = {0, 0, 0, MUSTER_NO_VECTORS, MUSTER_NO_FACTOR, MUSTER_NO_FACTOR};
  for (int rt = 0; rt < 6 && v; rt++)
    for (int dt = MUSTER_F32; dt <= MUSTER_C128; dt++)
      for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++) {
        tcase_t k = {.routine = rts[rt], .flags = fls[rt], .dtype = (muster_dtype_t)dt, .R = 1, .n = ns[i],
                     .nrhs = 1, .ngpus = 1};
        muster_provider_query_t q;
        muster_provider_estimate_t est;
        int devs[1];
        query_of(&k, &q, devs, NULL);
        int64_t ws = dn_ws(h, p, k.routine, dt, k.n, k.flags, dummy);
        int rc = v->estimate(NULL, &q, &est);
        /* gels past the legacy ormqr's int workspace: cusolverDn cannot
         * size it, and the estimate must refuse it (not fail at solve) */
        if (ws < 0 && k.routine == MUSTER_GELS && rc == MUSTER_EUNSUPPORTED &&
            strstr(est.note, "too large for cusolverDn's ormqr")) {
          printf("    workspace gels %s n=%lld: refused as cusolverDn's ormqr cannot size it\n", muster_dtype_name(k.dtype),
                 (long long)k.n);
          continue;
        }
        if (ws < 0 || rc != 0 || (uint64_t)ws > est.peak_bytes) {
          fprintf(stderr, "    workspace: %s%s %s n=%lld: cusolverDn asks %lld bytes, estimate's peak %llu (rc %d)\n",
                  muster_routine_name(k.routine), k.flags == MUSTER_NO_VECTORS ? "(values)" : "", muster_dtype_name(k.dtype),
                  (long long)k.n, (long long)ws, (unsigned long long)est.peak_bytes, rc);
          fail = 1;
        } else if (getenv("GPU_TEST_VERBOSE") || k.n == 32768) {
          printf("    workspace %s%s %s n=%lld: %.3f GB of a %.3f GB peak\n", muster_routine_name(k.routine),
                 k.flags == MUSTER_NO_VECTORS ? "(values)" : "", muster_dtype_name(k.dtype), (long long)k.n, ws / 1e9, est.peak_bytes / 1e9);
        }
      }
  gd_ws_close(&w);
  return fail;
}

/* ---- the list ------------------------------------------------------------------------ */

/* Where the ranks are: 1 rank on GPU 0, 2 ranks on GPU 0, 2 ranks on GPUs 0 and 1. */
static const struct {
  int R, devs[2], ngpus;
} where[3] = {{1, {0, 0}, 1}, {2, {0, 0}, 1}, {2, {0, 1}, 2}};

static tcase_t *add(tcase_t *cases, int *nc, muster_routine_t rt, unsigned flags, muster_dtype_t dt, int mode, int w,
                    int64_t n, const char *env, const char *shape) {
  tcase_t *c = gc_add(cases, nc, &dn, rt, flags, dt, mode, where[w].R, n, n % 2 ? 3 : 0, 0, shape);
  for (int r = 0; r < c->R; r++) c->devs[r] = where[w].devs[r];
  c->ngpus = where[w].ngpus;
  c->env = env;
  gc_name(c, shape);
  return c;
}

static void cyclic(tcase_t *c, int64_t tile, const char *shape) {
  c->layout = MUSTER_LAYOUT_CYCLIC;
  c->tile = tile;
  gc_name(c, shape);
}

static tcase_t *special(tcase_t *cases, int *nc, gc_special_fn fn, int ngpus, const char *name) {
  tcase_t *c = gc_add(cases, nc, &dn, MUSTER_POTRS, 0, MUSTER_F64, M_PROCS, 1, 1, 0, 0, "");
  c->special = fn;
  c->ngpus = ngpus;
  snprintf(c->name, sizeof c->name, "%s", name);
  return c;
}

void dn_cases(tcase_t *cases, int *nc, int kills) {
  static const muster_dtype_t dts[4] = {MUSTER_F32, MUSTER_F64, MUSTER_C64, MUSTER_C128};
  tcase_t *c;
  for (int w = 0; w < 3; w++)
    for (int mode = M_THREADS; mode <= M_PROCS; mode++)
      for (int d = 0; d < 4; d++)
        for (int rt = 0; rt < 4; rt++) {
          muster_routine_t r = rt == 0 ? MUSTER_POTRS : rt == 1 ? MUSTER_POTRI : MUSTER_SYEVD;
          int64_t n = (d + rt + w) % 2 ? 1537 : 1000;
          c = add(cases, nc, r, rt == 3 ? MUSTER_NO_VECTORS : 0, dts[d], mode, w, n,
                  r == MUSTER_POTRI ? "MUSTER_DN_POTRI=potri" : NULL, "");
          if (c->R == 2 && (d + rt) % 2) cyclic(c, 96, "");
        }
  /* potri by potrs against identity panels (the default up to n = 8192
   * for real dtypes; forced for c128, auto, i.e. the legacy potri, for c64):
   * n = 2100 is two panels */
  for (int w = 0; w < 3; w++)
    for (int mode = M_THREADS; mode <= M_PROCS; mode++) {
      add(cases, nc, MUSTER_POTRI, 0, MUSTER_F32, mode, w, 2100, NULL, "");
      add(cases, nc, MUSTER_POTRI, 0, MUSTER_F64, mode, w, 2100, "MUSTER_DN_POTRI=solve", "");
      c = add(cases, nc, MUSTER_POTRI, 0, MUSTER_C64, mode, w, 2101, NULL, "");
      if (c->R == 2) cyclic(c, 96, "");
      c = add(cases, nc, MUSTER_POTRI, 0, MUSTER_C128, mode, w, 1537, "MUSTER_DN_POTRI=solve", "");
      if (c->R == 2) cyclic(c, 96, "");
    }
  /* one thread holds every shard */
  for (int w = 1; w < 3; w++) {
    add(cases, nc, MUSTER_POTRS, 0, MUSTER_F64, M_ALL, w, 1537, NULL, "");
    add(cases, nc, MUSTER_SYEVD, 0, MUSTER_C128, M_ALL, w, 1000, NULL, "");
  }
  /* the target holds no rank: B, X and W staged in the provider's buffers */
  for (int mode = M_THREADS; mode <= M_PROCS; mode++) {
    c = add(cases, nc, MUSTER_POTRS, 0, MUSTER_F64, mode, 1, 1537, "MUSTER_DN_DEVICE=1", "");
    c->ngpus = 2;
    c = add(cases, nc, MUSTER_SYEVD, 0, MUSTER_F32, mode, 1, 1000, "MUSTER_DN_DEVICE=1", "");
    c->ngpus = 2;
    add(cases, nc, MUSTER_POTRS, MUSTER_NO_FACTOR, MUSTER_F64, mode, 2, 1537, NULL, "");
  }
  /* errors: not positive definite, NaN in A or B */
  for (int mode = M_THREADS; mode <= M_PROCS; mode++) {
    c = add(cases, nc, MUSTER_POTRS, 0, MUSTER_F64, mode, 1, 1000, NULL, "not-PD");
    c->shift = -1000;
    c->expect = MUSTER_ENOTPD;
    c = add(cases, nc, MUSTER_POTRI, 0, MUSTER_C64, mode, 1, 1537, NULL, "not-PD");
    c->shift = -1537;
    c->expect = MUSTER_ENOTPD;
  }
  static const struct {
    muster_routine_t rt;
    muster_dtype_t dt;
    int mode, w;
    int64_t n;
    int in;
  } nans[] = {{MUSTER_POTRS, MUSTER_F64, M_THREADS, 1, 1000, 'a'},
              {MUSTER_POTRI, MUSTER_F32, M_PROCS, 2, 1537, 'a'},
              {MUSTER_POTRS, MUSTER_C128, M_PROCS, 1, 1537, 'b'},
              {MUSTER_SYEVD, MUSTER_F64, M_THREADS, 1, 1000, 'a'}};
  for (size_t i = 0; i < sizeof nans / sizeof nans[0]; i++) {
    c = add(cases, nc, nans[i].rt, 0, nans[i].dt, nans[i].mode, nans[i].w, nans[i].n, NULL,
            nans[i].in == 'a' ? "NaN-in-A" : "NaN-in-B");
    c->nan_in = nans[i].in;
    c->expect = MUSTER_ENONFINITE;
    /* cusolverDn's syevd may report it as "did not converge" */
    if (nans[i].rt == MUSTER_SYEVD) c->expect_alt = MUSTER_EPROVIDER;
  }
  dn_general_cases(cases, nc, &dn);
  dn_factor_cases(cases, nc, &dn);
  special(cases, nc, dn_memory, 1, "memory: gathered matrix larger than the free memory, and larger than the GPU");
  special(cases, nc, dn_workspace, 1, "workspace: estimate's bound covers cusolverDn's bufferSize (n <= 32768)");
  /* a rank SIGKILLed in the middle of a solve: syevd f64 n = 12288 takes
   * cusolverDn about 2 s on one H200 */
  for (int w = 1; w < 3 && kills; w++)
    for (int victim = 1; victim >= 0; victim--) {
      c = add(cases, nc, MUSTER_SYEVD, 0, MUSTER_F64, M_PROCS, w, 12288, NULL, "");
      c->victim = victim;
      c->survive_s = 2.0;
      c->reps = 1;
      c->special = gc_kill;
      snprintf(c->name, sizeof c->name, "kill rank %d (%s) mid-solve: syevd f64 processes R=2 gpus=%d,%d n=12288",
               victim, victim ? "non-leader" : "leader", where[w].devs[0], where[w].devs[1]);
    }
}
