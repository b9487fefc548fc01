/*
 * tests/mpi/general.c - "general": getrs, gels and potrs with MUSTER_LOGDET
 * through the scalapack provider, every dtype, the sizes given (n not
 * divisible by the grid or the tile), the auto tile through
 * muster_solve_comm and tile 7 on a direct call.  Inputs come from
 * tools/muster/check.c (the CLI's generators: a well-conditioned general
 * m x n A, an HPD A for log det) with fresh seeds, block layout, every rank
 * holding all m rows of its columns.  Checked:
 *   - residuals of every rank's X: getrs ||AX-B|| / (||A|| ||X|| n eps)
 *     <= DRV_TOL, gels the normal equations ||A^H (AX-B)|| / (||A||
 *     (||A|| ||X|| + ||B||)) <= chk_gels_tolerance (16 sqrt(m) eps); X
 *     the same on every rank;
 *   - X equal (to tolerance) to the lapack provider's on the same input;
 *   - log det A against an independent Cholesky and against lapack's, the
 *     same bits on every rank;
 *   - A's piece unchanged on every rank (getrs, gels return no factors);
 *   - exactly singular getrs, rank-deficient gels, NaN in A (upper
 *     triangle: a general A is read whole) and in the rows of B below n:
 *     the right code and info on every rank, nothing written, the lapack
 *     provider saying the same; MUSTER_LOGDET on getrs refused;
 *   - numerically singular getrs (n = 40 and 101: column n/2+1 = column
 *     2, and on an A of random entries = 2 x column 2): the pivot there is
 *     at rounding level, not 0, and is refused by the singularity rule
 *     (providers/common/singular.h) on every rank, as by lapack; a
 *     well-conditioned A with columns scaled 1e-8 .. 1e8 is solved.
 */
#include <float.h>
#include <math.h>

#include "../../tools/muster/check.h"
#include "mpi/driver.h"

static const muster_dtype_t dtypes[] = {MUSTER_F32, MUSTER_F64, MUSTER_C64, MUSTER_C128};

/* One input: the lfx_t the driver solves and shares (routine, dtype, n,
 * nrhs, lda, ldb, shards), and the original A and B in dtype storage. */
typedef struct gcase {
  lfx_t fx;
  int64_t m;   /* rows of A and B: gels's m (= ldb), else n */
  void *A, *B; /* m x n and m x nrhs, ld m */
} gcase_t;

/* SINGULAR: exactly (getrs) or numerically (gels); DUP, PLAIN_DUP2:
 * getrs numerically singular (a pivot at rounding level, not 0); SCALED:
 * well conditioned, columns 1e-8 .. 1e8, to be solved. */
enum spoil { CLEAN, SINGULAR, NAN_A, NAN_B, DUP, PLAIN_DUP2, SCALED };

/* Column k zeroed (getrs: U(k+1,k+1) = 0 exactly) or set to column 0
 * (gels: R(k+1,k+1) ~ 0); NaN at A(0, n-1), or at B(m-1, 0); column k set
 * to column 1 (DUP) or 2 x column 1 (PLAIN_DUP2, on an A of random entries
 * only: LU pivots); column j scaled by 10^(8 (2j/(n-1) - 1)) (SCALED). */
static void spoil(gcase_t *g, enum spoil how, int64_t k) {
  muster_dtype_t t = g->fx.t;
  int64_t n = g->fx.n;
  if (how == NAN_A) chk_set(t, g->A, g->m, 0, n - 1, NAN);
  if (how == NAN_B) chk_set(t, g->B, g->m, g->m - 1, 0, NAN);
  for (int64_t i = 0; (how == DUP || how == PLAIN_DUP2) && i < g->m; i++)
    chk_set(t, g->A, g->m, i, k, (how == DUP ? 1.0 : 2.0) * chk_get(t, g->A, g->m, i, 1));
  for (int64_t j = 0; how == SCALED && j < n; j++) {
    double f = pow(10.0, n > 1 ? 8.0 * (2.0 * (double)j / (double)(n - 1) - 1.0) : 0.0);
    for (int64_t i = 0; i < g->m; i++) chk_set(t, g->A, g->m, i, j, f * chk_get(t, g->A, g->m, i, j));
  }
  if (how != SINGULAR) return;
  for (int64_t i = 0; i < g->m; i++)
    chk_set(t, g->A, g->m, i, k, g->fx.routine == MUSTER_GETRS ? 0 : chk_get(t, g->A, g->m, i, 0));
}

