/*
 * muster/clock.h - seconds on CLOCK_MONOTONIC: the one clock muster times
 * things with (the runtime's timed waits, the CLI's and benchmarks' timings
 * and progress, the providers' phases and waits).  Steady (a wall-clock
 * step moves nothing) and the same for every process of a machine, so
 * times taken in different ranks compare.
 *
 * static inline, so a provider, an adapter or a tool uses it without
 * linking anything (as muster/proc.h).
 */
#ifndef MUSTER_CLOCK_H_PUBLIC
#define MUSTER_CLOCK_H_PUBLIC

#include <time.h>

/* Now, in seconds since an arbitrary fixed point (boot). */
static inline double muster_clock_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

#endif
