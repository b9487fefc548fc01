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
#include "muster/clock.h"

/* ---- LAPACKE directly ------------------------------------------------------ */

#define COL_MAJOR 102
typedef int (*potrf_fn)(int, char, int, void *, int);
typedef int (*potrs_fn)(int, char, int, int, const void *, int, void *, int);
typedef int (*potri_fn)(int, char, int, void *, int);
typedef int (*syevd_fn)(int, char, char, int, void *, int, void *);
typedef int (*getrf_fn)(int, int, int, void *, int, int *);
typedef int (*getrs_fn)(int, char, int, int, const void *, int, const int *, void *, int);
typedef int (*gels_fn)(int, char, int, int, int, void *, int, void *, int);

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

/* The LAPACKE routines of p's routine and dtype. */
typedef struct lapacke_fns {
  potrf_fn potrf;
  potrs_fn potrs;
  potri_fn potri;
  syevd_fn syevd;
  getrf_fn getrf;
  getrs_fn getrs;
  gels_fn gels;
} lapacke_fns_t;

static int lapacke_fns(muster_dtype_t t, lapacke_fns_t *f) {
  f->potrf = (potrf_fn)lapacke_sym(t, "potrf");
  f->potrs = (potrs_fn)lapacke_sym(t, "potrs");
  f->potri = (potri_fn)lapacke_sym(t, "potri");
  f->syevd = (syevd_fn)lapacke_sym(t, "syevd");
  f->getrf = (getrf_fn)lapacke_sym(t, "getrf");
  f->getrs = (getrs_fn)lapacke_sym(t, "getrs");
  f->gels = (gels_fn)lapacke_sym(t, "gels");
  return f->potrf && f->potrs && f->potri && f->syevd && f->getrf && f->getrs && f->gels ? 0 : -1;
}

/* One solve of p on a (m x n, ld m) and b (m x nrhs, ld m): LAPACK's info. */
static int lapacke_solve(const bench_problem_t *p, const lapacke_fns_t *f, void *a, void *b, void *w,
                         int *ipiv) {
  int n = (int)p->n, m = (int)p->m, nrhs = (int)p->nrhs, info;
  switch (p->routine) {
  case MUSTER_POTRS:
    info = f->potrf(COL_MAJOR, 'L', n, a, n);
    return info ? info : f->potrs(COL_MAJOR, 'L', n, nrhs, a, n, b, n);
  case MUSTER_POTRI:
    info = f->potrf(COL_MAJOR, 'L', n, a, n);
    return info ? info : f->potri(COL_MAJOR, 'L', n, a, n);
  case MUSTER_GETRS:
    info = f->getrf(COL_MAJOR, n, n, a, n, ipiv);
    return info ? info : f->getrs(COL_MAJOR, 'N', n, nrhs, a, n, ipiv, b, n);
  case MUSTER_GELS: return f->gels(COL_MAJOR, 'N', m, n, nrhs, a, m, b, m);
  default: return f->syevd(COL_MAJOR, 'V', 'L', n, a, n, w);
  }
}

static int lapacke_run(const bench_problem_t *p, double *seconds, void *X, char *err, size_t len) {
  if (lapacke_available(p, err, len) < 0) return -1;
  int64_t n = p->n, m = p->m, nrhs = p->nrhs;
  size_t esz = muster_dtype_size(p->dtype);
  int takes_b = !!(muster_routine_takes(p->routine) & MUSTER_TAKES_B);
  lapacke_fns_t f;
  if (lapacke_fns(p->dtype, &f) < 0) {
    snprintf(err, len, "liblapacke lacks a routine");
    return -1;
  }
  void *a = malloc((size_t)(m * n) * esz), *b = malloc((size_t)(m * nrhs) * esz);
  void *w = malloc((size_t)n * sizeof(double));
  int *ipiv = malloc((size_t)n * sizeof *ipiv);
  int rc = 0;
  if (!a || !b || !w || !ipiv) {
    snprintf(err, len, "out of memory");
    rc = -1;
  }
  for (int rep = -p->warmup; rep < p->reps && rc == 0; rep++) {
    memcpy(a, p->A, (size_t)(m * n) * esz);
    if (takes_b) memcpy(b, p->B, (size_t)(m * nrhs) * esz);
    double t0 = muster_clock_s();
    int info = lapacke_solve(p, &f, a, b, w, ipiv);
    double dt = muster_clock_s() - t0;
    if (rep >= 0) seconds[rep] = dt;
    if (info != 0) {
      snprintf(err, len, "LAPACKE info %d", info);
      rc = -1;
    }
  }
  if (rc == 0 && X && takes_b) memcpy(X, b, (size_t)(m * nrhs) * esz);
  free(a);
  free(b);
  free(w);
  free(ipiv);
  return rc;
}

static bench_mode_t mode_lapacke = {
    .name = "lapacke", .order = 0, .baseline = 1,
    .what = "LAPACKE (OpenBLAS) on one packed matrix (getrs: getrf+getrs, gels: gels): the baseline",
    .available = lapacke_available, .run = lapacke_run};
BENCH_MODE(mode_lapacke)

/* ---- through muster ---------------------------------------------------------- */

static int muster_run(const bench_problem_t *p, int processes, double *seconds, void *X, char *err,
                      size_t len) {
  sr_spec_t spec = {.routine = p->routine, .dtype = p->dtype, .n = p->n, .nrhs = p->nrhs,
                    .m = p->routine == MUSTER_GELS ? p->m : 0,
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