/* Rank r's shard: its block columns of A (all m rows, ld lda), all of B
 * (ldb), and w (n reals, as drv_share moves them) for log det. */
static void shard(gcase_t *g, const muster_layout_geom_t *L, int r) {
  lfx_t *fx = &g->fx;
  int64_t c0 = muster_layout_block_col0(L, r), nc = muster_layout_block_ncols(L, r);
  fx->blk[r] = calloc((size_t)(L->block_cols * fx->lda), fx->esz);
  void *b = calloc((size_t)(fx->ldb * fx->nrhs), fx->esz);
  void *w = fx->flags & MUSTER_LOGDET ? calloc((size_t)fx->n, sizeof(double)) : NULL;
  ASSERT(fx->blk[r] && b && (w || !(fx->flags & MUSTER_LOGDET)));
  muster_copy_cols(fx->blk[r], fx->lda, (char *)g->A + (size_t)(c0 * g->m) * fx->esz, g->m, g->m,
                   nc, fx->esz);
  muster_copy_cols(b, fx->ldb, g->B, g->m, g->m, fx->nrhs, fx->esz);
  fx->shards[r] = (muster_shard_t){.mem = MUSTER_MEM_HOST, .device = -1, .a = fx->blk[r],
                                   .lda = fx->lda, .col0 = c0, .ncols = nc, .b = b,
                                   .ldb = fx->ldb, .w = w};
}

static void setup(gcase_t *g, drv_t *d, muster_routine_t r, muster_dtype_t t, int64_t n,
                  unsigned flags, int k, uint64_t seed, enum spoil how) {
  memset(g, 0, sizeof *g);
  lfx_t *fx = &g->fx;
  g->m = r == MUSTER_GELS ? 2 * n + 3 : n; /* a tall A, m odd */
  *fx = (lfx_t){.routine = r, .t = t, .esz = muster_dtype_size(t), .n = n, .nrhs = 1 + k % 3,
                .R = d->size, .layout = MUSTER_LAYOUT_BLOCK, .flags = flags,
                .lda = g->m + k % 2, .ldb = r == MUSTER_GELS ? g->m : n + (k / 2) % 2};
  g->A = calloc((size_t)(g->m * n), fx->esz);
  g->B = calloc((size_t)(g->m * fx->nrhs), fx->esz);
  ASSERT(g->A && g->B);
  chk_rng_t rng;
  chk_seed(&rng, seed);
  if (r == MUSTER_POTRS)
    chk_random_hermitian(t, n, 1, &rng, g->A, n);
  else if (how == PLAIN_DUP2)
    chk_random_dense(t, g->m, n, &rng, g->A, g->m);
  else
    chk_random_general(t, g->m, n, &rng, g->A, g->m);
  chk_random_dense(t, g->m, fx->nrhs, &rng, g->B, g->m);
  spoil(g, how, n / 2);
  muster_layout_geom_t L;
  ASSERT_OK(muster_layout_geom_init(&L, n, 1, fx->R));
  for (int i = 0; i < fx->R; i++) shard(g, &L, i);
}

static void gfree(gcase_t *g) {
  lfx_free(&g->fx);
  free(g->A);
  free(g->B);
}

/* This rank's A piece and b as they were before the call. */
typedef struct before {
  void *a, *b;
  size_t abytes, bbytes;
} before_t;

