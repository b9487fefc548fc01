/*
 * tests/integration/test_solve_factors.c - geqrf, gesvd and polar through
 * muster_solve and the lapack provider: every routine and form (thin and
 * full Q; values only, thin and full vectors) x dtype x {threads,
 * processes}, each on a square, a tall or a wide A (rotated so that every
 * form meets every shape), over 1..4 ranks; checked by
 * check_qr.h's residuals on fresh random inputs.  Then rank-deficient A
 * (no error: the factors still reproduce A), NaN input (MUSTER_ENONFINITE,
 * nothing written), the bad arguments the routines add, and one caller
 * holding every shard in the cyclic layout.  Sizes 17..71:
 * the whole file runs in a few seconds.
 */
#include <math.h>
#include <unistd.h>

#include "task.h"
#include "test_solve.h"
#include "muster/layout.h"
#include "providers/tp_util.h"
#include "../../tools/muster/check_qr.h"

static const muster_dtype_t dtypes[] = {MUSTER_F32, MUSTER_F64, MUSTER_C64, MUSTER_C128};

/* The forms: routine + flags. */
static const struct form {
  muster_routine_t routine;
  unsigned flags;
} forms[] = {
    {MUSTER_GEQRF, 0}, {MUSTER_GEQRF, MUSTER_FULL_MATRICES}, {MUSTER_GESVD, MUSTER_NO_VECTORS},
    {MUSTER_GESVD, 0}, {MUSTER_GESVD, MUSTER_FULL_MATRICES}, {MUSTER_POLAR, 0},
};
#define NFORMS (sizeof forms / sizeof forms[0])

static void use_lapack(void) {
  setenv("MUSTER_PROVIDER_PATH", tp_lapack_dir(), 1);
  unsetenv("MUSTER_PROVIDER");
}

/* A run of form f on an m x n A; nrhs: the columns B needs (at least 1). */
static void setup(sv_run_t *run, const struct form *f, muster_dtype_t t, int64_t m, int64_t n, int R,
                  int processes, uint64_t seed) {
  muster_outputs_t o;
  ASSERT_OK(muster_routine_outputs(f->routine, f->flags, m, n, &o));
  memset(run, 0, sizeof *run);
  run->args.routine = f->routine;
  run->args.flags = f->flags;
  run->args.dtype = t;
  run->args.n = n;
  run->args.nrhs = o.b_cols > 0 ? o.b_cols : 1;
  run->m = m;
  run->R = R;
  run->processes = processes;
  run->seed = seed;
}

static void expect_ok(sv_run_t *run, const char *what) {
  sv_run(run);
  int64_t m = run->m, n = run->args.n;
  muster_dtype_t t = run->args.dtype;
  if (sv_same_outcome(run) != 0 || run->out[0].rc != 0) {
    fprintf(stderr, "%s %s %s m=%" PRId64 " n=%" PRId64 " R=%d flags 0x%x: rc %d: %s\n", what,
            muster_routine_name(run->args.routine), muster_dtype_name(t), m, n, run->R,
            run->args.flags, run->out[0].rc, run->out[0].msg);
    ASSERT(0);
  }
  double res = sv_residual(run), tol = chk_factor_tolerance(t, m, n);
  if (!(res < tol)) {
    fprintf(stderr, "%s %s %s m=%" PRId64 " n=%" PRId64 " R=%d flags 0x%x: residual %g >= %g\n", what,
            muster_routine_name(run->args.routine), muster_dtype_name(t), m, n, run->R,
            run->args.flags, res, tol);
    ASSERT(0);
  }
  ASSERT(strcmp(run->out[0].res.provider, "lapack") == 0);
}

/* gesvd values only: no B at all (nrhs 0, b NULL) */
static void no_b(sv_run_t *run, int rank, muster_solve_args_t *args, muster_shard_t *s) {
  args->nrhs = 0;
  s->b = NULL;
}

/* form x dtype; shape square / tall / wide and R 1..4 rotated; an odd
 * explicit tile every other case; gesvd values only without B every other
 * case. */
static void matrix(int processes) {
  use_lapack();
  uint64_t seed = (uint64_t)getpid() * 1000003u;
  for (size_t f = 0; f < NFORMS; f++)
    for (size_t d = 0; d < 4; d++) {
      size_t pick = f + d;
      int64_t n = pick % 2 ? 37 : 24, shape = (int64_t)(pick % 3);
      int64_t m = shape == 0 ? n : shape == 1 ? 2 * n - 3 : n / 2 + 1;
      int R = 1 + (int)(pick % 4);
      sv_run_t run;
      setup(&run, &forms[f], dtypes[d], m, n, R, processes, seed++);
      if (pick % 2) run.args.tile = sv_odd_tile(n, R);
      if (forms[f].flags & MUSTER_NO_VECTORS && d % 2) run.tweak = no_b;
      expect_ok(&run, processes ? "processes" : "threads");
      sv_free(&run);
    }
  ASSERT_EQ(test_count_job_segments(test_job()), 0);
}

