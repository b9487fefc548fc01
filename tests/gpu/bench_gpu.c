/*
 * tests/gpu/bench_gpu.c - the GPU benchmark (docs/performance/gpu.md).
 *
 *   muster-gpu-bench [--gpus R] [--quick] [--no-capacity] [--capacity-n N] [--routine NAME]
 *   muster-gpu-bench --sweep [--gpus R]      tile sweep of raw cuSolverMg (docs/tiles.md)
 *
 * For each case, side by side in one process, on fresh random matrices:
 *   muster    muster_solve in threads mode (muster_run_on_devices, one
 *             thread per GPU, block-layout shards), timed on rank 0 from a
 *             barrier to muster_solve's return: rendezvous + relayout to
 *             cyclic + cuSolverMg + relayout back + X/W to every rank;
 *             the tile is the provider's choice (res.tile);
 *   mg@T      raw cuSolverMg (raw.c) at muster's tile, A generated in the
 *             cyclic layout directly (no relayout, no muster);
 *   mg@256    raw cuSolverMg at T_A = 256 (jaxmg's documented example);
 *   dn        raw cusolverDn on one GPU.
 * potrs = potrf + potrs (1 rhs), potri = potrf + potri, syevd = values and
 * vectors.  Medians of the repetitions.  Ends with the capacity run: potrs
 * f64 at N = 131072 on the GPUs through muster, residual checked.
 * Prints a compact table last.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

#include "gpu_util.h"
#include "muster.h"
#include "raw.h"

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

typedef struct mrun {
  muster_routine_t routine;
  muster_dtype_t dtype;
  int64_t n, nrhs, tile;
  int R, reps;
  unsigned flags; /* muster_solve_args_t.flags (MUSTER_NO_FACTOR) */
  char group[64];
  /* out */
  double t[16], prov[16];
  double t_med, prov_med, resid;
  int64_t tile_used;
  int rc;
  char err[512];
} mrun_t;

static int mrank(int rank, int device, void *arg) {
  mrun_t *m = arg;
  int64_t S = (m->n + m->R - 1) / m->R, col0 = rank * S < m->n ? rank * S : m->n;
  int64_t ncols = m->n - col0 < S ? m->n - col0 : S;
  size_t esz = gu_esz(m->dtype);
  void *a = NULL, *b = NULL, *b0 = NULL, *w = NULL;
  muster_group_t *g = NULL;
  muster_group_opts_t opts = {NULL, 600.0, device};
  double shift = m->routine == MUSTER_SYEVD ? 0.0 : (double)m->n;
  int rc = 0;
  gu_cols_t cols = {0, m->R, rank, col0, 0};
  if (cudaMalloc(&a, (size_t)(m->n * (ncols > 0 ? ncols : 1)) * esz) != cudaSuccess ||
      cudaMalloc(&b, (size_t)(m->n * m->nrhs) * esz) != cudaSuccess ||
      cudaMalloc(&w, (size_t)m->n * 8) != cudaSuccess ||
      (rank == 0 && cudaMalloc(&b0, (size_t)(m->n * m->nrhs) * esz) != cudaSuccess)) {
    snprintf(m->err, sizeof m->err, "rank %d: cudaMalloc failed (n=%lld)", rank, (long long)m->n);
    rc = MUSTER_ENOMEM;
    goto out;
  }
  if ((rc = muster_group_join(m->group, rank, m->R, &opts, &g)) != 0) goto out;
  muster_solve_args_t args;
  memset(&args, 0, sizeof args);
  args.routine = m->routine;
  args.dtype = m->dtype;
  args.n = m->n;
  args.nrhs = m->nrhs;
  args.tile = m->tile;
  args.layout = MUSTER_LAYOUT_BLOCK;
  args.flags = m->flags;
  args.provider = "cusolvermg";
  uint64_t seed = 0;
  for (int rep = 0; rep < m->reps; rep++) {
    seed = 777 + (uint64_t)rep * 13 + (uint64_t)m->n;
    gu_fill_matrix(m->dtype, a, m->n, m->n, ncols, cols, seed, shift, 0);
    gu_fill_vectors(m->dtype, b, m->n, m->n, m->nrhs, seed + 1, 0);
    if (b0) gu_fill_vectors(m->dtype, b0, m->n, m->n, m->nrhs, seed + 1, 0);
    if (cudaDeviceSynchronize() != cudaSuccess) {
      rc = MUSTER_ECUDA;
      goto out;
    }
    muster_shard_t s = {MUSTER_MEM_CUDA, device, a, m->n, col0, ncols, b, m->n, w, NULL};
    muster_solve_result_t res;
    if ((rc = muster_group_barrier(g)) != 0) goto out;
    double t0 = now_s();
    rc = muster_solve(g, &args, &s, &res);
    double dt = now_s() - t0;
    if (rc != 0) goto out;
    if (rank == 0) {
      m->t[rep] = dt;
      m->prov[rep] = res.seconds;
      m->tile_used = res.tile;
    }
  }
  if (rank == 0 && m->routine == MUSTER_POTRS) {
    double o[3];
    if (gu_check_potrs(m->dtype, m->n, m->nrhs, b, m->n, b0, m->n, seed, shift, o) == cudaSuccess)
      m->resid = o[0] / (o[2] * o[1] * (double)m->n * gu_eps(m->dtype));
    else
      m->resid = NAN;
  }
  if (rank == m->R - 1 && m->routine == MUSTER_POTRI && ncols > 0) {
    /* the last rank's block: the trailing columns, where cuSolverMg's own
     * potri went wrong (docs/providers.md) */
    double o[3];
    if (gu_check_potri(m->dtype, m->n, a, m->n, ncols, cols, seed, shift, o) == cudaSuccess)
      m->resid = o[0] / (o[2] * o[1] * (double)m->n * gu_eps(m->dtype));
    else
      m->resid = NAN;
  }
out:
  if (rc != 0 && rank == 0 && !m->err[0]) snprintf(m->err, sizeof m->err, "%s", muster_last_error());
  if (g) muster_group_leave(g);
  cudaFree(a);
  cudaFree(b);
  cudaFree(b0);
  cudaFree(w);
  return rc;
}

