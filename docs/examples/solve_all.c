/*
 * docs/examples/solve_all.c - a single caller holding every shard: the
 * eigenvalues and eigenvectors of a symmetric A whose columns are split
 * into R block shards, all in this one thread (as PyTorch, CuPy or a plain
 * C program hold them).  No group, no threads: muster_solve_all takes the
 * shards as an array, shards[r] being rank r's.
 *
 *   solve_all [N] [R]      (default: 60 3)
 *
 * Checks A v = w v for every eigenpair (scaled residual), that the vectors
 * have norm 1 and the values ascend.  Prints "solve_all: ... ok"; on a
 * failure, what failed and exit status 1.
 */
#include <stdlib.h>
#include <time.h>

#include "example.h"

/* Column j of the eigenvectors: shard r holds global columns
 * [col0, col0 + ncols). */
static const double *vector(const muster_shard_t *shards, int nranks, int64_t j) {
  for (int r = 0; r < nranks; r++)
    if (j >= shards[r].col0 && j < shards[r].col0 + shards[r].ncols)
      return (const double *)shards[r].a + (j - shards[r].col0) * shards[r].lda;
  return NULL;
}

/* max |A v - w v| / (|A| n eps) over the eigenpairs; -1 if a vector's norm
 * is not 1 or the values do not ascend (a zero vector would have no residual). */
static double eigen_residual(unsigned seed, int64_t n, const double *w,
                             const muster_shard_t *shards, int nranks) {
  double r = 0, anorm = 0;
  for (int64_t i = 0; i < n; i++) {
    double row = 0;
    for (int64_t k = 0; k < n; k++) row += fabs(example_a(seed, n, i, k));
    anorm = fmax(anorm, row);
  }
  for (int64_t j = 0; j < n; j++) {
    const double *v = vector(shards, nranks, j);
    double norm = 0;
    if (!v || (j > 0 && w[j] < w[j - 1])) return -1;
    for (int64_t i = 0; i < n; i++) {
      double av = 0;
      for (int64_t k = 0; k < n; k++) av += example_a(seed, n, i, k) * v[k];
      r = fmax(r, fabs(av - w[j] * v[i]));
      norm += v[i] * v[i];
    }
    if (fabs(sqrt(norm) - 1) > 100 * (double)n * DBL_EPSILON) return -1;
  }
  return r / (anorm * (double)n * DBL_EPSILON);
}

int main(int argc, char **argv) {
  unsigned seed = (unsigned)time(NULL) ^ (unsigned)getpid();
  int64_t n = argc > 1 ? atoll(argv[1]) : 60;
  int nranks = argc > 2 ? atoi(argv[2]) : 3;
  muster_shard_t shards[MUSTER_MAX_RANKS] = {{0}};
  muster_solve_result_t res;
  double residual = -1;
  int rc = 0;
  if (n < 1 || nranks < 1 || nranks > MUSTER_MAX_RANKS) {
    fprintf(stderr, "usage: solve_all [N >= 1] [R (1..%d)]\n", MUSTER_MAX_RANKS);
    return 2;
  }
  for (int r = 0; r < nranks; r++) {
    muster_shard_t *s = &shards[r];
    double *a;
    /* rank r's columns in the block layout, the eigenvalues' room */
    CHECK(muster_layout_block_cols(n, nranks, r, &s->col0, &s->ncols));
    s->mem = MUSTER_MEM_HOST;
    s->device = -1;
    s->lda = n;
    s->a = a = malloc(sizeof *a * (size_t)(n * (s->ncols ? s->ncols : 1)));
    s->w = malloc(sizeof(double) * (size_t)n); /* every shard gets all of w */
    EXPECT(s->a && s->w, "out of memory");
    for (int64_t j = 0; j < s->ncols; j++)
      for (int64_t i = 0; i < n; i++) a[j * n + i] = example_a(seed, n, i, s->col0 + j);
  }
  muster_solve_args_t args = {.routine = MUSTER_SYEVD, .dtype = MUSTER_F64, .n = n,
                              .layout = MUSTER_LAYOUT_BLOCK};
  /* A's columns become the eigenvectors', w the eigenvalues, ascending. */
  CHECK(muster_solve_all(&args, nranks, shards, &res));
  residual = eigen_residual(seed, n, shards[0].w, shards, nranks);
  printf("solve_all: syevd f64 n=%lld over %d shards, provider %s: scaled residual %.3g "
         "(seed %u)\n", (long long)n, nranks, res.provider, residual, seed);
  EXPECT(residual >= 0 && residual < 10, "solve_all: wrong eigenpairs");
  for (int r = 1; r < nranks; r++)
    for (int64_t i = 0; i < n; i++)
      EXPECT(((double *)shards[r].w)[i] == ((double *)shards[0].w)[i],
             "solve_all: shard %d has another w[%lld]", r, (long long)i);
  printf("solve_all: ok\n");
out:
  for (int r = 0; r < nranks; r++) {
    free(shards[r].a);
    free(shards[r].w);
  }
  return rc == 0 ? 0 : 1;
}
