/*
 * runtime/shm/barrier_blame.h - the barrier's judgement of the ranks that
 * hold a round up (barrier_blame.c).  Private to shm/barrier.c.
 *
 * The arrival window.  An arriving rank first shows itself in its slot
 * (phase WAITING at generation g), then adds itself to the counter
 * `arrived`.  A rank stopped (SIGSTOP) or killed between the two looks
 * arrived to everyone, yet the round can never end: the counter stays one
 * short.  Everything below that skips "arrived" ranks must therefore also
 * look at the arrived ones once the counter has been seen short of the
 * slots at two liveness ticks in a row (`uncounted`: a running rank
 * crosses the window in microseconds).
 */
#ifndef MUSTER_BARRIER_BLAME_H
#define MUSTER_BARRIER_BLAME_H

#include <stdint.h>

#include "shm/segment.h"

/* 1 if fewer ranks are counted in `arrived` than slots say arrived at
 * round g (some rank is inside the arrival window), 0 if not or if round g
 * is over. */
MUSTER_HIDDEN int muster__barrier_uncounted(const struct muster_seg_header *h, uint32_t g);

/* A missing rank (with `uncounted`: also an arrived one) is dead: poison
 * with EPEERDEAD and return it; MUSTER_OK if none is. */
MUSTER_HIDDEN int muster__barrier_check_missing(struct muster_seg_header *h, int me, uint32_t g,
                                                uint64_t barrier_no, int uncounted);

/* The deadline passed after `waited` s (`stalled` s more not counted):
 * poison with ETIMEDOUT naming every rank that has not arrived at round g
 * (never `me`), and with `uncounted` the arrived ones stuck in the arrival
 * window; MUSTER_OK when there is nobody to name (the round ended, or a
 * rank is crossing the window: the caller tries again at its next tick). */
MUSTER_HIDDEN int muster__barrier_timeout(struct muster_seg_header *h, int me, uint32_t g,
                                          uint64_t barrier_no, double waited, double stalled,
                                          int uncounted);

/* No deadline, but a stop limit: poison with ETIMEDOUT once a missing rank
 * (with `uncounted`: or an arrived one) has been seen stopped at every
 * liveness tick for more than limit_s.  *since is when it was first seen
 * stopped (0: none is). */
MUSTER_HIDDEN int muster__barrier_check_stopped(struct muster_seg_header *h, int me, uint32_t g,
                                                uint64_t barrier_no, double limit_s, uint64_t now,
                                                uint64_t *since, int uncounted);

#endif
