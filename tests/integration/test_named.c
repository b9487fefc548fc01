/*
 * tests/integration/test_named.c - muster_solve_named and
 * muster_abort_named (muster/named.h), ranks as threads on the lapack
 * provider:
 *   - potrs with n given and gels with n == 0 (the runtime learns n and
 *     each rank's first column from the widths), checked by residuals on
 *     fresh random inputs;
 *   - tags that differ, and n == 0 on one rank only: MUSTER_EMISMATCH for
 *     the ranks that exchange, no rank waits for its deadline;
 *   - a rank that aborts by name: the peer fails at once with its reason;
 *   - the message of the failing step kept past the leave.
 */
#include <math.h>
#include <unistd.h>

#include "task.h"
#include "muster.h"
#include "../../tools/muster/check.h"

enum { R = 3, NRHS = 2 };

typedef struct rank_io {
  void *a, *b;          /* this rank's shard of A (lda rows), all of B */
  int rc;
  int64_t n;            /* who.n after the call */
  char msg[600];
  muster_solve_result_t res;
} rank_io_t;

typedef struct named_run {
  muster_routine_t routine;
  int64_t n, m;          /* A is m x n (m = n but for gels) */
  int64_t args_n;        /* what args.n says: n, or 0 (learn it) */
  uint64_t tag[R];       /* each rank's tag */
  int64_t n_of[R];       /* when set (!= -1): that rank's args.n instead */
  int nranks;
  char group[64];
  rank_io_t io[R];
} named_run_t;

static const muster_dtype_t T = MUSTER_F64;

static void block(const named_run_t *x, int rank, int64_t *col0, int64_t *ncols) {
  ASSERT_OK(muster_layout_block_cols(x->n, x->nranks, rank, col0, ncols));
}

static int named_rank(int rank, int device, void *arg) {
  named_run_t *x = arg;
  rank_io_t *io = &x->io[rank];
  int64_t col0, ncols;
  block(x, rank, &col0, &ncols);
  muster_named_t who = {.group = x->group, .rank = rank, .nranks = x->nranks, .job = NULL,
                        .timeout_s = 20, .device = device, .tag = x->tag[rank]};
  muster_solve_args_t args = {.routine = x->routine, .dtype = T, .n = x->n_of[rank] != -1 ? x->n_of[rank]
                              : x->args_n, .nrhs = NRHS, .layout = MUSTER_LAYOUT_BLOCK,
                              .flags = MUSTER_NO_FACTOR, .provider = "lapack"};
  /* with n learned, col0 is the runtime's: a wrong one must not matter */
  muster_shard_t s = {.mem = MUSTER_MEM_HOST, .device = -1, .a = io->a, .lda = x->m,
                      .col0 = args.n ? col0 : -7, .ncols = ncols, .b = io->b, .ldb = x->m};
  io->rc = muster_solve_named(&who, &args, &s, &io->res);
  io->n = who.n;
  snprintf(io->msg, sizeof io->msg, "%s", muster_last_error());
  return 0;
}

/* Random A (SPD for potrs, tall for gels) and B, every rank's copies, the
 * run on R threads; A and B are kept for the residual. */
static void run(named_run_t *x, void **A, void **B) {
  size_t esz = muster_dtype_size(T);
  chk_rng_t rng;
  chk_seed(&rng, test_seed("MUSTER_TEST_SEED"));
  *A = calloc((size_t)(x->m * x->n), esz);
  *B = calloc((size_t)(x->m * NRHS), esz);
  ASSERT(*A && *B);
  if (x->routine == MUSTER_POTRS) chk_random_hermitian(T, x->n, 1, &rng, *A, x->m);
  else chk_random_general(T, x->m, x->n, &rng, *A, x->m);
  chk_random_dense(T, x->m, NRHS, &rng, *B, x->m);
  for (int r = 0; r < x->nranks; r++) {
    int64_t col0, ncols;
    block(x, r, &col0, &ncols);
    x->io[r].a = malloc((size_t)(x->m * (ncols ? ncols : 1)) * esz);
    x->io[r].b = malloc((size_t)(x->m * NRHS) * esz);
    ASSERT(x->io[r].a && x->io[r].b);
    memcpy(x->io[r].a, (char *)*A + (size_t)(col0 * x->m) * esz, (size_t)(ncols * x->m) * esz);
    memcpy(x->io[r].b, *B, (size_t)(x->m * NRHS) * esz);
  }
  int devices[R] = {-1, -1, -1};
  snprintf(x->group, sizeof x->group, "named%d", (int)getpid());
  ASSERT_OK(muster_run_on_devices(x->nranks, devices, named_rank, x));
}

