/*
 * docs/examples/example.h - what the examples share, so that each of them
 * shows only its own API family:
 *   CHECK        call a muster function; on failure print which call failed,
 *                its code and muster_last_error(), and go to `out`
 *   EXPECT       the same for a check of the example's own
 *   example_leave            leave a group, reporting a failure
 *   example_a    the test matrix: symmetric positive definite, any entry
 *                computable by anyone, so each rank fills only its columns
 *   example_b    right-hand sides
 *   example_potrs_residual   how well X solves A X = B
 *   example_fork             run a function in N forked processes
 * Only the public header: examples see include/ and link libmuster.so.
 */
#ifndef MUSTER_EXAMPLE_H
#define MUSTER_EXAMPLE_H

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "muster.h"

/* Every muster call returns 0 or a negative MUSTER_E* code; the code says
 * what kind of failure, muster_last_error() (this thread's) who, what and
 * where.  Needs `int rc` and a label `out:` that cleans up. */
#define CHECK(call)                                                                     \
  do {                                                                                  \
    rc = (call);                                                                        \
    if (rc != 0) {                                                                      \
      fprintf(stderr, "%s:%d: %s failed: %s (%s): %s\n", __FILE__, __LINE__, #call,     \
              muster_err_name(rc), muster_strerror(rc), muster_last_error());           \
      goto out;                                                                         \
    }                                                                                   \
  } while (0)

/* A check of the example's own (not a muster call): when cond is false,
 * print the message, set rc to 1 and go to `out`. */
#define EXPECT(cond, ...)                                                               \
  do {                                                                                  \
    if (!(cond)) {                                                                      \
      fprintf(stderr, __VA_ARGS__);                                                     \
      fputc('\n', stderr);                                                              \
      rc = 1;                                                                           \
      goto out;                                                                         \
    }                                                                                   \
  } while (0)

/* Leave g (which frees it whatever happens; the last rank out removes the
 * group's segment) and return rc, or leave's own error if rc was 0. */
static inline int example_leave(muster_group_t *g, int rc) {
  if (!g) return rc;
  int lrc = muster_group_leave(g);
  if (lrc != 0 && rc == 0) {
    fprintf(stderr, "muster_group_leave failed: %s (%s): %s\n", muster_err_name(lrc),
            muster_strerror(lrc), muster_last_error());
    rc = lrc;
  }
  return rc;
}

/* A pseudo-random number in [-1, 1) from (seed, i, j) (splitmix64). */
static inline double example_random(unsigned seed, int64_t i, int64_t j) {
  uint64_t z = ((uint64_t)seed << 40) ^ ((uint64_t)i << 20) ^ (uint64_t)j;
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  return (double)(z >> 11) / (double)(1ull << 52) - 1.0;
}

/* A(i, j) of the n x n test matrix: random off the diagonal, the same for
 * (i, j) and (j, i), and n on the diagonal, so every row's diagonal exceeds
 * the sum of its other entries: symmetric positive definite. */
static inline double example_a(unsigned seed, int64_t n, int64_t i, int64_t j) {
  if (i == j) return (double)n;
  return i < j ? example_random(seed, i, j) : example_random(seed, j, i);
}

/* B(i, k): right-hand side k. */
static inline double example_b(unsigned seed, int64_t i, int64_t k) {
  return example_random(seed + 1, i, k);
}

/* max |A X - B| / (|A| |X| n eps), the residual scaled so that a backward
 * stable solve gives a number of order 1 whatever n and the magnitudes.
 * x: n x nrhs, column-major, leading dimension n. */
static inline double example_potrs_residual(unsigned seed, int64_t n, int64_t nrhs,
                                            const double *x) {
  double r = 0, anorm = 0, xnorm = 0;
  for (int64_t i = 0; i < n; i++) {
    double row = 0;
    for (int64_t j = 0; j < n; j++) row += fabs(example_a(seed, n, i, j));
    anorm = row > anorm ? row : anorm;
  }
  for (int64_t k = 0; k < nrhs; k++)
    for (int64_t i = 0; i < n; i++) {
      double ax = 0;
      for (int64_t j = 0; j < n; j++) ax += example_a(seed, n, i, j) * x[k * n + j];
      r = fmax(r, fabs(ax - example_b(seed, i, k)));
      xnorm = fmax(xnorm, fabs(x[k * n + i]));
    }
  return r / (anorm * xnorm * (double)n * DBL_EPSILON);
}

/* Run fn(rank, arg) in nranks (<= 64) forked processes and wait for all of
 * them.  0 when every one exited 0, else 1.  The parent only waits: it
 * holds no rank.  (Should a fork fail, the ranks already started wait for
 * the missing one until their timeout, and fail with MUSTER_ETIMEDOUT.) */
static inline int example_fork(int nranks, int (*fn)(int rank, void *arg), void *arg) {
  pid_t pids[64];
  int failed = 0, started = 0;
  fflush(NULL); /* or the children print the parent's buffered output again */
  for (; started < nranks && started < 64; started++) {
    pids[started] = fork();
    if (pids[started] < 0) {
      perror("fork");
      failed = 1;
      break;
    }
    if (pids[started] == 0) {
      int rc = fn(started, arg);
      fflush(NULL); /* _exit flushes nothing */
      _exit(rc == 0 ? 0 : 1);
    }
  }
  for (int r = 0; r < started; r++) {
    int status = 0;
    if (waitpid(pids[r], &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      fprintf(stderr, "rank %d (pid %d) failed\n", r, (int)pids[r]);
      failed = 1;
    }
  }
  return failed;
}

#endif
