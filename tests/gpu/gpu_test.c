/*
 * tests/gpu/gpu_test.c - the GPU test command (docs/gpu-testing.md).
 *
 *   gpu-test [--only SUBSTR] [--max-gpus R] [--no-kill] [--list]
 *
 * Runs, through the public API (muster_solve / muster_solve_all and
 * muster_run_on_devices) and the cusolvermg provider:
 *   every routine (potrs, potri, syevd, syevd values only) x dtype (f32,
 *   f64, c64, c128) x mode (threads, processes, all = muster_solve_all) x
 *   GPU count (1, 2, 4 when there) x shape (n aligned to the tile and
 *   relayout in place; n not aligned, lda > n, relayout through a copy; the
 *   provider's own tile choice), each solved twice on fresh random matrices
 *   (the second solve must create nothing: no handle, descriptor, buffer,
 *   peer enable or IPC open), results checked by residuals that regenerate
 *   A on the GPU; a not-positive-definite matrix (ENOTPD, info 1); and, in
 *   process mode, a rank SIGKILLed in the middle of a solve (non-leader and
 *   leader): the survivor fails with an error naming the dead peer, in
 *   bounded time, and /dev/shm holds nothing of the job afterwards.
 * Every case runs in a forked child (CUDA is never initialized in the
 * parent, so process-mode cases can fork their ranks).  Prints one line per
 * case and "N passed, M failed"; exit 1 on any failure.
 */
#include <ctype.h>
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

#include "gpu_util.h"
#include "muster.h"

#define TOL 30.0 /* residual ratios (LAPACK style: scaled by norms, n, eps) */

enum { M_THREADS, M_PROCS, M_ALL };
static const char *mode_name[] = {"threads", "processes", "all"};

typedef struct tcase {
  char name[128];
  muster_routine_t routine;
  muster_dtype_t dtype;
  int mode, R;
  int64_t n, lda_extra, nrhs, tile;
  unsigned flags;
  double shift;    /* diagonal shift; n: SPD, 0: syevd, -n: not PD */
  int expect;      /* 0 or the MUSTER_E* code expected */
  int reps;
} tcase_t;

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* ---- provider counters (the provider exports muster_cusolvermg_stats) ---- */

/* The registry may load the provider under any name (it uses
 * /proc/self/fd/N): find the loaded object that exports the counters. */
typedef struct stats_find {
  int (*fn)(uint64_t *, int);
} stats_find_t;

static int find_cb(struct dl_phdr_info *info, size_t size, void *data) {
  stats_find_t *f = data;
  (void)size;
  if (!info->dlpi_name || !info->dlpi_name[0]) return 0;
  void *h = dlopen(info->dlpi_name, RTLD_NOW | RTLD_NOLOAD);
  if (!h) return 0;
  f->fn = (int (*)(uint64_t *, int))dlsym(h, "muster_cusolvermg_stats");
  dlclose(h); /* NOLOAD took a reference of its own: give it back */
  return f->fn != NULL;
}

static int stats(uint64_t out[8]) {
  stats_find_t f = {NULL};
  memset(out, 0, 8 * sizeof out[0]);
  dl_iterate_phdr(find_cb, &f);
  if (!f.fn) return -1;
  f.fn(out, 8);
  return 0;
}
static const char *stat_names[8] = {"handles", "descs", "allocs", "peer", "ipc_opens", "ipc_closes", "solves", "ops"};

/* ---- one rank's shard ---------------------------------------------------- */

typedef struct rank_buf {
  int device;
  int64_t col0, ncols, lda;
  void *a, *b, *b0, *w;
} rank_buf_t;

