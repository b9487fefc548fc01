/*
 * tests/integration/test_comm_local.c - muster_solve_comm's one-node route
 * (runtime/solve/comm_local.c): 2 and 3 forked ranks of a kind store comm
 * on this node, host memory, lapack (a leader provider) beside the
 * collective test provider colllapack, whose cost tables (a private
 * provider folder) say which is faster:
 *   - lapack faster, no provider given: lapack runs through the comm's
 *     group, res.provider says so; colllapack faster: colllapack runs;
 *     potrs, getrs and syevd in f64 and c128 on fresh random matrices, X
 *     and W the same on every rank, residuals under chk's tolerance;
 *   - provider "lapack" forced where colllapack is faster: lapack runs;
 *   - the group is made once and reused (one cached group per rank after
 *     every call), none in /dev/shm meanwhile, none cached once the comm
 *     closed; rank 1's pieces are muster_shard_alloc memory (reached as
 *     they are), the others' plain memory (staged);
 *   - a 2-D piece (muster_solve_comm_dist): lapack is no candidate (the
 *     reason says why) and colllapack runs; lapack forced is refused on
 *     every rank;
 *   - repeated calls: the kept choice, 1 store round per repeat
 *     (comm_local_kept_choice);
 *   - two threads of this process as the ranks (a store in memory);
 *   - MUSTER_LOG=debug: each rank's staging and engine times logged.
 * The faults (a rank killed inside the one-node call) are in
 * tests/fault/test_comm_local_faults.c.
 */
#ifdef __SANITIZE_ADDRESS__
#include <sanitizer/lsan_interface.h>
#endif

#include <fcntl.h>
#include <unistd.h>

#include "task.h"
#include "group/group.h"
#include "integration/comm_local_util.h"
#include "integration/kv_util.h"
#include "muster/layout.h"
#include "../../tools/muster/check.h"

enum { N = 37, NRHS = 2, NCASE = 7 }; /* N divided evenly by no rank count */

static const struct {
  muster_routine_t r;
  muster_dtype_t t;
} cases[NCASE] = {{MUSTER_POTRS, MUSTER_F64}, {MUSTER_GETRS, MUSTER_F64}, {MUSTER_SYEVD, MUSTER_F64},
                  {MUSTER_POTRS, MUSTER_C128}, {MUSTER_GETRS, MUSTER_C128}, {MUSTER_SYEVD, MUSTER_C128},
                  {MUSTER_POTRS, MUSTER_F64}};

typedef struct case_out {
  int rc, cached, segs;
  char msg[600];
  char provider[32];
  char reason[MUSTER_MAX_REASON];
} case_out_t;

typedef struct shared {
  uint64_t seed;
  int ncases;
  char force[NCASE][16];                       /* provider= of each case ("" none) */
  case_out_t out[NCASE][CL_MAX_RANKS];
  int cached_after[CL_MAX_RANKS];
  double X[NCASE][CL_MAX_RANKS][N * NRHS * 2]; /* room for c128 */
  double V[NCASE][N * N * 2];                  /* syevd: every rank's columns of V */
  double W[NCASE][CL_MAX_RANKS][N];
} shared_t;

static int64_t nrhs_of(muster_routine_t r) { return r == MUSTER_SYEVD ? 0 : NRHS; }

static void record(case_out_t *o, int rc, const muster_solve_result_t *res) {
  o->rc = rc;
  snprintf(o->msg, sizeof o->msg, "%s", rc ? muster_last_error() : "");
  snprintf(o->provider, sizeof o->provider, "%s", res->provider);
  snprintf(o->reason, sizeof o->reason, "%s", res->reason);
  o->cached = muster__group_cache_count();
  o->segs = test_count_job_segments(test_job());
}