TEST_IMPL(solve_matrix_factors_threads) { matrix(0); return 0; }
TEST_IMPL(solve_matrix_factors_processes) { matrix(1); return 0; }

/* Column n/2 := column 0 (rank n - 1): no error, the factors still give A;
 * gesvd's last singular value is at rounding level. */
TEST_IMPL(solve_factors_rank_deficient) {
  use_lapack();
  for (size_t f = 0; f < NFORMS; f++) {
    sv_run_t run;
    int64_t n = 40, m = f % 2 ? 60 : 40;
    setup(&run, &forms[f], dtypes[f % 4], m, n, 3, f % 2, 11 + f);
    run.not_spd = 1;
    expect_ok(&run, "rank-deficient");
    if (forms[f].routine == MUSTER_GESVD)
      ASSERT_DBL_LT(chk_get_real(run.args.dtype, run.W, n - 1),
                    chk_factor_tolerance(run.args.dtype, m, n) * chk_get_real(run.args.dtype, run.W, 0));
    sv_free(&run);
  }
  return 0;
}

/* NaN in A: MUSTER_ENONFINITE naming the element, on every rank; A, B
 * and W as they were. */
TEST_IMPL(solve_factors_nan_input) {
  use_lapack();
  for (size_t f = 0; f < NFORMS; f++) {
    sv_run_t run;
    int64_t n = 30, m = f % 3 == 2 ? 20 : 45, k = m < n ? m : n;
    setup(&run, &forms[f], dtypes[(f + 1) % 4], m, n, 2, f % 2, 3 + f);
    run.make_nan = 1;
    sv_run(&run);
    ASSERT_EQ(sv_same_outcome(&run), 0);
    ASSERT_EQ(run.out[0].rc, MUSTER_ENONFINITE);
    char want[64];
    snprintf(want, sizeof want, "NaN/Inf in A at row %" PRId64 ", column %" PRId64, k - 1, n - 1);
    if (!strstr(run.out[0].msg, want)) fprintf(stderr, "got \"%s\", want \"%s\"\n", run.out[0].msg, want);
    ASSERT(strstr(run.out[0].msg, want));
    size_t esz = muster_dtype_size(run.args.dtype); /* bitwise: the NaN compares equal too */
    ASSERT(memcmp(run.full, run.A, (size_t)(m * n) * esz) == 0);
    ASSERT(memcmp(run.X, run.B, (size_t)(m * run.args.nrhs) * esz) == 0);
    sv_free(&run);
  }
  return 0;
}

static void short_b(sv_run_t *run, int rank, muster_solve_args_t *args, muster_shard_t *s) {
  args->nrhs = 29;
}
static void one_row_differs(sv_run_t *run, int rank, muster_solve_args_t *args, muster_shard_t *s) {
  if (rank == 1) s->ldb = 29;
}
static void no_w(sv_run_t *run, int rank, muster_solve_args_t *args, muster_shard_t *s) { s->w = NULL; }
static void zero_rows(sv_run_t *run, int rank, muster_solve_args_t *args, muster_shard_t *s) { s->ldb = 0; }

/* The arguments the routines add, in both modes (n = m = 30 over 3 ranks). */
TEST_IMPL(solve_factors_bad_args) {
  use_lapack();
  for (int p = 0; p < 2; p++) {
    sv_expect_error("geqrf short B", MUSTER_GEQRF, 0, short_b, MUSTER_EINVAL,
                    "geqrf: nrhs=29: B (m=30 rows, packed) needs 30 columns", p);
    sv_expect_error("polar flags", MUSTER_POLAR, MUSTER_FULL_MATRICES, NULL, MUSTER_EINVAL,
                    "polar: flags 0x8: it takes no flags", p);
    sv_expect_error("gesvd logdet", MUSTER_GESVD, MUSTER_NO_FACTOR, NULL, MUSTER_EINVAL,
                    "it takes only MUSTER_FULL_MATRICES and MUSTER_NO_VECTORS", p);
    sv_expect_error("m differs", MUSTER_GESVD, MUSTER_NO_VECTORS, one_row_differs, MUSTER_EMISMATCH,
                    "rank 1 has ldb=29 (gels: m), rank 0 has ldb=30", p);
    sv_expect_error("gesvd no w", MUSTER_GESVD, MUSTER_NO_VECTORS, no_w, MUSTER_EINVAL,
                    "gesvd needs w (min(m,n) singular values), got NULL", p);
    sv_expect_error("m = 0", MUSTER_POLAR, 0, zero_rows, MUSTER_EINVAL, "polar: m=ldb=0", p);
  }
  return 0;
}

