/*
 * runtime/solve/collective.h - running a collective provider on one rank: the
 * piece's layout (muster_dist_t) from the call's, the call, and the
 * watchdog that cancels it when the rest of the solve is gone.
 *
 * Watchdog: a thread started for the call, which every
 * MUSTER__WATCH_TICK_MS calls watch(arg) (for a group: the liveness of its
 * peers and its abort word).  The first time watch reports a failure it
 * calls the provider's cancel(ctx, call, code, why) and stops watching; the
 * provider's collective_solve then returns (NCCL: ncclCommAbort).  A
 * provider without cancel is left to fail by itself.
 * Kind mpi (in->watch NULL and in->boot->kind "mpi"): the peers' process
 * state is out of this node's sight; the watch is their heartbeat over MPI
 * (muster__mpi_beat_check, mpiInt.h: a rank silent for MUSTER_TIMEOUT,
 * however long the call), and without one in this process a deadline
 * (muster__collective_deadline: MUSTER_TIMEOUT, plus
 * MUSTER__DEADLINE_EXPECT_K times the provider's expected seconds for the
 * call when the choice had them, after the call began).  Either way it
 * cancels with MUSTER_ETIMEDOUT (with the heartbeat, after reporting on
 * stderr and MUSTER__MPI_REPORT_GRACE_S, so that the other ranks report
 * too), and when the call has not returned MUSTER__MPI_ABORT_GRACE_S later
 * it ends the job (muster__mpi_abort, mpi.h).  MUSTER_MPI_ABORT=0: no watch;
 * MUSTER_TIMEOUT=inf: no silence or deadline is too long.  docs/bootstrap.md.
 * The thread is stopped and joined before muster__collective_run returns,
 * unless the call was cancelled and did not return (engine.h).
 */
#ifndef MUSTER_COLLECTIVE_H
#define MUSTER_COLLECTIVE_H

#include "solve/leader.h"


/* Kind mpi: how many times the provider's expected seconds a call may take
 * beyond MUSTER_TIMEOUT before it counts as stuck.  4: the expectation is
 * a model fitted on one machine (scalapack: a 16-core Xeon, within 1.11x
 * there) or a table measured on one; a slower CPU, ranks sharing cores or
 * nodes shared with other jobs make the same call several times longer,
 * and a legitimate call the deadline aborts loses all its work, while a
 * stuck one only waits longer to be ended. */
#define MUSTER__DEADLINE_EXPECT_K 4

/* Where muster__coll_in_t.expect_s came from (the choice's candidate). */
#define MUSTER__EXPECT_NONE 0     /* no time: the deadline is MUSTER_TIMEOUT */
#define MUSTER__EXPECT_ESTIMATE 1 /* the provider's estimate()              */
#define MUSTER__EXPECT_COST 2     /* the provider's cost table              */

/* 0 while the call may go on; else a negative code, with the message set
 * in the calling (watchdog) thread. */
typedef int (*muster__watch_fn)(void *arg);

typedef struct muster__coll_in {
  muster__provider_t *p;            /* a collective provider, referenced      */
  const muster_solve_args_t *args;  /* validated; tile: the caller's          */
  const muster_shard_t *mine;
  const muster_dist_t *dist;        /* the caller's 2-D piece (validated:
                                       muster_solve_comm_dist); NULL: the
                                       1-D layout args->layout says       */
  int rank, nranks;
  const muster_bootstrap_t *boot;
  muster__watch_fn watch;           /* NULL: no watchdog                       */
  void *watch_arg;
  int expect_src;                   /* MUSTER__EXPECT_*: of expect_s           */
  double expect_s;                  /* the chosen provider's expected seconds
                                       for this call, from the choice that
                                       chose it (kind mpi: the deadline)      */
} muster__coll_in_t;

/* The deadline of a kind mpi call, in seconds after it begins: timeout
 * (MUSTER_TIMEOUT, > 0) + MUSTER__DEADLINE_EXPECT_K * in->expect_s when
 * in->expect_src says there is one (finite, >= 0), capped at a year.  `how`
 * (cap bytes) gets where it came from: "MUSTER_TIMEOUT" alone, or
 * "60 s MUSTER_TIMEOUT + 4 x 21.3 s estimated by scalapack" ("... from
 * the cost table of NAME"). */
MUSTER_HIDDEN double muster__collective_deadline(const muster__coll_in_t *in, double timeout, char *how,
                                                 size_t cap);

/* This rank's piece of a matrix held as args->layout says (block: P = 1,
 * Q = nranks, nb = ceil(n/nranks); cyclic: nb = tile). */
MUSTER_HIDDEN muster_dist_t muster__collective_dist(const muster_solve_args_t *args,
                                                    const muster_shard_t *mine, int rank, int nranks);

/* *engine_rc of a call that was cancelled and did not return: it is left
 * running (engine.h); its communicators are in use, never release them. */
#define MUSTER__ENGINE_LEFT 1

/* Call in->p->collective_solve for this rank under the watchdog (with a
 * group's watch, on a thread of its own: engine.h).  Fills
 * out->info/tile/seconds/provider.  0, the provider's code (message names
 * the provider and, when the watchdog cancelled it, why), or the info code
 * (muster__info_rc).  *engine_rc: what collective_solve itself returned
 * (0 when only info is bad: every rank has the same then), or
 * MUSTER__ENGINE_LEFT with the cancel's code returned. */
MUSTER_HIDDEN int muster__collective_run(const muster__coll_in_t *in, muster__outcome_t *out,
                                         int *engine_rc);

#endif