static int seq;

static int run_muster(mrun_t *m) {
  int devs[16];
  for (int r = 0; r < m->R; r++) devs[r] = r;
  snprintf(m->group, sizeof m->group, "bench.%d.%d", (int)getpid(), ++seq);
  m->rc = muster_run_on_devices(m->R, devs, mrank, m);
  if (m->rc != 0 && !m->err[0]) snprintf(m->err, sizeof m->err, "%s", muster_last_error());
  double tt[16], pp[16];
  memcpy(tt, m->t, sizeof tt);
  memcpy(pp, m->prov, sizeof pp);
  m->t_med = raw_median(tt, m->reps);
  m->prov_med = raw_median(pp, m->reps);
  return m->rc;
}

typedef struct row {
  const char *routine;
  int64_t n, tile;
  double mu, prov, mg, mg256, dn, resid;
  double mu_nl; /* potrs with MUSTER_NO_FACTOR: the factor is not moved back */
  int ok;
} row_t;

static row_t rows[64];
static int nrows;

static void bench_case(muster_routine_t rt, int64_t n, int reps, int R, int do256, int dodn) {
  row_t *w = &rows[nrows++];
  memset(w, 0, sizeof *w);
  w->routine = muster_routine_name(rt);
  w->n = n;
  mrun_t m;
  memset(&m, 0, sizeof m);
  m.routine = rt;
  m.dtype = MUSTER_F64;
  m.n = n;
  m.nrhs = 1;
  m.R = R;
  m.reps = reps;
  run_muster(&m);
  if (m.rc != 0) {
    printf("  %s n=%lld muster failed: %s\n", w->routine, (long long)n, m.err);
    fflush(stdout);
    return;
  }
  w->tile = m.tile_used;
  w->mu = m.t_med;
  if (rt == MUSTER_POTRS) {
    mrun_t m2 = m;
    memset(m2.t, 0, sizeof m2.t);
    m2.flags = MUSTER_NO_FACTOR;
    if (run_muster(&m2) == 0) w->mu_nl = m2.t_med;
  }
  w->prov = m.prov_med;
  w->resid = m.resid;
  raw_run_t r;
  memset(&r, 0, sizeof r);
  r.routine = rt;
  r.dtype = MUSTER_F64;
  r.n = n;
  r.nrhs = 1;
  r.tile = w->tile;
  r.ngpu = R;
  r.reps = reps;
  r.seed = 99;
  if (raw_mg(&r) == 0 && r.info == 0) w->mg = r.t_med;
  else printf("  raw-mg T=%lld failed: %s info %d\n", (long long)r.tile, r.err, r.info);
  if (do256) {
    r.tile = 256;
    r.reps = reps > 2 ? 2 : reps;
    if (raw_mg(&r) == 0 && r.info == 0) w->mg256 = r.t_med;
    else printf("  raw-mg T=256 failed: %s\n", r.err);
  }
  if (dodn) {
    r.reps = reps;
    if (raw_dn(&r) == 0 && r.info == 0) w->dn = r.t_med;
    else printf("  raw-dn failed: %s\n", r.err);
  }
  w->ok = 1;
  printf("  %-5s n=%-6lld tile=%-5lld muster %.4f s (provider %.4f, L not moved back %.4f) | mg@T %.4f | mg@256 %.4f | "
         "dn %.4f | resid %.3g\n", w->routine, (long long)n, (long long)w->tile, w->mu, w->prov, w->mu_nl, w->mg, w->mg256,
         w->dn, w->resid);
  fflush(stdout);
}

