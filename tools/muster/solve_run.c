/* tools/muster/solve_run.c - see solve_run.h. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "solve_run.h"

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

double sr_median(double *v, int n) {
  if (n <= 0) return 0;
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* What every rank shares with the driver (MAP_SHARED in process mode). */
typedef struct rank_out {
  int rc;
  char msg[600];
  muster_solve_result_t res;
  double seconds[SR_MAX_REPS];
  double provider_seconds[SR_MAX_REPS];
} rank_out_t;

typedef struct shared {
  const sr_spec_t *spec;
  const void *A, *B;
  char group[64];
  rank_out_t *outs; /* ranks entries */
  char *full, *X, *W; /* full: n x n; X: ranks blocks of n x nrhs; W: ranks blocks of n doubles */
} shared_t;

static int64_t nrhs_of(const sr_spec_t *s) { return s->routine == MUSTER_POTRS ? s->nrhs : 1; }

static void *mem_alloc(const sr_spec_t *s, size_t bytes) {
  void *p = NULL;
  if (s->processes) {
    if (muster_shard_alloc(bytes, &p) != 0) return NULL;
  } else {
    p = malloc(bytes);
  }
  return p;
}

static void mem_free(const sr_spec_t *s, void *p) {
  if (!p) return;
  if (s->processes) muster_shard_free(p);
  else free(p);
}

static int fail(rank_out_t *o, int rc) {
  o->rc = rc;
  snprintf(o->msg, sizeof o->msg, "%s", muster_last_error());
  return rc;
}

/* One participant: its shard, `reps` timed solves, the results back. */
static int rank_body(int rank, int device, void *arg) {
  shared_t *sh = arg;
  const sr_spec_t *s = sh->spec;
  rank_out_t *o = &sh->outs[rank];
  int64_t n = s->n, nrhs = nrhs_of(s), R = s->ranks;
  size_t esz = muster_dtype_size(s->dtype);
  int64_t S = (n + R - 1) / R;
  int64_t col0 = rank * S < n ? rank * S : n;
  int64_t ncols = n - col0 < S ? n - col0 : S;
  muster_shard_t shard;
  memset(&shard, 0, sizeof shard);
  shard.mem = MUSTER_MEM_HOST;
  shard.device = device;
  shard.col0 = col0;
  shard.ncols = ncols;
  shard.lda = n;
  shard.ldb = n;
  shard.a = mem_alloc(s, (size_t)(n * (ncols > 0 ? ncols : 1)) * esz);
  shard.b = mem_alloc(s, (size_t)(n * nrhs) * esz);
  shard.w = mem_alloc(s, (size_t)n * sizeof(double));
  muster_group_t *g = NULL;
  int rc = 0;
  if (!shard.a || !shard.b || !shard.w) {
    o->rc = MUSTER_ENOMEM;
    snprintf(o->msg, sizeof o->msg, "rank %d: cannot allocate its shard", rank);
    rc = o->rc;
    goto out;
  }
  muster_group_opts_t opts = {.job = NULL, .timeout_s = 0, .device = device};
  if ((rc = muster_group_join(sh->group, rank, (int)R, &opts, &g)) != 0) {
    fail(o, rc);
    goto out;
  }
  muster_solve_args_t args = {.routine = s->routine, .dtype = s->dtype, .n = n, .nrhs = s->nrhs,
                              .tile = s->tile, .layout = MUSTER_LAYOUT_BLOCK, .flags = s->flags,
                              .provider = s->provider};
  for (int rep = -s->warmup; rep < s->reps; rep++) {
    /* the inputs again (the solve overwrote them); not timed */
    if (ncols > 0)
      memcpy(shard.a, (const char *)sh->A + (size_t)(col0 * n) * esz, (size_t)(n * ncols) * esz);
    memcpy(shard.b, sh->B, (size_t)(n * nrhs) * esz);
    if ((rc = muster_group_barrier(g)) != 0) {
      fail(o, rc);
      goto out;
    }
    double t0 = now_s();
    rc = muster_solve(g, &args, &shard, &o->res);
    if (rep >= 0) {
      o->seconds[rep] = now_s() - t0;
      o->provider_seconds[rep] = o->res.seconds;
    }
    if (rc != 0) {
      fail(o, rc);
      goto out;
    }
  }
  o->rc = 0;
  if (ncols > 0 && sh->full)
    memcpy(sh->full + (size_t)(col0 * n) * esz, shard.a, (size_t)(n * ncols) * esz);
  memcpy(sh->X + (size_t)(rank * n * nrhs) * esz, shard.b, (size_t)(n * nrhs) * esz);
  memcpy(sh->W + (size_t)(rank * n) * sizeof(double), shard.w, (size_t)n * sizeof(double));
out:
  if (g) muster_group_leave(g);
  mem_free(s, shard.a);
  mem_free(s, shard.b);
  mem_free(s, shard.w);
  return rc;
}