static void done(named_run_t *x, void *A, void *B) {
  for (int r = 0; r < x->nranks; r++) {
    free(x->io[r].a);
    free(x->io[r].b);
  }
  free(A);
  free(B);
  muster_group_cache_flush();
  ASSERT_EQ(test_count_job_segments(test_job()), 0);
}

static named_run_t base(muster_routine_t routine, int64_t n, int64_t m, int64_t args_n) {
  return (named_run_t){.routine = routine, .n = n, .m = m, .args_n = args_n, .nranks = R,
                       .n_of = {-1, -1, -1}};
}

/* Every rank solved, and its X (B's first n rows) passes the residual. */
static void expect_solved(const named_run_t *x, const void *A, const void *B) {
  for (int r = 0; r < x->nranks; r++) {
    const rank_io_t *io = &x->io[r];
    if (io->rc) fprintf(stderr, "rank %d: %s\n", r, io->msg);
    ASSERT_EQ(io->rc, 0);
    ASSERT_EQ(io->n, x->n); /* given or learned */
    ASSERT(!strcmp(io->res.provider, "lapack"));
    double res = x->routine == MUSTER_GELS
                     ? chk_gels(T, x->m, x->n, NRHS, A, x->m, io->b, x->m, B, x->m)
                     : chk_potrs(T, x->n, NRHS, A, x->m, io->b, x->m, B, x->m);
    double tol = chk_routine_tolerance(x->routine, T, x->m);
    if (!(res < tol)) fprintf(stderr, "rank %d: residual %g, tolerance %g\n", r, res, tol);
    ASSERT_DBL_LT(res, tol);
  }
}

TEST_IMPL(named_solve_potrs_and_gels_learns_n) {
  setenv("OPENBLAS_NUM_THREADS", "1", 0);
  void *A, *B;
  named_run_t x = base(MUSTER_POTRS, 40, 40, 40);
  x.tag[0] = x.tag[1] = x.tag[2] = 12345; /* a tag all share: solves as usual */
  run(&x, &A, &B);
  expect_solved(&x, A, B);
  done(&x, A, B);
  /* gels: 60 x 41 over 3 ranks (14, 14, 13 columns); no rank says n */
  x = base(MUSTER_GELS, 41, 60, 0);
  run(&x, &A, &B);
  expect_solved(&x, A, B);
  done(&x, A, B);
  return 0;
}

TEST_IMPL(named_solve_mismatches) {
  void *A, *B;
  named_run_t x = base(MUSTER_POTRS, 12, 12, 12);
  x.tag[0] = 7;
  x.tag[1] = x.tag[2] = 8; /* rank 0 is of another call */
  double t0 = test_now();
  run(&x, &A, &B);
  for (int r = 0; r < R; r++) {
    ASSERT_EQ(x.io[r].rc, MUSTER_EMISMATCH);
    ASSERT_STR_CONTAINS(x.io[r].msg, "tag");
  }
  done(&x, A, B);
  /* n == 0 on rank 0 only: it exchanges, the others publish descriptors */
  x = base(MUSTER_POTRS, 12, 12, 12);
  x.n_of[0] = 0;
  run(&x, &A, &B);
  ASSERT_EQ(x.io[0].rc, MUSTER_EMISMATCH);
  ASSERT_STR_CONTAINS(x.io[0].msg, "alike");
  for (int r = 1; r < R; r++) ASSERT(x.io[r].rc < 0);
  done(&x, A, B);
  ASSERT_DBL_LT(test_now() - t0, 10.0); /* nobody waited for the 20 s deadline */
  /* n == 0 needs the block layout: refused before anyone solves */
  muster_named_t who = {.group = "cyc", .rank = 0, .nranks = 1, .device = -1};
  muster_solve_args_t args = {.routine = MUSTER_POTRS, .dtype = T, .n = 0, .nrhs = 1,
                              .layout = MUSTER_LAYOUT_CYCLIC, .provider = "lapack"};
  double a = 1, b = 1;
  muster_shard_t s = {.mem = MUSTER_MEM_HOST, .device = -1, .a = &a, .lda = 1, .ncols = 1, .b = &b, .ldb = 1};
  muster_solve_result_t res;
  ASSERT_EQ(muster_solve_named(&who, &args, &s, &res), MUSTER_EINVAL);
  ASSERT_STR_CONTAINS(muster_last_error(), "block layout");
  muster_group_cache_flush();
  ASSERT_EQ(test_count_job_segments(test_job()), 0);
  return 0;
}

