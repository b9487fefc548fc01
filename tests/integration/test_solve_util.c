/* tests/integration/test_solve_util.c - the solve harness (test_solve.h). */
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "task.h"
#include "test_solve.h"
#include "muster/layout.h"

/* one source for the CLI and the tests: tools/muster/check*.c, linked
 * in by tests/SConscript */
#include "../../tools/muster/check.h"
#include "../../tools/muster/check_qr.h"

static atomic_int run_counter;

static size_t esz_of(const sv_run_t *run) { return muster_dtype_size(run->args.dtype); }
static int64_t nrhs_of(const sv_run_t *run) {
  return muster_routine_takes(run->args.routine) & MUSTER_TAKES_B ? run->args.nrhs : 1;
}
static int factors(const sv_run_t *run) { return (muster_routine_takes(run->args.routine) & MUSTER_TAKES_O) != 0; }
static int general(const sv_run_t *run) {
  return run->args.routine == MUSTER_GETRS || run->args.routine == MUSTER_GELS || factors(run);
}
int64_t sv_rows(const sv_run_t *run) {
  return muster_routine_takes(run->args.routine) & MUSTER_TAKES_M ? run->m : run->args.n;
}

/* The known failure of run->not_spd, and the info it must give. */
static void spoil(sv_run_t *run) {
  muster_dtype_t t = run->args.dtype;
  int64_t n = run->args.n, rows = sv_rows(run), k = n / 2;
  run->bad_minor = k + 1;
  if (!general(run)) {
    chk_set(t, run->A, n, k, k, -10.0 * (double)n);
    return;
  }
  for (int64_t i = 0; i < rows; i++) /* getrs: column k zero; gels: column k = column 0 */
    chk_set(t, run->A, rows, i, k, run->args.routine == MUSTER_GETRS ? 0 : chk_get(t, run->A, rows, i, 0));
}

/* run->dup and run->col_decades on the generated A (test_solve.h). */
static void reshape(sv_run_t *run) {
  muster_dtype_t t = run->args.dtype;
  int64_t n = run->args.n, rows = sv_rows(run), k = n / 2;
  for (int64_t j = 0; run->col_decades != 0 && j < n; j++) {
    double s = pow(10.0, run->col_decades * (n > 1 ? 2.0 * (double)j / (double)(n - 1) - 1.0 : 0.0));
    for (int64_t i = 0; i < rows; i++) chk_set(t, run->A, rows, i, j, s * chk_get(t, run->A, rows, i, j));
  }
  if (run->dup == 0) return;
  run->bad_minor = k + 1;
  for (int64_t i = 0; i < rows; i++) chk_set(t, run->A, rows, i, k, run->dup * chk_get(t, run->A, rows, i, 1));
}

static void generate(sv_run_t *run) {
  muster_dtype_t t = run->args.dtype;
  int64_t n = run->args.n, nrhs = nrhs_of(run), rows = sv_rows(run);
  size_t esz = esz_of(run);
  run->A = calloc((size_t)(rows * n), esz);
  run->B = calloc((size_t)(rows * nrhs), esz);
  ASSERT(run->A && run->B);
  chk_rng_t rng;
  chk_seed(&rng, run->seed);
  if (general(run) && (run->plain || factors(run))) chk_random_dense(t, rows, n, &rng, run->A, rows);
  else if (general(run)) chk_random_general(t, rows, n, &rng, run->A, rows);
  else chk_random_hermitian(t, n, run->args.routine != MUSTER_SYEVD, &rng, run->A, n);
  chk_random_dense(t, rows, nrhs, &rng, run->B, rows);
  if (run->not_spd) spoil(run);
  reshape(run);
  if (run->make_nan) chk_set(t, run->A, rows, (rows < n ? rows : n) - 1, n - 1, NAN);
}