#define CK(call)                                                                              \
  do {                                                                                        \
    cudaError_t st_ = (call);                                                                 \
    if (st_ != cudaSuccess) {                                                                 \
      fprintf(stderr, "    %s: %s:%d %s: %s\n", c->name, __FILE__, __LINE__, #call, cudaGetErrorString(st_)); \
      return 1;                                                                               \
    }                                                                                         \
  } while (0)

static int64_t block_w(const tcase_t *c) { return (c->n + c->R - 1) / c->R; }

static int buf_alloc(const tcase_t *c, int rank, int device, rank_buf_t *rb) {
  int64_t S = block_w(c);
  memset(rb, 0, sizeof *rb);
  rb->device = device;
  rb->col0 = rank * S < c->n ? rank * S : c->n;
  rb->ncols = c->n - rb->col0 < S ? c->n - rb->col0 : S;
  rb->lda = c->n + c->lda_extra;
  size_t esz = gu_esz(c->dtype);
  CK(cudaSetDevice(device));
  CK(cudaMalloc(&rb->a, (size_t)(rb->lda * (rb->ncols > 0 ? rb->ncols : 1)) * esz));
  CK(cudaMalloc(&rb->b, (size_t)(c->n * c->nrhs) * esz));
  CK(cudaMalloc(&rb->b0, (size_t)(c->n * c->nrhs) * esz));
  CK(cudaMalloc(&rb->w, (size_t)c->n * gu_rsz(c->dtype)));
  return 0;
}

static void buf_free(rank_buf_t *rb) {
  cudaSetDevice(rb->device);
  cudaFree(rb->a);
  cudaFree(rb->b);
  cudaFree(rb->b0);
  cudaFree(rb->w);
}

/* Fresh random matrices every run: GPU_TEST_SEED (set once by main, from the
 * clock, inherited by every child so all ranks of a case agree), mixed
 * with the case and the repetition. */
static uint64_t seed_of(const tcase_t *c, int rep) {
  const char *e = getenv("GPU_TEST_SEED");
  uint64_t base = e ? strtoull(e, NULL, 0) : 1;
  return base ^ ((uint64_t)c->n * 1000003u + (uint64_t)rep * 7919u + (uint64_t)c->dtype * 31u +
                 (uint64_t)c->routine * 131u + (uint64_t)c->R);
}

static int buf_fill(const tcase_t *c, rank_buf_t *rb, uint64_t seed) {
  gu_cols_t cols = {0, c->R, 0, rb->col0, 0};
  CK(cudaSetDevice(rb->device));
  CK(gu_fill_matrix(c->dtype, rb->a, rb->lda, c->n, rb->ncols, cols, seed, c->shift, 0));
  CK(gu_fill_vectors(c->dtype, rb->b, c->n, c->n, c->nrhs, seed + 1, 0));
  CK(gu_fill_vectors(c->dtype, rb->b0, c->n, c->n, c->nrhs, seed + 1, 0));
  CK(cudaMemset(rb->w, 0xff, (size_t)c->n * gu_rsz(c->dtype))); /* NaN until written */
  CK(cudaDeviceSynchronize());
  return 0;
}

static muster_shard_t shard_of(const tcase_t *c, const rank_buf_t *rb) {
  muster_shard_t s;
  memset(&s, 0, sizeof s);
  s.mem = MUSTER_MEM_CUDA;
  s.device = rb->device;
  s.a = rb->a;
  s.lda = rb->lda;
  s.col0 = rb->col0;
  s.ncols = rb->ncols;
  s.b = c->routine == MUSTER_POTRS ? rb->b : NULL;
  s.ldb = c->n;
  s.w = c->routine == MUSTER_SYEVD ? rb->w : NULL;
  s.stream = NULL;
  return s;
}

static muster_solve_args_t args_of(const tcase_t *c) {
  muster_solve_args_t a;
  memset(&a, 0, sizeof a);
  a.routine = c->routine;
  a.dtype = c->dtype;
  a.n = c->n;
  a.nrhs = c->nrhs;
  a.tile = c->tile;
  a.layout = MUSTER_LAYOUT_BLOCK;
  a.flags = c->flags;
  a.provider = "cusolvermg";
  return a;
}

/* Check this rank's results; prints and returns 1 on failure. */
static int buf_check(const tcase_t *c, int rank, rank_buf_t *rb, uint64_t seed) {
  double eps = gu_eps(c->dtype), o[4] = {0, 0, 0, 0}, ratio = 0, ratio2 = 0;
  gu_cols_t cols = {0, c->R, rank, rb->col0, 0};
  CK(cudaSetDevice(rb->device));
  if (c->routine == MUSTER_POTRS) {
    CK(gu_check_potrs(c->dtype, c->n, c->nrhs, rb->b, c->n, rb->b0, c->n, seed, c->shift, o));
    ratio = o[0] / (o[2] * o[1] * (double)c->n * eps);
  } else if (c->routine == MUSTER_POTRI) {
    if (rb->ncols == 0) return 0;
    CK(gu_check_potri(c->dtype, c->n, rb->a, rb->lda, rb->ncols, cols, seed, c->shift, o));
    ratio = o[0] / (o[2] * o[1] * (double)c->n * eps);
  } else {
    size_t rsz = gu_rsz(c->dtype);
    double *w = malloc((size_t)c->n * sizeof(double));
    char *raw = malloc((size_t)c->n * rsz);
    if (!w || !raw) return 1;
    CK(cudaMemcpy(raw, rb->w, (size_t)c->n * rsz, cudaMemcpyDeviceToHost));
    for (int64_t k = 0; k < c->n; k++) w[k] = rsz == 4 ? ((float *)raw)[k] : ((double *)raw)[k];
    int ascending = 1;
    for (int64_t k = 1; k < c->n; k++)
      if (!(w[k - 1] <= w[k])) ascending = 0;
    if (!ascending) {
      fprintf(stderr, "    rank %d: eigenvalues not ascending (or NaN)\n", rank);
      free(w);
      free(raw);
      return 1;
    }
    if (c->flags & MUSTER_NO_VECTORS) {
      double tf[2], sw = 0, sw2 = 0;
      CK(gu_trace_frob(c->dtype, c->n, seed, c->shift, tf));
      for (int64_t k = 0; k < c->n; k++) {
        sw += w[k];
        sw2 += w[k] * w[k];
      }
      ratio = fabs(sw - tf[0]) / (sqrt(tf[1]) * (double)c->n * eps);
      ratio2 = fabs(sw2 - tf[1]) / (tf[1] * (double)c->n * eps);
    } else if (rb->ncols > 0) {
      CK(gu_check_syevd(c->dtype, c->n, rb->a, rb->lda, rb->ncols, cols, rb->w, seed, c->shift, o));
      ratio = o[0] / (o[3] * (double)c->n * eps);
      ratio2 = (o[1] > o[2] ? o[1] : o[2]) / ((double)c->n * eps);
    }
    free(w);
    free(raw);
  }
  if (!(ratio < TOL) || !(ratio2 < TOL)) {
    fprintf(stderr, "    %s rank %d: residual ratio %.3g / %.3g (limit %.0f) raw %.3g %.3g %.3g %.3g\n", c->name,
            rank, ratio, ratio2, TOL, o[0], o[1], o[2], o[3]);
    return 1;
  }
  if (getenv("GPU_TEST_VERBOSE"))
    fprintf(stderr, "    %s rank %d: ratio %.3g %.3g\n", c->name, rank, ratio, ratio2);
  return 0;
}

/* Compare counters around the second solve: nothing may be created. */
static int check_no_creation(const tcase_t *c, const uint64_t before[8], const uint64_t after[8]) {
  int bad = 0;
  for (int k = 0; k < 5; k++)
    if (after[k] != before[k]) {
      fprintf(stderr, "    %s: second solve created %s (%llu -> %llu)\n", c->name, stat_names[k],
              (unsigned long long)before[k], (unsigned long long)after[k]);
      bad = 1;
    }
  if (after[6] != before[6] + 1) {
    fprintf(stderr, "    %s: provider solves %llu -> %llu, expected +1\n", c->name, (unsigned long long)before[6],
            (unsigned long long)after[6]);
    bad = 1;
  }
  return bad;
}

static int check_rc(const tcase_t *c, int rank, int rc, const muster_solve_result_t *res) {
  if (rc != c->expect) {
    fprintf(stderr, "    %s rank %d: muster_solve returned %d (%s), expected %d: %s\n", c->name, rank, rc,
            muster_strerror(rc), c->expect, muster_last_error());
    return 1;
  }
  if (c->expect == MUSTER_ENOTPD &&
      (res->info != 1 || !strstr(muster_last_error(), "not positive definite (leading minor 1)"))) {
    fprintf(stderr, "    %s rank %d: info=%lld message \"%s\"\n", c->name, rank, (long long)res->info,
            muster_last_error());
    return 1;
  }
  return 0;
}

/* ---- one rank in a group (threads and processes) ------------------------- */

typedef struct rank_ctx {
  const tcase_t *c;
  char group[64];
  int notify_fd; /* processes: written just before the solve (kill tests) */
} rank_ctx_t;

static int rank_main(int rank, int device, void *arg) {
  rank_ctx_t *rc_ = arg;
  const tcase_t *c = rc_->c;
  rank_buf_t rb;
  muster_group_t *g = NULL;
  muster_group_opts_t opts = {NULL, 0, device};
  int fail = 0;
  if (buf_alloc(c, rank, device, &rb)) return 1;
  if (muster_group_join(rc_->group, rank, c->R, &opts, &g) != 0) {
    fprintf(stderr, "    %s rank %d: join: %s\n", c->name, rank, muster_last_error());
    buf_free(&rb);
    return 1;
  }
  muster_solve_args_t a = args_of(c);
  for (int rep = 0; rep < c->reps && !fail; rep++) {
    uint64_t seed = seed_of(c, rep);
    if (buf_fill(c, &rb, seed)) {
      fail = 1;
      break;
    }
    muster_shard_t s = shard_of(c, &rb);
    muster_solve_result_t res;
    uint64_t st0[8], st1[8];
    stats(st0);
    if (rc_->notify_fd >= 0) {
      char x = 'x';
      if (write(rc_->notify_fd, &x, 1) != 1) return 1;
    }
    double t0 = now_s();
    int rc = muster_solve(g, &a, &s, &res);
    double dt = now_s() - t0;
    stats(st1);
    if (rc_->notify_fd >= 0) { /* kill tests: report, check a success, leave */
      printf("    rank %d: muster_solve returned %d (%s) after %.2f s: %s\n", rank, rc, muster_strerror(rc), dt,
             muster_last_error());
      fflush(stdout);
      int bad = rc == 0 ? buf_check(c, rank, &rb, seed) : 0;
      if (rc == 0) printf("    rank %d: its results %s\n", rank, bad ? "are WRONG" : "check out");
      muster_group_leave(g);
      buf_free(&rb);
      return rc == 0 ? (bad ? 99 : 0) : 100 + (-rc);
    }
    fail |= check_rc(c, rank, rc, &res);
    if (!fail && rc == 0) fail |= buf_check(c, rank, &rb, seed);
    if (!fail && rep > 0 && rank == 0 && c->expect == 0) fail |= check_no_creation(c, st0, st1);
  }
  muster_group_leave(g);
  buf_free(&rb);
  return fail;
}

static int group_seq; /* one group name per case run in this process */

static int run_threads(const tcase_t *c, const int *devs) {
  rank_ctx_t rc_ = {c, "", -1};
  snprintf(rc_.group, sizeof rc_.group, "gputest.%d.%d", (int)getpid(), ++group_seq);
  int rc = muster_run_on_devices(c->R, devs, rank_main, &rc_);
  if (rc != 0) fprintf(stderr, "    %s: %d %s\n", c->name, rc, muster_last_error());
  return rc != 0;
}

static int run_procs(const tcase_t *c, const int *devs) {
  pid_t pids[16];
  rank_ctx_t rc_ = {c, "", -1};
  snprintf(rc_.group, sizeof rc_.group, "gputest.%d.%d", (int)getpid(), ++group_seq);
  for (int r = 0; r < c->R; r++) {
    pids[r] = fork();
    if (pids[r] == 0) {
      int rc = cudaSetDevice(devs[r]) == cudaSuccess ? rank_main(r, devs[r], &rc_) : 1;
      fflush(stdout);
      _exit(rc);
    }
  }
  int fail = 0;
  for (int r = 0; r < c->R; r++) {
    int st = 0;
    waitpid(pids[r], &st, 0);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) fail = 1;
  }
  return fail;
}