static void table_rank(muster_comm_t *c, int rank, int R, void *arg) {
  shared_t *sh = arg;
  for (int k = 0; k < sh->ncases; k++) {
    muster_routine_t r = cases[k].r;
    muster_dtype_t t = cases[k].t;
    size_t esz = muster_dtype_size(t);
    void *a, *b;
    cl_problem(r, t, N, nrhs_of(r), sh->seed + (uint64_t)k, &a, &b);
    int shm = rank == 1; /* reached as it is; every other rank's is staged */
    muster_shard_t s = cl_shard(t, N, nrhs_of(r), a, b, R, rank, shm);
    muster_solve_args_t args = {.routine = r, .dtype = t, .n = N, .nrhs = nrhs_of(r),
                                .provider = sh->force[k][0] ? sh->force[k] : NULL};
    muster_solve_result_t res;
    record(&sh->out[k][rank], muster_solve_comm(c, &args, &s, &res), &res);
    if (r == MUSTER_SYEVD) {
      memcpy(sh->W[k][rank], s.w, N * muster_dtype_real_size(t));
      memcpy((char *)sh->V[k] + (size_t)(s.col0 * N) * esz, s.a, (size_t)(s.ncols * N) * esz);
    } else {
      memcpy(sh->X[k][rank], s.b, (size_t)(N * NRHS) * esz);
    }
    cl_shard_free(&s, shm);
    free(a);
    free(b);
  }
}

/* Case k on every rank: ran on `want`, X or W the same everywhere, the
 * residual under tolerance. */
static void check_case(const shared_t *sh, int k, int R, const char *want, const char *why) {
  muster_routine_t r = cases[k].r;
  muster_dtype_t t = cases[k].t;
  size_t esz = muster_dtype_size(t);
  for (int q = 0; q < R; q++) {
    const case_out_t *o = &sh->out[k][q];
    if (o->rc) fprintf(stderr, "case %d rank %d: %d %s\n", k, q, o->rc, o->msg);
    ASSERT_EQ(o->rc, 0);
    if (strcmp(o->provider, want)) fprintf(stderr, "case %d rank %d ran %s: %s\n", k, q, o->provider, o->reason);
    ASSERT(!strcmp(o->provider, want));
    ASSERT_STR_CONTAINS(o->reason, why);
    ASSERT_EQ(o->segs, 0); /* a formed group has no name in /dev/shm */
    if (r == MUSTER_SYEVD) ASSERT(!memcmp(sh->W[k][q], sh->W[k][0], N * muster_dtype_real_size(t)));
    else ASSERT(!memcmp(sh->X[k][q], sh->X[k][0], (size_t)(N * NRHS) * esz));
  }
  void *a, *b;
  cl_problem(r, t, N, nrhs_of(r), sh->seed + (uint64_t)k, &a, &b);
  double res = r == MUSTER_SYEVD ? chk_syevd(t, N, a, N, sh->V[k], N, sh->W[k][0])
                                 : chk_potrs(t, N, NRHS, a, N, sh->X[k][0], N, b, N);
  double tol = chk_routine_tolerance(r, t, N);
  fprintf(stderr, "%s %s on %d ranks by %s: residual %.3g (tolerance %.3g)\n", muster_routine_name(r),
          muster_dtype_name(t), R, want, res, tol);
  ASSERT_DBL_LT(res, tol);
  free(a);
  free(b);
}

/* Six unforced calls, and with colllapack faster a seventh forcing lapack. */
static int table_run(int R, int lapack_fast) {
  char dir[256];
  cl_setup(dir, sizeof dir);
  cl_write_tables(dir, R, N, lapack_fast);
  shared_t *sh = cl_shared(sizeof *sh);
  sh->seed = test_seed("MUSTER_TEST_SEED");
  sh->ncases = lapack_fast ? 6 : 7;
  snprintf(sh->force[6], sizeof sh->force[6], "lapack");
  pid_t pids[CL_MAX_RANKS];
  cl_fork(dir, R, 10, table_rank, sh, sh->cached_after, pids);
  cl_wait(R, pids, -1);
  for (int k = 0; k < sh->ncases; k++) {
    int local = lapack_fast || k == 6;
    check_case(sh, k, R, local ? "lapack" : "colllapack",
               k == 6 ? "forced by args.provider" : local ? "vs colllapack" : "vs lapack");
    /* the one group of this comm, made at its first one-node call and reused */
    for (int q = 0; q < R; q++) ASSERT_EQ(sh->out[k][q].cached, local ? 1 : 0);
  }
  for (int q = 0; q < R; q++) ASSERT_EQ(sh->cached_after[q], 0);
  ASSERT_EQ(test_count_job_segments(test_job()), 0);
  cl_unshare(sh, sizeof *sh);
  test_remove_tree(dir);
  return 0;
}

TEST_IMPL(comm_local_lapack_faster_2) { return table_run(2, 1); }
TEST_IMPL(comm_local_lapack_faster_3) { return table_run(3, 1); }
TEST_IMPL(comm_local_collective_faster_2) { return table_run(2, 0); }
TEST_IMPL(comm_local_collective_faster_3) { return table_run(3, 0); }

