/*
 * tests/mpi/bench.c - "bench": the time of one collective_solve (f64, block
 * layout) per tile, for the measured table behind the provider's automatic
 * tile (providers/scalapack/grid.c, docs/performance/scalapack.md).
 *
 *   mpirun -np R mpi-scalapack bench --routine potrs --n 512,1024 \
 *       --tiles 16,32,64,128 --reps 3
 *
 * The input is cheap to make at any n (the fixture's M M^H is O(n^3)): a
 * symmetric matrix with entries in [-1, 1] from a hash of (i, j), plus n on
 * the diagonal, which makes it diagonally dominant and so SPD.  Each rank
 * fills only its own columns.  Time: the slowest rank's, best of the reps.
 */
#include "mpi/driver.h"

static double entry(int64_t i, int64_t j, int64_t n) {
  uint64_t a = (uint64_t)(i < j ? i : j), b = (uint64_t)(i < j ? j : i);
  uint64_t h = (a * 0x9E3779B97F4A7C15ull) ^ (b + 0x632BE59BD9B4E019ull);
  h ^= h >> 31;
  h *= 0xBF58476D1CE4E5B9ull;
  h ^= h >> 29;
  double v = (double)(h >> 11) / 4503599627370496.0 - 1.0;
  return i == j ? v + (double)n : v;
}

/* One timed call on fresh copies of this rank's piece; the slowest rank's
 * seconds. */
static double one(drv_t *d, muster_routine_t routine, int64_t n, int64_t tile, double *piece,
                  const double *input, int64_t cols, double *b, double *w) {
  memcpy(piece, input, sizeof(double) * (size_t)(n * cols));
  for (int64_t i = 0; i < n; i++) b[i] = 1.0;
  muster_shard_t me = {.mem = MUSTER_MEM_HOST,
                       .device = -1,
                       .a = piece,
                       .lda = n,
                       .ncols = cols,
                       .b = b,
                       .ldb = n,
                       .w = w};
  int64_t info = 0;
  char err[512] = "";
  muster_collective_call_t cc = {.args = {.routine = routine,
                                          .dtype = MUSTER_F64,
                                          .n = n,
                                          .nrhs = 1,
                                          .tile = tile,
                                          .flags = routine == MUSTER_POTRS ? MUSTER_NO_FACTOR : 0},
                                 .mine = &me,
                                 .dist = muster_layout_block_dist(n, d->size, d->rank, n),
                                 .boot = &d->boot,
                                 .info = &info,
                                 .err = err,
                                 .errlen = sizeof err};
  MPI_Barrier(d->comm);
  double t0 = MPI_Wtime();
  int rc = d->sl->collective_solve(d->sl_ctx, &cc);
  double dt = MPI_Wtime() - t0, worst = 0;
  if (rc) fprintf(stderr, "bench rank %d: rc %d: %s\n", d->rank, rc, err);
  ASSERT_EQ(rc, 0);
  MPI_Allreduce(&dt, &worst, 1, MPI_DOUBLE, MPI_MAX, d->comm);
  return worst;
}

static int cmp_double(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return (a > b) - (a < b);
}

void drv_mode_bench(drv_t *d, muster_routine_t routine, const int64_t *ns, int nns,
                    const int64_t *tiles, int ntiles, int reps) {
  ASSERT(reps >= 1 && reps <= 64);
  for (int ni = 0; ni < nns; ni++) {
    int64_t n = ns[ni], col0 = 0, cols = 0;
    ASSERT_EQ(muster_layout_block_cols(n, d->size, d->rank, &col0, &cols), 0);
    size_t bytes = sizeof(double) * (size_t)(n * (cols > 0 ? cols : 1));
    double *input = malloc(bytes), *piece = malloc(bytes);
    double *b = malloc(sizeof(double) * (size_t)n), *w = malloc(sizeof(double) * (size_t)n);
    ASSERT(input && piece && b && w);
    for (int64_t c = 0; c < cols; c++)
      for (int64_t i = 0; i < n; i++) input[c * n + i] = entry(i, col0 + c, n);
    for (int ti = 0; ti < ntiles; ti++) {
      double secs[64];
      one(d, routine, n, tiles[ti], piece, input, cols, b, w); /* warm: grids, pages */
      for (int r = 0; r < reps; r++) secs[r] = one(d, routine, n, tiles[ti], piece, input, cols, b, w);
      qsort(secs, (size_t)reps, sizeof secs[0], cmp_double);
      double median = reps % 2 ? secs[reps / 2] : (secs[reps / 2 - 1] + secs[reps / 2]) / 2;
      if (d->rank == 0)
        printf("bench %s f64 n=%" PRId64 " np=%d tile=%" PRId64 ": %.4f s (median of %d; best %.4f s)\n",
               muster_routine_str(routine), n, d->size, tiles[ti], median, reps, secs[0]);
      fflush(stdout);
    }
    free(input);
    free(piece);
    free(b);
    free(w);
  }
}
