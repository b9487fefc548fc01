/*
 * runtime/base/clock.c - the monotonic clock of the runtime's timed waits (see
 * clock.h).
 */
#include "base/clock.h"
#include "muster/clock.h"

double muster__mono_s(void) { return muster_clock_s(); }

void muster__mono_deadline(struct timespec *until, double seconds) {
  clock_gettime(CLOCK_MONOTONIC, until);
  long long ns = (long long)until->tv_nsec + (long long)(seconds * 1e9);
  until->tv_sec += (time_t)(ns / 1000000000LL);
  until->tv_nsec = (long)(ns % 1000000000LL);
}

void muster__cond_init_mono(pthread_cond_t *cv) {
  pthread_condattr_t ca;
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  pthread_cond_init(cv, &ca);
  pthread_condattr_destroy(&ca);
}
