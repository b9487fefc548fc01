/* tests/gpu/gpu_case.c - running one case of the GPU test command
 * (gpu_case.h): the case list, the provider's counters, the ranks in
 * threads, processes or one muster_solve_all (their shards: gpu_rank.c). */
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

#include "gpu_case.h"
#include "gpu_rank.h"

const char *const gc_mode_name[3] = {"threads", "processes", "all"};

double gc_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* ---- the case list -------------------------------------------------------------- */

void gc_name(tcase_t *c, const char *shape) {
  char devs[64] = "";
  for (int r = 0, k = 0; r < c->R && k < (int)sizeof devs - 4; r++)
    k += snprintf(devs + k, sizeof devs - (size_t)k, "%s%d", r ? "," : "", c->devs[r]);
  snprintf(c->name, sizeof c->name, "%s%s %s %s R=%d gpus=%s %s%sn=%lld lda=n+%lld %s=%lld%s%s",
           muster_routine_name(c->routine),
           (c->flags & MUSTER_NO_VECTORS)  ? "(values)"
           : (c->flags & MUSTER_NO_FACTOR) ? "(no factor)"
           : (c->flags & MUSTER_LOGDET)    ? "(logdet)"
                                           : "",
           muster_dtype_name(c->dtype), gc_mode_name[c->mode], c->R, devs, shape, *shape ? " " : "", (long long)c->n,
           (long long)c->lda_extra, c->layout == MUSTER_LAYOUT_CYCLIC ? "cyclic tile" : "tile", (long long)c->tile,
           c->env ? " " : "", c->env ? c->env : "");
}

tcase_t *gc_add(tcase_t *cases, int *ncases, const gprov_t *prov, muster_routine_t rt, unsigned flags,
                muster_dtype_t dt, int mode, int R, int64_t n, int64_t lda_extra, int64_t tile, const char *shape) {
  if (*ncases >= GC_MAX_CASES) {
    fprintf(stderr, "gpu-test: more than %d cases\n", GC_MAX_CASES);
    exit(2);
  }
  tcase_t *c = &cases[(*ncases)++];
  memset(c, 0, sizeof *c);
  c->prov = prov;
  c->routine = rt;
  c->flags = flags;
  c->dtype = dt;
  c->mode = mode;
  c->R = R;
  for (int r = 0; r < R; r++) c->devs[r] = r;
  c->ngpus = R;
  c->n = n;
  c->lda_extra = lda_extra;
  c->tile = tile;
  c->layout = MUSTER_LAYOUT_BLOCK;
  c->nrhs = rt == MUSTER_POTRS || rt == MUSTER_GETRS ? 3 : 1;
  c->shift = rt == MUSTER_SYEVD || rt == MUSTER_GETRS ? 0.0 : (double)n;
  c->reps = 2;
  gc_name(c, shape);
  return c;
}

void gc_add_getrs_edges(tcase_t *cases, int *nc, const gprov_t *prov, int mode, int R) {
  tcase_t *c = gc_add(cases, nc, prov, MUSTER_GETRS, 0, MUSTER_C64, mode, R, 1001, 3, 96, "");
  c->layout = MUSTER_LAYOUT_CYCLIC;
  gc_name(c, "cyclic");
  for (int d = 0; d < 2; d++) {
    c = gc_add(cases, nc, prov, MUSTER_GETRS, 0, d ? MUSTER_C64 : MUSTER_F64, mode, R, 600, 3, 0, "singular");
    c->zero_col = 600 / 2 + 2;
    c->expect = MUSTER_ESINGULAR;
  }
  static const muster_dtype_t dts[4] = {MUSTER_F32, MUSTER_F64, MUSTER_C64, MUSTER_C128};
  for (int d = 0; d < 4; d++) { /* column 302 = column 2: U(302,302) at rounding level, not 0 */
    c = gc_add(cases, nc, prov, MUSTER_GETRS, 0, dts[d], mode, R, 600, 3, 0, "equal-columns");
    c->zero_col = 600 / 2 + 2;
    c->dup_of = 2;
    c->expect = MUSTER_ESINGULAR;
  }
  for (int k = 0; k < 2 && mode != M_ALL; k++) {
    c = gc_add(cases, nc, prov, MUSTER_GETRS, 0, MUSTER_F64, mode, R, 500, 0, 0, k ? "NaN-in-B" : "NaN-in-A");
    c->nan_in = k ? 'b' : 'a';
    c->expect = MUSTER_ENONFINITE;
  }
}

/* ---- provider counters ------------------------------------------------------------- */

