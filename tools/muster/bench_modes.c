/*
 * tools/muster/bench_modes.c - the CPU modes of `muster bench`:
 *   lapacke           LAPACKE called directly on one packed copy of A
 *                     (liblapacke is dlopen()ed, so the CLI links no BLAS)
 *   muster-threads    muster_solve, lapack provider (or --provider), ranks as threads
 *   muster-processes  muster_solve, lapack provider (or --provider), ranks as processes
 * Both sides run the same LAPACKE routines of the same library on the same
 * matrix; muster's extra is the rendezvous, validation, the gather of the
 * column blocks into one matrix and the scatter of the result.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"
#include "solve_run.h"

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* ---- LAPACKE directly ------------------------------------------------------ */

#define COL_MAJOR 102
typedef int (*potrf_fn)(int, char, int, void *, int);
typedef int (*potrs_fn)(int, char, int, int, const void *, int, void *, int);
typedef int (*potri_fn)(int, char, int, void *, int);
typedef int (*syevd_fn)(int, char, char, int, void *, int, void *);

static void *lapacke;
static char lapacke_why[256];

static void *lapacke_sym(muster_dtype_t t, const char *stem) {
  static const char pre[] = "?sdcz";
  char name[32];
  if (!strcmp(stem, "syevd") && (t == MUSTER_C64 || t == MUSTER_C128)) stem = "heevd";
  snprintf(name, sizeof name, "LAPACKE_%c%s", pre[t], stem);
  return lapacke ? dlsym(lapacke, name) : NULL;
}

static int lapacke_available(const bench_problem_t *p, char *why, size_t len) {
  (void)p;
  if (!lapacke && !lapacke_why[0]) {
    const char *names[] = {"liblapacke.so.3", "liblapacke.so"};
    for (size_t i = 0; i < 2 && !lapacke; i++) lapacke = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (!lapacke) snprintf(lapacke_why, sizeof lapacke_why, "%s", dlerror());
  }
  if (!lapacke) {
    snprintf(why, len, "cannot load liblapacke: %s", lapacke_why);
    return -1;
  }
  return 0;
}

static int lapacke_run(const bench_problem_t *p, double *seconds, void *X, char *err, size_t len) {
  if (lapacke_available(p, err, len) < 0) return -1;
  int n = (int)p->n, nrhs = (int)p->nrhs;
  size_t esz = muster_dtype_size(p->dtype);
  potrf_fn potrf = (potrf_fn)lapacke_sym(p->dtype, "potrf");
  potrs_fn potrs = (potrs_fn)lapacke_sym(p->dtype, "potrs");
  potri_fn potri = (potri_fn)lapacke_sym(p->dtype, "potri");
  syevd_fn syevd = (syevd_fn)lapacke_sym(p->dtype, "syevd");
  if (!potrf || !potrs || !potri || !syevd) {
    snprintf(err, len, "liblapacke lacks a routine");
    return -1;
  }
  void *a = malloc((size_t)n * n * esz), *b = malloc((size_t)n * (nrhs > 0 ? nrhs : 1) * esz);
  void *w = malloc((size_t)n * sizeof(double));
  if (!a || !b || !w) {
    free(a), free(b), free(w);
    snprintf(err, len, "out of memory");
    return -1;
  }
  int rc = 0;
  for (int rep = -p->warmup; rep < p->reps && rc == 0; rep++) {
    memcpy(a, p->A, (size_t)n * n * esz);
    if (p->routine == MUSTER_POTRS) memcpy(b, p->B, (size_t)n * nrhs * esz);
    double t0 = now_s();
    int info = 0;
    switch (p->routine) {
    case MUSTER_POTRS:
      info = potrf(COL_MAJOR, 'L', n, a, n);
      if (!info) info = potrs(COL_MAJOR, 'L', n, nrhs, a, n, b, n);
      break;
    case MUSTER_POTRI:
      info = potrf(COL_MAJOR, 'L', n, a, n);
      if (!info) info = potri(COL_MAJOR, 'L', n, a, n);
      break;
    default:
      info = syevd(COL_MAJOR, 'V', 'L', n, a, n, w);
      break;
    }
    double dt = now_s() - t0;
    if (rep >= 0) seconds[rep] = dt;
    if (info != 0) {
      snprintf(err, len, "LAPACKE info %d", info);
      rc = -1;
    }
  }
  if (rc == 0 && X && p->routine == MUSTER_POTRS) memcpy(X, b, (size_t)n * nrhs * esz);
  free(a);
  free(b);
  free(w);
  return rc;
}

static bench_mode_t mode_lapacke = {
    .name = "lapacke", .order = 0, .baseline = 1,
    .what = "LAPACKE (OpenBLAS) called directly on one packed matrix: the baseline",
    .available = lapacke_available, .run = lapacke_run};
BENCH_MODE(mode_lapacke)

/* ---- through muster ---------------------------------------------------------- */

static int muster_run(const bench_problem_t *p, int processes, double *seconds, void *X, char *err,
                      size_t len) {
  sr_spec_t spec = {.routine = p->routine, .dtype = p->dtype, .n = p->n, .nrhs = p->nrhs,
                    .ranks = p->ranks, .processes = processes, .provider = p->provider,
                    .reps = p->reps, .warmup = p->warmup};
  sr_out_t out;
  int same = 0;
  if (sr_run(&spec, p->A, p->B, &out, NULL, X, NULL, &same) != 0 || out.rc != 0) {
    snprintf(err, len, "%s: %s", muster_strerror(out.rc), out.msg);
    return -1;
  }
  if (!same) {
    snprintf(err, len, "ranks got different results");
    return -1;
  }
  memcpy(seconds, out.seconds, (size_t)p->reps * sizeof(double));
  if (p->inner) memcpy(p->inner, out.provider_seconds, (size_t)p->reps * sizeof(double));
  return 0;
}

static int muster_threads_run(const bench_problem_t *p, double *s, void *X, char *e, size_t l) {
  return muster_run(p, 0, s, X, e, l);
}
static int muster_processes_run(const bench_problem_t *p, double *s, void *X, char *e, size_t l) {
  return muster_run(p, 1, s, X, e, l);
}

static bench_mode_t mode_threads = {
    .name = "muster-threads", .order = 10,
    .what = "muster_solve, lapack provider, one thread per rank (muster_run_on_devices)",
    .run = muster_threads_run};
BENCH_MODE(mode_threads)

static bench_mode_t mode_processes = {
    .name = "muster-processes", .order = 20,
    .what = "muster_solve, lapack provider, one process per rank (muster_shard_alloc shards)",
    .run = muster_processes_run};
BENCH_MODE(mode_processes)
