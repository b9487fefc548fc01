/*
 * tests/gpu/bench_muster.c - the benchmark's muster columns: muster_solve in
 * threads mode (muster_run_on_devices, one thread per GPU, block-layout
 * shards as a framework holds them), timed on rank 0 from a barrier to
 * muster_solve's return, the last repetition's result checked on the GPU
 * against the regenerated matrix (gpu_util.h).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

#include "bench.h"
#include "gpu_util.h"
#include "raw.h"

double bench_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

typedef struct mctx {
  const bench_row_t *row;
  const char *provider;   /* forced, or NULL: the runtime's choice     */
  int gpus;
  char group[64];
  bench_col_t *c;         /* times: rank 0; the check: the checking rank */
  char err[16][512];      /* each rank's first error                    */
} mctx_t;

/* One rank's buffers: its block of A, B (potrs: every rank holds all of B;
 * rank 0 also the original B0 for the check), W (syevd). */
typedef struct mbuf {
  void *a, *b, *b0, *w;
} mbuf_t;

static void mbuf_free(mbuf_t *m) {
  cudaFree(m->a);
  cudaFree(m->b);
  cudaFree(m->b0);
  cudaFree(m->w);
}

static int grab(void **p, size_t bytes, int device, char *why, size_t cap) {
  if (cudaMalloc(p, bytes ? bytes : 1) == cudaSuccess) return 0;
  (void)cudaGetLastError(); /* out of memory is not sticky: clear it */
  *p = NULL;
  snprintf(why, cap, "bench buffers: cudaMalloc of %zu bytes failed on GPU %d", bytes, device);
  return MUSTER_ENOMEM;
}

static int mbuf_alloc(const bench_row_t *w, int rank, int device, int64_t ncols, mbuf_t *m, char *why,
                      size_t cap) {
  size_t esz = gu_esz(w->dtype), nb = (size_t)(w->n * w->nrhs) * esz;
  int rc = grab(&m->a, (size_t)(w->n * ncols) * esz, device, why, cap);
  if (rc == 0 && w->routine == MUSTER_POTRS) rc = grab(&m->b, nb, device, why, cap);
  if (rc == 0 && w->routine == MUSTER_POTRS && rank == 0) rc = grab(&m->b0, nb, device, why, cap);
  if (rc == 0 && w->routine == MUSTER_SYEVD) rc = grab(&m->w, (size_t)w->n * 8, device, why, cap);
  return rc;
}

/* Index of the first eigenvalue below its predecessor (or NaN), -1 when
 * ascending, -2 when W could not be read. */
static int64_t first_descent(muster_dtype_t dt, const void *w, int64_t n) {
  size_t rsz = gu_rsz(dt);
  char *h = malloc((size_t)n * rsz);
  int64_t at = -1;
  if (!h || cudaMemcpy(h, w, (size_t)n * rsz, cudaMemcpyDeviceToHost) != cudaSuccess) at = -2;
  for (int64_t k = 1; at == -1 && k < n; k++) {
    double lo = rsz == 4 ? ((float *)h)[k - 1] : ((double *)h)[k - 1];
    double hi = rsz == 4 ? ((float *)h)[k] : ((double *)h)[k];
    if (!(lo <= hi)) at = k;
  }
  free(h);
  return at;
}

/* Check this rank's result of the last repetition into c. */
static void check(const bench_row_t *w, const mbuf_t *m, int64_t ncols, gu_cols_t cols, uint64_t seed,
                  double shift, bench_col_t *c) {
  double o[4] = {0, 0, 0, 0};
  cudaError_t st;
  if (w->routine == MUSTER_POTRS)
    st = gu_check_potrs(w->dtype, w->n, w->nrhs, m->b, w->n, m->b0, w->n, seed, shift, o);
  else if (w->routine == MUSTER_POTRI)
    st = gu_check_potri(w->dtype, w->n, m->a, w->n, ncols, cols, seed, shift, o);
  else
    st = gu_check_syevd(w->dtype, w->n, m->a, w->n, ncols, cols, m->w, seed, shift, o);
  c->checked = 1;
  if (st != cudaSuccess) {
    c->resid[0] = c->resid[1] = NAN;
    snprintf(c->skip, sizeof c->skip, "the check failed to run: %s", cudaGetErrorString(st));
    return;
  }
  gu_resid_ratios(w->routine, w->dtype, w->n, o, c->resid);
  c->resid_ok = c->resid[0] < GU_TOL && c->resid[1] < GU_TOL;
  if (w->routine == MUSTER_SYEVD) {
    int64_t at = first_descent(w->dtype, m->w, w->n);
    if (at != -1) {
      c->resid_ok = 0;
      snprintf(c->skip, sizeof c->skip, at == -2 ? "W could not be read back"
                                                 : "eigenvalues not ascending (or NaN) at %lld", (long long)at);
    }
  }
}

