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

#include "cuda_dl.h"
#include "muster/layout.h"
#include "solve_run.h"
#include "muster/clock.h"

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
  int device;   /* the GPU it used, -1: host or not known */
  int reported; /* rank_body ran */
  int done;     /* rank_run returned: rc and msg are its own words (until
                   then they are the driver's "did not report")           */
  muster_solve_result_t res;
  char reason[MUSTER_MAX_REASON_FULL]; /* res.reason whole (rank 0 has it) */
  double seconds[SR_MAX_REPS];
  double provider_seconds[SR_MAX_REPS];
} rank_out_t;

typedef struct shared {
  const sr_spec_t *spec;
  const void *A, *B;
  muster_layout_geom_t L; /* the block layout of n columns over the ranks */
  char group[64];
  rank_out_t *outs; /* ranks entries */
  char *full, *X, *W; /* full: rows x n; X: ranks blocks of rows x nrhs; W: ranks blocks of n doubles */
} shared_t;

static int64_t nrhs_of(const sr_spec_t *s) {
  return muster_routine_takes(s->routine) & MUSTER_TAKES_B ? s->nrhs : 1;
}

int64_t sr_rows(const sr_spec_t *s) {
  muster_shape_t shape;
  if (muster_routine_shape(s->routine, s->n, s->nrhs, s->m > 0 ? s->m : s->n, &shape) != 0) return s->n;
  return shape.a_rows;
}

/* The reals of w every rank gets: syevd's eigenvalues, potrs's log det. */
static int64_t w_count(const sr_spec_t *s) {
  if (s->routine == MUSTER_GESVD) return s->m < s->n ? s->m : s->n; /* the singular values */
  return s->routine == MUSTER_SYEVD ? s->n : (s->flags & MUSTER_LOGDET) ? 1 : 0;
}

/* One rank's buffers: host (malloc, or muster_shard_alloc in process mode
 * so the leader can map them) or CUDA (cudaMalloc on the current GPU).
 * NULL with why and *code: the failure's own code (muster_shard_alloc out
 * of file descriptors is MUSTER_ESYS, not "out of memory"). */
static void *mem_alloc(const sr_spec_t *s, size_t bytes, int *code, char *why, size_t len) {
  void *p = NULL;
  int rc;
  *code = MUSTER_ENOMEM;
  if (s->cuda) {
    *code = MUSTER_ECUDA;
    if (cudl_malloc(&p, bytes, why, len) < 0) return NULL;
  } else if (s->processes) {
    if ((rc = muster_shard_alloc(bytes, &p)) != 0) {
      *code = rc;
      snprintf(why, len, "%s", muster_last_error());
    }
  } else {
    p = malloc(bytes);
    if (!p) snprintf(why, len, "malloc(%zu bytes) failed", bytes);
  }
  return p;
}

static void mem_free(const sr_spec_t *s, void *p) {
  if (!p) return;
  if (s->cuda) cudl_free(p);
  else if (s->processes) muster_shard_free(p);
  else free(p);
}

/* host <-> shard memory; 0 or -1 with why */
static int mem_copy(const sr_spec_t *s, void *dst, const void *src, size_t bytes, char *why, size_t len) {
  if (s->cuda) return cudl_copy(dst, src, bytes, why, len);
  memcpy(dst, src, bytes);
  return 0;
}

static int fail(rank_out_t *o, int rc) {
  o->rc = rc;
  snprintf(o->msg, sizeof o->msg, "%s", muster_last_error());
  return rc;
}

/* o gets code rc and "rank R (device D): what: why" */
static int fail_with(rank_out_t *o, int rc, int rank, const char *what, const char *why) {
  o->rc = rc;
  snprintf(o->msg, sizeof o->msg, "rank %d (pid %d, device %d): %s: %s", rank, (int)getpid(), o->device,
           what, why);
  return rc;
}

/* The shard's inputs again (the solve overwrote them). */
static int shard_fill(const shared_t *sh, const muster_shard_t *shard, char *why, size_t len) {
  const sr_spec_t *s = sh->spec;
  int64_t rows = sr_rows(s);
  size_t esz = muster_dtype_size(s->dtype);
  if (shard->ncols > 0 &&
      mem_copy(s, shard->a, (const char *)sh->A + (size_t)(shard->col0 * rows) * esz,
               (size_t)(rows * shard->ncols) * esz, why, len) < 0)
    return -1;
  if (shard->b && mem_copy(s, shard->b, sh->B, (size_t)(rows * nrhs_of(s)) * esz, why, len) < 0) return -1;
  return 0;
}

