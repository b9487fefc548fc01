/*
 * tests/gpu/gpu_dn_factors.c - cusolverdn's geqrf, gesvd and polar
 * (gpu_dn.h): every form (geqrf thin and full, gesvd values, thin and full
 * vectors, polar) x dtype x shape (square, tall, wide), the ranks in
 * threads or processes, on 1 rank, 2 ranks of 1 GPU or 2 ranks of 2 GPUs
 * (rotated over the grid), the cyclic layout with lda > m, a target GPU
 * holding no rank (MUSTER_DN_DEVICE=1), a larger A (several of
 * cusolverDn's panels), rank-deficient A, and NaN in A.  Every case name
 * ends in "[factors]" (gpu-test --only '[factors]' runs just these).
 *
 * Each case runs in its own process (a gc special).  A is made on the host
 * (tools/muster/check.c's generators; rank-deficient: X Y with X m x r,
 * Y r x n, r = k/2, in tcase_t.shift), copied into each rank's device
 * columns (the caller's layout), solved twice through muster_solve, read
 * back and checked on the host:
 *   - every rank's B (the packed factors) and W (the singular values)
 *     equal rank 0's; A's factor reassembled from every rank's columns;
 *   - chk_factors (tools/muster/check_qr.h: ||A - Q R||, ||Q^H Q - I||,
 *     ||A - U S V^H||, U's and V's orthogonality, S descending and >= 0,
 *     ||A - U_p H||, U_p's orthogonality, H Hermitian with a real
 *     nonnegative diagonal; A unchanged where the rule leaves it) below
 *     chk_factor_tolerance (64 max(m, n) eps of the dtype);
 *   - around the second solve the provider creates nothing, runs one
 *     solve, never in place;
 *   - NaN in A: MUSTER_ENONFINITE on every rank naming "NaN/Inf in A",
 *     and every rank's A, B and W as they were.
 * And a special: estimate()'s peak covers cusolverDn's own workspace
 * (Xgeqrf, orgqr, Xgesvd's _bufferSize) with the matrix, n <= 8192.
 * GPU_DN_HOST=1 runs the same cases (the workspace special aside) with
 * host shards through the lapack provider (gpu-dn-selfcheck does, without
 * a GPU): it checks this file's own logic, the counters aside.
 * The case itself (gd_factor_case) is any provider's: cusolvermp's geqrf
 * cases (gpu_mp_qr.c) run it too, its counters aside (it has none).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cuda_runtime_api.h>
#include <cusolverDn.h>

#include "cudacommon.h" /* cuc_cuda_type, cuc_real_type */
#include "gpu_dn.h"
#include "gpu_dn_util.h"
#include "muster/provider.h"
#include "muster/layout.h"

#include "../../tools/muster/check_qr.h" /* chk_factors: the CLI's checks (check_qr.o) */

#define S_IN_PLACE 7 /* providers/cusolverdn/dnInt.h: DN_STAT_IN_PLACE */
#define SENTINEL 0x5a /* B and W bytes before a solve: an error must leave them */

typedef gd_out_t gf_out_t; /* what one rank hands back (gpu_dn_util.h) */

typedef struct gf_run {
  const tcase_t *c;
  int host;          /* GPU_DN_HOST=1: host shards, the lapack provider */
  char group[64];
  int64_t m, n, k, nrhs;
  size_t esz, rsz, bbytes, wbytes;
  muster_layout_geom_t L;
  muster_outputs_t o;
  void *A;           /* the input, m x n, ld m                          */
  gf_out_t *out;     /* shared: R of them, then the results below       */
  char *after;       /* A after the solve, m x n, ld m: every rank's columns */
  char *B, *W;       /* R blocks each                                   */
  size_t shared_bytes;
} gf_run_t;

#define GF_FAIL(...)                                                                               \
  do {                                                                                             \
    fprintf(stderr, "    %s: ", c->name);                                                          \
    fprintf(stderr, __VA_ARGS__);                                                                  \
    return 1;                                                                                      \
  } while (0)

/* ---- inputs ---------------------------------------------------------------------------- */

