/*
 * runtime/base/clock.h - the monotonic clock of the runtime's timed waits: a
 * time, a deadline for pthread_cond_timedwait, and a condition variable
 * whose timed waits read that clock (a wall-clock step must not shorten or
 * stretch a watchdog's or a heartbeat's tick).
 */
#ifndef MUSTER_CLOCK_H
#define MUSTER_CLOCK_H

#include <pthread.h>
#include <time.h>

#include "base/error.h"

/* CLOCK_MONOTONIC in seconds. */
MUSTER_HIDDEN double muster__mono_s(void);

/* *until = now + seconds (>= 0) on CLOCK_MONOTONIC, for a condition
 * variable made by muster__cond_init_mono. */
MUSTER_HIDDEN void muster__mono_deadline(struct timespec *until, double seconds);

/* pthread_cond_init with CLOCK_MONOTONIC for its timed waits. */
MUSTER_HIDDEN void muster__cond_init_mono(pthread_cond_t *cv);

#endif