/* The results to the driver's shared memory. */
static int shard_collect(shared_t *sh, int rank, const muster_shard_t *shard, char *why, size_t len) {
  const sr_spec_t *s = sh->spec;
  int64_t n = s->n, rows = sr_rows(s), nrhs = nrhs_of(s);
  size_t esz = muster_dtype_size(s->dtype);
  if (shard->ncols > 0 && sh->full &&
      mem_copy(s, sh->full + (size_t)(shard->col0 * rows) * esz, shard->a,
               (size_t)(rows * shard->ncols) * esz, why, len) < 0)
    return -1;
  if (shard->b && mem_copy(s, sh->X + (size_t)(rank * rows * nrhs) * esz, shard->b,
                           (size_t)(rows * nrhs) * esz, why, len) < 0)
    return -1;
  if (shard->w && mem_copy(s, sh->W + (size_t)(rank * n) * sizeof(double), shard->w,
                           (size_t)n * sizeof(double), why, len) < 0)
    return -1;
  return 0;
}

/* Every rank says whether it is ready (its shard allocated, its GPU usable)
 * before anyone waits in a solve: one exchange, which every rank reaches
 * quickly whatever happened, so a rank that failed never leaves the others
 * waiting for it until the timeout (an abort could come before a slower
 * rank has even joined, and the last one out removes the group).  Returns
 * rc, or the first other rank's failure, whose message o then gets. */
typedef struct ready {
  int rc;
  char msg[600];
} ready_t;

static int agree_ready(muster_group_t *g, rank_out_t *o, int rc) {
  ready_t mine = {.rc = rc};
  snprintf(mine.msg, sizeof mine.msg, "%s", rc ? o->msg : "");
  int x = muster_group_exchange(g, &mine, sizeof mine);
  if (x != 0) return fail(o, x);
  for (int r = 0; r < muster_group_size(g) && rc == 0; r++) {
    const void *data;
    size_t len;
    if (muster_group_payload(g, r, &data, &len) != 0 || len != sizeof mine) continue;
    const ready_t *theirs = data;
    if (theirs->rc != 0) {
      rc = o->rc = theirs->rc;
      snprintf(o->msg, sizeof o->msg, "%s", theirs->msg);
    }
  }
  return rc;
}

/* One participant: its shard, `reps` timed solves, the results back.
 * setup_rc != 0: the rank could not get its GPU (o says why); it still
 * joins, to tell the others (agree_ready). */
