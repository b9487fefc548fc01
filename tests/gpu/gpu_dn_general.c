/*
 * tests/gpu/gpu_dn_general.c - cusolverdn's getrs, gels and potrs with
 * MUSTER_LOGDET (gpu_dn.h): every routine x dtype x {threads, processes} x
 * 1-4 ranks (n a prime, so never divisible by the ranks; gels with m = 2n
 * + 12), the cyclic layout, MUSTER_NO_FACTOR (solved in the caller's
 * buffer), a target GPU holding no rank, exactly singular, numerically
 * singular (two equal columns) and rank-deficient A, NaN in A or B.
 *
 * Each case runs in its own process (a gc special).  The matrices are made
 * on the host by tools/muster/check.c (as `muster solve` and the CPU solve
 * tests make them: well conditioned), copied into each rank's device
 * buffers, solved twice through muster_solve, and checked on the host:
 *   - every rank's X equal; getrs ||A X - B|| / (||A|| ||X||) below
 *     chk_tolerance (64 n eps of the dtype) and gels ||A^H (A X - B)|| /
 *     (||A|| (||A|| ||X|| + ||B||)) below chk_gels_tolerance (16 sqrt(m)
 *     eps);
 *   - log det A equal on every rank and within chk_logdet_tolerance of
 *     the lapack provider's on the same A (muster_solve_all, host memory);
 *   - getrs and gels leave every rank's A as it was (unless
 *     MUSTER_NO_FACTOR);
 *   - around the second solve, the provider creates nothing and solves in
 *     the caller's buffer exactly when it should (one rank on the target,
 *     and potrs or MUSTER_NO_FACTOR);
 *   - failures: MUSTER_ESINGULAR with res->info = the broken column (a zero
 *     column for getrs, or, on an A of random entries only, a copy of
 *     column 2: a pivot at rounding level, not 0; a repeated one for gels)
 *     and a message naming it, B untouched (getrs), MUSTER_ENONFINITE
 *     naming NaN/Inf.
 * GPU_DN_HOST=1 runs the same cases with host shards through the lapack
 * provider (gpu-dn-selfcheck does, on a machine without a GPU): it checks
 * this file's own logic, the counters aside.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

#include "gpu_dn.h"
#include "gpu_dn_util.h"
#include "muster/layout.h"

#include "../../tools/muster/check.h" /* one source for the CLI, the CPU tests and these (check.o) */

#define S_IN_PLACE 7 /* providers/cusolverdn/dnInt.h: DN_STAT_IN_PLACE */

typedef gd_out_t gg_out_t; /* what one rank hands back (gpu_dn_util.h) */

typedef struct gg_run {
  const tcase_t *c;
  int host;               /* GPU_DN_HOST: host shards, the lapack provider */
  char group[64];
  int64_t rows, bad;      /* rows of A and B; the info a failure must give */
  size_t esz;
  muster_layout_geom_t L;
  void *A, *B;            /* the inputs, ld rows                          */
  gg_out_t *out;          /* R of them, then R blocks of X, then R reals  */
  char *X;
  double *W;
  size_t shared_bytes;
} gg_run_t;

#define GG_FAIL(...)                                                                               \
  do {                                                                                             \
    fprintf(stderr, "    %s: ", c->name);                                                          \
    fprintf(stderr, __VA_ARGS__);                                                                  \
    return 1;                                                                                      \
  } while (0)

static int general(const tcase_t *c) { return c->routine == MUSTER_GETRS || c->routine == MUSTER_GELS; }

/* ---- inputs -------------------------------------------------------------------------- */

