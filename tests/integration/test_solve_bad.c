/*
 * tests/integration/test_solve_bad.c - every bad input of the collective
 * solve, given by one or every participant: all ranks return the same code
 * and message, nobody hangs, nothing is left in /dev/shm.  Each case runs
 * with 3 ranks in process mode and in threads mode.
 */
#include <math.h>
#include <unistd.h>

#include "task.h"
#include "test_solve.h"
#include "providers/tp_util.h"

typedef struct bad_case {
  const char *name;
  muster_routine_t routine;
  sv_tweak_fn tweak;
  int code;
  const char *needle;   /* in every rank's message */
  int process_only;
} bad_case_t;

static void all_unknown_routine(sv_run_t *r, int k, muster_solve_args_t *a, muster_shard_t *s) {
  (void)r; (void)k; (void)s;
  a->routine = (muster_routine_t)42;
}
static void r1_routine(sv_run_t *r, int k, muster_solve_args_t *a, muster_shard_t *s) {
  (void)r; (void)s;
  if (k == 1) a->routine = MUSTER_POTRI;
}
static void all_n0(sv_run_t *r, int k, muster_solve_args_t *a, muster_shard_t *s) {
  (void)r; (void)k; (void)s;
  a->n = 0;
}
static void all_nneg(sv_run_t *r, int k, muster_solve_args_t *a, muster_shard_t *s) {
  (void)r; (void)k; (void)s;
  a->n = -5;
}
static void r2_n(sv_run_t *r, int k, muster_solve_args_t *a, muster_shard_t *s) {
  (void)r; (void)s;
  if (k == 2) a->n = 31;
}
static void r1_dtype(sv_run_t *r, int k, muster_solve_args_t *a, muster_shard_t *s) {
  (void)r; (void)s;
  if (k == 1) a->dtype = MUSTER_F32;
}
static void all_bad_dtype(sv_run_t *r, int k, muster_solve_args_t *a, muster_shard_t *s) {
  (void)r; (void)k; (void)s;
  a->dtype = (muster_dtype_t)9;
}
static void all_tile_too_big(sv_run_t *r, int k, muster_solve_args_t *a, muster_shard_t *s) {
  (void)r; (void)k; (void)s;
  a->tile = 11; /* n=30 over 3 ranks: blocks of 10, tile 11 is invalid */
}
static void r1_tile(sv_run_t *r, int k, muster_solve_args_t *a, muster_shard_t *s) {
  (void)r; (void)s;
  if (k == 1) a->tile = 5;
}
static void r1_null_a(sv_run_t *r, int k, muster_solve_args_t *a, muster_shard_t *s) {
  (void)r; (void)a;
  if (k == 1) s->a = NULL;
}
static void r2_small_lda(sv_run_t *r, int k, muster_solve_args_t *a, muster_shard_t *s) {
  (void)r; (void)a;
  if (k == 2) s->lda = 29;
}
static void r2_null_b(sv_run_t *r, int k, muster_solve_args_t *a, muster_shard_t *s) {
  (void)r; (void)a;
  if (k == 2) s->b = NULL;
}
static void r0_null_w(sv_run_t *r, int k, muster_solve_args_t *a, muster_shard_t *s) {
  (void)r; (void)a;
  if (k == 0) s->w = NULL;
}
static void all_nrhs0(sv_run_t *r, int k, muster_solve_args_t *a, muster_shard_t *s) {
  (void)r; (void)k; (void)s;
  a->nrhs = 0;
}
static void r1_cols(sv_run_t *r, int k, muster_solve_args_t *a, muster_shard_t *s) {
  (void)r; (void)a;
  if (k == 1) s->col0 = 9;
}
static void r1_short(sv_run_t *r, int k, muster_solve_args_t *a, muster_shard_t *s) {
  (void)r; (void)a;
  if (k == 1) s->lda = 4096; /* claims far more than its muster_shard_alloc region */
}
static void r1_malloc(sv_run_t *r, int k, muster_solve_args_t *a, muster_shard_t *s) {
  (void)r; (void)a;
  if (k == 1) s->a = malloc((size_t)(s->lda * s->ncols) * 8); /* the child exits: no leak */
}
static void all_nosuch_provider(sv_run_t *r, int k, muster_solve_args_t *a, muster_shard_t *s) {
  (void)r; (void)k; (void)s;
  a->provider = "nosuch";
}
static void r2_provider(sv_run_t *r, int k, muster_solve_args_t *a, muster_shard_t *s) {
  (void)r; (void)s;
  if (k == 2) a->provider = "lapack";
}
static void r1_null_shard_args(sv_run_t *r, int k, muster_solve_args_t *a, muster_shard_t *s) {
  (void)r; (void)s;
  if (k == 1) a->layout = (muster_layout_t)7;
}
static void r0_cuda(sv_run_t *r, int k, muster_solve_args_t *a, muster_shard_t *s) {
  (void)r;
  a->provider = "lapack";
  if (k == 0) s->mem = MUSTER_MEM_CUDA;
}