/* MUSTER_LOG=debug: every rank logs where its one-node call went (the
 * route's staging against the engine: comm_local.c's log_phases), so a
 * GPU run can split the route's cost from the engine's without a
 * profiler.  3 ranks, one potrs: rank 0 is the leader's process (nothing
 * staged), rank 1's pieces muster_shard_alloc memory (nothing staged),
 * rank 2's plain memory (A and B staged; potrs's factor goes back). */
TEST_IMPL(comm_local_logs_phases) {
  static char log[1 << 18];
  char dir[256], path[300];
  cl_setup(dir, sizeof dir);
  cl_write_tables(dir, 3, N, 1);
  shared_t *sh = cl_shared(sizeof *sh);
  sh->seed = test_seed("MUSTER_TEST_SEED");
  sh->ncases = 1;
  snprintf(path, sizeof path, "%s/stderr.log", dir);
  int saved = dup(2), fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  ASSERT(saved >= 0 && fd >= 0);
  setenv("MUSTER_LOG", "debug", 1);
  fflush(stderr);
  ASSERT(dup2(fd, 2) == 2); /* the forked ranks' stderr */
  pid_t pids[CL_MAX_RANKS];
  cl_fork(dir, 3, 10, table_rank, sh, sh->cached_after, pids);
  cl_wait(3, pids, -1);
  ASSERT(dup2(saved, 2) == 2);
  close(saved);
  close(fd);
  unsetenv("MUSTER_LOG");
  check_case(sh, 0, 3, "lapack", "vs colllapack");
  FILE *f = fopen(path, "r");
  ASSERT(f);
  size_t got = fread(log, 1, sizeof log - 1, f);
  fclose(f);
  log[got] = '\0';
  ASSERT_STR_CONTAINS(log, " rank 0: one-node route on lapack: nothing staged, muster_solve ");
  ASSERT_STR_CONTAINS(log, " rank 1: one-node route on lapack: nothing staged, muster_solve ");
  const char *two = strstr(log, " rank 2: one-node route on lapack: staged in ");
  ASSERT(two != NULL);
  ASSERT(strstr(two, " GB in ") && strstr(two, " ms (A back: yes), muster_solve ") && strstr(two, " ms (engine ") &&
         strstr(two, " ms), staged out in "));
  cl_unshare(sh, sizeof *sh);
  test_remove_tree(dir);
  return 0;
}

/* ---- a 2-D piece: collective providers only ------------------------------------------- */

/* potrs on this rank's rows of A (an R x 1 grid, one block per rank), then
 * the same forcing lapack; cases 0 and 1. */
static void dist_rank(muster_comm_t *c, int rank, int R, void *arg) {
  shared_t *sh = arg;
  void *a, *b;
  cl_problem(MUSTER_POTRS, MUSTER_F64, N, NRHS, sh->seed, &a, &b);
  int64_t mb = (N + R - 1) / R, rows = muster_layout_numroc(N, mb, rank, R), lld = rows > 1 ? rows : 1;
  muster_dist_t d = {.m = N, .n = N, .mb = mb, .nb = N, .nprow = R, .npcol = 1, .myrow = rank, .mycol = 0,
                     .lld = lld};
  double *piece = calloc((size_t)(lld * N), sizeof *piece), *x = malloc(N * NRHS * sizeof *x);
  ASSERT(piece && x);
  for (int k = 0; k < 2; k++) {
    for (int64_t j = 0; j < N; j++)
      for (int64_t i = 0; i < rows; i++) piece[j * lld + i] = ((double *)a)[j * N + rank * mb + i];
    memcpy(x, b, N * NRHS * sizeof *x);
    muster_shard_t s = {.mem = MUSTER_MEM_HOST, .device = -1, .a = piece, .lda = lld, .b = x, .ldb = N};
    muster_solve_args_t args = {.routine = MUSTER_POTRS, .dtype = MUSTER_F64, .n = N, .nrhs = NRHS,
                                .provider = k ? "lapack" : NULL};
    muster_solve_result_t res;
    record(&sh->out[k][rank], muster_solve_comm_dist(c, &args, &s, &d, &res), &res);
    memcpy(sh->X[k][rank], x, N * NRHS * sizeof *x);
  }
  free(piece);
  free(x);
  free(a);
  free(b);
}

