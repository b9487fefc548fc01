/*
 * tests/mpi/mpi_comm_test.c - muster_solve_comm over the MPI bootstrap, run
 * by tests/mpi/run-mpi-tests.sh under mpirun.  This program does not link
 * MPI: libmuster dlopen()s libmpi.  Every rank: detects the launcher, opens
 * a comm of kind "auto" (so "mpi"), solves potrs twice through the
 * collective test provider (colltwo: it checks its bootstrap's allgather
 * and the piece's layout, and writes 4 into b), is refused a leader
 * provider, closes.  Prints "rank R/S ok" and exits 0, else the reason and
 * exits 1.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "muster.h"

#define CHECK(cond, ...)                                                                  \
  do {                                                                                    \
    if (!(cond)) {                                                                        \
      fprintf(stderr, "mpi-comm-test: " __VA_ARGS__);                                     \
      fprintf(stderr, " (%s)\n", muster_last_error());                                    \
      return 1;                                                                           \
    }                                                                                     \
  } while (0)

int main(void) {
  char launcher[16];
  int lrank = -1, lsize = -1;
  CHECK(muster_launcher_detect(launcher, sizeof launcher, &lrank, &lsize), "no launcher detected");
  muster_comm_opts_t o = {.kind = "auto"};
  muster_comm_t *c = NULL;
  CHECK(muster_comm_open(&o, &c) == 0, "muster_comm_open failed");
  int rank = muster_comm_rank(c), size = muster_comm_size(c);
  CHECK(!strcmp(muster_comm_kind(c), "mpi"), "kind %s", muster_comm_kind(c));
  CHECK(rank == lrank && size == lsize, "MPI says %d/%d, %s's environment %d/%d", rank, size, launcher,
        lrank, lsize);
  int64_t n = 13, col0, ncols;
  CHECK(muster_layout_block_cols(n, size, rank, &col0, &ncols) == 0, "layout");
  muster_shard_t s = {.mem = MUSTER_MEM_HOST, .device = -1, .lda = n, .ldb = n, .col0 = col0, .ncols = ncols};
  s.a = calloc((size_t)(n * (ncols ? ncols : 1)), 8);
  s.b = calloc((size_t)(n * 3), 8);
  s.w = calloc((size_t)n, 8);
  muster_solve_args_t a = {.routine = MUSTER_POTRS, .dtype = MUSTER_F64, .n = n, .nrhs = 3};
  muster_solve_result_t res;
  for (int k = 0; k < 2; k++) {
    memset(s.b, 0, (size_t)(n * 3) * 8);
    CHECK(muster_solve_comm(c, &a, &s, &res) == 0, "rank %d: solve %d failed", rank, k);
    CHECK(!strcmp(res.provider, "colltwo"), "provider %s", res.provider);
    for (int64_t i = 0; i < n * 3; i++) CHECK(((double *)s.b)[i] == 4.0, "b[%ld] = %g", (long)i, ((double *)s.b)[i]);
  }
  a.provider = "testprov";
  CHECK(muster_solve_comm(c, &a, &s, &res) == MUSTER_EUNSUPPORTED, "a leader provider was not refused");
  CHECK(strstr(muster_last_error(), "muster_solve_comm runs collective providers only") != NULL, "message");
  CHECK(muster_comm_close(c) == 0, "close");
  free(s.a);
  free(s.b);
  free(s.w);
  printf("rank %d/%d ok (%s)\n", rank, size, launcher);
  return 0;
}
