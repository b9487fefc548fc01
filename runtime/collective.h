/*
 * runtime/collective.h - running a collective provider on one rank: the
 * piece's layout (muster_dist_t) from the call's, the call, and the
 * watchdog that cancels it when the rest of the solve is gone.
 *
 * Watchdog: a thread started for the call, which every
 * MUSTER__WATCH_TICK_MS calls watch(arg) (for a group: the liveness of its
 * peers and its abort word).  The first time watch reports a failure it
 * calls the provider's cancel(ctx, call, code, why) and stops watching; the
 * provider's collective_solve then returns (NCCL: ncclCommAbort).  A
 * provider without cancel is left to fail by itself.
 * Kind mpi (in->watch NULL and in->boot->kind "mpi"): the peers' state is
 * out of sight, so the watchdog has a deadline instead: MUSTER_TIMEOUT
 * after the call began it cancels with MUSTER_ETIMEDOUT, and when the call
 * has not returned MUSTER__MPI_ABORT_GRACE_S later it ends the job
 * (muster__mpi_abort, mpi.h).  MUSTER_MPI_ABORT=0 or MUSTER_TIMEOUT=inf:
 * no deadline.  docs/bootstrap.md.
 * The thread is stopped and joined before muster__collective_run returns.
 */
#ifndef MUSTER_COLLECTIVE_H
#define MUSTER_COLLECTIVE_H

#include "leader.h"

#define MUSTER__WATCH_TICK_MS 100

/* 0 while the call may go on; else a negative code, with the message set
 * in the calling (watchdog) thread. */
typedef int (*muster__watch_fn)(void *arg);

typedef struct muster__coll_in {
  muster__provider_t *p;            /* a collective provider, referenced      */
  const muster_solve_args_t *args;  /* validated; tile: the caller's          */
  const muster_shard_t *mine;
  int rank, nranks;
  const muster_bootstrap_t *boot;
  muster__watch_fn watch;           /* NULL: no watchdog                       */
  void *watch_arg;
} muster__coll_in_t;

/* This rank's piece of a matrix held as args->layout says (block: P = 1,
 * Q = nranks, nb = ceil(n/nranks); cyclic: nb = tile). */
MUSTER_HIDDEN muster_dist_t muster__collective_dist(const muster_solve_args_t *args,
                                                    const muster_shard_t *mine, int rank, int nranks);

/* Call in->p->collective_solve for this rank under the watchdog.  Fills
 * out->info/tile/seconds/provider.  0, the provider's code (message names
 * the provider and, when the watchdog cancelled it, why), or the info code
 * (muster__info_rc).  *engine_rc: what collective_solve itself returned
 * (0 when only info is bad: every rank has the same then). */
MUSTER_HIDDEN int muster__collective_run(const muster__coll_in_t *in, muster__outcome_t *out,
                                         int *engine_rc);

#endif
