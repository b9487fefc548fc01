/*
 * tests/gpu/raw.h - raw baselines: cuSolverMg and cusolverDn called
 * directly, no muster, on matrices generated on the GPUs (gpu_util.h), so
 * muster's numbers can be compared with what the libraries alone do.
 *
 *   raw_mg: A generated directly in cuSolverMg's 1-D block-cyclic layout
 *           (tile T) on GPUs 0..ngpu-1, B on GPU 0; one handle/grid/
 *           descriptor/workspace set up before timing; each repetition
 *           regenerates A (not timed) and times the routine:
 *             potrs = potrf + potrs, potri = potrf + potri, syevd (vectors).
 *   raw_dn: the same on one GPU with cusolverDn's 64-bit API (potri: the
 *           legacy <t>potri, lower triangle only, as cuSolverMg's), and
 *           getrs = Xgetrf + Xgetrs (on the same generated A).
 * Times are wall seconds between device synchronizations.
 */
#ifndef MUSTER_RAW_H
#define MUSTER_RAW_H

#include <stdint.h>

typedef struct raw_run {
  int routine;      /* 1 potrs, 2 potri, 3 syevd, 4 getrs (muster's values) */
  int dtype;        /* 1 f32, 2 f64, 3 c64, 4 c128                 */
  int64_t n, nrhs, tile;
  int ngpu, reps;
  uint64_t seed;
  /* out */
  double t_med, t_min;      /* whole routine                          */
  double t_fact_med;        /* potrf / getrf part (potrs, potri, getrs) */
  double resid;             /* potrs, getrs: residual ratio of the last rep */
  int info;
  char err[256];
} raw_run_t;

/* Set r->routine and r->dtype from their names ("potrs", "f64") with the
 * runtime's parser (only the names: the solves themselves call cuSOLVER
 * directly); -1 if either is unknown. */
int raw_parse_names(const char *routine, const char *dtype, raw_run_t *r);
int raw_mg(raw_run_t *r);
int raw_dn(raw_run_t *r);

double raw_median(double *v, int n);

#endif