/* The registry may load the provider under any name (it uses
 * /proc/self/fd/N): find the loaded object that exports the counters. */
typedef struct sym_find {
  const char *stats, *want;
  void *addr;
} sym_find_t;

static int find_cb(struct dl_phdr_info *info, size_t size, void *data) {
  sym_find_t *f = data;
  (void)size;
  if (!info->dlpi_name || !info->dlpi_name[0]) return 0;
  void *h = dlopen(info->dlpi_name, RTLD_NOW | RTLD_NOLOAD);
  if (!h) return 0;
  if (dlsym(h, f->stats)) f->addr = dlsym(h, f->want);
  dlclose(h); /* NOLOAD took a reference of its own: give it back */
  return f->addr != NULL;
}

void *gc_provider_symbol(const gprov_t *p, const char *symbol) {
  sym_find_t f = {p->stats_symbol, symbol, NULL};
  dl_iterate_phdr(find_cb, &f);
  return f.addr;
}

int gc_stats(const gprov_t *p, uint64_t out[GC_MAX_STATS]) {
  memset(out, 0, GC_MAX_STATS * sizeof out[0]);
  int (*fn)(uint64_t *, int) = (int (*)(uint64_t *, int))gc_provider_symbol(p, p->stats_symbol);
  if (!fn) return -1;
  fn(out, GC_MAX_STATS);
  return 0;
}

/* Around the second solve: nothing may be created, one solve counted. */
static int check_no_creation(const tcase_t *c, const uint64_t before[], const uint64_t after[]) {
  const gprov_t *p = c->prov;
  int bad = 0;
  if (p->nstats == 0) return 0; /* a provider without counters */
  for (int k = 0; k < p->nstats; k++)
    if ((p->created & (1u << k)) && after[k] != before[k]) {
      fprintf(stderr, "    %s: second solve created %s (%llu -> %llu)\n", c->name, p->stat_names[k],
              (unsigned long long)before[k], (unsigned long long)after[k]);
      bad = 1;
    }
  if (after[p->solves] != before[p->solves] + 1) {
    fprintf(stderr, "    %s: provider solves %llu -> %llu, expected +1\n", c->name,
            (unsigned long long)before[p->solves], (unsigned long long)after[p->solves]);
    bad = 1;
  }
  return bad;
}

/* ---- one rank in a group (threads and processes) ------------------------------------ */

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
  if (gc_buf_alloc(c, rank, &rb)) return 1;
  if (muster_group_join(rc_->group, rank, c->R, &opts, &g) != 0) {
    fprintf(stderr, "    %s rank %d: join: %s\n", c->name, rank, muster_last_error());
    gc_buf_free(&rb);
    return 1;
  }
  muster_solve_args_t a = gc_args_of(c);
  for (int rep = 0; rep < c->reps && !fail; rep++) {
    uint64_t seed = gc_seed_of(c, rep), st0[GC_MAX_STATS], st1[GC_MAX_STATS];
    if (gc_buf_fill(c, rank, &rb, seed)) {
      fail = 1;
      break;
    }
    muster_shard_t s = gc_shard_of(c, &rb);
    muster_solve_result_t res;
    gc_stats(c->prov, st0);
    /* kill tests: the solves before the last warm up (a communicator made) */
    int killed_here = rc_->notify_fd >= 0 && rep == c->reps - 1;
    if (killed_here) {
      char x = 'x';
      if (write(rc_->notify_fd, &x, 1) != 1) return 1;
    }
    double t0 = gc_now();
    int rc = muster_solve(g, &a, &s, &res);
    double dt = gc_now() - t0;
    gc_stats(c->prov, st1);
    if (killed_here) { /* report, check a success, leave */
      printf("    rank %d: muster_solve returned %d (%s) after %.2f s: %s\n", rank, rc, muster_strerror(rc), dt,
             muster_last_error());
      fflush(stdout);
      int bad = rc == 0 ? gc_buf_check(c, rank, &rb, seed) : 0;
      if (rc == 0) printf("    rank %d: its results %s\n", rank, bad ? "are WRONG" : "check out");
      t0 = gc_now();
      muster_group_leave(g);
      printf("    rank %d: left its group in %.2f s\n", rank, gc_now() - t0);
      fflush(stdout);
      /* After a failed collective call the engine may still be running on
       * its own thread, its GPU work with it (docs/bootstrap.md, "An engine
       * deaf to cancel"): cudaFree would wait for that work.  The process
       * ends now, as the error message asks; the driver frees the memory. */
      if (rc == 0) gc_buf_free(&rb);
      return rc == 0 ? (bad ? 99 : 0) : 100 + (-rc);
    }
    fail |= gc_check_rc(c, rank, rc, &res);
    if (!fail && rc == MUSTER_ESINGULAR && c->routine == MUSTER_GETRS) fail |= gc_check_b_kept(c, rank, &rb);
    if (!fail && rc != 0 && c->a_kept) fail |= gc_check_a_kept(c, rank, &rb, seed);
    if (!fail && rc == 0) fail |= gc_buf_check(c, rank, &rb, seed);
    if (!fail && rc == 0 && rank == 0 && c->prov->check) fail |= c->prov->check(c, st0, st1);
    if (!fail && rep > 0 && rank == 0 && c->expect == 0) fail |= check_no_creation(c, st0, st1);
  }
  muster_group_leave(g);
  gc_buf_free(&rb);
  return fail;
}