static int run_all(const tcase_t *c, const int *devs) {
  rank_buf_t rb[16];
  muster_shard_t sh[16];
  int fail = 0;
  muster_solve_args_t a = args_of(c);
  for (int r = 0; r < c->R; r++)
    if (buf_alloc(c, r, devs[r], &rb[r])) return 1;
  for (int rep = 0; rep < c->reps && !fail; rep++) {
    uint64_t seed = seed_of(c, rep);
    for (int r = 0; r < c->R; r++) {
      if (buf_fill(c, &rb[r], seed)) return 1;
      sh[r] = shard_of(c, &rb[r]);
    }
    muster_solve_result_t res;
    uint64_t st0[8], st1[8];
    stats(st0);
    int rc = muster_solve_all(&a, c->R, sh, &res);
    stats(st1);
    fail |= check_rc(c, 0, rc, &res);
    for (int r = 0; r < c->R && !fail && rc == 0; r++) fail |= buf_check(c, r, &rb[r], seed);
    if (!fail && rep > 0 && c->expect == 0) fail |= check_no_creation(c, st0, st1);
  }
  for (int r = 0; r < c->R; r++) buf_free(&rb[r]);
  return fail;
}

static int wait_limited(pid_t pid, double secs, int *status);

/* ---- kill a rank in the middle of a solve ---------------------------------- */

