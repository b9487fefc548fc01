/*
 * runtime/solve/engine.h - a collective provider's call on a thread of its own,
 * which the calling rank can leave behind.
 *
 * Why: cancel (ncclCommAbort for cusolvermp) is meant to end a call whose
 * peer died, but an engine can stay inside its call regardless: on 4 x
 * H200 (2026-11-26, cuSOLVERMp 0.8.0, NCCL 2.28.9) a survivor of a peer
 * SIGKILLed mid-syevd spun at 100% of a core inside cuSOLVERMp for as long
 * as it was left (over 60 s, then killed), after the watchdog's abort.  A
 * thread cannot be ended from outside, so the rank's own thread does not
 * run the engine: it waits for it, and once the call was cancelled and has
 * not returned within MUSTER__ENGINE_GRACE_S it returns the cancel's error
 * and leaves the call running, abandoned (its thread, this record and the
 * watchdog's, never freed, the provider's reference and whatever the
 * engine holds: the process should end; exit() is then quick, since a thread inside a provider makes the
 * runtime's exit handler end the process at once: exit_guard.h).
 *
 * Only for calls a watchdog watches through a group (kind mpi ends the job
 * instead: collective.h); the engine's thread counts itself inside a
 * guarded call (exit_guard.h) for as long as it runs, and its rank's
 * thread, inside its own, leaves it only once it has.
 */
#ifndef MUSTER_ENGINE_H
#define MUSTER_ENGINE_H

#include <pthread.h>

#include "registry/registry.h"

/* How often a waiting engine and the collective watchdog look up (ms). */
#define MUSTER__WATCH_TICK_MS 100

/* Seconds a cancelled call has to return before its rank leaves it.  3: a
 * provider's cancel that works ends its call within a watchdog tick or two
 * (the test provider: at once; cusolvermp: its polling wait, 200 us); a
 * GPU stream draining after an abort takes up to MP_DRAIN_S (2 s). */
#define MUSTER__ENGINE_GRACE_S 3.0

typedef struct muster__engine {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int started;                    /* its thread is inside its exit guard (under mu) */
  int done;                       /* collective_solve returned (under mu) */
  int rc;                         /* what collective_solve returned        */
  double seconds;                 /* how long it ran                        */
  double returned_at;             /* muster__mono_s() when it returned      */
  muster__provider_t *p;          /* referenced while the call runs         */
  muster_collective_call_t call;  /* a copy: its pointers lead here         */
  muster_shard_t mine;
  int64_t info, tile;
  char err[512];
  /* The bootstrap the engine sees (call.boot): the caller's, through
   * boot_mu, until its rank leaves the call (revoked): the caller's boot
   * and group are then its own again, and a later allgather of the engine
   * fails without touching them. */
  pthread_mutex_t boot_mu;
  int revoked;                    /* under boot_mu */
  muster_bootstrap_t boot, inner;
} muster__engine_t;

/* A record for p's collective_solve on a copy of call (call.mine, info,
 * tile_used, err and boot are pointed into the record): 0 with *out, or
 * MUSTER_ENOMEM.  Nothing runs yet: e->call is the call to cancel. */
MUSTER_HIDDEN int muster__engine_new(muster__provider_t *p, const muster_collective_call_t *call,
                                     muster__engine_t **out);

/* Start e's call on a thread of its own: 0, or MUSTER_ESYS (e not started:
 * free it). */
MUSTER_HIDDEN int muster__engine_run(muster__engine_t *e);

/* Wait for e's call to return: 1, e done (free it with
 * muster__engine_free).  Every MUSTER__WATCH_TICK_MS asks give_up(arg);
 * when it says 1, takes the bootstrap back from the engine (waiting up to
 * MUSTER__ENGINE_GRACE_S for an allgather of the engine's to end: the group
 * is poisoned by then, so it ends) and returns 0, or -1 when the engine
 * stayed inside an allgather all that time (the caller's bootstrap and
 * group are then still the engine's: never free them).  e is then left,
 * never freed (a cancel still running may name e->call). */
MUSTER_HIDDEN int muster__engine_wait(muster__engine_t *e, int (*give_up)(void *), void *arg);

/* Free a record that is done or never ran. */
MUSTER_HIDDEN void muster__engine_free(muster__engine_t *e);

#endif