static int rank_run(shared_t *sh, int rank, int device, int setup_rc) {
  const sr_spec_t *s = sh->spec;
  rank_out_t *o = &sh->outs[rank];
  int64_t n = s->n, rows = sr_rows(s), nrhs = nrhs_of(s), R = s->ranks;
  size_t esz = muster_dtype_size(s->dtype);
  int64_t col0 = muster_layout_block_col0(&sh->L, rank), ncols = muster_layout_block_ncols(&sh->L, rank);
  char why[400] = "";
  o->reported = 1;
  o->device = device;
  muster_shard_t shard;
  memset(&shard, 0, sizeof shard);
  shard.mem = s->cuda ? MUSTER_MEM_CUDA : MUSTER_MEM_HOST;
  shard.device = device;
  shard.col0 = col0;
  shard.ncols = ncols;
  shard.lda = rows;
  shard.ldb = rows; /* gels: m travels in ldb (muster.h) */
  muster_group_t *g = NULL;
  int rc = setup_rc;
  /* GPU memory is scarce: b and w only where the routine uses them */
  int want_b = !s->cuda || (muster_routine_takes(s->routine) & MUSTER_TAKES_B),
      want_w = !s->cuda || w_count(s) > 0;
  int code = 0;
  if (rc == 0 &&
      (!(shard.a = mem_alloc(s, (size_t)(rows * (ncols > 0 ? ncols : 1)) * esz, &code, why, sizeof why)) ||
       (want_b && !(shard.b = mem_alloc(s, (size_t)(rows * nrhs) * esz, &code, why, sizeof why))) ||
       (want_w && !(shard.w = mem_alloc(s, (size_t)n * sizeof(double), &code, why, sizeof why)))))
    rc = fail_with(o, code, rank, "cannot allocate its shard", why);
  muster_group_opts_t opts = {.job = NULL, .timeout_s = 0, .device = device};
  int jrc = muster_group_join(sh->group, rank, (int)R, &opts, &g);
  if (jrc != 0) {
    if (rc == 0) rc = fail(o, jrc);
    goto out;
  }
  if ((rc = agree_ready(g, o, rc)) != 0) goto out;
  muster_solve_args_t args = {.routine = s->routine, .dtype = s->dtype, .n = n, .nrhs = s->nrhs,
                              .tile = s->tile, .layout = MUSTER_LAYOUT_BLOCK, .flags = s->flags,
                              .provider = s->provider};
  for (int rep = -s->warmup; rep < s->reps; rep++) {
    if (shard_fill(sh, &shard, why, sizeof why) < 0) { /* not timed */
      rc = fail_with(o, MUSTER_ECUDA, rank, "copying its shard to the GPU", why);
      muster_group_abort(g, rc, o->msg); /* all have joined: the others stop at their barrier */
      goto out;
    }
    if ((rc = muster_group_barrier(g)) != 0) {
      fail(o, rc);
      goto out;
    }
    if (rank == 0 && s->on_rep) s->on_rep(rep + s->warmup + 1, s->warmup + s->reps);
    double t0 = muster_clock_s();
    rc = muster_solve(g, &args, &shard, &o->res);
    muster_solve_reason(o->reason, sizeof o->reason);
    if (rep >= 0) {
      o->seconds[rep] = muster_clock_s() - t0;
      o->provider_seconds[rep] = o->res.seconds;
    }
    if (rc != 0) {
      fail(o, rc);
      goto out;
    }
  }
  if (shard_collect(sh, rank, &shard, why, sizeof why) < 0) {
    rc = fail_with(o, MUSTER_ECUDA, rank, "copying its results from the GPU", why);
    goto out;
  }
  o->rc = 0;
out:
  if (g) muster_group_leave(g);
  mem_free(s, shard.a);
  mem_free(s, shard.b);
  mem_free(s, shard.w);
  __atomic_store_n(&o->done, 1, __ATOMIC_RELEASE); /* the driver may read o after */
  return rc;
}

static int rank_body(int rank, int device, void *arg) { return rank_run(arg, rank, device, 0); }

int sr_device_of(const sr_spec_t *s, int r, int count, int *device, char *why, size_t len) {
  *device = s->ndevices > 0 ? s->devices[r % s->ndevices] : (count > 0 ? r % count : 0);
  if (count < 1) {
    snprintf(why, len, "no CUDA device (cudaGetDeviceCount gave 0)");
    return -1;
  }
  if (*device >= count) {
    snprintf(why, len, "GPU %d does not exist (cudaGetDeviceCount gave %d)", *device, count);
    return -1;
  }
  return 0;
}

static void all_failed(shared_t *sh, int rc, const char *msg) {
  for (int r = 0; r < sh->spec->ranks; r++) {
    sh->outs[r].rc = rc;
    snprintf(sh->outs[r].msg, sizeof sh->outs[r].msg, "%s", msg);
  }
}

static int run_threads(shared_t *sh) {
  const sr_spec_t *s = sh->spec;
  int devices[MUSTER_MAX_RANKS];
  char why[400];
  for (int r = 0; r < s->ranks; r++) devices[r] = -1;
  int count = 0, bad = s->cuda && cudl_device_count(&count, why, sizeof why) < 0;
  int r = 0; /* the rank whose GPU is missing, when count > 0 */
  for (; r < s->ranks && s->cuda && !bad; r++)
    if (sr_device_of(s, r, count, &devices[r], why, sizeof why) < 0) {
      bad = 1;
      break;
    }
  if (bad) {
    char msg[480];
    if (count > 0) snprintf(msg, sizeof msg, "cannot use the GPUs: rank %d: %s", r, why);
    else snprintf(msg, sizeof msg, "cannot use the GPUs: %s", why);
    all_failed(sh, MUSTER_ECUDA, msg);
    return 0;
  }
  muster_launch_t *l; /* the group has no name: a signal that ends us leaves nothing */
  int rc = ml_hold_threads(sh->group, s->ranks, &l);
  if (rc < 0) {
    all_failed(sh, rc, muster_last_error());
    return 0;
  }
  rc = muster_run_on_devices(s->ranks, devices, rank_body, sh);
  /* each rank's own code is in outs; a rank whose device could not be made
   * current never ran, and then none did: the reason is rc's */
  if (rc < 0 && !sh->outs[0].reported) all_failed(sh, rc, muster_last_error());
  muster_launch_close(l);
  return 0;
}