/* Segments of job, of any pid namespace: muster.<uid>.<pidns>.<job>.<group>
 * (runtime/segment.h; this binary links libmuster.so, without the
 * runtime's internal muster__segment_parse_name). */
static int count_job_segments(const char *job) {
  char prefix[32];
  snprintf(prefix, sizeof prefix, "muster.%u.", (unsigned)getuid());
  size_t pl = strlen(prefix), jl = strlen(job);
  DIR *d = opendir("/dev/shm");
  int n = 0;
  struct dirent *e;
  if (!d) return -1;
  while ((e = readdir(d)) != NULL) {
    const char *p = e->d_name + pl;
    if (strncmp(e->d_name, prefix, pl) != 0 || !isdigit((unsigned char)*p)) continue;
    while (isdigit((unsigned char)*p)) p++;
    n += *p == '.' && !strncmp(p + 1, job, jl) && p[1 + jl] == '.';
  }
  closedir(d);
  return n;
}

static int run_kill(const tcase_t *c, const int *devs, int victim) {
  int fd[2];
  pid_t pids[2];
  if (pipe(fd) < 0) return 1;
  rank_ctx_t rc_ = {c, "", fd[1]};
  snprintf(rc_.group, sizeof rc_.group, "gpukill.%d", (int)getpid());
  for (int r = 0; r < 2; r++) {
    pids[r] = fork();
    if (pids[r] == 0) {
      close(fd[0]);
      int rc = cudaSetDevice(devs[r]) == cudaSuccess ? rank_main(r, devs[r], &rc_) : 1;
      fflush(stdout);
      _exit(rc);
    }
  }
  close(fd[1]);
  char x[2];
  int got = 0;
  while (got < 2) { /* both ranks are about to call muster_solve */
    ssize_t k = read(fd[0], x, 2 - got);
    if (k <= 0) break;
    got += (int)k;
  }
  close(fd[0]);
  usleep(1000 * 1000); /* the leader is inside cuSolverMg's syevd (about 3 s) by now */
  double t0 = now_s();
  kill(pids[victim], SIGKILL);
  int survivor = 1 - victim, st = 0, fail = 0;
  waitpid(pids[victim], &st, 0);
  if (wait_limited(pids[survivor], 60.0, &st) < 0) {
    fprintf(stderr, "    %s: survivor still waiting 60 s after the kill\n", c->name);
    return 1;
  }
  double dt = now_s() - t0;
  int code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  printf("    killed rank %d; survivor rank %d exited %d after %.2f s\n", victim, survivor, code, dt);
  /* The leader dead: the survivor must fail (EPEERDEAD).  A non-leader
   * killed while it waits at the final barrier has already arrived there:
   * the runtime then lets the leader finish, which must return either an
   * error or results that check out. */
  if (victim == 0 && code != 100 + (-MUSTER_EPEERDEAD)) {
    fprintf(stderr, "    %s: survivor exit %d, expected %d (EPEERDEAD)\n", c->name, code, 100 - MUSTER_EPEERDEAD);
    fail = 1;
  }
  if (victim != 0 && code != 0 && code < 100) {
    fprintf(stderr, "    %s: leader exit %d (wrong results or crash)\n", c->name, code);
    fail = 1;
  }
  if (dt > 30.0) {
    fprintf(stderr, "    %s: survivor took %.1f s\n", c->name, dt);
    fail = 1;
  }
  const char *job = getenv("MUSTER_JOB");
  int left = count_job_segments(job ? job : "default");
  if (left != 0) {
    fprintf(stderr, "    %s: %d segment(s) of job %s left in /dev/shm\n", c->name, left, job ? job : "default");
    fail = 1;
  }
  return fail;
}

