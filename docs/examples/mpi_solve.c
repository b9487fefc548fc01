/*
 * docs/examples/mpi_solve.c - a solve across nodes: A X = B with A
 * symmetric positive definite, one MPI rank per process on any node, each
 * holding only its own columns of A.  Run it under a launcher:
 *
 *   mpirun -np R mpi_solve [N]      (default N 211; srun works the same)
 *
 * Each rank opens a communicator of kind "auto" (MPI, found from the
 * launcher's environment; libmpi is dlopen()ed by muster, this program
 * never links it), fills its block of columns (example_a: any entry is
 * computable by anyone, so nothing is sent), calls muster_solve_comm, which
 * runs a collective provider (scalapack) with every rank's piece, and gets
 * all of X back.  Every rank checks its X by the scaled residual
 * |A X - B| / (|A| |X| n eps); rank 0 prints "mpi_solve: ... ok", a rank
 * that fails says so (naming itself) and exits 1.  docs/bootstrap.md.
 */
#include <stdlib.h>
#include <string.h>

#include "example.h"

#define NRHS 2
#define SEED 12345u

int main(int argc, char **argv) {
  int64_t n = argc > 1 ? atoll(argv[1]) : 211, col0 = 0, ncols = 0;
  double *a = NULL, *b = NULL;
  muster_comm_t *c = NULL;
  muster_solve_result_t res;
  int rc, rank = -1, size = 0;
  if (n < 1) {
    fprintf(stderr, "usage: mpirun -np R mpi_solve [N >= 1]\n");
    return 2;
  }

  /* kind "auto": MPI when a launcher started us, else MUSTER_ENOENT */
  muster_comm_opts_t opts = {.kind = "auto"};
  CHECK(muster_comm_open(&opts, &c));
  rank = muster_comm_rank(c);
  size = muster_comm_size(c);

  /* This rank's columns in the block layout, lda = n, and all of B. */
  CHECK(muster_layout_block_cols(n, size, rank, &col0, &ncols));
  a = malloc(sizeof *a * (size_t)(n * (ncols > 0 ? ncols : 1)));
  b = malloc(sizeof *b * (size_t)(n * NRHS));
  EXPECT(a && b, "rank %d: out of memory", rank);
  for (int64_t j = 0; j < ncols; j++)
    for (int64_t i = 0; i < n; i++) a[j * n + i] = example_a(SEED, n, i, col0 + j);
  for (int64_t k = 0; k < NRHS; k++)
    for (int64_t i = 0; i < n; i++) b[k * n + i] = example_b(SEED, i, k);

  muster_solve_args_t args = {.routine = MUSTER_POTRS, .dtype = MUSTER_F64, .n = n, .nrhs = NRHS,
                              .layout = MUSTER_LAYOUT_BLOCK};
  muster_shard_t mine = {.mem = MUSTER_MEM_HOST, .device = -1, .a = a, .lda = n, .col0 = col0,
                         .ncols = ncols, .b = b, .ldb = n};
  /* every rank, its own piece; every rank gets the same outcome */
  CHECK(muster_solve_comm(c, &args, &mine, &res));

  double r = example_potrs_residual(SEED, n, NRHS, b);
  EXPECT(r < 30, "rank %d: residual %.2f, want < 30", rank, r);
  if (rank == 0)
    printf("mpi_solve: potrs n=%lld over %d ranks (%s): provider %s, residual %.2f: ok\n",
           (long long)n, size, muster_comm_kind(c), res.provider, r);
out:
  if (rc != 0 && rank >= 0) fprintf(stderr, "mpi_solve: rank %d of %d failed\n", rank, size);
  free(a);
  free(b);
  if (c) muster_comm_close(c);
  return rc == 0 ? 0 : 1;
}