/* A forked rank: in GPU mode it finds and sets its own GPU first (the
 * parent never starts CUDA: it would not work in the children).  Its exit
 * status says whether it failed (launch.h). */
static int process_rank(int r, void *arg) {
  shared_t *sh = arg;
  const sr_spec_t *s = sh->spec;
  rank_out_t *o = &sh->outs[r];
  int count = 0, device = -1, rc = 0;
  char why[400];
  o->device = -1;
  if (s->cuda && (cudl_device_count(&count, why, sizeof why) < 0 ||
                  sr_device_of(s, r, count, &device, why, sizeof why) < 0 ||
                  cudl_set_device(device, why, sizeof why) < 0)) {
    o->device = device;
    rc = fail_with(o, MUSTER_ECUDA, r, "cannot use its GPU", why);
  }
  return rank_run(sh, r, device, rc);
}

/* A rank that was killed, or whose process ended without a result of its
 * own (status 1 means it reported an error in its out), lost the run. */
static int lost(const struct ml_fate *f) {
  return f->killed || WIFSIGNALED(f->status) || (WIFEXITED(f->status) && WEXITSTATUS(f->status) > 1);
}

static int run_processes(shared_t *sh, sr_out_t *out) {
  struct ml_spec ml = {.who = "muster", .group = sh->group, .ranks = sh->spec->ranks,
                       .fn = process_rank, .arg = sh};
  struct ml_error err;
  int rc = ml_run(&ml, out->fates, &err);
  if (rc < 0) { /* none ran: the launch's own error is the run's */
    out->launch_failed = 1;
    out->rc = err.code;
    snprintf(out->msg, sizeof out->msg, "%s", err.msg);
    return -1;
  }
  for (int r = 0; r < sh->spec->ranks; r++) { /* what a rank that failed said */
    struct ml_fate *f = &out->fates[r];
    size_t n = strlen(f->text);
    /* only words it said: one killed (or stopped) mid-run said nothing */
    if (__atomic_load_n(&sh->outs[r].done, __ATOMIC_ACQUIRE) && sh->outs[r].rc != 0)
      snprintf(f->text + n, sizeof f->text - n, "; it said: %s: %s",
               muster_strerror(sh->outs[r].rc), sh->outs[r].msg);
  }
  const struct ml_fate *first = NULL;
  for (int r = 0; r < sh->spec->ranks; r++)
    if (lost(&out->fates[r]) && (!first || out->fates[r].seq < first->seq)) first = &out->fates[r];
  if (first) { /* its fate, without what it said (the cause comes first) */
    out->died = 1;
    const char *said = strstr(first->text, "; it said: ");
    int len = said ? (int)(said - first->text) : (int)strlen(first->text);
    snprintf(out->msg, sizeof out->msg, "%.*s", len, first->text);
  }
  return 0;
}

void sr_out_init(sr_out_t *out) {
  memset(out, 0, sizeof *out);
  for (int r = 0; r < MUSTER_MAX_RANKS; r++) {
    out->devices[r] = -1;
    snprintf(out->fates[r].text, sizeof out->fates[r].text, "rank %d: not started", r);
  }
}

