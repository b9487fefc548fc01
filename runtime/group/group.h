/*
 * runtime/group/group.h - what other runtime modules (solve, providers) may use of
 * a group beyond the public muster_group_* API.
 *
 * Semantics the solve code relies on (docs/runtime.md has the full story):
 *   - muster_group_join does not wait; the first exchange/barrier does.
 *   - Every participant must make the same sequence of exchange/barrier
 *     calls between join and leave; each such call is one round.
 *   - Payloads of the last exchange stay readable until the caller's next
 *     exchange/barrier; the leader's status set before a barrier is read
 *     back after it by everybody.
 *   - Any failure poisons the group: every participant's current or next
 *     exchange/barrier returns the same code and message; later calls on
 *     the same handle return MUSTER_EPOISONED.  Leave always frees.
 */
#ifndef MUSTER_GROUP_H
#define MUSTER_GROUP_H

#include <stdint.h>
#include <sys/types.h>

#include "base/error.h"
#include "muster.h"

/* pid of the process sitting at `rank` (0 if the seat is empty). */
MUSTER_HIDDEN pid_t muster__group_peer_pid(const muster_group_t *g, int rank);

/* 1 if every rank's seat is held by a thread of this process (threads
 * mode), else 0.  Meaningful once a barrier/exchange has passed (before,
 * some seats may still be empty). */
MUSTER_HIDDEN int muster__group_all_local(const muster_group_t *g);

/* device the participant at `rank` passed in its opts (-1 host). */
MUSTER_HIDDEN int muster__group_device(const muster_group_t *g, int rank);

/* the rendezvous timeout of this handle, seconds */
MUSTER_HIDDEN double muster__group_timeout(const muster_group_t *g);

/* Barrier with its own deadline: timeout_s <= 0 waits without a deadline
 * (for "wait while the leader computes", which may take minutes), still
 * checking every ~100 ms that the ranks not yet arrived are alive and that
 * the group is not poisoned. */
MUSTER_HIDDEN int muster__group_barrier_ex(muster_group_t *g, double timeout_s);

/* muster_group_leave, and this process forgets the group (its cache
 * entry is dropped, its mapping and fd go with the last handle): for a
 * group whose name nobody will join again (a comm's one-node group,
 * comm_local.c), which would otherwise stay mapped until the cache
 * evicts it. */
MUSTER_HIDDEN int muster__group_leave_forget(muster_group_t *g);

/* Wait until every rank of g's group has taken its seat at least once
 * (the group is "formed": a rank of this call that comes later then
 * learns of a poison at its join or its next round, where before it would
 * meet in a fresh segment of the same name), the group is poisoned, or
 * timeout_s has passed (<= 0: no deadline).  1 when formed, else 0.  It
 * polls (1 to 10 ms): for a rank that fails before a call and aborts it
 * (muster_abort_named), never on a solve's path. */
MUSTER_HIDDEN int muster__group_await_formed(const muster_group_t *g, double timeout_s);

/* Poison with a formatted reason (like muster_group_abort, printf style). */
MUSTER_HIDDEN int muster__group_abortf(muster_group_t *g, int code, const char *fmt, ...)
    MUSTER_PRINTF(3, 4);

/* A watchdog's view of one group: the handle, and what it remembers
 * between checks (zero it before the first). */
typedef struct muster__group_watch {
  const muster_group_t *g;
  uint64_t stopped_since_ns[MUSTER_MAX_RANKS]; /* monotonic; 0: running */
} muster__group_watch_t;

/* Is the group still fit for the call its ranks are in?  arg: a
 * muster__group_watch_t (the signature of collective.h's watch hook).  For
 * a watchdog thread (runtime/solve/collective.c) while the handle's own thread is
 * inside a provider.  0, or the group's poison code and reason, or
 * MUSTER_EPEERDEAD when another rank's occupant is dead, or
 * MUSTER_ETIMEDOUT when another rank's process has been stopped (SIGSTOP,
 * a debugger) for longer than the group's timeout; the group is then
 * poisoned naming that rank, so every rank hears of it.  Reads only the
 * segment and /proc; safe from any thread while the handle is in use. */
MUSTER_HIDDEN int muster__group_watch(void *arg);
/* Check the arguments of a join (rank >= 0) or of a launcher (rank -1) of
 * group `name`, and resolve the job (opts->job, else $MUSTER_JOB, else
 * "default") and the timeout (opts->timeout_s, else $MUSTER_TIMEOUT; 0 = no
 * deadline).  MUSTER_EINVAL with the message set (also for a malformed
 * MUSTER_LOG, so a bad environment fails the first call that meets it). */
MUSTER_HIDDEN int muster__group_check_args(const char *name, int rank, int nranks,
                                           const muster_group_opts_t *opts, const char **job,
                                           double *timeout);

/* For a launcher (launch.c): find or create group (job, name, nranks) in
 * this process's cache, as a join would (an unhealthy cached entry is
 * dropped first), taking a reference but no seat, so that processes forked
 * from now on find it in the cache they inherit.  *created = 1 when this
 * call created the segment.  *seg stays mapped until
 * muster__group_release_hold(*hold, forget); forget = 1 also drops it from
 * the cache (the launcher is done with it).  Errors: those of a join's. */
struct muster_segment;
MUSTER_HIDDEN int muster__group_hold(const char *job, const char *name, int nranks,
                                     struct muster_segment **seg, void **hold, int *created);
MUSTER_HIDDEN void muster__group_release_hold(void *hold, int forget);

/* At exit (exit_guard.c, after joins are refused): remove the name of every
 * cached group that never formed and that nobody else can still use (it
 * would be stale once this process is gone, segment.h), and of every
 * formed one whose name is still there (its last rank was between marking
 * it formed and removing the name), so that a process ending while its
 * threads join leaves nothing in /dev/shm. */
MUSTER_HIDDEN void muster__group_cache_exit(void);

/* Number of group segments this process has cached (tests). */
MUSTER_HIDDEN int muster__group_cache_count(void);

#endif