/* The placement rule itself: every case of muster_routine_outputs. */
TEST_IMPL(layout_factor_outputs) {
  muster_outputs_t o;
  ASSERT_OK(muster_routine_outputs(MUSTER_GEQRF, 0, 50, 20, &o)); /* thin, tall: Q over A */
  ASSERT(o.a_holds == MUSTER_FACTOR_Q && o.nparts == 1 && o.part[0].what == MUSTER_FACTOR_R);
  ASSERT(o.part[0].rows == 20 && o.part[0].cols == 20 && o.b_cols == 8 && o.w_count == 0);
  ASSERT_OK(muster_routine_outputs(MUSTER_GEQRF, MUSTER_FULL_MATRICES, 50, 20, &o));
  ASSERT(o.a_holds == MUSTER_FACTOR_R && o.part[0].what == MUSTER_FACTOR_Q && o.b_cols == 50);
  ASSERT_OK(muster_routine_outputs(MUSTER_GEQRF, 0, 20, 50, &o)); /* wide: R over A */
  ASSERT(o.a_holds == MUSTER_FACTOR_R && o.part[0].rows == 20 && o.part[0].cols == 20 && o.b_cols == 20);
  ASSERT_OK(muster_routine_outputs(MUSTER_GESVD, MUSTER_NO_VECTORS, 20, 50, &o));
  ASSERT(o.a_holds == MUSTER_FACTOR_NONE && o.nparts == 0 && o.b_cols == 0 && o.w_count == 20);
  ASSERT_OK(muster_routine_outputs(MUSTER_GESVD, 0, 20, 50, &o));
  ASSERT(o.a_holds == MUSTER_FACTOR_VH && o.part[0].what == MUSTER_FACTOR_U && o.b_cols == 20);
  ASSERT_OK(muster_routine_outputs(MUSTER_GESVD, 0, 50, 20, &o));
  ASSERT(o.a_holds == MUSTER_FACTOR_U && o.part[0].what == MUSTER_FACTOR_VH && o.b_cols == 8);
  ASSERT_OK(muster_routine_outputs(MUSTER_GESVD, MUSTER_FULL_MATRICES, 20, 50, &o));
  ASSERT(o.a_holds == MUSTER_FACTOR_NONE && o.nparts == 2 && o.part[1].what == MUSTER_FACTOR_VH);
  ASSERT(o.part[1].offset == 400 && o.b_elems == 400 + 2500 && o.b_cols == 145);
  ASSERT_OK(muster_routine_outputs(MUSTER_POLAR, 0, 20, 50, &o));
  ASSERT(o.a_holds == MUSTER_FACTOR_UP && o.part[0].what == MUSTER_FACTOR_H && o.b_cols == 125);
  ASSERT_EQ(muster_routine_outputs(MUSTER_POLAR, MUSTER_NO_VECTORS, 20, 50, &o), MUSTER_EINVAL);
  ASSERT_EQ(muster_routine_outputs(MUSTER_GEQRF, MUSTER_NO_VECTORS, 20, 50, &o), MUSTER_EINVAL);
  ASSERT_EQ(muster_routine_outputs(MUSTER_GELS, 0, 50, 20, &o), MUSTER_EINVAL);
  ASSERT_EQ(muster_routine_outputs(MUSTER_GEQRF, 0, 0, 20, &o), MUSTER_EINVAL);
  muster_shape_t sh; /* the shape: m = ldb, tall or wide, B only when nrhs > 0 */
  ASSERT_OK(muster_routine_shape(MUSTER_GESVD, 50, 0, 20, &sh));
  ASSERT(sh.a_rows == 20 && sh.a_cols == 50 && sh.b_rows == 0);
  ASSERT_OK(muster_routine_shape(MUSTER_GEQRF, 50, 20, 20, &sh));
  ASSERT(sh.a_rows == 20 && sh.b_rows == 20 && sh.nrhs == 20);
  ASSERT_EQ(muster_routine_shape(MUSTER_GEQRF, 50, 20, 0, &sh), MUSTER_EINVAL);
  /* the export for ctypes (the adapters' one way to the rule): the same */
  int64_t flat[MUSTER_OUTPUTS_FLAT];
  ASSERT_OK(muster_routine_outputs(MUSTER_GESVD, MUSTER_FULL_MATRICES, 20, 50, &o));
  ASSERT_OK(muster_routine_outputs_flat(MUSTER_GESVD, MUSTER_FULL_MATRICES, 20, 50, flat));
  ASSERT(flat[0] == o.a_holds && flat[1] == 2 && flat[2] == MUSTER_FACTOR_U && flat[6] == MUSTER_FACTOR_VH);
  ASSERT(flat[9] == o.part[1].offset && flat[10] == o.b_cols && flat[11] == o.w_count);
  ASSERT_EQ(muster_routine_outputs_flat(MUSTER_POLAR, MUSTER_NO_VECTORS, 20, 50, flat), MUSTER_EINVAL);
  ASSERT_STR_CONTAINS(muster_last_error(), "muster_routine_outputs: routine 8");
  return 0;
}