static void make_input(gf_run_t *g) {
  const tcase_t *c = g->c;
  muster_dtype_t t = c->dtype;
  int64_t m = g->m, n = g->n, r = (int64_t)c->shift;
  const char *e = getenv("GPU_TEST_SEED");
  chk_rng_t rng;
  chk_seed(&rng, (e ? strtoull(e, NULL, 0) : 1) ^ ((uint64_t)m * 1000003u + (uint64_t)n * 7919u +
                                                    (uint64_t)t * 31u + (uint64_t)c->routine * 131u));
  g->A = calloc((size_t)(m * n), g->esz);
  if (r <= 0) {
    chk_random_dense(t, m, n, &rng, g->A, m);
  } else { /* A = X Y of rank r */
    void *x = calloc((size_t)(m * r), g->esz), *y = calloc((size_t)(r * n), g->esz);
    chk_random_dense(t, m, r, &rng, x, m);
    chk_random_dense(t, r, n, &rng, y, r);
    for (int64_t j = 0; j < n; j++)
      for (int64_t i = 0; i < m; i++) {
        double complex v = 0;
        for (int64_t l = 0; l < r; l++) v += chk_get(t, x, m, i, l) * chk_get(t, y, r, l, j);
        chk_set(t, g->A, m, i, j, v);
      }
    free(x);
    free(y);
  }
  if (c->nan_in == 'a') chk_set(t, g->A, m, m / 2, n - 1, NAN); /* on the last rank */
}

/* Columns of a rank's shard <-> the global m x n array (ld m), by the
 * layout's runs (muster/layout.h), as the provider reads them. */
static void columns(const gf_run_t *g, int rank, void *shard, int64_t lda, void *global, int to_global) {
  const int cyclic = g->c->layout == MUSTER_LAYOUT_CYCLIC;
  muster_layout_iter_t it;
  muster_layout_run_t run;
  for (muster_layout_iter_start(&it, &g->L); muster_layout_iter_next(&it, &run);) {
    if ((cyclic ? run.cyc_rank : run.blk_rank) != rank) continue;
    char *mine = (char *)shard + (size_t)((cyclic ? run.cyc_col : run.blk_col) * lda) * g->esz;
    char *there = (char *)global + (size_t)(run.gcol * g->m) * g->esz;
    if (to_global) muster_copy_cols(there, g->m, mine, lda, g->m, run.ncols, g->esz);
    else muster_copy_cols(mine, lda, there, g->m, g->m, run.ncols, g->esz);
  }
}

/* ---- one rank ------------------------------------------------------------------------ */

typedef struct gf_bufs {
  void *a, *b, *w, *ha, *hb;
  int64_t lda, ncols;
  size_t abytes;
} gf_bufs_t;

static void *alloc(const gf_run_t *g, size_t bytes) { return gd_alloc(g->host, g->c->mode, bytes); }

static void release(const gf_run_t *g, void *p) { gd_release(g->host, g->c->mode, p); }

static int copy(const gf_run_t *g, void *dst, const void *src, size_t bytes, int in) {
  return gd_copy(g->host, dst, src, bytes, in);
}

static int bufs_make(const gf_run_t *g, int rank, gf_bufs_t *x) {
  memset(x, 0, sizeof *x);
  x->lda = g->m + g->c->lda_extra;
  x->ncols = g->c->layout == MUSTER_LAYOUT_CYCLIC ? g->L.local_cols : muster_layout_block_ncols(&g->L, rank);
  x->abytes = (size_t)(x->lda * (x->ncols > 0 ? x->ncols : 1)) * g->esz;
  x->ha = calloc(1, x->abytes);
  x->hb = malloc(g->bbytes > g->wbytes ? g->bbytes : g->wbytes);
  x->a = alloc(g, x->abytes);
  x->b = alloc(g, g->bbytes);
  x->w = alloc(g, g->wbytes);
  if (!x->ha || !x->hb || !x->a || (g->bbytes && !x->b) || !x->w) return 1;
  columns(g, rank, x->ha, x->lda, g->A, 0);
  memset(x->hb, SENTINEL, g->bbytes > g->wbytes ? g->bbytes : g->wbytes);
  return 0;
}

static void bufs_free(const gf_run_t *g, gf_bufs_t *x) {
  free(x->ha);
  free(x->hb);
  release(g, x->a);
  release(g, x->b);
  release(g, x->w);
}

static int fill(const gf_run_t *g, const gf_bufs_t *x) {
  return copy(g, x->a, x->ha, x->abytes, 1) || copy(g, x->b, x->hb, g->bbytes, 1) ||
         copy(g, x->w, x->hb, g->wbytes, 1);
}