/* The case's matrices, and the failure it asks for. */
static void make_inputs(gg_run_t *g) {
  const tcase_t *c = g->c;
  muster_dtype_t t = c->dtype;
  int64_t n = c->n, rows = g->rows, k = n / 2;
  const char *e = getenv("GPU_TEST_SEED");
  chk_rng_t rng;
  chk_seed(&rng, (e ? strtoull(e, NULL, 0) : 1) ^ ((uint64_t)n * 1000003u + (uint64_t)t * 31u +
                                                    (uint64_t)c->routine * 131u + (uint64_t)c->R * 7u));
  g->A = calloc((size_t)(rows * n), g->esz);
  g->B = calloc((size_t)(rows * c->nrhs), g->esz);
  if (c->dup_of > 0) chk_random_dense(t, rows, n, &rng, g->A, rows); /* LU pivots for real */
  else if (general(c)) chk_random_general(t, rows, n, &rng, g->A, rows);
  else chk_random_hermitian(t, n, 1, &rng, g->A, n);
  chk_random_dense(t, rows, c->nrhs, &rng, g->B, rows);
  if (c->expect == MUSTER_ESINGULAR) { /* getrs: column k zero (or = column dup_of); gels: column k = column 0 */
    for (int64_t i = 0; i < rows; i++)
      chk_set(t, g->A, rows, i, k,
              c->routine == MUSTER_GELS ? chk_get(t, g->A, rows, i, 0)
              : c->dup_of > 0           ? chk_get(t, g->A, rows, i, c->dup_of - 1)
                                        : 0);
    g->bad = k + 1;
  }
  if (c->nan_in == 'a') chk_set(t, g->A, rows, 5, 2, NAN); /* in the lower triangle: potrs reads it */
  if (c->nan_in == 'b') chk_set(t, g->B, rows, 3, 0, NAN);
}

/* This rank's columns of A (ld lda) from the full matrix, by the runs of
 * the layout (muster/layout.h), as the provider reads them. */
static void my_columns(const gg_run_t *g, int rank, void *dst, int64_t lda) {
  const int cyclic = g->c->layout == MUSTER_LAYOUT_CYCLIC;
  muster_layout_iter_t it;
  muster_layout_run_t run;
  for (muster_layout_iter_start(&it, &g->L); muster_layout_iter_next(&it, &run);)
    if ((cyclic ? run.cyc_rank : run.blk_rank) == rank)
      muster_copy_cols((char *)dst + (size_t)((cyclic ? run.cyc_col : run.blk_col) * lda) * g->esz, lda,
                       (char *)g->A + (size_t)(run.gcol * g->rows) * g->esz, g->rows, g->rows, run.ncols, g->esz);
}

/* ---- one rank ------------------------------------------------------------------------ */

typedef struct gg_bufs {
  void *a, *b, *w;        /* what the shard points at (device or host)    */
  void *ha;               /* this rank's columns as made, on the host     */
  int64_t lda, ncols;
  size_t abytes, bbytes;
} gg_bufs_t;

static int put(const gg_run_t *g, void *dst, const void *src, size_t bytes) {
  return gd_copy(g->host, dst, src, bytes, 1);
}

static int get(const gg_run_t *g, void *dst, const void *src, size_t bytes) {
  return gd_copy(g->host, dst, src, bytes, 0);
}

static void *alloc(const gg_run_t *g, size_t bytes) { return gd_alloc(g->host, g->c->mode, bytes); }

static void release(const gg_run_t *g, void *p) { gd_release(g->host, g->c->mode, p); }

static int bufs_make(const gg_run_t *g, int rank, gg_bufs_t *m) {
  const tcase_t *c = g->c;
  memset(m, 0, sizeof *m);
  m->lda = g->rows + c->lda_extra;
  m->ncols = c->layout == MUSTER_LAYOUT_CYCLIC ? g->L.local_cols : muster_layout_block_ncols(&g->L, rank);
  m->abytes = (size_t)(m->lda * (m->ncols > 0 ? m->ncols : 1)) * g->esz;
  m->bbytes = (size_t)(g->rows * c->nrhs) * g->esz;
  m->ha = calloc(1, m->abytes);
  m->a = alloc(g, m->abytes);
  m->b = alloc(g, m->bbytes);
  m->w = alloc(g, 8);
  if (!m->ha || !m->a || !m->b || !m->w) return 1;
  my_columns(g, rank, m->ha, m->lda);
  return 0;
}

static void bufs_free(const gg_run_t *g, gg_bufs_t *m) {
  free(m->ha);
  if (m->a) release(g, m->a);
  if (m->b) release(g, m->b);
  if (m->w) release(g, m->w);
}

