/*
 * tools/muster/bench.h - the modes of `muster bench`.
 *
 * A mode is one way of running the same solve on the same matrix: LAPACKE
 * called directly (the baseline), muster with the lapack provider in
 * threads or processes mode, ...  Another file adds a mode without touching
 * cmd_bench.c:
 *
 *     static int my_available(const bench_problem_t *p, char *why, size_t len) {...}
 *     static int my_run(const bench_problem_t *p, double *seconds, void *X,
 *                       char *err, size_t len) {...}
 *     static bench_mode_t my_mode = {.name = "cusolvermg-threads", .order = 50,
 *         .what = "...", .available = my_available, .run = my_run};
 *     BENCH_MODE(my_mode)
 *
 * `muster bench` runs every registered mode (or those of --modes) in
 * increasing `order`, reports the median of --reps timed repetitions
 * (after --warmup untimed ones) and the ratio to the baseline mode's median.
 */
#ifndef MUSTER_BENCH_H
#define MUSTER_BENCH_H

#include <stddef.h>
#include <stdint.h>

#include "muster.h"

#define BENCH_MAX_REPS 64

typedef struct bench_problem {
  muster_routine_t routine;
  muster_dtype_t dtype;
  int64_t n, nrhs;
  int64_t m;         /* rows of A and B: gels's m (>= n), else n    */
  int ranks;         /* participants, for modes that have several */
  int reps, warmup;  /* timed and untimed repetitions              */
  const void *A;     /* m x n, column-major, ld m: SPD/Hermitian (potrs,
                        potri, syevd), general (getrs, gels)        */
  const void *B;     /* m x nrhs (potrs, getrs, gels), ld m         */
  const char *provider; /* the muster CPU modes' provider: "lapack" by
                        default; NULL: the runtime's choice (--provider auto) */
  double *inner;     /* out, optional: a mode through muster puts the
                        leader's time inside the provider per timed rep
                        here (res.seconds); left NAN by other modes     */
} bench_problem_t;

typedef struct bench_mode {
  const char *name;  /* [a-z0-9-]+, used by --modes                 */
  const char *what;  /* one line for --help                         */
  int order;         /* run order (baseline 0, muster modes 10..)   */
  int baseline;      /* the mode the others are compared with       */
  /* 0 if it can run this problem here, else < 0 and why. May be NULL. */
  int (*available)(const bench_problem_t *p, char *why, size_t len);
  /* Run warmup + reps solves of p, each on a fresh copy of A and B; put the
   * wall time of each timed one in seconds[0..reps) and the last result X
   * (the whole m x nrhs b after the solve, ld m: potrs, getrs, gels (X in
   * its first n rows); ignored otherwise) in X.  0 or < 0 with err. */
  int (*run)(const bench_problem_t *p, double *seconds, void *X, char *err, size_t len);
  struct bench_mode *next; /* set by bench_register */
} bench_mode_t;

void bench_register(bench_mode_t *m);
const bench_mode_t *bench_modes(void); /* sorted by order */

#define BENCH_MODE(var)                                                        \
  static void __attribute__((constructor)) var##_register(void) { bench_register(&var); }

#endif