static void alloc_shared(sv_run_t *run) {
  int64_t n = run->args.n, nrhs = nrhs_of(run), rows = sv_rows(run);
  size_t esz = esz_of(run);
  size_t outb = sizeof(sv_rank_out_t) * (size_t)run->R;
  size_t fullb = (size_t)(rows * n) * esz, xb = (size_t)(run->R * rows * nrhs) * esz,
         wb = (size_t)(run->R * n) * sizeof(double);
  run->shared_bytes = outb + fullb + xb + wb;
  char *m = mmap(NULL, run->shared_bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  ASSERT(m != MAP_FAILED);
  run->out = (sv_rank_out_t *)m;
  run->full = m + outb;
  run->X = m + outb + fullb;
  run->W = m + outb + fullb + xb;
}

typedef struct rank_arg {
  sv_run_t *run;
  int rank;
  char group[64];
} rank_arg_t;

static void *shard_mem(const sv_run_t *run, size_t bytes) {
  void *p = NULL;
  if (run->processes) {
    ASSERT_OK(muster_shard_alloc(bytes, &p));
    memset(p, 0, bytes);
  } else {
    p = calloc(1, bytes);
    ASSERT(p);
  }
  return p;
}

static void shard_release(const sv_run_t *run, void *p) {
  if (run->processes) muster_shard_free(p);
  else free(p);
}

/* What one participant does. */
static void rank_main(rank_arg_t *ra) {
  sv_run_t *run = ra->run;
  int rank = ra->rank, R = run->R;
  int64_t n = run->args.n, nrhs = nrhs_of(run), rows = sv_rows(run), ld = rows + run->pad;
  int64_t ldb = muster_routine_takes(run->args.routine) & MUSTER_TAKES_M ? rows : ld; /* m is ldb */
  size_t esz = esz_of(run);
  int64_t S = (n + R - 1) / R;
  int64_t col0 = (int64_t)rank * S < n ? (int64_t)rank * S : n;
  int64_t ncols = n - col0 < S ? n - col0 : S;
  muster_shard_t sh;
  memset(&sh, 0, sizeof sh);
  sh.mem = MUSTER_MEM_HOST;
  sh.device = -1;
  sh.col0 = col0;
  sh.ncols = ncols;
  sh.lda = ld;
  sh.ldb = ldb;
  sh.a = shard_mem(run, (size_t)(ld * (ncols > 0 ? ncols : 1)) * esz);
  sh.b = shard_mem(run, (size_t)(ldb * nrhs) * esz);
  sh.w = shard_mem(run, (size_t)n * sizeof(double));
  muster_copy_cols(sh.a, ld, (char *)run->A + (size_t)(col0 * rows) * esz, rows, rows, ncols, esz);
  muster_copy_cols(sh.b, ldb, run->B, rows, rows, nrhs, esz);
  muster_solve_args_t args = run->args;
  void *a0 = sh.a, *b0 = sh.b, *w0 = sh.w;
  if (run->tweak) run->tweak(run, rank, &args, &sh);

  sv_rank_out_t *o = &run->out[rank];
  muster_group_t *g = NULL;
  muster_group_opts_t opts = {.job = NULL, .timeout_s = 10, .device = -1};
  int rc = muster_group_join(ra->group, rank, R, &opts, &g);
  if (rc == 0) rc = muster_solve(g, &args, &sh, &o->res);
  o->t_return = test_now();
  o->rc = rc;
  snprintf(o->msg, sizeof o->msg, "%s", rc ? muster_last_error() : "");
  if (g) muster_group_leave(g);
  /* hand back what this rank holds */
  muster_copy_cols((char *)run->full + (size_t)(col0 * rows) * esz, rows, a0, ld, rows, ncols, esz);
  muster_copy_cols((char *)run->X + (size_t)(rank * nrhs * rows) * esz, rows, b0, ldb, rows, nrhs, esz);
  memcpy((char *)run->W + (size_t)(rank * n) * sizeof(double), w0, (size_t)n * sizeof(double));
  __atomic_store_n(&o->done, 1, __ATOMIC_RELEASE);
  shard_release(run, a0);
  shard_release(run, b0);
  shard_release(run, w0);
}

static void *rank_thread(void *p) {
  rank_main(p);
  return NULL;
}

int sv_run(sv_run_t *run) {
#ifdef __SANITIZE_THREAD__
  /* OpenBLAS is not instrumented: its own thread pool's hand-offs look like
   * races to TSan.  Keep it in the calling thread (read when lapack.so is
   * first loaded, in this process); our own threads are still checked. */
  setenv("OPENBLAS_NUM_THREADS", "1", 0);
#endif
  if (nrhs_of(run) < 1) run->args.nrhs = 2;
  if (run->args.routine == MUSTER_GELS && run->m == 0) run->m = 2 * run->args.n;
  if (factors(run) && run->m == 0) run->m = run->args.n;
  generate(run);
  alloc_shared(run);
  rank_arg_t ra[MUSTER_MAX_RANKS];
  char group[64];
  snprintf(group, sizeof group, "sv%d_%d", (int)getpid(), atomic_fetch_add(&run_counter, 1));
  for (int r = 0; r < run->R; r++) {
    ra[r].run = run;
    ra[r].rank = r;
    snprintf(ra[r].group, sizeof ra[r].group, "%s", group);
  }
  if (!run->processes) {
    pthread_t t[MUSTER_MAX_RANKS];
    for (int r = 0; r < run->R; r++) ASSERT(pthread_create(&t[r], NULL, rank_thread, &ra[r]) == 0);
    for (int r = 0; r < run->R; r++) pthread_join(t[r], NULL);
    return 0;
  }
  pid_t pids[MUSTER_MAX_RANKS];
  fflush(stdout);
  fflush(stderr);
  for (int r = 0; r < run->R; r++) {
    pids[r] = fork();
    ASSERT(pids[r] >= 0);
    if (pids[r] == 0) {
      if (r == 0 && run->env_leader) putenv((char *)run->env_leader);
      rank_main(&ra[r]);
      _exit(0);
    }
  }
  if (run->kill_leader_after_s > 0) {
    usleep((useconds_t)(run->kill_leader_after_s * 1e6));
    run->t_kill = test_now();
    kill(pids[0], SIGKILL);
  }
  for (int r = 0; r < run->R; r++) {
    int st;
    ASSERT(waitpid(pids[r], &st, 0) == pids[r]);
  }
  return 0;
}

int sv_same_outcome(const sv_run_t *run) {
  int first = (run->kill_leader_after_s > 0 || run->leader_dies) ? 1 : 0; /* a dead leader said nothing */
  for (int r = first; r < run->R; r++) {
    if (!run->out[r].done) {
      fprintf(stderr, "rank %d never returned\n", r);
      return -1;
    }
    if (run->out[r].rc != run->out[first].rc || strcmp(run->out[r].msg, run->out[first].msg)) {
      fprintf(stderr, "rank %d: %d \"%s\"; rank %d: %d \"%s\"\n", first, run->out[first].rc,
              run->out[first].msg, r, run->out[r].rc, run->out[r].msg);
      return -1;
    }
  }
  return 0;
}

/* INFINITY unless every rank's log det equals rank 0's and the reference. */
static double logdet_residual(const sv_run_t *run) {
  muster_dtype_t t = run->args.dtype;
  int64_t n = run->args.n;
  double ref = chk_logdet_hpd(t, n, run->A, n), got = chk_get_real(t, run->W, 0);
  if (!(fabs(got - ref) <= chk_logdet_tolerance(t, n, ref))) {
    fprintf(stderr, "log det %.17g, reference %.17g: off by %g > %g\n", got, ref, fabs(got - ref),
            chk_logdet_tolerance(t, n, ref));
    return INFINITY;
  }
  return 0;
}

double sv_residual(const sv_run_t *run) {
  muster_dtype_t t = run->args.dtype;
  int64_t n = run->args.n, nrhs = nrhs_of(run), rows = sv_rows(run);
  size_t esz = esz_of(run), wsz = muster_dtype_real_size(t);
  int64_t nw = run->args.routine == MUSTER_SYEVD ? n : (run->args.flags & MUSTER_LOGDET) ? 1 : 0;
  if (run->args.routine == MUSTER_GESVD) nw = rows < n ? rows : n;
  /* every rank got the same X / W */
  for (int r = 1; r < run->R; r++) {
    if ((muster_routine_takes(run->args.routine) & MUSTER_TAKES_B) &&
        memcmp(run->X, (char *)run->X + (size_t)(r * rows * nrhs) * esz, (size_t)(rows * nrhs) * esz))
      return INFINITY;
    if (memcmp(run->W, (char *)run->W + (size_t)(r * n) * sizeof(double), (size_t)nw * wsz))
      return INFINITY;
  }
  if ((run->args.flags & MUSTER_LOGDET) && logdet_residual(run) != 0) return INFINITY;
  if (factors(run))
    return chk_factors(t, run->args.routine, run->args.flags, rows, n, run->A, run->full, run->X, run->W);
  switch (run->args.routine) {
  case MUSTER_POTRS: return chk_potrs(t, n, nrhs, run->A, n, run->X, n, run->B, n);
  case MUSTER_GETRS: return chk_getrs(t, n, nrhs, run->A, n, run->X, n, run->B, n);
  case MUSTER_GELS: return chk_gels(t, rows, n, nrhs, run->A, rows, run->X, rows, run->B, rows);
  case MUSTER_POTRI: return chk_potri(t, n, run->A, n, run->full, n);
  default:
    return chk_syevd(t, n, run->A, n, (run->args.flags & MUSTER_NO_VECTORS) ? NULL : run->full, n,
                     run->W);
  }
}

int64_t sv_odd_tile(int64_t n, int R) {
  int64_t tiles[256];
  int64_t k = muster_layout_valid_tiles(n, R, tiles, 256);
  for (int64_t i = (k < 256 ? k : 256) - 1; i >= 0; i--)
    if (n % tiles[i] != 0) return tiles[i];
  return k > 0 ? tiles[k < 256 ? k - 1 : 255] : 0;
}

void sv_free(sv_run_t *run) {
  free(run->A);
  free(run->B);
  if (run->out) munmap(run->out, run->shared_bytes);
  run->A = run->B = NULL;
  run->out = NULL;
}

void sv_expect_ok(muster_routine_t r, muster_dtype_t t, int64_t n, int R, int processes,
                  int64_t tile, uint64_t seed) {
  sv_expect_ok_x(r, t, n, 0, 0, R, processes, tile, seed);
}

void sv_expect_ok_x(muster_routine_t r, muster_dtype_t t, int64_t n, int64_t m, unsigned flags,
                    int R, int processes, int64_t tile, uint64_t seed) {
  sv_run_t run;
  memset(&run, 0, sizeof run);
  run.args.routine = r;
  run.args.dtype = t;
  run.args.n = n;
  run.args.flags = flags;
  run.m = m;
  run.args.nrhs = 3;
  run.args.tile = tile;
  run.R = R;
  run.processes = processes;
  run.seed = seed;
  run.pad = (n % 3 == 0) ? 2 : 0; /* sometimes lda > n */
  sv_run(&run);
  if (sv_same_outcome(&run) != 0 || run.out[0].rc != 0) {
    fprintf(stderr, "%s %s n=%" PRId64 " R=%d %s tile=%" PRId64 ": rc %d: %s\n",
            muster_routine_name(r), muster_dtype_name(t), n, R, processes ? "processes" : "threads",
            tile, run.out[0].rc, run.out[0].msg);
    ASSERT(0);
  }
  double res = sv_residual(&run), tol = chk_routine_tolerance(r, t, sv_rows(&run));
  if (!(res < tol)) {
    fprintf(stderr, "%s %s n=%" PRId64 " R=%d %s: residual %g >= tol %g\n", muster_routine_name(r),
            muster_dtype_name(t), n, R, processes ? "processes" : "threads", res, tol);
    ASSERT(0);
  }
  ASSERT(strcmp(run.out[0].res.provider, "lapack") == 0);
  ASSERT_GT(run.out[0].res.tile, 0);
  sv_free(&run);
}

void sv_expect_error(const char *name, muster_routine_t routine, unsigned flags, sv_tweak_fn tweak,
                     int code, const char *needle, int processes) {
  sv_run_t run;
  memset(&run, 0, sizeof run);
  run.args.routine = routine;
  run.args.dtype = MUSTER_F64;
  run.args.flags = flags;
  run.args.n = 30;
  run.args.nrhs = 2;
  run.R = 3;
  run.processes = processes;
  run.seed = 5;
  run.tweak = tweak;
  double t0 = test_now();
  sv_run(&run);
  double dt = test_now() - t0;
  if (sv_same_outcome(&run) != 0 || run.out[0].rc != code || !strstr(run.out[0].msg, needle)) {
    fprintf(stderr, "case '%s' (%s): rank 0 got %d (%s) \"%s\", want %d with \"%s\"\n", name,
            processes ? "processes" : "threads", run.out[0].rc, muster_strerror(run.out[0].rc),
            run.out[0].msg, code, needle);
    ASSERT(0);
  }
  ASSERT_DBL_LT(dt, 5.0); /* an error, not a timeout */
  sv_free(&run);
  ASSERT_EQ(test_count_job_segments(test_job()), 0);
}
