/*
 * tests/mpi/driver.h - the scalapack provider's test driver, one process
 * per MPI rank (build/tests/mpi-scalapack, run by tests/mpi/run-mpi-tests.sh
 * under mpirun -np 1..4).
 *
 * Inputs come from the lapack provider tests' fixture: fresh random
 * matrices from a seed rank 0 draws per run (--seed to repeat one), the
 * same on every rank, so every rank knows the whole input.  A call goes
 *   - the way users reach the provider: muster_comm_open(kind "mpi") and
 *     muster_solve_comm (the runtime's MPI bootstrap, descriptor rounds,
 *     choice, loading through the registry), or
 *   - straight to the provider's collective_solve (the runtime's
 *     muster__provider_get loads it, muster__mpi_boot makes the bootstrap):
 *     for what the runtime cannot pass (a provider tile on a block layout)
 *     or refuses before the provider sees it (ranks that disagree, hostile
 *     bootstraps), i.e. the provider's own half of the ABI contract.
 * The lapack provider, loaded in the same process, solves the same input
 * for the comparison of layouts.
 *
 * Output: rank 0 prints "ok K - name" or "not ok K - name: why" per case
 * and closes with "mpi-scalapack np=R MODE: P passed, F failed".
 */
#ifndef MUSTER_TEST_MPI_DRIVER_H
#define MUSTER_TEST_MPI_DRIVER_H

#include <mpi.h>
#include <stdatomic.h>

#include "solve/mpi.h" /* the runtime's MPI bootstrap, not Open MPI's <mpi.h> */
#include "registry/choice.h"
#include "integration/test_lapack_provider.h"

/* Residuals normalized by n*eps: LAPACK's own tests accept up to 30. */
#define DRV_TOL 30.0

typedef struct drv {
  int rank, size;
  MPI_Comm comm;
  uint64_t seed;           /* this run's base seed (the same on every rank) */
  muster_comm_t *mc;       /* the public API's communicator, kind "mpi" */
  muster__mpi_t *mpi;      /* the runtime's MPI bootstrap, for direct calls */
  muster__provider_t *slp; /* scalapack as the registry loaded it */
  const muster_provider_v2_t *sl;
  void *sl_ctx;
  const muster_provider_v2_t *lp; /* lapack, the reference */
  void *lp_ctx;
  muster_bootstrap_t boot;   /* over d->mpi, key 1 */
  int via_comm;              /* drv_solve: through muster_solve_comm when it can */
  int64_t tile;              /* args.tile of the next call: 0 auto */
  unsigned routines, dtypes; /* solve: only these (bits 1u << value), 0: all */
  muster_solve_result_t res; /* of the last call through muster_solve_comm */
  _Atomic(const muster_collective_call_t *)
      running; /* the direct call under way (loop's watchdog) */
  int passed, failed, cases;
} drv_t;

/* A bootstrap over an MPI communicator of the test's own (a sub-
 * communicator: the runtime's MPI bootstrap is over MPI_COMM_WORLD only),
 * with `key`.  Direct calls only. */
void drv_boot(muster_bootstrap_t *b, MPI_Comm *comm, uint64_t key);

/* The dist of rank `rank` for fx's layout (block or 1-D cyclic). */
muster_dist_t drv_dist(const lfx_t *fx, int rank);
/* Solve fx on this job's ranks: through muster_solve_comm when d->via_comm
 * and d->tile is 0 (auto; a cyclic layout then passes its own tile, which
 * the provider uses too), else directly on d->boot.  fx->info and fx->err
 * filled (the runtime's last error through muster_solve_comm, with d->res). */
int drv_solve(drv_t *d, lfx_t *fx);
/* collective_solve directly on this rank's piece through boot, with
 * args.tile = d->tile; d->running names the call while it runs. */
int drv_solve_on(drv_t *d, lfx_t *fx, const muster_bootstrap_t *boot);
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

/* Keep the first reason a check failed: writes why unless it holds one. */
void drv_say(char *why, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Every rank's X (its b, as shared) against ref's (rank 0's b) within
 * tol * (1 + |ref|), element by element (cases.c). */
void drv_compare_x(const lfx_t *fx, const lfx_t *ref, double tol, char *why, size_t len);
/* Every rank returned `want` (the same code everywhere) with `text` in its
 * message (NULL: any): 1, else 0 with why (errors.c). */
int drv_expect(drv_t *d, const lfx_t *fx, int rc, int want, const char *text, char *why,
               size_t len);

/* The modes (cases.c, errors.c, general.c, factors.c, dist.c, loop.c, bench.c). */
void drv_mode_solve(drv_t *d, const int64_t *ns, int nns, int quick);
void drv_mode_errors(drv_t *d);
void drv_mode_general(drv_t *d, const int64_t *ns, int nns);
void drv_mode_factors(drv_t *d);
/* 2-D pieces through muster_solve_comm_dist (dist.c). */
void drv_mode_dist(drv_t *d);
int drv_mode_loop(drv_t *d, int64_t n, double seconds, double deadline);
void drv_mode_bench(drv_t *d, muster_routine_t routine, const int64_t *ns, int nns,
                    const int64_t *tiles, int ntiles, int reps);

#endif