/* Timed solves of one row; the rank holding the checked part checks. */
static int solve_reps(mctx_t *x, int rank, int device, muster_group_t *g, const mbuf_t *m, int64_t col0,
                      int64_t ncols) {
  const bench_row_t *w = x->row;
  bench_col_t *c = x->c;
  double shift = w->routine == MUSTER_SYEVD ? 0.0 : (double)w->n;
  gu_cols_t cols = {bench_cyclic_tile > 0, x->gpus, rank, col0, bench_cyclic_tile};
  muster_solve_args_t args;
  memset(&args, 0, sizeof args);
  args.routine = w->routine;
  args.dtype = w->dtype;
  args.n = w->n;
  args.nrhs = w->nrhs;
  args.layout = bench_cyclic_tile > 0 ? MUSTER_LAYOUT_CYCLIC : MUSTER_LAYOUT_BLOCK;
  args.tile = bench_cyclic_tile; /* block: 0, the provider's choice */
  args.flags = w->flags;
  args.provider = x->provider;
  muster_shard_t s = {MUSTER_MEM_CUDA, device, m->a, w->n, col0, ncols, m->b, w->n, m->w, NULL};
  uint64_t seed = 0;
  int rc = 0;
  for (int rep = 0; rep < w->reps && rc == 0; rep++) {
    seed = 777 + (uint64_t)rep * 13 + (uint64_t)w->n;
    gu_fill_matrix(w->dtype, m->a, w->n, w->n, ncols, cols, seed, shift, 0);
    if (m->b) gu_fill_vectors(w->dtype, m->b, w->n, w->n, w->nrhs, seed + 1, 0);
    if (m->b0) gu_fill_vectors(w->dtype, m->b0, w->n, w->n, w->nrhs, seed + 1, 0);
    if (cudaDeviceSynchronize() != cudaSuccess) {
      snprintf(x->err[rank], sizeof x->err[rank], "filling the matrix failed on GPU %d", device);
      muster_group_abort(g, MUSTER_ECUDA, x->err[rank]);
      return MUSTER_ECUDA;
    }
    muster_solve_result_t res;
    memset(&res, 0, sizeof res);
    if ((rc = muster_group_barrier(g)) != 0) break;
    double t0 = bench_now();
    rc = muster_solve(g, &args, &s, &res);
    double dt = bench_now() - t0;
    if (rank == 0) { /* the choice is known even when the call failed after it */
      snprintf(c->provider, sizeof c->provider, "%s", res.provider);
      snprintf(c->reason, sizeof c->reason, "%s", res.reason);
    }
    if (rc == 0 && rank == 0) {
      c->tp[c->nt] = res.seconds;
      c->t[c->nt++] = dt;
      c->tile = res.tile;
    }
  }
  if (rc != 0) {
    snprintf(x->err[rank], sizeof x->err[rank], "%s", muster_last_error());
    return rc;
  }
  int checker = w->routine == MUSTER_POTRS ? 0 : x->gpus - 1; /* potri, syevd: the trailing block */
  if (rank == checker && ncols > 0) check(w, m, ncols, cols, seed, shift, c);
  return 0;
}

static int mrank(int rank, int device, void *arg) {
  mctx_t *x = arg;
  const bench_row_t *w = x->row;
  int64_t S = (w->n + x->gpus - 1) / x->gpus, col0 = rank * S < w->n ? rank * S : w->n;
  int64_t ncols = w->n - col0 < S ? w->n - col0 : S;
  if (bench_cyclic_tile > 0) { /* padded local columns; col0 unused */
    col0 = 0;
    ncols = muster_layout_local_cols(w->n, bench_cyclic_tile, x->gpus);
  }
  muster_group_opts_t opts = {NULL, 600.0, device};
  muster_group_t *g = NULL;
  mbuf_t m = {NULL, NULL, NULL, NULL};
  int rc = muster_group_join(x->group, rank, x->gpus, &opts, &g);
  if (rc != 0) {
    snprintf(x->err[rank], sizeof x->err[rank], "%s", muster_last_error());
    return rc;
  }
  /* joined first: a rank short of memory aborts the group, so the others
   * stop at their barrier instead of waiting for it until the deadline */
  rc = mbuf_alloc(w, rank, device, ncols, &m, x->err[rank], sizeof x->err[rank]);
  if (rc != 0) muster_group_abort(g, rc, x->err[rank]);
  else rc = solve_reps(x, rank, device, g, &m, col0, ncols);
  muster_group_leave(g);
  mbuf_free(&m);
  return rc;
}

void bench_muster(const bench_row_t *row, int col, int gpus, bench_col_t *c) {
  static int seq;
  mctx_t *x = calloc(1, sizeof *x);
  int devs[16];
  memset(c, 0, sizeof *c);
  if (!x) {
    snprintf(c->skip, sizeof c->skip, "out of host memory");
    return;
  }
  x->row = row;
  x->provider = col == BC_DEFAULT && bench_default_provider ? bench_default_provider : bench_col_provider[col];
  x->gpus = gpus;
  x->c = c;
  for (int r = 0; r < gpus; r++) devs[r] = r;
  snprintf(x->group, sizeof x->group, "bench.%d.%d", (int)getpid(), ++seq);
  int rc = muster_run_on_devices(gpus, devs, mrank, x);
  if (rc != 0) {
    const char *why = x->err[0][0] ? x->err[0] : muster_last_error();
    for (int r = 1; r < gpus && !x->err[0][0]; r++)
      if (x->err[r][0]) why = x->err[r];
    snprintf(c->skip, sizeof c->skip, "%.440s (%.60s)", why, muster_strerror(rc));
    c->nt = 0;
  } else {
    c->ran = c->nt > 0;
    double tt[BENCH_MAX_REPS];
    memcpy(tt, c->t, sizeof tt);
    c->t_med = raw_median(tt, c->nt);
    c->t_min = tt[0]; /* raw_median sorts */
    memcpy(tt, c->tp, sizeof tt);
    c->prov_med = raw_median(tt, c->nt);
  }
  free(x);
}