static muster_shard_t shard_of(const gg_run_t *g, int rank, int device, const gg_bufs_t *m) {
  muster_shard_t s;
  memset(&s, 0, sizeof s);
  s.mem = g->host ? MUSTER_MEM_HOST : MUSTER_MEM_CUDA;
  s.device = g->host ? -1 : device;
  s.a = m->a;
  s.lda = m->lda;
  s.col0 = g->c->layout == MUSTER_LAYOUT_CYCLIC ? 0 : muster_layout_block_col0(&g->L, rank);
  s.ncols = m->ncols;
  s.b = m->b;
  s.ldb = g->rows; /* gels: m */
  s.w = (g->c->flags & MUSTER_LOGDET) ? m->w : NULL;
  return s;
}

/* One rank's buffers and its fresh inputs before each solve. */
typedef struct gg_rank_ctx {
  const gg_run_t *g;
  gg_bufs_t *m;
} gg_rank_ctx_t;

static int refill(void *arg) {
  const gg_rank_ctx_t *x = arg;
  double nan = NAN;
  return put(x->g, x->m->a, x->m->ha, x->m->abytes) || put(x->g, x->m->b, x->g->B, x->m->bbytes) ||
         put(x->g, x->m->w, &nan, 8);
}

/* Solve c->reps times on fresh copies of the inputs; hand back the last. */
static int gg_rank(int rank, int device, void *arg) {
  gg_run_t *g = arg;
  const tcase_t *c = g->c;
  gg_out_t *o = &g->out[rank];
  gg_bufs_t m = {0};
  gg_rank_ctx_t x = {g, &m};
  muster_solve_args_t a = {c->routine, c->dtype, c->n, c->nrhs, c->tile, c->layout, c->flags,
                           g->host ? "lapack" : c->prov->name};
  o->rc = 1;
  if ((!g->host && cudaSetDevice(device) != cudaSuccess) || bufs_make(g, rank, &m)) {
    snprintf(o->msg, sizeof o->msg, "rank %d: buffers", rank);
    goto out;
  }
  muster_shard_t s = shard_of(g, rank, device, &m);
  if (gd_solve_reps(c, g->host, g->group, rank, device, &a, &s, refill, &x, o)) goto out;
  char *ha = malloc(m.abytes);
  o->a_kept = ha && !get(g, ha, m.a, m.abytes) && !memcmp(ha, m.ha, m.abytes);
  free(ha);
  if (get(g, g->X + (size_t)rank * m.bbytes, m.b, m.bbytes) || get(g, &g->W[rank], m.w, 8))
    snprintf(o->msg, sizeof o->msg, "rank %d: copies out", rank);
  o->done = 1;
out:
  bufs_free(g, &m);
  return o->done ? 0 : 1;
}

/* ---- running and checking --------------------------------------------------------------- */

/* log det A from the lapack provider on the same A (one host shard). */
static int lapack_logdet(const gg_run_t *g, double *out) {
  const tcase_t *c = g->c;
  void *a = malloc((size_t)(c->n * c->n) * g->esz), *b = malloc((size_t)(c->n * c->nrhs) * g->esz);
  double w = NAN;
  muster_solve_args_t args = {MUSTER_POTRS, c->dtype, c->n, c->nrhs, 0, MUSTER_LAYOUT_BLOCK,
                              MUSTER_LOGDET | MUSTER_NO_FACTOR, "lapack"};
  muster_shard_t s = {MUSTER_MEM_HOST, -1, a, c->n, 0, c->n, b, c->n, &w, NULL};
  muster_solve_result_t res;
  int rc = a && b ? 0 : 1;
  if (!rc) {
    memcpy(a, g->A, (size_t)(c->n * c->n) * g->esz);
    memcpy(b, g->B, (size_t)(c->n * c->nrhs) * g->esz);
    rc = muster_solve_all(&args, 1, &s, &res);
  }
  *out = chk_get_real(c->dtype, &w, 0);
  free(a);
  free(b);
  return rc;
}