/* Wait for pid up to `secs`; past it, SIGKILL its process group (the case
 * child and its rank processes) and report a failure. */
static int wait_limited(pid_t pid, double secs, int *status) {
  double t0 = now_s();
  for (;;) {
    pid_t r = waitpid(pid, status, WNOHANG);
    if (r == pid) return 0;
    if (r < 0 && errno != EINTR) return -1;
    if (now_s() - t0 > secs) {
      kill(-pid, SIGKILL);
      kill(pid, SIGKILL);
      waitpid(pid, status, 0);
      return -1;
    }
    usleep(20 * 1000);
  }
}

/* ---- the case list --------------------------------------------------------------- */

static tcase_t cases[2048];
static int ncases;

static void add(muster_routine_t rt, unsigned flags, muster_dtype_t dt, int mode, int R, int64_t n,
                int64_t lda_extra, int64_t tile, const char *shape) {
  tcase_t *c = &cases[ncases++];
  memset(c, 0, sizeof *c);
  c->routine = rt;
  c->flags = flags;
  c->dtype = dt;
  c->mode = mode;
  c->R = R;
  c->n = n;
  c->lda_extra = lda_extra;
  c->tile = tile;
  c->nrhs = rt == MUSTER_POTRS ? 3 : 1;
  c->shift = rt == MUSTER_SYEVD ? 0.0 : (double)n;
  c->reps = 2;
  snprintf(c->name, sizeof c->name, "%s%s %s %s R=%d %s n=%lld lda=n+%lld tile=%lld", muster_routine_name(rt),
           flags ? "(values)" : "", muster_dtype_name(dt), mode_name[mode], R, shape, (long long)n,
           (long long)lda_extra, (long long)tile);
}