TEST_IMPL(comm_local_dist_collective_only) {
  enum { R = 3 };
  char dir[256];
  cl_setup(dir, sizeof dir);
  cl_write_tables(dir, R, N, 1); /* lapack would win a 1-D call */
  shared_t *sh = cl_shared(sizeof *sh);
  sh->seed = test_seed("MUSTER_TEST_SEED");
  pid_t pids[R];
  cl_fork(dir, R, 10, dist_rank, sh, NULL, pids);
  cl_wait(R, pids, -1);
  check_case(sh, 0, R, "colllapack", "not lapack: a leader provider: a 2-D piece");
  for (int q = 0; q < R; q++) {
    const case_out_t *o = &sh->out[1][q];
    ASSERT_EQ(o->rc, MUSTER_EUNSUPPORTED);
    ASSERT_STR_CONTAINS(o->msg, "lapack (");
    ASSERT_STR_CONTAINS(o->msg, "a 2-D piece (muster_solve_comm_dist) goes to collective providers only");
    ASSERT_EQ(sh->out[0][q].cached, 0);
  }
  ASSERT_EQ(test_count_job_segments(test_job()), 0);
  cl_unshare(sh, sizeof *sh);
  test_remove_tree(dir);
  return 0;
}

/* ---- repeated calls: the kept choice (runtime/solve/comm_plan.h) ------------------------- */

enum { NKEPT = 9, NOT_PD = 7 };

typedef struct kept_shared {
  uint64_t seed;
  long rounds[NKEPT][CL_MAX_RANKS];        /* store allgathers of call k on rank r */
  case_out_t out[NKEPT][CL_MAX_RANKS];
  double X[NKEPT][CL_MAX_RANKS][N * NRHS];
} kept_shared_t;

static int64_t kept_nrhs(int k) { return k == 4 ? 1 : NRHS; }

/* potrs f64 on fresh inputs, the same call every time but call 4 (one
 * right-hand side) and call 5 (colllapack forced); call 6 is call 0's,
 * call 7 too but on -A (not positive definite: the engine fails), call 8
 * call 0's again. */
static void kept_rank(muster_comm_t *c, int rank, int R, void *arg) {
  kept_shared_t *sh = arg;
  for (int k = 0; k < NKEPT; k++) {
    int64_t nrhs = kept_nrhs(k);
    void *a, *b;
    cl_problem(MUSTER_POTRS, MUSTER_F64, N, nrhs, sh->seed + (uint64_t)k, &a, &b);
    int shm = rank == 1; /* the others' pieces staged at every call */
    muster_shard_t s = cl_shard(MUSTER_F64, N, nrhs, a, b, R, rank, shm);
    for (int64_t i = 0; k == NOT_PD && i < N * s.ncols; i++) ((double *)s.a)[i] *= -1;
    muster_solve_args_t args = {.routine = MUSTER_POTRS, .dtype = MUSTER_F64, .n = N, .nrhs = nrhs,
                                .provider = k == 5 ? "colllapack" : NULL};
    muster_solve_result_t res;
    long before = cl_store_rounds();
    record(&sh->out[k][rank], muster_solve_comm(c, &args, &s, &res), &res);
    sh->rounds[k][rank] = cl_store_rounds() - before;
    memcpy(sh->X[k][rank], s.b, (size_t)(N * nrhs) * sizeof(double));
    cl_shard_free(&s, shm);
    free(a);
    free(b);
  }
}

/* 3 ranks, lapack faster: the first one-node call takes 3 store rounds
 * (descriptors, rank 0's choice, meeting in the group; the result is
 * agreed over the group); each repeat 1 (the descriptors: the kept
 * choice, every rank seated); a changed call (nrhs, a forced provider) or
 * the first call after it chooses again.  Every call right: residuals,
 * X the same on every rank.  A repeat whose engine fails fails on every
 * rank alike (the leader's words), and the next call chooses and meets
 * again (a new group). */
