/*
 * tests/mpi/driver.h - the scalapack provider's test driver, one process
 * per MPI rank (build/tests/mpi-scalapack, run by tests/mpi/run-mpi-tests.sh
 * under mpirun -np 1..4).
 *
 * It dlopen()s build/lib/muster/providers/scalapack.so, builds the MPI
 * bootstrap the runtime will build (kind "mpi", allgather = MPI_Allgather),
 * and calls collective_solve directly with each rank's piece of matrices
 * made by the lapack provider tests' fixture (the same seed on every rank,
 * so every rank knows the whole input).  The lapack provider, loaded in the
 * same process, solves the same input for the comparison of layouts.
 *
 * Output: rank 0 prints "ok K - name" or "not ok K - name: why" per case
 * and closes with "mpi-scalapack np=R MODE: P passed, F failed".
 */
#ifndef MUSTER_TEST_MPI_DRIVER_H
#define MUSTER_TEST_MPI_DRIVER_H

#include <mpi.h>

#include "integration/test_lapack_provider.h"

/* Residuals normalized by n*eps: LAPACK's own tests accept up to 30. */
#define DRV_TOL 30.0

typedef struct drv {
  int rank, size;
  MPI_Comm comm;
  const muster_provider_v2_t *sl;
  void *sl_ctx;
  const muster_provider_v1_t *lp; /* lapack, the reference */
  void *lp_ctx;
  muster_bootstrap_t boot;
  int64_t tile; /* args.tile of the next call: 0 auto */
  unsigned routines, dtypes; /* solve: only these (bits 1u << value), 0: all */
  int passed, failed, cases;
} drv_t;

/* A bootstrap over comm (kind "mpi", MPI_Allgather), with `key`. */
void drv_boot(drv_t *d, muster_bootstrap_t *b, MPI_Comm *comm, uint64_t key);

/* The dist of rank `rank` for fx's layout (block or 1-D cyclic). */
muster_dist_t drv_dist(const lfx_t *fx, int rank);
/* collective_solve on this rank's piece of fx through boot (d->boot when
 * NULL) with args.tile = d->tile; fx->info and fx->err filled. */
int drv_solve(drv_t *d, lfx_t *fx, const muster_bootstrap_t *boot);
/* Give every rank every rank's piece of A, b and w (MPI_Bcast from each),
 * so the fixture's checks read the whole result, every rank's copy. */
void drv_share(drv_t *d, lfx_t *fx);

/* A barrier that sleeps while it waits (Open MPI spins in a blocking one:
 * on 2 cores the waiting ranks would take the CPU the checking rank needs). */
void drv_idle_barrier(drv_t *d);

/* Record one case: every rank passes `ok` (its own verdict); the case
 * passes when all do.  Rank 0 prints it with `why` of the first failing
 * rank.  Returns 1 when it passed everywhere. */
int drv_case(drv_t *d, int ok, const char *why, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* The modes (cases.c, errors.c, loop.c, bench.c). */
void drv_mode_solve(drv_t *d, const int64_t *ns, int nns, int quick);
void drv_mode_errors(drv_t *d);
int drv_mode_loop(drv_t *d, int64_t n, double seconds, double deadline);
void drv_mode_bench(drv_t *d, muster_routine_t routine, const int64_t *ns, int nns,
                    const int64_t *tiles, int ntiles, int reps);

#endif