/* The counters around the second solve (leader's process). */
static int check_counters(const gg_run_t *g) {
  const tcase_t *c = g->c;
  const char *e = getenv("MUSTER_DN_DEVICE");
  int target = e && *e ? atoi(e) : c->devs[0];
  int in_place = c->R == 1 && c->devs[0] == target && (!general(c) || (c->flags & MUSTER_NO_FACTOR));
  return gd_check_counters(c, g->out[0].st0, g->out[0].st1, S_IN_PLACE, in_place);
}

static int check_ok(const gg_run_t *g) {
  const tcase_t *c = g->c;
  muster_dtype_t t = c->dtype;
  int64_t n = c->n, rows = g->rows, xr = c->routine == MUSTER_GELS ? n : rows;
  size_t block = (size_t)(rows * c->nrhs) * g->esz;
  for (int r = 0; r < c->R; r++) {
    const gg_out_t *o = &g->out[r];
    if (strcmp(o->provider, g->host ? "lapack" : c->prov->name)) GG_FAIL("rank %d ran on '%s'\n", r, o->provider);
    for (int64_t k = 0; k < c->nrhs; k++) /* X: the first xr rows of each column */
      if (memcmp(g->X + (size_t)(k * rows) * g->esz, g->X + (size_t)r * block + (size_t)(k * rows) * g->esz,
                 (size_t)xr * g->esz))
        GG_FAIL("rank %d's X differs from rank 0's\n", r);
    if (general(c) && !(c->flags & MUSTER_NO_FACTOR) && !o->a_kept) GG_FAIL("rank %d's A was changed\n", r);
    if ((c->flags & MUSTER_LOGDET) && memcmp(&g->W[r], &g->W[0], muster_dtype_real_size(t)))
      GG_FAIL("rank %d's log det differs from rank 0's\n", r);
  }
  double resid = c->routine == MUSTER_GELS ? chk_gels(t, rows, n, c->nrhs, g->A, rows, g->X, rows, g->B, rows)
                                           : chk_getrs(t, n, c->nrhs, g->A, n, g->X, n, g->B, n);
  double tol = chk_routine_tolerance(c->routine, t, rows);
  if (!(resid < tol)) GG_FAIL("residual %.3g, tolerance %.3g\n", resid, tol);
  if (getenv("GPU_TEST_VERBOSE")) printf("    residual %.3g (tolerance %.3g)\n", resid, tol);
  if (c->flags & MUSTER_LOGDET) {
    double ref, got = chk_get_real(t, &g->W[0], 0);
    if (lapack_logdet(g, &ref) != 0) GG_FAIL("the lapack provider's log det: %s\n", muster_last_error());
    if (!(fabs(got - ref) <= chk_logdet_tolerance(t, c->n, ref)))
      GG_FAIL("log det %.17g, the lapack provider's %.17g (tolerance %.3g)\n", got, ref,
              chk_logdet_tolerance(t, c->n, ref));
  }
  /* the counters are read around the second solve: a single solve (the
   * smoke's reps = 1) has none to compare */
  return g->host || g->c->reps < 2 ? 0 : check_counters(g);
}

static int check_error(const gg_run_t *g) {
  const tcase_t *c = g->c;
  char needle[64];
  size_t bbytes = (size_t)(g->rows * c->nrhs) * g->esz;
  int getrs_singular = c->expect == MUSTER_ESINGULAR && c->routine == MUSTER_GETRS;
  /* the runtime's "singular: U(k,k) of the LU factorization ..." with the
   * provider's detail "U(k,k) is exactly zero" or "|U(k,k)| = ..." */
  if (getrs_singular) snprintf(needle, sizeof needle, "U(%lld,%lld)", (long long)g->bad, (long long)g->bad);
  else if (c->expect == MUSTER_ESINGULAR)
    snprintf(needle, sizeof needle, "rank deficient: R(%lld,%lld)", (long long)g->bad, (long long)g->bad);
  else
    snprintf(needle, sizeof needle, "NaN/Inf");
  for (int r = 0; r < c->R; r++) {
    const gg_out_t *o = &g->out[r];
    if (c->expect == MUSTER_ESINGULAR && o->info != g->bad)
      GG_FAIL("rank %d: info %lld, expected %lld\n", r, (long long)o->info, (long long)g->bad);
    if (!strstr(o->msg, needle)) GG_FAIL("rank %d: message \"%s\" lacks \"%s\"\n", r, o->msg, needle);
    if (getrs_singular && !strstr(o->msg, "singular"))
      GG_FAIL("rank %d: message \"%s\" lacks \"singular\"\n", r, o->msg);
    if (getrs_singular && memcmp(g->X + (size_t)r * bbytes, g->B, bbytes))
      GG_FAIL("rank %d: B was written after a refusal\n", r);
  }
  return 0;
}