/* ---- the named abort ----------------------------------------------------------- */

typedef struct abort_run {
  char group[64];
  int rc[2];
  char msg[2][600];
} abort_run_t;

static int abort_rank(int rank, int device, void *arg) {
  abort_run_t *x = arg;
  muster_named_t who = {.group = x->group, .rank = rank, .nranks = 2, .timeout_s = 30, .device = device};
  if (rank == 1) {
    usleep(50 * 1000); /* rank 0 is waiting by now */
    x->rc[1] = muster_abort_named(&who, MUSTER_EINVAL, "rank 1: its b has 3 rows, A 4");
    return 0;
  }
  double a[16] = {4, 0, 0, 0, 0, 4, 0, 0, 0, 0, 4, 0, 0, 0, 0, 4}, b[4] = {1, 2, 3, 4};
  muster_solve_args_t args = {.routine = MUSTER_POTRS, .dtype = T, .n = 4, .nrhs = 1,
                              .layout = MUSTER_LAYOUT_BLOCK, .provider = "lapack"};
  muster_shard_t s = {.mem = MUSTER_MEM_HOST, .device = -1, .a = a, .lda = 4, .col0 = 0, .ncols = 2,
                      .b = b, .ldb = 4};
  muster_solve_result_t res;
  x->rc[0] = muster_solve_named(&who, &args, &s, &res);
  snprintf(x->msg[0], sizeof x->msg[0], "%s", muster_last_error());
  return 0;
}

TEST_IMPL(named_abort_stops_peers) {
  abort_run_t x;
  memset(&x, 0, sizeof x);
  snprintf(x.group, sizeof x.group, "nabort%d", (int)getpid());
  int devices[2] = {-1, -1};
  double t0 = test_now();
  ASSERT_OK(muster_run_on_devices(2, devices, abort_rank, &x));
  ASSERT_DBL_LT(test_now() - t0, 5.0);
  ASSERT_EQ(x.rc[1], 0);
  ASSERT_EQ(x.rc[0], MUSTER_EINVAL);
  ASSERT_STR_CONTAINS(x.msg[0], "its b has 3 rows");
  /* refusals */
  muster_named_t who = {.group = x.group, .rank = 0, .nranks = 2, .device = -1};
  ASSERT_EQ(muster_abort_named(NULL, MUSTER_EINVAL, "x"), MUSTER_EINVAL);
  ASSERT_EQ(muster_abort_named(&who, 0, "x"), MUSTER_EINVAL);
  ASSERT_STR_CONTAINS(muster_last_error(), "negative");
  muster_group_cache_flush();
  ASSERT_EQ(test_count_job_segments(test_job()), 0);
  return 0;
}

/* ---- messages kept past the leave ----------------------------------------------------- */

TEST_IMPL(named_solve_keeps_message) {
  double a[4] = {-1, 0, 0, -1}, b[2] = {1, 1}; /* not positive definite at minor 1 */
  muster_solve_args_t args = {.routine = MUSTER_POTRS, .dtype = T, .n = 2, .nrhs = 1,
                              .layout = MUSTER_LAYOUT_BLOCK, .provider = "lapack"};
  muster_shard_t s = {.mem = MUSTER_MEM_HOST, .device = -1, .a = a, .lda = 2, .ncols = 2, .b = b, .ldb = 2};
  muster_named_t who = {.group = "keep", .rank = 0, .nranks = 1, .device = -1};
  muster_solve_result_t res;
  ASSERT_EQ(muster_solve_named(&who, &args, &s, &res), MUSTER_ENOTPD);
  ASSERT_EQ(res.info, 1);
  ASSERT_STR_CONTAINS(muster_last_error(), "not positive definite");
  /* the join's failure names the step and the group */
  who.group = "a/b";
  ASSERT_EQ(muster_solve_named(&who, &args, &s, &res), MUSTER_EINVAL);
  ASSERT_STR_CONTAINS(muster_last_error(), "joining group a/b");
  ASSERT_EQ(muster_solve_named(NULL, &args, &s, &res), MUSTER_EINVAL);
  who.group = "keep";
  ASSERT_EQ(muster_solve_named(&who, NULL, &s, &res), MUSTER_EINVAL);
  muster_group_cache_flush();
  ASSERT_EQ(test_count_job_segments(test_job()), 0);
  return 0;
}