static int run_threads(shared_t *sh) {
  int devices[MUSTER_MAX_RANKS];
  for (int r = 0; r < sh->spec->ranks; r++) devices[r] = -1;
  int rc = muster_run_on_devices(sh->spec->ranks, devices, rank_body, sh);
  (void)rc; /* each rank's own code is in outs */
  return 0;
}

static int run_processes(shared_t *sh, sr_out_t *out) {
  pid_t pids[MUSTER_MAX_RANKS];
  int started = 0;
  fflush(stdout);
  fflush(stderr);
  for (int r = 0; r < sh->spec->ranks; r++) {
    pid_t p = fork();
    if (p < 0) {
      snprintf(out->msg, sizeof out->msg, "fork: %s", strerror(errno));
      for (int k = 0; k < started; k++) kill(pids[k], SIGKILL);
      break;
    }
    if (p == 0) {
      rank_body(r, -1, sh);
      _exit(0);
    }
    pids[started++] = p;
  }
  for (int k = 0; k < started; k++) {
    int st = 0;
    waitpid(pids[k], &st, 0);
    if (WIFSIGNALED(st) && sh->outs[k].rc == 0) {
      sh->outs[k].rc = MUSTER_EPEERDEAD;
      snprintf(sh->outs[k].msg, sizeof sh->outs[k].msg, "rank %d (pid %d) killed by signal %d",
               k, (int)pids[k], WTERMSIG(st));
    }
  }
  return started == sh->spec->ranks ? 0 : -1;
}

int sr_run(const sr_spec_t *s, const void *A, const void *B, sr_out_t *out, void *full, void *X,
           void *W, int *xsame) {
  memset(out, 0, sizeof *out);
  if (s->ranks < 1 || s->ranks > MUSTER_MAX_RANKS || s->reps < 1 || s->reps > SR_MAX_REPS || s->warmup < 0) {
    out->rc = MUSTER_EINVAL;
    snprintf(out->msg, sizeof out->msg, "ranks 1..%d and reps 1..%d", MUSTER_MAX_RANKS, SR_MAX_REPS);
    return -1;
  }
  int64_t n = s->n, nrhs = nrhs_of(s);
  size_t esz = muster_dtype_size(s->dtype);
  size_t ob = sizeof(rank_out_t) * (size_t)s->ranks, fb = full ? (size_t)(n * n) * esz : 0,
         xb = (size_t)(s->ranks * n * nrhs) * esz, wb = (size_t)(s->ranks * n) * sizeof(double);
  size_t total = ob + fb + xb + wb;
  char *m = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) {
    out->rc = MUSTER_ENOMEM;
    snprintf(out->msg, sizeof out->msg, "mmap %zu bytes: %s", total, strerror(errno));
    return -1;
  }
  static int counter;
  shared_t sh = {.spec = s, .A = A, .B = B, .outs = (rank_out_t *)m, .full = full ? m + ob : NULL,
                 .X = m + ob + fb, .W = m + ob + fb + xb};
  snprintf(sh.group, sizeof sh.group, "cli%d_%d", (int)getpid(), counter++);
  for (int r = 0; r < s->ranks; r++) sh.outs[r].rc = MUSTER_EPEERDEAD; /* until it reports */
  for (int r = 0; r < s->ranks; r++) snprintf(sh.outs[r].msg, sizeof sh.outs[r].msg, "rank %d did not report", r);
  int rc = s->processes ? run_processes(&sh, out) : run_threads(&sh);
  const rank_out_t *o0 = &sh.outs[0];
  out->rc = o0->rc;
  snprintf(out->msg, sizeof out->msg, "%s", o0->msg);
  out->res = o0->res;
  memcpy(out->seconds, o0->seconds, sizeof out->seconds);
  memcpy(out->provider_seconds, o0->provider_seconds, sizeof out->provider_seconds);
  for (int r = 1; r < s->ranks; r++)
    if (sh.outs[r].rc != o0->rc) out->disagree = 1;
  if (out->rc == 0) {
    if (full) memcpy(full, sh.full, fb);
    if (X) memcpy(X, sh.X, (size_t)(n * nrhs) * esz);
    size_t wsz = (s->dtype == MUSTER_F32 || s->dtype == MUSTER_C64) ? 4 : 8;
    if (W) memcpy(W, sh.W, (size_t)n * wsz);
    int same = 1;
    for (int r = 1; r < s->ranks; r++) {
      if (s->routine == MUSTER_POTRS &&
          memcmp(sh.X, sh.X + (size_t)(r * n * nrhs) * esz, (size_t)(n * nrhs) * esz))
        same = 0;
      if (s->routine == MUSTER_SYEVD &&
          memcmp(sh.W, sh.W + (size_t)(r * n) * sizeof(double), (size_t)n * wsz))
        same = 0;
    }
    if (xsame) *xsame = same;
  }
  munmap(m, total);
  return rc;
}