static void sweep(int R) {
  static const int64_t ns[] = {8192, 16384, 32768};
  static const int64_t ts[] = {256, 512, 1024, 2048, 4096, 8192};
  printf("# tile sweep: raw cuSolverMg f64, %d GPU(s), medians (s)\n", R);
  for (int rt = 1; rt <= 3; rt++)
    for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++) {
      int64_t n = ns[i];
      if (rt == 3 && n > 8192) continue;   /* syevd: 8192 only (seconds each) */
      if (rt == 2 && n > 16384) continue;
      for (size_t k = 0; k < sizeof ts / sizeof ts[0] + 1; k++) {
        int64_t T = k < sizeof ts / sizeof ts[0] ? ts[k] : (n + R - 1) / R; /* last: T = S, no relayout */
        if (T > (n + R - 1) / R) continue;
        if (rt == 3 && T > 1024) continue;
        raw_run_t r;
        memset(&r, 0, sizeof r);
        r.routine = rt;
        r.dtype = MUSTER_F64;
        r.n = n;
        r.nrhs = 1;
        r.tile = T;
        r.ngpu = R;
        r.reps = rt == 3 ? 1 : 3;
        r.seed = 5;
        int rc = raw_mg(&r);
        printf("sweep %s n=%lld gpus=%d tile=%lld: %s %.4f s (potrf %.4f s)\n", rt == 1 ? "potrs" : rt == 2 ? "potri" : "syevd",
               (long long)n, R, (long long)T, rc == 0 && r.info == 0 ? "median" : "FAILED", r.t_med, r.t_fact_med);
        fflush(stdout);
      }
    }
}