/* One caller holding every shard (muster_solve_all), cyclic layout with
 * an odd tile: the factor over A comes back in A's cyclic places.  geqrf
 * tall, polar wide, and gesvd values only with no B at all (nrhs 0, b
 * NULL). */
static void single_caller(const struct form *f, muster_dtype_t t, int64_t m, int64_t n, int R) {
  size_t esz = muster_dtype_size(t);
  muster_outputs_t o;
  ASSERT_OK(muster_routine_outputs(f->routine, f->flags, m, n, &o));
  int64_t tile = sv_odd_tile(n, R), lcols = muster_layout_local_cols(n, tile, R);
  void *A = malloc((size_t)(m * n) * esz), *after = malloc((size_t)(m * n) * esz);
  double *W[MUSTER_MAX_RANKS];
  ASSERT(A && after);
  chk_rng_t rng;
  chk_seed(&rng, 99);
  chk_random_dense(t, m, n, &rng, A, m);
  muster_shard_t sh[MUSTER_MAX_RANKS];
  void *bs[MUSTER_MAX_RANKS];
  int64_t gcols[MUSTER_MAX_RANKS][64];
  ASSERT(lcols <= 64);
  for (int r = 0; r < R; r++) {
    memset(&sh[r], 0, sizeof sh[r]);
    sh[r].mem = MUSTER_MEM_HOST;
    sh[r].device = -1;
    sh[r].lda = m;
    sh[r].ncols = lcols;
    sh[r].ldb = m;
    sh[r].a = calloc((size_t)(m * lcols), esz);
    bs[r] = sh[r].b = o.b_cols ? calloc((size_t)(m * o.b_cols), esz) : NULL;
    W[r] = calloc((size_t)n, sizeof(double));
    sh[r].w = W[r];
    ASSERT(sh[r].a && W[r]);
    muster_layout_cyclic_cols(n, tile, R, r, gcols[r], 64);
    for (int64_t c = 0; c < lcols; c++)
      if (gcols[r][c] >= 0) memcpy((char *)sh[r].a + (size_t)(c * m) * esz, (char *)A + (size_t)(gcols[r][c] * m) * esz, (size_t)m * esz);
  }
  muster_solve_args_t args = {.routine = f->routine, .dtype = t, .n = n, .nrhs = o.b_cols, .tile = tile,
                              .layout = MUSTER_LAYOUT_CYCLIC, .flags = f->flags, .provider = NULL};
  muster_solve_result_t res;
  int rc = muster_solve_all(&args, R, sh, &res);
  if (rc) fprintf(stderr, "%s: %s\n", muster_routine_name(f->routine), muster_last_error());
  ASSERT_OK(rc);
  for (int r = 0; r < R; r++)
    for (int64_t c = 0; c < lcols; c++)
      if (gcols[r][c] >= 0) memcpy((char *)after + (size_t)(gcols[r][c] * m) * esz, (char *)sh[r].a + (size_t)(c * m) * esz, (size_t)m * esz);
  for (int r = 1; r < R; r++) {
    if (o.b_cols) ASSERT(memcmp(bs[0], bs[r], (size_t)(m * o.b_cols) * esz) == 0);
    ASSERT(memcmp(W[0], W[r], (size_t)o.w_count * muster_dtype_real_size(t)) == 0);
  }
  double e = chk_factors(t, f->routine, f->flags, m, n, A, after, bs[0], W[0]);
  ASSERT_DBL_LT(e, chk_factor_tolerance(t, m, n));
  for (int r = 0; r < R; r++) {
    free(sh[r].a);
    free(bs[r]);
    free(W[r]);
  }
  free(A);
  free(after);
}

TEST_IMPL(solve_factors_single_caller_cyclic) {
  use_lapack();
  single_caller(&forms[0], MUSTER_F64, 50, 29, 3);
  single_caller(&forms[5], MUSTER_C64, 17, 29, 2);
  single_caller(&forms[2], MUSTER_C128, 40, 29, 4);
  return 0;
}