static const bad_case_t cases[] = {
    {"unknown routine", MUSTER_POTRS, all_unknown_routine, MUSTER_EINVAL, "unknown routine 42", 0},
    {"routine differs", MUSTER_POTRS, r1_routine, MUSTER_EMISMATCH, "rank 1 has routine=2, rank 0 has routine=1", 0},
    {"n = 0", MUSTER_POTRS, all_n0, MUSTER_EINVAL, "n=0: must be > 0", 0},
    {"n < 0", MUSTER_SYEVD, all_nneg, MUSTER_EINVAL, "n=-5: must be > 0", 0},
    {"n differs", MUSTER_POTRS, r2_n, MUSTER_EMISMATCH, "rank 2 has n=31, rank 0 has n=30", 0},
    {"dtype differs", MUSTER_POTRI, r1_dtype, MUSTER_EMISMATCH, "rank 1 has dtype=1, rank 0 has dtype=2", 0},
    {"unknown dtype", MUSTER_POTRS, all_bad_dtype, MUSTER_EINVAL, "unknown dtype 9", 0},
    {"tile invalid", MUSTER_POTRS, all_tile_too_big, MUSTER_ETILE, "tile", 0},
    {"tile differs", MUSTER_POTRS, r1_tile, MUSTER_EMISMATCH, "rank 1 has tile=5, rank 0 has tile=0", 0},
    {"null a", MUSTER_POTRS, r1_null_a, MUSTER_EINVAL, "rank 1", 0},
    {"lda < n", MUSTER_POTRI, r2_small_lda, MUSTER_EINVAL, "rank 2: lda=29 < n=30", 0},
    {"null b", MUSTER_POTRS, r2_null_b, MUSTER_EINVAL, "potrs needs b", 0},
    {"null w", MUSTER_SYEVD, r0_null_w, MUSTER_EINVAL, "syevd needs w", 0},
    {"nrhs = 0", MUSTER_POTRS, all_nrhs0, MUSTER_EINVAL, "nrhs=0", 0},
    {"wrong columns", MUSTER_POTRS, r1_cols, MUSTER_EINVAL, "rank 1 holds columns [9,19)", 0},
    {"unknown layout", MUSTER_POTRS, r1_null_shard_args, MUSTER_EINVAL, "unknown layout 7", 0},
    {"short shard", MUSTER_POTRS, r1_short, MUSTER_EINVAL, "is short", 1},
    {"not shard memory", MUSTER_POTRS, r1_malloc, MUSTER_EINVAL, "not memory from muster_shard_alloc", 1},
    {"unknown provider", MUSTER_POTRS, all_nosuch_provider, MUSTER_ENOPROVIDER, "'nosuch'", 0},
    {"provider differs", MUSTER_POTRS, r2_provider, MUSTER_EMISMATCH, "rank 2 asks for provider 'lapack'", 0},
    {"memory kind lacking", MUSTER_POTRS, r0_cuda, MUSTER_EUNSUPPORTED, "no cuda memory", 0},
};

static void run_case(const bad_case_t *c, int processes) {
  sv_expect_error(c->name, c->routine, 0, c->tweak, c->code, c->needle, processes);
}

TEST_IMPL(solve_bad_inputs_processes) {
  setenv("MUSTER_PROVIDER_PATH", tp_lapack_dir(), 1);
  unsetenv("MUSTER_PROVIDER");
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) run_case(&cases[i], 1);
  return 0;
}

TEST_IMPL(solve_bad_inputs_threads) {
  setenv("MUSTER_PROVIDER_PATH", tp_lapack_dir(), 1);
  unsetenv("MUSTER_PROVIDER");
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    if (!cases[i].process_only) run_case(&cases[i], 0);
  return 0;
}

/* NaN in A: refused, never reported as success; same on every rank. */
TEST_IMPL(solve_nan_input) {
  setenv("MUSTER_PROVIDER_PATH", tp_lapack_dir(), 1);
  /* the last one: potrs with MUSTER_LOGDET */
  const muster_routine_t routines[] = {MUSTER_POTRS, MUSTER_POTRI, MUSTER_SYEVD, MUSTER_GETRS,
                                       MUSTER_GELS, MUSTER_POTRS};
  for (int p = 0; p < 2; p++)
    for (int i = 0; i < 6; i++) {
      sv_run_t run;
      memset(&run, 0, sizeof run);
      run.args.routine = routines[i];
      run.args.dtype = i % 3 == 1 ? MUSTER_C64 : MUSTER_F64;
      run.args.flags = i == 5 ? MUSTER_LOGDET : 0;
      run.args.n = 26;
      run.R = 2;
      run.processes = p;
      run.seed = 9;
      run.make_nan = 1;
      sv_run(&run);
      ASSERT_EQ(sv_same_outcome(&run), 0);
      ASSERT_EQ(run.out[0].rc, MUSTER_ENONFINITE);
      ASSERT_STR_CONTAINS(run.out[0].msg, "NaN");
      sv_free(&run);
    }
  ASSERT_EQ(test_count_job_segments(test_job()), 0);
  return 0;
}

/* Not positive definite: MUSTER_ENOTPD and info = k on every rank. */
TEST_IMPL(solve_not_positive_definite) {
  setenv("MUSTER_PROVIDER_PATH", tp_lapack_dir(), 1);
  for (int p = 0; p < 2; p++)
    for (int routine = MUSTER_POTRS; routine <= MUSTER_POTRI; routine++) {
      sv_run_t run;
      memset(&run, 0, sizeof run);
      run.args.routine = (muster_routine_t)routine;
      run.args.dtype = p ? MUSTER_C128 : MUSTER_F32;
      run.args.n = 32;
      run.R = 4;
      run.processes = p;
      run.seed = 21;
      run.not_spd = 1;
      sv_run(&run);
      ASSERT_EQ(sv_same_outcome(&run), 0);
      char want[80];
      snprintf(want, sizeof want, "not positive definite (leading minor %" PRId64 ")", run.bad_minor);
      for (int r = 0; r < 4; r++) {
        ASSERT_EQ(run.out[r].rc, MUSTER_ENOTPD);
        ASSERT_EQ(run.out[r].res.info, run.bad_minor);
        ASSERT_STR_CONTAINS(run.out[r].msg, want);
      }
      sv_free(&run);
    }
  ASSERT_EQ(test_count_job_segments(test_job()), 0);
  return 0;
}