static void build_cases(int maxR) {
  static const muster_dtype_t dts[4] = {MUSTER_F32, MUSTER_F64, MUSTER_C64, MUSTER_C128};
  int Rs[3] = {1, 2, 4};
  for (int ri = 0; ri < 3; ri++) {
    int R = Rs[ri];
    if (R > maxR) break;
    for (int mode = 0; mode < 3; mode++)
      for (int d = 0; d < 4; d++) {
        if (mode == M_ALL && (dts[d] == MUSTER_F32 || dts[d] == MUSTER_C128)) continue;
        for (int rt = 0; rt < 4; rt++) {
          muster_routine_t r = rt == 0 ? MUSTER_POTRS : rt == 1 ? MUSTER_POTRI : MUSTER_SYEVD;
          unsigned fl = rt == 3 ? MUSTER_NO_VECTORS : 0;
          /* aligned: the block width a multiple of tile*R (the runtime's
           * tile rule, jaxmg's, wants that), in-place relayout */
          int64_t T = R <= 2 ? 256 : 128;
          add(r, fl, dts[d], mode, R, R <= 2 ? 2 * T * R : T * R * R, 0, T, "aligned");
          /* not aligned: odd n, lda > n, the provider's tile (copy or in place) */
          add(r, fl, dts[d], mode, R, 1000 + 7 * R, 5, 0, "unaligned");
        }
        /* n = 1000: a rank's cyclic columns exceed its block (R=2, T=128:
         * 512 > 500; R=4, T=83: 253 > 250): the copy plan */
        if (R > 1) add(MUSTER_POTRS, 0, dts[d], mode, R, 1000, 0, R == 2 ? 128 : 83, "copy-plan");
      }
    /* n = 1000 / 2000: tiles that fill every block exactly, moved in place */
    if (R > 1) add(MUSTER_POTRS, 0, MUSTER_F64, M_THREADS, R, R == 2 ? 1000 : 2000, 0, R == 2 ? 100 : 125, "inplace-plan");
  }
  /* Past 2048 columns: cuSolverMg's own potri, and one potrs call with more
   * than 2048 right-hand sides, are wrong on 2+ GPUs (mg-rhs-probe); the
   * provider solves in panels of 2048.  Panels spanning several tiles
   * (tile 256), a panel inside one tile (tile 4096), the provider's tile
   * with lda > n, and potrs with nrhs > 2048 on a tile > 2048. */
  if (maxR >= 2) {
    add(MUSTER_POTRI, 0, MUSTER_C64, M_PROCS, 2, 4096, 0, 256, "rhs-panels");
    add(MUSTER_POTRI, 0, MUSTER_F64, M_THREADS, 2, 8192, 0, 4096, "rhs-panels");
    add(MUSTER_POTRI, 0, MUSTER_F64, M_PROCS, 2, 4100, 3, 0, "rhs-panels");
    add(MUSTER_POTRS, 0, MUSTER_F64, M_THREADS, 2, 8192, 0, 4096, "rhs-panels");
    cases[ncases - 1].nrhs = 2100;
  }
  /* not positive definite */
  for (int mode = 0; mode < 3; mode++)
    for (int R = 1; R <= (maxR >= 2 ? 2 : 1); R++) {
      add(MUSTER_POTRS, 0, MUSTER_F64, mode, R, 512, 0, 128, "not-PD");
      cases[ncases - 1].shift = -512;
      cases[ncases - 1].expect = MUSTER_ENOTPD;
      add(MUSTER_POTRI, 0, MUSTER_C64, mode, R, 600, 3, 0, "not-PD");
      cases[ncases - 1].shift = -600;
      cases[ncases - 1].expect = MUSTER_ENOTPD;
    }
}