int main(int argc, char **argv) {
  int R = 2, quick = 0, capacity = 1, do_sweep = 0;
  muster_routine_t only = (muster_routine_t)0; /* 0: every routine */
  int64_t cap_n = 131072;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--gpus") && i + 1 < argc) R = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--quick")) quick = 1;
    else if (!strcmp(argv[i], "--no-capacity")) capacity = 0;
    else if (!strcmp(argv[i], "--capacity-n") && i + 1 < argc) cap_n = atoll(argv[++i]);
    else if (!strcmp(argv[i], "--sweep")) do_sweep = 1;
    else if (!strcmp(argv[i], "--routine") && i + 1 < argc && muster_routine_from_name(argv[i + 1], &only) == 0) i++;
    else {
      fprintf(stderr, "usage: muster-gpu-bench [--gpus R] [--quick] [--no-capacity] [--capacity-n N] "
              "[--routine potrs|potri|syevd] [--sweep]\n");
      return 2;
    }
  }
  setenv("MUSTER_PROVIDER", "cusolvermg", 0);
  setenv("NCCL_NVLS_ENABLE", "0", 0);
  int ndev = 0;
  if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev < R) {
    fprintf(stderr, "muster-gpu-bench: need %d GPUs, found %d\n", R, ndev);
    return 1;
  }
  struct cudaDeviceProp prop;
  cudaGetDeviceProperties(&prop, 0);
  time_t now = time(NULL);
  char date[64];
  strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", gmtime(&now));
  printf("# muster-gpu-bench: %d x %s, %s\n", R, prop.name, date);
  if (do_sweep) {
    sweep(R);
    return 0;
  }
  double t_all = now_s();
  static const int64_t potrs_n[] = {8192, 16384, 32768, 65536};
  for (size_t i = 0; i < 4 && (!only || only == MUSTER_POTRS); i++) {
    if (quick && potrs_n[i] > 16384) break;
    int reps = potrs_n[i] <= 16384 ? 5 : 3;
    bench_case(MUSTER_POTRS, potrs_n[i], reps, R, 1, 1);
  }
  if (!only || only == MUSTER_POTRI) {
    bench_case(MUSTER_POTRI, 8192, 3, R, 1, 1);
    if (!quick) bench_case(MUSTER_POTRI, 16384, 3, R, 1, 1);
  }
  if (!only || only == MUSTER_SYEVD) {
    bench_case(MUSTER_SYEVD, 8192, 2, R, 1, 1);
    if (!quick) bench_case(MUSTER_SYEVD, 16384, 1, R, 1, 1);
  }
  mrun_t cap;
  memset(&cap, 0, sizeof cap);
  if (capacity && (!only || only == MUSTER_POTRS)) {
    cap.routine = MUSTER_POTRS;
    cap.dtype = MUSTER_F64;
    cap.n = cap_n;
    cap.nrhs = 1;
    cap.R = R;
    cap.reps = 1;
    double t0 = now_s();
    run_muster(&cap);
    printf("  capacity potrs f64 n=%lld on %d GPUs: %s, muster %.3f s (provider %.3f s), tile %lld, resid %.3g, "
           "wall with fill+check %.1f s\n", (long long)cap_n, R, cap.rc == 0 ? "ok" : cap.err, cap.t_med, cap.prov_med,
           (long long)cap.tile_used, cap.resid, now_s() - t0);
  }
  printf("\n# %d x %s, %s, f64, 1 rhs; seconds (median); total %.0f s\n", R, prop.name, date, now_s() - t_all);
  printf("| routine | N | tile | muster | overhead vs mg@tile | muster, L left cyclic | overhead | mg@tile | mg@256 | "
         "muster speedup vs mg@256 | dn (1 GPU) | dn/muster | resid |\n");
  printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  for (int k = 0; k < nrows; k++) {
    row_t *w = &rows[k];
    if (!w->ok) {
      printf("| %s | %lld | FAILED | | | | | | | | |\n", w->routine, (long long)w->n);
      continue;
    }
    char nl[64] = "-", nlo[32] = "-";
    if (w->mu_nl > 0) {
      snprintf(nl, sizeof nl, "%.4f", w->mu_nl);
      snprintf(nlo, sizeof nlo, "%+.1f%%", w->mg > 0 ? 100.0 * (w->mu_nl / w->mg - 1.0) : 0.0);
    }
    printf("| %s | %lld | %lld | %.4f | %+.1f%% | %s | %s | %.4f | %.4f | %.2fx | %.4f | %.2fx | %.2g |\n", w->routine,
           (long long)w->n, (long long)w->tile, w->mu, w->mg > 0 ? 100.0 * (w->mu / w->mg - 1.0) : 0.0, nl, nlo, w->mg,
           w->mg256, w->mu > 0 && w->mg256 > 0 ? w->mg256 / w->mu : 0.0, w->dn,
           w->mu > 0 && w->dn > 0 ? w->dn / w->mu : 0.0, w->resid);
  }
  if (capacity)
    printf("| potrs capacity | %lld | %lld | %.3f | | | | | | | | | %.2g |%s\n", (long long)cap_n, (long long)cap.tile_used,
           cap.t_med, cap.resid, cap.rc == 0 ? "" : " FAILED");
  return 0;
}
