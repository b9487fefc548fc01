/*
 * tools/muster/bench_gpu.c - the GPU mode of `muster bench`:
 *   cusolvermg-threads  muster_solve with the cusolvermg provider, one
 *                       thread per GPU (muster_run_on_devices), GPUs
 *                       0..ranks-1, block-layout device shards.
 * Each repetition copies A's column blocks and B to the GPUs (not timed),
 * then times, on rank 0, a barrier-to-return muster_solve: rendezvous,
 * relayout on the GPUs, cuSolverMg, relayout back, X to every rank.
 * The CLI links no CUDA: libcudart is dlopen()ed here, on first use, so
 * `muster bench` still runs on a machine without it (the mode then says
 * why it is unavailable).  The full GPU benchmark with raw cuSolverMg and
 * cusolverDn baselines is tests/gpu/muster-gpu-bench (docs/performance/gpu.md).
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "launch.h"
#include "muster/clock.h"

typedef int (*cuda_int_fn)(int);
typedef int (*cuda_count_fn)(int *);
typedef int (*cuda_malloc_fn)(void **, size_t);
typedef int (*cuda_free_fn)(void *);
typedef int (*cuda_memcpy_fn)(void *, const void *, size_t, int);
typedef int (*cuda_sync_fn)(void);

static struct {
  void *h;
  cuda_int_fn set_device;
  cuda_count_fn device_count;
  cuda_malloc_fn malloc_;
  cuda_free_fn free_;
  cuda_memcpy_fn memcpy_;
  cuda_sync_fn sync;
  char why[256];
} cu;

#define CUDA_MEMCPY_DEFAULT 4 /* cudaMemcpyDefault */

static int cuda_load(char *why, size_t len) {
  if (!cu.h && !cu.why[0]) {
    const char *names[] = {"libcudart.so.13", "libcudart.so.12", "libcudart.so"};
    for (size_t i = 0; i < 3 && !cu.h; i++) cu.h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (!cu.h) {
      snprintf(cu.why, sizeof cu.why, "cannot load libcudart: %s", dlerror());
    } else {
      cu.set_device = (cuda_int_fn)dlsym(cu.h, "cudaSetDevice");
      cu.device_count = (cuda_count_fn)dlsym(cu.h, "cudaGetDeviceCount");
      cu.malloc_ = (cuda_malloc_fn)dlsym(cu.h, "cudaMalloc");
      cu.free_ = (cuda_free_fn)dlsym(cu.h, "cudaFree");
      cu.memcpy_ = (cuda_memcpy_fn)dlsym(cu.h, "cudaMemcpy");
      cu.sync = (cuda_sync_fn)dlsym(cu.h, "cudaDeviceSynchronize");
      if (!cu.set_device || !cu.device_count || !cu.malloc_ || !cu.free_ || !cu.memcpy_ || !cu.sync) {
        snprintf(cu.why, sizeof cu.why, "libcudart lacks a function");
        dlclose(cu.h);
        cu.h = NULL;
      }
    }
  }
  if (!cu.h) {
    snprintf(why, len, "%s", cu.why);
    return -1;
  }
  return 0;
}

static int gpu_available(const bench_problem_t *p, char *why, size_t len) {
  int count = 0;
  if (p->routine == MUSTER_GELS) { /* its shards here are n rows tall */
    snprintf(why, len, "gels (m x n A) is not in this mode; `muster solve gels --provider NAME` runs it on GPUs");
    return -1;
  }
  if (cuda_load(why, len) < 0) return -1;
  int st = cu.device_count(&count);
  if (st != 0 || count < p->ranks) {
    snprintf(why, len, "needs %d GPU(s); cudaGetDeviceCount gave %d (status %d)", p->ranks, count, st);
    return -1;
  }
  return 0;
}

typedef struct gpu_run {
  const bench_problem_t *p;
  char group[64];
  void *a[16], *b[16], *w[16];
  int64_t col0[16], ncols[16];
  double t;
  int rc;
  char err[256];
} gpu_run_t;