static int child_case(const tcase_t *c, int ndev) {
  int devs[16];
  for (int r = 0; r < 16; r++) devs[r] = r % (ndev > 0 ? ndev : 1);
  if (c->mode == M_THREADS) return run_threads(c, devs);
  if (c->mode == M_PROCS) return run_procs(c, devs);
  return run_all(c, devs);
}

static int gpu_count(void) { /* in a child: CUDA stays uninitialized here */
  int fd[2], n = 0;
  if (pipe(fd) < 0) return 0;
  pid_t p = fork();
  if (p == 0) {
    int k = 0;
    if (cudaGetDeviceCount(&k) != cudaSuccess) k = 0;
    if (write(fd[1], &k, sizeof k) != sizeof k) _exit(1);
    _exit(0);
  }
  close(fd[1]);
  if (read(fd[0], &n, sizeof n) != sizeof n) n = 0;
  close(fd[0]);
  waitpid(p, NULL, 0);
  return n;
}

int main(int argc, char **argv) {
  const char *only = NULL;
  int maxR = 4, kills = 1, list = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--only") && i + 1 < argc) only = argv[++i];
    else if (!strcmp(argv[i], "--max-gpus") && i + 1 < argc) maxR = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--no-kill")) kills = 0;
    else if (!strcmp(argv[i], "--list")) list = 1;
    else {
      fprintf(stderr, "usage: gpu-test [--only SUBSTR] [--max-gpus R] [--no-kill] [--list]\n");
      return 2;
    }
  }
  char job[64];
  snprintf(job, sizeof job, "gputest%d", (int)getpid());
  setenv("MUSTER_JOB", job, 0);
  setenv("MUSTER_PROVIDER", "cusolvermg", 0);
  setenv("NCCL_NVLS_ENABLE", "0", 0);
  char seed[32];
  snprintf(seed, sizeof seed, "%llu", (unsigned long long)time(NULL) * 2654435761ull ^ (unsigned long long)getpid());
  setenv("GPU_TEST_SEED", seed, 0);
  printf("# GPU_TEST_SEED=%s MUSTER_JOB=%s\n", getenv("GPU_TEST_SEED"), getenv("MUSTER_JOB"));
  int ndev = list ? 4 : gpu_count();
  if (!list && ndev < 1) {
    fprintf(stderr, "gpu-test: no CUDA device here\n");
    return 1;
  }
  if (maxR > ndev) maxR = ndev;
  build_cases(maxR);
  int passed = 0, failed = 0;
  double t_all = now_s();
  /* threads and all-mode cases: one child runs them in turn (one CUDA
   * start-up for all); it reports each case on a pipe */
  int fd[2];
  if (!list && pipe(fd) == 0) {
    fflush(stdout);
    pid_t p = fork();
    if (p == 0) {
      setpgid(0, 0);
      close(fd[0]);
      for (int k = 0; k < ncases; k++) {
        tcase_t *c = &cases[k];
        if (c->mode == M_PROCS || (only && !strstr(c->name, only))) continue;
        double t0 = now_s();
        int ok = child_case(c, ndev) == 0;
        char line[256];
        int len = snprintf(line, sizeof line, "%s %d - %s (%.2fs)\n", ok ? "ok" : "not ok", k + 1, c->name,
                           now_s() - t0);
        if (write(fd[1], line, (size_t)len) != len) _exit(3);
      }
      _exit(0);
    }
    setpgid(p, p);
    close(fd[1]);
    FILE *f = fdopen(fd[0], "r");
    char line[256];
    int seen = 0, expected = 0;
    for (int k = 0; k < ncases; k++)
      if (cases[k].mode != M_PROCS && (!only || strstr(cases[k].name, only))) expected++;
    while (f && fgets(line, sizeof line, f)) { /* the child dies with the group on timeout */
      fputs(line, stdout);
      fflush(stdout);
      seen++;
      if (!strncmp(line, "ok", 2)) passed++;
      else failed++;
    }
    if (f) fclose(f);
    int st = 0;
    if (wait_limited(p, 5.0, &st) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0 || seen < expected) {
      printf("not ok - threads/all batch ended early (%d of %d cases reported)\n", seen, expected);
      failed += expected - seen > 0 ? expected - seen : 1;
    }
  }
  for (int k = 0; k < ncases; k++) {
    tcase_t *c = &cases[k];
    if (only && !strstr(c->name, only)) continue;
    if (list) {
      printf("%s\n", c->name);
      continue;
    }
    if (c->mode != M_PROCS) continue;
    double t0 = now_s();
    fflush(stdout);
    pid_t p = fork();
    if (p == 0) {
      setpgid(0, 0);
      _exit(child_case(c, ndev));
    }
    setpgid(p, p);
    int st = 0;
    int timed_out = wait_limited(p, 90.0, &st) < 0;
    int ok = !timed_out && WIFEXITED(st) && WEXITSTATUS(st) == 0;
    if (timed_out) fprintf(stderr, "    %s: timed out after 90 s\n", c->name);
    printf("%s %d - %s (%.2fs)\n", ok ? "ok" : "not ok", k + 1, c->name, now_s() - t0);
    ok ? passed++ : failed++;
  }
  if (kills && ndev >= 2 && !list && (!only || strstr("kill", only))) {
    for (int victim = 1; victim >= 0; victim--) {
      tcase_t c;
      memset(&c, 0, sizeof c);
      c.routine = MUSTER_SYEVD;
      c.dtype = MUSTER_F64;
      c.mode = M_PROCS;
      c.R = 2;
      c.n = 12288;
      c.tile = 1024;
      c.nrhs = 1;
      c.reps = 1;
      snprintf(c.name, sizeof c.name, "kill rank %d (%s) mid-solve: syevd f64 processes R=2 n=12288", victim,
               victim ? "non-leader" : "leader");
      double t0 = now_s();
      fflush(stdout);
      pid_t p = fork();
      if (p == 0) {
        int devs[2] = {0, 1};
        setpgid(0, 0);
        _exit(run_kill(&c, devs, victim));
      }
      setpgid(p, p);
      int st = 0;
      int ok = wait_limited(p, 150.0, &st) == 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0;
      printf("%s - %s (%.2fs)\n", ok ? "ok" : "not ok", c.name, now_s() - t0);
      ok ? passed++ : failed++;
    }
  }
  if (!list) printf("%d passed, %d failed (%.1f s, %d GPU(s))\n", passed, failed, now_s() - t_all, ndev);
  return failed ? 1 : 0;
}