static void keep(const gcase_t *g, int rank, before_t *s) {
  const lfx_t *fx = &g->fx;
  s->abytes = (size_t)(fx->shards[rank].ncols * fx->lda) * fx->esz;
  s->bbytes = (size_t)(fx->ldb * fx->nrhs) * fx->esz;
  s->a = malloc(s->abytes ? s->abytes : 1);
  s->b = malloc(s->bbytes);
  ASSERT(s->a && s->b);
  memcpy(s->a, fx->shards[rank].a, s->abytes);
  memcpy(s->b, fx->shards[rank].b, s->bbytes);
}

/* 1 when A's piece (and, with b, also b) is as kept; frees what keep took. */
static int unchanged(const gcase_t *g, int rank, before_t *s, int with_b) {
  const muster_shard_t *me = &g->fx.shards[rank];
  int same = memcmp(s->a, me->a, s->abytes) == 0 &&
             (!with_b || memcmp(s->b, me->b, s->bbytes) == 0);
  free(s->a);
  free(s->b);
  return same;
}

static double real_at(muster_dtype_t t, const void *w) {
  return muster_dtype_real_size(t) == 4 ? *(const float *)w : *(const double *)w;
}

/* Rank 0, on the shared result: residuals, every rank's copy, log det. */
static void residuals(const gcase_t *g, char *why, size_t len) {
  const lfx_t *fx = &g->fx;
  muster_dtype_t t = fx->t;
  int64_t n = fx->n, m = g->m;
  double eps = chk_eps(t);
  for (int r = 0; r < fx->R; r++) {
    const muster_shard_t *s = &fx->shards[r];
    /* in units of the tolerance: getrs n eps x DRV_TOL, gels chk_gels_tolerance */
    double res = fx->routine == MUSTER_GELS
                     ? chk_gels(t, m, n, fx->nrhs, g->A, m, s->b, fx->ldb, g->B, m) / chk_gels_tolerance(t, m)
                     : chk_getrs(t, n, fx->nrhs, g->A, m, s->b, fx->ldb, g->B, m) / (n * eps) / DRV_TOL;
    if (!(res <= 1)) drv_say(why, len, "rank %d: residual %.3g x its tolerance", r, res);
    for (int64_t c = 0; c < fx->nrhs; c++)
      if (memcmp((char *)s->b + (size_t)(c * fx->ldb) * fx->esz,
                 (char *)fx->shards[0].b + (size_t)(c * fx->ldb) * fx->esz, (size_t)n * fx->esz))
        drv_say(why, len, "X of rank %d differs from rank 0's in column %" PRId64, r, c);
    if (!(fx->flags & MUSTER_LOGDET)) continue;
    if (memcmp(s->w, fx->shards[0].w, muster_dtype_real_size(t)))
      drv_say(why, len, "log det on rank %d differs from rank 0's", r);
  }
  if (fx->flags & MUSTER_LOGDET) {
    double ref = chk_logdet_hpd(t, n, g->A, n), got = real_at(t, fx->shards[0].w);
    if (!(fabs(got - ref) <= chk_logdet_tolerance(t, n, ref)))
      drv_say(why, len, "log det %.17g, independent Cholesky %.17g", got, ref);
  }
}

/* Rank 0: the lapack provider on the same input (same seed, spoil). */
static void lapack_ref(drv_t *d, const gcase_t *g, int k, uint64_t seed, enum spoil how,
                       gcase_t *ref) {
  setup(ref, d, g->fx.routine, g->fx.t, g->fx.n, g->fx.flags, k, seed, how);
  lfx_solve(d->lp, d->lp_ctx, &ref->fx);
}