static int gg_case(const tcase_t *c, int ndev) {
  static int seq;
  gg_run_t g = {.c = c, .host = gd_host()};
  (void)ndev;
  g.rows = c->routine == MUSTER_GELS ? c->m : c->n;
  g.esz = muster_dtype_size(c->dtype);
  snprintf(g.group, sizeof g.group, "gpudn.%d.%d", (int)getpid(), ++seq);
  muster_layout_geom_init(&g.L, c->n, c->layout == MUSTER_LAYOUT_CYCLIC ? c->tile : muster_ceil_div(c->n, c->R),
                          c->R);
  make_inputs(&g);
  size_t block = (size_t)(g.rows * c->nrhs) * g.esz;
  g.shared_bytes = sizeof(gg_out_t) * (size_t)c->R + block * (size_t)c->R + 8 * (size_t)c->R;
  char *sh = mmap(NULL, g.shared_bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  int fail = sh == MAP_FAILED;
  if (!fail) {
    g.out = (gg_out_t *)sh;
    g.X = sh + sizeof(gg_out_t) * (size_t)c->R;
    g.W = (double *)(g.X + block * (size_t)c->R);
    int ran = gd_run_ranks(c, g.host, gg_rank, &g);
    for (int r = 0; r < c->R && !fail; r++) {
      const gg_out_t *o = &g.out[r];
      int want = g.host && c->expect == 0 ? 0 : c->expect;
      if (!o->done || (o->rc != want && !(c->expect_alt && o->rc == c->expect_alt))) {
        fprintf(stderr, "    %s: rank %d returned %d (%s), expected %d: %s\n", c->name, r, o->rc,
                muster_strerror(o->rc), want, o->msg);
        fail = 1;
      }
    }
    if (!fail && ran != 0) {
      fprintf(stderr, "    %s: the ranks failed (%d): %s\n", c->name, ran, muster_last_error());
      fail = 1;
    }
    if (!fail) fail = c->expect ? check_error(&g) : check_ok(&g);
    munmap(sh, g.shared_bytes);
  }
  free(g.A);
  free(g.B);
  return fail;
}

/* ---- the list --------------------------------------------------------------------------- */

static tcase_t *add(tcase_t *cases, int *nc, const gprov_t *dn, muster_routine_t rt, unsigned flags,
                    muster_dtype_t dt, int mode, int R, int ngpus, int64_t n, const char *what) {
  tcase_t *c = gc_add(cases, nc, dn, rt, flags, dt, mode, R, n, 0, 0, "");
  c->nrhs = 3;
  c->m = rt == MUSTER_GELS ? 2 * n + 12 : 0;
  c->ngpus = ngpus;
  for (int r = 0; r < R; r++) c->devs[r] = r % ngpus;
  c->special = gg_case;
  char devs[32] = "";
  for (int r = 0, k = 0; r < R; r++) k += snprintf(devs + k, sizeof devs - (size_t)k, "%s%d", r ? "," : "", c->devs[r]);
  snprintf(c->name, sizeof c->name, "%s%s %s %s R=%d gpus=%s n=%lld%s%.0lld nrhs=3 %s", muster_routine_name(rt),
           (flags & MUSTER_LOGDET) ? "(logdet)" : (flags & MUSTER_NO_FACTOR) ? "(no factor)" : "",
           muster_dtype_name(dt), gc_mode_name[mode], R, devs, (long long)n, c->m ? " m=" : "", (long long)c->m, what);
  return c;
}

void dn_general_cases(tcase_t *cases, int *nc, const gprov_t *dn) {
  static const muster_dtype_t dts[4] = {MUSTER_F32, MUSTER_F64, MUSTER_C64, MUSTER_C128};
  static const struct {
    muster_routine_t rt;
    unsigned flags;
    int64_t n;
  } rts[3] = {{MUSTER_GETRS, 0, 997}, {MUSTER_GELS, 0, 601}, {MUSTER_POTRS, MUSTER_LOGDET, 997}};
  tcase_t *c;
  for (int mode = M_THREADS; mode <= M_PROCS; mode++)
    for (int R = 1; R <= 4; R++)
      for (int d = 0; d < 4; d++)
        for (int k = 0; k < 3; k++) add(cases, nc, dn, rts[k].rt, rts[k].flags, dts[d], mode, R, 1, rts[k].n, "");
  for (int mode = M_THREADS; mode <= M_PROCS; mode++) {
    for (int k = 0; k < 3; k++) {
      /* over 2 GPUs; the cyclic layout; lda > rows */
      add(cases, nc, dn, rts[k].rt, rts[k].flags, MUSTER_F64, mode, 2, 2, rts[k].n, "");
      c = add(cases, nc, dn, rts[k].rt, rts[k].flags, MUSTER_C64, mode, 2, 1, rts[k].n, "cyclic tile 96 lda+5");
      c->layout = MUSTER_LAYOUT_CYCLIC;
      c->tile = 96;
      c->lda_extra = 5;
      /* the target holds no rank: B, X and the log det staged there */
      c = add(cases, nc, dn, rts[k].rt, rts[k].flags, MUSTER_F64, mode, 2, 1, rts[k].n, "MUSTER_DN_DEVICE=1");
      c->ngpus = 2;
      c->env = "MUSTER_DN_DEVICE=1";
    }
    /* the caller gives A up: one rank on the target solves in its buffer */
    add(cases, nc, dn, MUSTER_GETRS, MUSTER_NO_FACTOR, MUSTER_C128, mode, 1, 1, 1000, "");
    add(cases, nc, dn, MUSTER_GELS, MUSTER_NO_FACTOR, MUSTER_F32, mode, 1, 1, 500, "");
    add(cases, nc, dn, MUSTER_GETRS, MUSTER_NO_FACTOR, MUSTER_F64, mode, 2, 1, 1000, "");
    /* larger: several of cusolverDn's panels */
    add(cases, nc, dn, MUSTER_GETRS, 0, MUSTER_F64, mode, 2, 1, 4099, "");
    add(cases, nc, dn, MUSTER_GELS, 0, MUSTER_F64, mode, 3, 1, 2053, "");
    /* failures */
    for (int d = 0; d < 4; d += 3) {
      c = add(cases, nc, dn, MUSTER_GETRS, 0, dts[d], mode, 2, 1, 997, "singular");
      c->expect = MUSTER_ESINGULAR;
      c = add(cases, nc, dn, MUSTER_GETRS, 0, dts[d], mode, 2, 1, 997, "equal-columns");
      c->dup_of = 2; /* column 499 = column 2, on random entries only */
      c->expect = MUSTER_ESINGULAR;
      c = add(cases, nc, dn, MUSTER_GELS, 0, dts[d], mode, 3, 1, 601, "rank-deficient");
      c->expect = MUSTER_ESINGULAR;
    }
    static const struct {
      muster_routine_t rt;
      unsigned flags;
      int in;
    } nans[] = {{MUSTER_GETRS, 0, 'a'}, {MUSTER_GETRS, 0, 'b'}, {MUSTER_GELS, 0, 'a'}, {MUSTER_GELS, 0, 'b'},
                {MUSTER_POTRS, MUSTER_LOGDET, 'a'}};
    for (size_t i = 0; i < sizeof nans / sizeof nans[0]; i++) {
      c = add(cases, nc, dn, nans[i].rt, nans[i].flags, MUSTER_F64, mode, 2, 1, 300,
              nans[i].in == 'a' ? "NaN-in-A" : "NaN-in-B");
      c->nan_in = nans[i].in;
      c->expect = MUSTER_ENONFINITE;
    }
  }
  for (int k = 0; k < *nc; k++) /* failures: one solve */
    if (cases[k].special == gg_case && cases[k].expect) cases[k].reps = 1;
}