TEST_IMPL(comm_local_kept_choice) {
  enum { R = 3 };
  static const long want[NKEPT] = {3, 1, 1, 1, 3, 4, 3, 1, 3};
  char dir[256];
  cl_setup(dir, sizeof dir);
  cl_write_tables(dir, R, N, 1);
  kept_shared_t *sh = cl_shared(sizeof *sh);
  sh->seed = test_seed("MUSTER_TEST_SEED");
  pid_t pids[CL_MAX_RANKS];
  cl_fork(dir, R, 10, kept_rank, sh, NULL, pids);
  cl_wait(R, pids, -1);
  for (int k = 0; k < NKEPT; k++) {
    int64_t nrhs = kept_nrhs(k);
    for (int r = 0; r < R; r++) {
      const case_out_t *o = &sh->out[k][r];
      fprintf(stderr, "call %d rank %d: %s, %ld store rounds%s%s\n", k, r, o->provider, sh->rounds[k][r],
              o->rc ? ": " : "", o->msg);
      if (k == NOT_PD) {
        ASSERT_EQ(o->rc, MUSTER_ENOTPD);
        ASSERT_STR_CONTAINS(o->msg, "provider lapack: potrs: not positive definite"); /* the leader's words */
        if (r > 0) ASSERT_STR_CONTAINS(o->msg, "rank 0 of comm local: ");
      } else {
        ASSERT_EQ(o->rc, 0);
      }
      ASSERT(!strcmp(o->provider, k == 5 ? "colllapack" : "lapack"));
      /* call 5's engine gathers over the store too (colllapack's own allgathers) */
      if (k == 5) ASSERT_GT(sh->rounds[k][r], want[k]);
      else ASSERT_EQ(sh->rounds[k][r], want[k]);
      ASSERT(!memcmp(sh->X[k][r], sh->X[k][0], (size_t)(N * nrhs) * sizeof(double)));
    }
    if (k == NOT_PD) continue;
    void *a, *b;
    cl_problem(MUSTER_POTRS, MUSTER_F64, N, nrhs, sh->seed + (uint64_t)k, &a, &b);
    double res = chk_potrs(MUSTER_F64, N, nrhs, a, N, sh->X[k][0], N, b, N);
    ASSERT_DBL_LT(res, chk_routine_tolerance(MUSTER_POTRS, MUSTER_F64, N));
    free(a);
    free(b);
  }
  ASSERT_EQ(test_count_job_segments(test_job()), 0);
  cl_unshare(sh, sizeof *sh);
  test_remove_tree(dir);
  return 0;
}

/* ---- ranks that are threads of this process --------------------------------------------- */

typedef struct threads_arg {
  muster_kv_t kv;
  shared_t *sh;
} threads_arg_t;

static int thread_rank(int rank, int device, void *arg) {
  (void)device;
  threads_arg_t *t = arg;
  muster_store_opts_t so = {.name = "threads", .rank = rank, .size = 2, .timeout_s = 10};
  muster_store_t *st;
  ASSERT_OK(muster_store_open(&t->kv, &so, &st));
  muster_comm_opts_t co = {.kind = "store", .rank = rank, .size = 2, .name = "threads",
                           .allgather = muster_store_allgather, .ctx = st};
  muster_comm_t *c;
  ASSERT_OK(muster_comm_open(&co, &c));
  table_rank(c, rank, 2, t->sh);
  ASSERT_OK(muster_comm_close(c));
  ASSERT_OK(muster_store_close(st));
  return 0;
}

/* Two threads over a store in memory: the route in threads mode (no
 * staging: the leader reads its own process's memory), then everything
 * freed: in the ASan build LeakSanitizer checks now (the runner ends
 * each test with _exit, which it does not see). */
TEST_IMPL(comm_local_threads) {
  char dir[256];
  cl_setup(dir, sizeof dir);
  cl_write_tables(dir, 2, N, 1);
  shared_t *sh = cl_shared(sizeof *sh);
  sh->seed = test_seed("MUSTER_TEST_SEED");
  sh->ncases = 3;
  kv_mem_t *m = kv_mem_new();
  threads_arg_t t = {kv_mem(m), sh};
  int devices[2] = {-1, -1};
  ASSERT_OK(muster_run_on_devices(2, devices, thread_rank, &t));
  for (int k = 0; k < sh->ncases; k++) check_case(sh, k, 2, "lapack", "vs colllapack");
  ASSERT_EQ(muster__group_cache_count(), 0); /* both comms closed: their group forgotten */
  kv_mem_free(m);
#ifdef __SANITIZE_ADDRESS__
  ASSERT_EQ(__lsan_do_recoverable_leak_check(), 0);
#endif
  cl_unshare(sh, sizeof *sh);
  test_remove_tree(dir);
  return 0;
}
