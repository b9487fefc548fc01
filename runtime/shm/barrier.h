/*
 * runtime/shm/barrier.h - the process-shared barrier that lives in a segment.
 *
 * A central counter barrier: each arriving rank records the generation word
 * it saw in its slot, adds itself to `arrived`; the last one resets
 * `arrived` and bumps `generation` (the futex word), waking sleepers only
 * if there are any.  Waiters spin briefly, then sleep on the futex in
 * slices of LIVENESS_TICK so they can check the abort word, the deadline
 * and the liveness (pid + start time) of the ranks that have not arrived.
 * A failure poisons the segment (abort word + code + reason) and wakes
 * everyone, so every participant returns the same error.
 */
#ifndef MUSTER_BARRIER_H
#define MUSTER_BARRIER_H

#include <stdint.h>

#include "shm/segment.h"

/* How often a sleeping waiter checks peers' liveness (ns), and when the
 * first check comes after its arrival. */
#define MUSTER_LIVENESS_TICK_NS (100ull * 1000 * 1000)
#define MUSTER_LIVENESS_FIRST_NS (20ull * 1000 * 1000)

/* A waiter that finds this much more time passed between two of its own
 * clock readings than it slept did not run meanwhile (its process was
 * stopped, or the VM paused): that time does not count against the
 * deadline.  Well above a late wake-up on a busy machine (tens of ms), well
 * below a stop a person or a debugger makes. */
#define MUSTER_STALL_NS (250ull * 1000 * 1000)

/* Wait at the barrier as `rank`.  timeout_s <= 0: no deadline (liveness is
 * still checked).  The deadline counts the time this waiter could run since
 * its arrival (see MUSTER_STALL_NS; a suspended machine does not count
 * either); on it, every rank that has not arrived is named with where it
 * is (never the caller).  barrier_no is the 1-based index of this barrier within
 * the caller's session, used in messages only.  On success *gen is the
 * generation value of the barrier that completed (the round).  Errors:
 * MUSTER_EPEERDEAD, MUSTER_ETIMEDOUT (the group is poisoned by us), or the
 * code stored by whoever poisoned the group first. */
MUSTER_HIDDEN int muster__barrier_wait(struct muster_seg_header *h, int rank, double timeout_s,
                                       uint64_t barrier_no, uint32_t *gen);

/* The same with no deadline for ranks that are busy (a leader computing for
 * hours is fine) but one for ranks that are stopped: a missing rank whose
 * process has been stopped (SIGSTOP, a debugger; state T or t) for more
 * than stop_limit_s without a break ends the wait with MUSTER_ETIMEDOUT
 * naming it ("has been stopped ... for 2.1 s, more than the timeout").
 * stop_limit_s <= 0: never (only liveness is checked, as timeout_s <= 0
 * above). */
MUSTER_HIDDEN int muster__barrier_wait_busy(struct muster_seg_header *h, int rank,
                                            double stop_limit_s, uint64_t barrier_no,
                                            uint32_t *gen);

/* Poison: first caller wins and stores code/rank/pid/reason; everyone
 * waiting is woken.  Returns 1 if this call set it, 0 if it was set. */
MUSTER_HIDDEN int muster__barrier_poison(struct muster_seg_header *h, int code, int rank,
                                         int pid, const char *reason);

/* 0 if healthy, else the stored code with muster_last_error() set to the
 * stored reason. */
MUSTER_HIDDEN int muster__barrier_check_abort(const struct muster_seg_header *h);

/* Is the occupant (or, in a formed group, the last occupant) of `rank`
 * known dead?  If so writes "rank r (pid p, device d) died" into buf and its
 * last phase into *phase (may be NULL). */
MUSTER_HIDDEN int muster__barrier_rank_dead(const struct muster_seg_header *h, int rank,
                                            char *buf, size_t cap, uint32_t *phase);

/* Human name of a slot phase ("waiting at the barrier"). */
MUSTER_HIDDEN const char *muster__phase_name(uint32_t phase);

#endif