/* Back to the host: this rank's columns into g->after, its B and W. */
static int read_back(const gf_run_t *g, int rank, const gf_bufs_t *x) {
  void *a = malloc(x->abytes);
  int bad = !a || copy(g, a, x->a, x->abytes, 0) || copy(g, g->B + (size_t)rank * g->bbytes, x->b, g->bbytes, 0) ||
            copy(g, g->W + (size_t)rank * g->wbytes, x->w, g->wbytes, 0);
  if (!bad) columns(g, rank, a, x->lda, g->after, 1);
  free(a);
  return bad;
}

typedef struct gf_rank_ctx {
  const gf_run_t *g;
  const gf_bufs_t *x;
} gf_rank_ctx_t;

static int refill(void *arg) {
  const gf_rank_ctx_t *r = arg;
  return fill(r->g, r->x);
}

static int gf_rank(int rank, int device, void *arg) {
  gf_run_t *g = arg;
  const tcase_t *c = g->c;
  gf_out_t *o = &g->out[rank];
  gf_bufs_t x;
  gf_rank_ctx_t ctx = {g, &x};
  muster_solve_args_t a = {c->routine, c->dtype, g->n, g->nrhs, c->tile, c->layout, c->flags,
                           g->host ? "lapack" : c->prov->name};
  o->rc = 1;
  if ((!g->host && cudaSetDevice(device) != cudaSuccess) || bufs_make(g, rank, &x)) {
    snprintf(o->msg, sizeof o->msg, "rank %d: buffers", rank);
    goto out;
  }
  muster_shard_t s = {g->host ? MUSTER_MEM_HOST : MUSTER_MEM_CUDA, g->host ? -1 : device, x.a, x.lda,
                      c->layout == MUSTER_LAYOUT_CYCLIC ? 0 : muster_layout_block_col0(&g->L, rank), x.ncols,
                      x.b, g->m, x.w, NULL};
  if (gd_solve_reps(c, g->host, g->group, rank, device, &a, &s, refill, &ctx, o)) goto out;
  if (read_back(g, rank, &x)) snprintf(o->msg, sizeof o->msg, "rank %d: copies out", rank);
  else o->done = 1;
out:
  bufs_free(g, &x);
  return o->done ? 0 : 1;
}

/* ---- running and checking --------------------------------------------------------------- */

static int check_ok(const gf_run_t *g) {
  const tcase_t *c = g->c;
  size_t used_b = (size_t)g->o.b_elems * g->esz, used_w = (size_t)g->o.w_count * g->rsz;
  for (int r = 0; r < c->R; r++) {
    if (strcmp(g->out[r].provider, g->host ? "lapack" : c->prov->name)) GF_FAIL("rank %d ran on '%s'\n", r, g->out[r].provider);
    if (memcmp(g->B, g->B + (size_t)r * g->bbytes, used_b)) GF_FAIL("rank %d's B differs from rank 0's\n", r);
    if (memcmp(g->W, g->W + (size_t)r * g->wbytes, used_w)) GF_FAIL("rank %d's W differs from rank 0's\n", r);
  }
  double res = chk_factors(c->dtype, c->routine, c->flags, g->m, g->n, g->A, g->after, g->B, g->W);
  double tol = chk_factor_tolerance(c->dtype, g->m, g->n);
  if (!(res < tol)) GF_FAIL("residual %.3g, tolerance %.3g (chk_factors)\n", res, tol);
  if (getenv("GPU_TEST_VERBOSE")) printf("    residual %.3g (tolerance %.3g)\n", res, tol);
  /* never in the caller's buffer: nothing is written before every factor
   * is made (a provider without counters: cusolvermp) */
  return g->host || c->reps < 2 || !c->prov->nstats ? 0
                                                     : gd_check_counters(c, g->out[0].st0, g->out[0].st1, S_IN_PLACE, 0);
}

/* NaN in A (or another expected error: a refusal): refused on every rank,
 * nothing written. */