static int group_seq; /* one group name per case run in this process */

static int run_threads(const tcase_t *c) {
  rank_ctx_t rc_ = {c, "", -1};
  snprintf(rc_.group, sizeof rc_.group, "gputest.%d.%d", (int)getpid(), ++group_seq);
  int rc = muster_run_on_devices(c->R, c->devs, rank_main, &rc_);
  if (rc != 0) fprintf(stderr, "    %s: %d %s\n", c->name, rc, muster_last_error());
  return rc != 0;
}

void gc_fork_ranks(const tcase_t *c, const char *group, int notify_fd, int close_fd, pid_t *pids) {
  rank_ctx_t rc_ = {c, "", notify_fd};
  snprintf(rc_.group, sizeof rc_.group, "%s", group);
  for (int r = 0; r < c->R; r++) {
    pids[r] = fork();
    if (pids[r] == 0) {
      if (close_fd >= 0) close(close_fd);
      int rc = cudaSetDevice(c->devs[r]) == cudaSuccess ? rank_main(r, c->devs[r], &rc_) : 1;
      fflush(stdout);
      _exit(rc);
    }
  }
}

static int run_procs(const tcase_t *c) {
  pid_t pids[GC_MAX_RANKS];
  char group[64];
  snprintf(group, sizeof group, "gputest.%d.%d", (int)getpid(), ++group_seq);
  gc_fork_ranks(c, group, -1, -1, pids);
  int fail = 0;
  for (int r = 0; r < c->R; r++) {
    int st = 0;
    waitpid(pids[r], &st, 0);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) fail = 1;
  }
  return fail;
}

static int run_all(const tcase_t *c) {
  rank_buf_t rb[GC_MAX_RANKS];
  muster_shard_t sh[GC_MAX_RANKS];
  int fail = 0;
  muster_solve_args_t a = gc_args_of(c);
  for (int r = 0; r < c->R; r++)
    if (gc_buf_alloc(c, r, &rb[r])) return 1;
  for (int rep = 0; rep < c->reps && !fail; rep++) {
    uint64_t seed = gc_seed_of(c, rep), st0[GC_MAX_STATS], st1[GC_MAX_STATS];
    for (int r = 0; r < c->R; r++) {
      if (gc_buf_fill(c, r, &rb[r], seed)) return 1;
      sh[r] = gc_shard_of(c, &rb[r]);
    }
    muster_solve_result_t res;
    gc_stats(c->prov, st0);
    int rc = muster_solve_all(&a, c->R, sh, &res);
    gc_stats(c->prov, st1);
    fail |= gc_check_rc(c, 0, rc, &res);
    for (int r = 0; r < c->R && !fail && rc == MUSTER_ESINGULAR && c->routine == MUSTER_GETRS; r++)
      fail |= gc_check_b_kept(c, r, &rb[r]);
    for (int r = 0; r < c->R && !fail && rc != 0 && c->a_kept; r++) fail |= gc_check_a_kept(c, r, &rb[r], seed);
    for (int r = 0; r < c->R && !fail && rc == 0; r++) fail |= gc_buf_check(c, r, &rb[r], seed);
    if (!fail && rc == 0 && c->prov->check) fail |= c->prov->check(c, st0, st1);
    if (!fail && rep > 0 && c->expect == 0) fail |= check_no_creation(c, st0, st1);
  }
  for (int r = 0; r < c->R; r++) gc_buf_free(&rb[r]);
  return fail;
}

int gc_run(const tcase_t *c, int ndev) {
  (void)ndev;
  if (c->special) return c->special(c, ndev);
  if (c->mode == M_THREADS) return run_threads(c);
  if (c->mode == M_PROCS) return run_procs(c);
  return run_all(c);
}