static void against_lapack(drv_t *d, const gcase_t *g, int k, uint64_t seed, enum spoil how,
                           char *why, size_t len) {
  gcase_t ref;
  lapack_ref(d, g, k, seed, how, &ref);
  const lfx_t *fx = &g->fx;
  double tol = DRV_TOL * (double)g->m * lfx_eps(fx->t);
  if (ref.fx.err[0] || ref.fx.info)
    drv_say(why, len, "lapack failed on the same input: %s", ref.fx.err);
  else
    drv_compare_x(fx, &ref.fx, tol, why, len);
  if (!why[0] && (fx->flags & MUSTER_LOGDET)) {
    double a = real_at(fx->t, fx->shards[0].w), b = real_at(fx->t, ref.fx.shards[0].w);
    if (!(fabs(a - b) <= chk_logdet_tolerance(fx->t, fx->n, b)))
      drv_say(why, len, "log det %.17g, lapack's %.17g", a, b);
  }
  gfree(&ref);
}

/* direct: a provider tile of 7 (dividing neither n nor m) on a direct
 * call, else the auto tile through muster_solve_comm. */
static void solve_case(drv_t *d, muster_routine_t r, muster_dtype_t t, int64_t n, unsigned flags,
                       int direct, int k, enum spoil how) {
  uint64_t seed = d->seed + 5000u + (uint64_t)k * 13;
  gcase_t g;
  setup(&g, d, r, t, n, flags, k, seed, how);
  d->tile = direct ? 7 : 0;
  before_t s;
  keep(&g, d->rank, &s);
  double t0 = MPI_Wtime();
  int rc = drv_solve(d, &g.fx);
  double dt = MPI_Wtime() - t0;
  char why[700] = "";
  if (rc != 0 || g.fx.info != 0)
    snprintf(why, sizeof why, "rc %d info %" PRId64 ": %s", rc, g.fx.info, g.fx.err);
  if (!unchanged(&g, d->rank, &s, 0) && r != MUSTER_POTRS)
    drv_say(why, sizeof why, "A's piece on rank %d was written", d->rank);
  drv_share(d, &g.fx);
  if (d->rank == 0 && !why[0]) {
    residuals(&g, why, sizeof why);
    against_lapack(d, &g, k, seed, how, why, sizeof why);
  }
  drv_case(d, !why[0], why,
           "%s %s%s %s n=%" PRId64 " m=%" PRId64 " nrhs=%" PRId64 " tile=%s%s (%.3f s)",
           d->tile ? "direct" : "comm", muster_routine_str(r),
           flags & MUSTER_LOGDET ? "+logdet" : "", muster_dtype_str(t), n, g.m, g.fx.nrhs,
           d->tile ? "7" : "auto", how == SCALED ? " columns 1e-8..1e8" : "", dt);
  d->tile = 0;
  gfree(&g);
}

/* A failure of the input: `want` with `text` and info on every rank, A and
 * b untouched, and lapack saying the same code and info. */
static void error_case(drv_t *d, muster_routine_t r, muster_dtype_t t, int64_t n, enum spoil how,
                       int want, int64_t info, const char *text, int k) {
  uint64_t seed = d->seed + 9000u + (uint64_t)k * 17;
  gcase_t g;
  setup(&g, d, r, t, n, 0, k, seed, how);
  before_t s;
  keep(&g, d->rank, &s);
  int rc = drv_solve(d, &g.fx);
  char why[700] = "";
  if (drv_expect(d, &g.fx, rc, want, text, why, sizeof why) && info && g.fx.info != info)
    snprintf(why, sizeof why, "info %" PRId64 ", want %" PRId64, g.fx.info, info);
  if (!unchanged(&g, d->rank, &s, 1))
    drv_say(why, sizeof why, "rank %d's A or b was written", d->rank);
  if (d->rank == 0 && !why[0]) {
    gcase_t ref;
    lapack_ref(d, &g, k, seed, how, &ref);
    if (ref.fx.info != info || !strstr(ref.fx.err, text))
      drv_say(why, sizeof why, "lapack says info %" PRId64 ": %s", ref.fx.info, ref.fx.err);
    gfree(&ref);
  }
  static const char *const hows[] = {"clean", "singular", "NaN in A's upper triangle",
                                     "NaN in B below row n", "column n/2+1 = column 2",
                                     "random entries, column n/2+1 = 2 x column 2", "scaled"};
  drv_case(d, !why[0], why, "%s %s %s n=%" PRId64 " %s: %s, info %" PRId64 " everywhere",
           d->via_comm ? "comm" : "direct", muster_routine_str(r), muster_dtype_str(t), n, hows[how],
           muster_err_name(want), info);
  gfree(&g);
}