static int check_error(const gf_run_t *g) {
  const tcase_t *c = g->c;
  char *sentinel = malloc(g->bbytes > g->wbytes ? g->bbytes : g->wbytes);
  memset(sentinel, SENTINEL, g->bbytes > g->wbytes ? g->bbytes : g->wbytes);
  int bad = 0;
  for (int r = 0; r < c->R && !bad; r++) {
    if (c->nan_in && !strstr(g->out[r].msg, "NaN/Inf in A")) {
      fprintf(stderr, "    %s: rank %d: message \"%s\" lacks \"NaN/Inf in A\"\n", c->name, r, g->out[r].msg);
      bad = 1;
    } else if (memcmp(g->B + (size_t)r * g->bbytes, sentinel, g->bbytes) ||
               memcmp(g->W + (size_t)r * g->wbytes, sentinel, g->wbytes)) {
      fprintf(stderr, "    %s: rank %d: B or W written after the refusal\n", c->name, r);
      bad = 1;
    }
  }
  /* NaN == NaN is false, so A is compared byte for byte */
  if (!bad && memcmp(g->after, g->A, (size_t)(g->m * g->n) * g->esz)) {
    fprintf(stderr, "    %s: A written after the refusal\n", c->name);
    bad = 1;
  }
  free(sentinel);
  return bad;
}

int gd_factor_case(const tcase_t *c, int ndev) {
  static int seq;
  gf_run_t g = {.c = c, .m = c->m, .n = c->n, .esz = muster_dtype_size(c->dtype),
                .host = gd_host()};
  (void)ndev;
  g.k = g.m < g.n ? g.m : g.n;
  g.rsz = muster_dtype_real_size(c->dtype);
  if (muster_routine_outputs(c->routine, c->flags, g.m, g.n, &g.o) < 0) GF_FAIL("no outputs rule\n");
  g.nrhs = g.o.b_cols;
  g.bbytes = (size_t)(g.m * g.nrhs) * g.esz;
  g.wbytes = (size_t)(g.k > 0 ? g.k : 1) * g.rsz;
  snprintf(g.group, sizeof g.group, "gpudnf.%d.%d", (int)getpid(), ++seq);
  muster_layout_geom_init(&g.L, g.n, c->layout == MUSTER_LAYOUT_CYCLIC ? c->tile : muster_ceil_div(g.n, c->R), c->R);
  make_input(&g);
  size_t abytes = (size_t)(g.m * g.n) * g.esz;
  g.shared_bytes = sizeof(gf_out_t) * (size_t)c->R + abytes + (g.bbytes + g.wbytes) * (size_t)c->R;
  char *sh = mmap(NULL, g.shared_bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  int fail = sh == MAP_FAILED;
  if (!fail) {
    g.out = (gf_out_t *)sh;
    g.after = sh + sizeof(gf_out_t) * (size_t)c->R;
    g.B = g.after + abytes;
    g.W = g.B + g.bbytes * (size_t)c->R;
    int ran = gd_run_ranks(c, g.host, gf_rank, &g);
    for (int r = 0; r < c->R && !fail; r++) {
      const gf_out_t *o = &g.out[r];
      if (!o->done || o->rc != c->expect) {
        fprintf(stderr, "    %s: rank %d returned %d (%s), expected %d: %s\n", c->name, r, o->rc,
                muster_strerror(o->rc), c->expect, o->msg);
        fail = 1;
      }
    }
    if (!fail && ran != 0) {
      fprintf(stderr, "    %s: the ranks failed (%d)\n", c->name, ran);
      fail = 1;
    }
    if (!fail) fail = c->expect ? check_error(&g) : check_ok(&g);
    munmap(sh, g.shared_bytes);
  }
  free(g.A);
  return fail;
}

/* ---- the workspace bound ------------------------------------------------------------------ */

/* cusolverDn's device workspace for a square n x n A: geqrf = max(Xgeqrf,
 * orgqr of Q n x n), gesvd and polar = Xgesvd with jobs 'S' and 'A' (and
 * 'N'), the largest.  -1 on failure. */
static int64_t factor_ws(cusolverDnHandle_t h, cusolverDnParams_t p, muster_routine_t rt, int dt, int64_t n,
                         void *d) {
  size_t dev = 0, host = 0, most = 0;
  cudaDataType t = cuc_cuda_type(dt);
  if (rt == MUSTER_GEQRF) {
    int lw = 0, ni = (int)n;
    cusolverStatus_t st = cusolverDnXgeqrf_bufferSize(h, p, n, n, t, d, n, t, d, t, &dev, &host);
    if (st != CUSOLVER_STATUS_SUCCESS) return -1;
    switch (dt) {
    case MUSTER_F32: st = cusolverDnSorgqr_bufferSize(h, ni, ni, ni, d, ni, d, &lw); break;
    case MUSTER_F64: st = cusolverDnDorgqr_bufferSize(h, ni, ni, ni, d, ni, d, &lw); break;
    case MUSTER_C64: st = cusolverDnCungqr_bufferSize(h, ni, ni, ni, d, ni, d, &lw); break;
    default: st = cusolverDnZungqr_bufferSize(h, ni, ni, ni, d, ni, d, &lw); break;
    }
    if (st != CUSOLVER_STATUS_SUCCESS) return -1;
    most = (size_t)lw * gu_esz(dt);
    return (int64_t)(dev > most ? dev : most);
  }
  static const signed char jobs[3] = {'N', 'S', 'A'};
  for (int i = 0; i < 3; i++) {
    if (cusolverDnXgesvd_bufferSize(h, p, jobs[i], jobs[i], n, n, t, d, n, cuc_real_type(dt), d, t, d, n, t, d, n, t,
                                    &dev, &host) != CUSOLVER_STATUS_SUCCESS)
      return -1;
    if (dev > most) most = dev;
  }
  return (int64_t)most;
}

/* estimate()'s peak covers the gathered matrix plus cusolverDn's own
 * workspace for every factor routine and dtype, n up to 8192. */
static int gf_workspace(const tcase_t *c, int ndev) {
  gd_ws_t w;
  int fail = gd_ws_open(&w, c);
  const muster_provider_v2_t *v = fail ? NULL : w.v;
  (void)ndev;
  static const int64_t ns[] = {1000, 4096, 8192};
  static const muster_routine_t rts[3] = {MUSTER_GEQRF, MUSTER_GESVD, MUSTER_POLAR};
  for (int r = 0; r < 3 && v; r++)
    for (int dt = MUSTER_F32; dt <= MUSTER_C128; dt++)
      for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++) {
        int devs[1] = {0};
        muster_provider_query_t q = {.routine = rts[r], .dtype = (muster_dtype_t)dt, .n = ns[i], .nrhs = ns[i],
                                     .layout = MUSTER_LAYOUT_BLOCK, .mem = MUSTER_MEM_CUDA, .nranks = 1,
                                     .ndevices = 1, .nnodes = 1, .span = MUSTER_SPAN_THREADS, .devices = devs};
        muster_provider_estimate_t est;
        int64_t ws = factor_ws(w.h, w.p, rts[r], dt, ns[i], w.dummy);
        uint64_t mat = (uint64_t)(ns[i] * ns[i]) * gu_esz(dt);
        int rc = v->estimate(NULL, &q, &est);
        if (ws < 0 || rc != 0 || (uint64_t)ws + mat > est.peak_bytes) {
          fprintf(stderr, "    workspace: %s %s n=%lld: cusolverDn asks %lld bytes (+ %llu the matrix), estimate's "
                  "peak %llu (rc %d)\n", muster_routine_name(rts[r]), muster_dtype_name((muster_dtype_t)dt),
                  (long long)ns[i], (long long)ws, (unsigned long long)mat, (unsigned long long)est.peak_bytes, rc);
          fail = 1;
        } else if (getenv("GPU_TEST_VERBOSE") || ns[i] == 8192) {
          printf("    workspace %s %s n=%lld: %.3f GB of a %.3f GB peak\n", muster_routine_name(rts[r]),
                 muster_dtype_name((muster_dtype_t)dt), (long long)ns[i], ws / 1e9, est.peak_bytes / 1e9);
        }
      }
  gd_ws_close(&w);
  return fail;
}