static int gpu_rank(int rank, int device, void *arg) {
  gpu_run_t *g = arg;
  const bench_problem_t *p = g->p;
  muster_group_t *grp = NULL;
  muster_group_opts_t opts = {NULL, 0, device};
  int rc = muster_group_join(g->group, rank, p->ranks, &opts, &grp);
  if (rc != 0) return rc;
  muster_solve_args_t args;
  memset(&args, 0, sizeof args);
  args.routine = p->routine;
  args.dtype = p->dtype;
  args.n = p->n;
  args.nrhs = p->nrhs;
  args.layout = MUSTER_LAYOUT_BLOCK;
  args.provider = "cusolvermg";
  muster_shard_t s = {MUSTER_MEM_CUDA, device, g->a[rank], p->n, g->col0[rank], g->ncols[rank],
                      g->b[rank], p->n, g->w[rank], NULL};
  muster_solve_result_t res;
  rc = muster_group_barrier(grp);
  double t0 = muster_clock_s();
  if (rc == 0) rc = muster_solve(grp, &args, &s, &res);
  if (rank == 0) {
    g->t = muster_clock_s() - t0;
    if (rc != 0) snprintf(g->err, sizeof g->err, "%s", muster_last_error());
  }
  muster_group_leave(grp);
  return rc;
}

static int gpu_run_mode(const bench_problem_t *p, double *seconds, void *X, char *err, size_t len) {
  static int seq;
  gpu_run_t g;
  int rc = 0, R = p->ranks, devs[16];
  size_t esz = muster_dtype_size(p->dtype);
  int64_t n = p->n, nrhs = p->nrhs > 0 ? p->nrhs : 1, S = (n + R - 1) / R;
  if (gpu_available(p, err, len) < 0) return -1;
  if (R > 16) {
    snprintf(err, len, "cusolvermg takes at most 16 GPUs");
    return -1;
  }
  memset(&g, 0, sizeof g);
  g.p = p;
  snprintf(g.group, sizeof g.group, "bench-gpu.%d.%d", (int)getpid(), ++seq);
  for (int r = 0; r < R && rc == 0; r++) {
    devs[r] = r;
    g.col0[r] = r * S < n ? r * S : n;
    g.ncols[r] = n - g.col0[r] < S ? n - g.col0[r] : S;
    if (cu.set_device(r) != 0 || cu.malloc_(&g.a[r], (size_t)(n * (g.ncols[r] ? g.ncols[r] : 1)) * esz) != 0 ||
        cu.malloc_(&g.b[r], (size_t)(n * nrhs) * esz) != 0 || cu.malloc_(&g.w[r], (size_t)n * sizeof(double)) != 0) {
      snprintf(err, len, "GPU %d: cudaMalloc failed (n=%lld)", r, (long long)n);
      rc = -1;
    }
  }
  muster_launch_t *hold = NULL; /* the group has no name: a signal leaves nothing */
  if (rc == 0 && ml_hold_threads(g.group, R, &hold) < 0) {
    snprintf(err, len, "%s", muster_last_error());
    rc = -1;
  }
  for (int rep = -p->warmup; rep < p->reps && rc == 0; rep++) {
    for (int r = 0; r < R && rc == 0; r++) {
      cu.set_device(r);
      if (cu.memcpy_(g.a[r], (const char *)p->A + (size_t)(g.col0[r] * n) * esz,
                     (size_t)(g.ncols[r] * n) * esz, CUDA_MEMCPY_DEFAULT) != 0 ||
          (p->B && cu.memcpy_(g.b[r], p->B, (size_t)(n * nrhs) * esz, CUDA_MEMCPY_DEFAULT) != 0) || cu.sync() != 0) {
        snprintf(err, len, "GPU %d: copying the problem in failed", r);
        rc = -1;
      }
    }
    if (rc != 0) break;
    rc = muster_run_on_devices(R, devs, gpu_rank, &g);
    if (rc != 0) {
      snprintf(err, len, "%s", g.err[0] ? g.err : muster_last_error());
      break;
    }
    if (rep >= 0) seconds[rep] = g.t;
  }
  if (hold) muster_launch_close(hold);
  if (rc == 0 && X && (muster_routine_takes(p->routine) & MUSTER_TAKES_B)) {
    cu.set_device(0);
    if (cu.memcpy_(X, g.b[0], (size_t)(n * nrhs) * esz, CUDA_MEMCPY_DEFAULT) != 0) {
      snprintf(err, len, "copying X back failed");
      rc = -1;
    }
  }
  for (int r = 0; r < R; r++) {
    cu.set_device(r);
    if (g.a[r]) cu.free_(g.a[r]);
    if (g.b[r]) cu.free_(g.b[r]);
    if (g.w[r]) cu.free_(g.w[r]);
  }
  return rc == 0 ? 0 : -1;
}

static bench_mode_t mode_gpu = {
    .name = "cusolvermg-threads",
    .order = 50,
    .what = "muster_solve, cusolvermg provider, one thread per GPU (GPUs 0..ranks-1), device shards",
    .available = gpu_available,
    .run = gpu_run_mode,
};
BENCH_MODE(mode_gpu)