/* MUSTER_LOGDET is for potrs: the provider refuses it on getrs itself. */
static void logdet_elsewhere(drv_t *d) {
  gcase_t g;
  setup(&g, d, MUSTER_GETRS, MUSTER_F64, 37, MUSTER_LOGDET, 0, d->seed + 77, CLEAN);
  int via = d->via_comm;
  d->via_comm = 0;
  int rc = drv_solve(d, &g.fx);
  d->via_comm = via;
  char why[700] = "";
  drv_expect(d, &g.fx, rc, MUSTER_EINVAL, "MUSTER_LOGDET is for potrs only", why, sizeof why);
  drv_case(d, !why[0], why, "direct getrs with MUSTER_LOGDET: MUSTER_EINVAL everywhere");
  gfree(&g);
}

void drv_mode_general(drv_t *d, const int64_t *ns, int nns) {
  int k = 0;
  for (int di = 0; di < 4; di++) {
    muster_dtype_t t = dtypes[di];
    if (d->dtypes && !(d->dtypes & (1u << t))) continue;
    for (int ni = 0; ni < nns; ni++) {
      for (int direct = 0; direct < 2; direct++) {
        solve_case(d, MUSTER_GETRS, t, ns[ni], 0, direct, k++, CLEAN);
        solve_case(d, MUSTER_GELS, t, ns[ni], 0, direct, k++, CLEAN);
        solve_case(d, MUSTER_POTRS, t, ns[ni], MUSTER_LOGDET, direct, k++, CLEAN);
      }
      solve_case(d, MUSTER_GETRS, t, ns[ni], 0, k % 2, k, SCALED);
      k++;
    }
    char text[96];
    snprintf(text, sizeof text, "U(%d,%d)", 37 / 2 + 1, 37 / 2 + 1);
    error_case(d, MUSTER_GETRS, t, 37, SINGULAR, MUSTER_ESINGULAR, 37 / 2 + 1, text, k++);
    snprintf(text, sizeof text, "R(%d,%d)", 37 / 2 + 1, 37 / 2 + 1);
    error_case(d, MUSTER_GELS, t, 37, SINGULAR, MUSTER_ESINGULAR, 37 / 2 + 1, text, k++);
    /* numerically singular getrs: n = 40 and an odd larger n, both kinds */
    for (int64_t n = 40; n <= 101; n += 61)
      for (enum spoil how = DUP; how <= PLAIN_DUP2; how++) {
        snprintf(text, sizeof text, "U(%d,%d)", (int)(n / 2 + 1), (int)(n / 2 + 1));
        error_case(d, MUSTER_GETRS, t, n, how, MUSTER_ESINGULAR, n / 2 + 1, text, k++);
      }
  }
  int via = d->via_comm;
  for (d->via_comm = 0; d->via_comm < 2; d->via_comm++) { /* direct, then muster_solve_comm */
    error_case(d, MUSTER_GETRS, MUSTER_F64, 37, NAN_A, MUSTER_ENONFINITE, 0, "row 0, column 36", k++);
    error_case(d, MUSTER_GELS, MUSTER_C64, 37, NAN_B, MUSTER_ENONFINITE, 0, "NaN", k++);
  }
  d->via_comm = via;
  logdet_elsewhere(d);
}