/* ---- the list --------------------------------------------------------------------------- */

/* Where the ranks are: 1 rank on GPU 0, 2 ranks on GPU 0, 2 ranks on GPUs 0 and 1. */
static const struct {
  int R, devs[2], ngpus;
} where[3] = {{1, {0, 0}, 1}, {2, {0, 0}, 1}, {2, {0, 1}, 2}};

static const struct {
  muster_routine_t rt;
  unsigned flags;
  const char *form;
} forms[6] = {{MUSTER_GEQRF, 0, "thin"},
              {MUSTER_GEQRF, MUSTER_FULL_MATRICES, "full"},
              {MUSTER_GESVD, MUSTER_NO_VECTORS, "values"},
              {MUSTER_GESVD, 0, "thin"},
              {MUSTER_GESVD, MUSTER_FULL_MATRICES, "full"},
              {MUSTER_POLAR, 0, ""}};

static tcase_t *add(tcase_t *cases, int *nc, const gprov_t *dn, int f, muster_dtype_t dt, int mode, int w, int64_t m,
                    int64_t n, const char *what) {
  tcase_t *c = gc_add(cases, nc, dn, forms[f].rt, forms[f].flags, dt, mode, where[w].R, n, 0, 0, "");
  char devs[16];
  c->m = m;
  c->shift = 0;
  c->ngpus = where[w].ngpus;
  for (int r = 0; r < c->R; r++) c->devs[r] = where[w].devs[r];
  c->special = gd_factor_case;
  if (c->R == 1) snprintf(devs, sizeof devs, "%d", c->devs[0]);
  else snprintf(devs, sizeof devs, "%d,%d", c->devs[0], c->devs[1]);
  snprintf(c->name, sizeof c->name, "%s%s%s%s %s %s R=%d gpus=%s m=%lld n=%lld%s%s [factors]",
           muster_routine_name(forms[f].rt), *forms[f].form ? "(" : "", forms[f].form, *forms[f].form ? ")" : "",
           muster_dtype_name(dt), gc_mode_name[mode], c->R, devs, (long long)m, (long long)n, *what ? " " : "", what);
  return c;
}