int sr_run(const sr_spec_t *s, const void *A, const void *B, sr_out_t *out, void *full, void *X,
           void *W, int *xsame) {
  sr_out_init(out);
  if (s->ranks < 1 || s->ranks > MUSTER_MAX_RANKS || s->reps < 1 || s->reps > SR_MAX_REPS || s->warmup < 0) {
    out->rc = MUSTER_EINVAL;
    snprintf(out->msg, sizeof out->msg, "ranks 1..%d and reps 1..%d", MUSTER_MAX_RANKS, SR_MAX_REPS);
    return -1;
  }
  muster_layout_geom_t L;
  if (muster_layout_geom_init(&L, s->n, 1, s->ranks) != 0) {
    out->rc = MUSTER_EINVAL;
    snprintf(out->msg, sizeof out->msg, "n %lld makes no layout", (long long)s->n);
    return -1;
  }
  int64_t n = s->n, rows = sr_rows(s), nrhs = nrhs_of(s);
  size_t esz = muster_dtype_size(s->dtype);
  size_t ob = sizeof(rank_out_t) * (size_t)s->ranks, fb = full ? (size_t)(rows * n) * esz : 0,
         xb = (size_t)(s->ranks * rows * nrhs) * esz, wb = (size_t)(s->ranks * n) * sizeof(double);
  size_t total = ob + fb + xb + wb;
  char *m = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) {
    out->rc = MUSTER_ENOMEM;
    snprintf(out->msg, sizeof out->msg, "mmap %zu bytes: %s", total, strerror(errno));
    return -1;
  }
  static int counter;
  shared_t sh = {.spec = s, .A = A, .B = B, .L = L, .outs = (rank_out_t *)m, .full = full ? m + ob : NULL,
                 .X = m + ob + fb, .W = m + ob + fb + xb};
  snprintf(sh.group, sizeof sh.group, "cli%d_%d", (int)getpid(), counter++);
  for (int r = 0; r < s->ranks; r++) sh.outs[r].rc = MUSTER_EPEERDEAD; /* until it reports */
  for (int r = 0; r < s->ranks; r++) {
    snprintf(sh.outs[r].msg, sizeof sh.outs[r].msg, "rank %d did not report", r);
    sh.outs[r].device = -1;
  }
  int rc = s->processes ? run_processes(&sh, out) : run_threads(&sh);
  const rank_out_t *o0 = &sh.outs[0];
  if (out->launch_failed) { /* rc and msg are the launch's */
    munmap(m, total);
    return -1;
  }
  out->rc = o0->rc;
  if (out->died) {
    if (out->rc == 0) out->rc = MUSTER_EPEERDEAD; /* it may have finished before the death */
  } else if (rc == 0) {
    snprintf(out->msg, sizeof out->msg, "%s", o0->msg);
  } else if (out->rc == 0) {
    out->rc = MUSTER_ESYS;
  }
  out->res = o0->res;
  snprintf(out->reason, sizeof out->reason, "%s", o0->reason);
  memcpy(out->seconds, o0->seconds, sizeof out->seconds);
  memcpy(out->provider_seconds, o0->provider_seconds, sizeof out->provider_seconds);
  for (int r = 0; r < s->ranks; r++) out->devices[r] = sh.outs[r].device;
  for (int r = 1; r < s->ranks; r++)
    if (sh.outs[r].rc != o0->rc) out->disagree = 1;
  if (out->rc == 0) {
    if (full) memcpy(full, sh.full, fb);
    if (X) memcpy(X, sh.X, (size_t)(rows * nrhs) * esz);
    size_t wsz = muster_dtype_real_size(s->dtype);
    if (W) memcpy(W, sh.W, (size_t)n * wsz);
    int same = 1;
    for (int r = 1; r < s->ranks; r++) {
      /* X is B's first n rows (gels: of m; the rows below are the
       * provider's scratch, muster.h) */
      for (int64_t c = 0; c < nrhs && (muster_routine_takes(s->routine) & MUSTER_TAKES_B); c++)
        if (memcmp(sh.X + (size_t)(c * rows) * esz, sh.X + (size_t)((r * nrhs + c) * rows) * esz,
                   (size_t)(muster_routine_takes(s->routine) & MUSTER_TAKES_O ? rows : n) * esz))
          same = 0;
      if (memcmp(sh.W, sh.W + (size_t)(r * n) * sizeof(double), (size_t)w_count(s) * wsz)) same = 0;
    }
    if (xsame) *xsame = same;
  }
  munmap(m, total);
  return rc;
}