void dn_factor_cases(tcase_t *cases, int *nc, const gprov_t *dn) {
  static const muster_dtype_t dts[4] = {MUSTER_F32, MUSTER_F64, MUSTER_C64, MUSTER_C128};
  static const int64_t shapes[3][2] = {{173, 173}, {301, 137}, {137, 301}}; /* square, tall, wide */
  tcase_t *c;
  int turn = 0;
  /* every form x dtype x shape once, the mode and the ranks' places rotated */
  for (int f = 0; f < 6; f++)
    for (int d = 0; d < 4; d++)
      for (int s = 0; s < 3; s++, turn++)
        add(cases, nc, dn, f, dts[d], turn % 2 ? M_PROCS : M_THREADS, (turn / 2) % 3, shapes[s][0], shapes[s][1], "");
  for (int mode = M_THREADS; mode <= M_PROCS; mode++) {
    for (int f = 0; f < 6; f++) {
      /* rank-deficient (rank k/2): no error, the same checks */
      c = add(cases, nc, dn, f, f % 2 ? MUSTER_C128 : MUSTER_F64, mode, 2, f % 2 ? 120 : 200, f % 2 ? 200 : 120,
              "rank-deficient (rank 60)");
      c->shift = 60;
      /* the cyclic layout over 2 GPUs, lda > m */
      c = add(cases, nc, dn, f, f % 2 ? MUSTER_F32 : MUSTER_C64, mode, 2, f % 3 ? 211 : 97, 211, "cyclic tile 16 lda+5");
      c->layout = MUSTER_LAYOUT_CYCLIC;
      c->tile = 16;
      c->lda_extra = 5;
    }
    /* the target holds no rank */
    for (int f = 1; f < 6; f += 2) {
      c = add(cases, nc, dn, f, MUSTER_F64, mode, 1, 150, 90, "MUSTER_DN_DEVICE=1");
      c->env = "MUSTER_DN_DEVICE=1";
      c->ngpus = 2;
    }
    /* NaN in A: refused, nothing written */
    for (int f = 0; f < 6; f += 2) {
      c = add(cases, nc, dn, f, MUSTER_F64, mode, 2, f == 2 ? 60 : 90, f == 2 ? 90 : 60, "NaN-in-A");
      c->nan_in = 'a';
      c->expect = MUSTER_ENONFINITE;
      c->reps = 1;
    }
  }
  /* larger: several of cusolverDn's panels (the host check is O(m n k)) */
  add(cases, nc, dn, 0, MUSTER_F64, M_THREADS, 0, 900, 520, "");
  add(cases, nc, dn, 3, MUSTER_F64, M_PROCS, 2, 520, 900, "");
  add(cases, nc, dn, 5, MUSTER_C64, M_THREADS, 1, 700, 450, "");
  c = gc_add(cases, nc, dn, MUSTER_GESVD, 0, MUSTER_F64, M_PROCS, 1, 1, 0, 0, "");
  c->special = gf_workspace;
  snprintf(c->name, sizeof c->name, "workspace: estimate's peak covers Xgeqrf, orgqr and Xgesvd's bufferSize "
           "(n <= 8192) [factors]");
}
