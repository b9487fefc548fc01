/*
 * docs/examples/run_on_devices.c - one thread per device: how a plain C
 * program runs one rank per GPU (here host "devices", -1, so it runs
 * anywhere).  muster_run_on_devices starts a thread per entry of devices[],
 * makes that device current in it (cudaSetDevice, for CUDA ordinals), calls
 * fn(rank, device, arg) in every thread once all are ready, waits for all,
 * and returns the first non-zero return of fn.
 *
 *   run_on_devices [R]      (default: 4)
 *
 * First every rank records that it ran; then a second run in which rank 1
 * fails on purpose shows how a rank's failure comes back.  Prints
 * "run_on_devices: ... ok"; on a failure, what failed and exit status 1.
 */
#include <pthread.h>
#include <stdlib.h>

#include "example.h"

typedef struct seen {
  pthread_mutex_t mu;
  int runs[MUSTER_MAX_RANKS]; /* how often each rank ran */
  pthread_t thread[MUSTER_MAX_RANKS];
} seen_t;

static int record(int rank, int device, void *arg) {
  seen_t *seen = arg;
  pthread_mutex_lock(&seen->mu);
  seen->runs[rank]++;
  seen->thread[rank] = pthread_self();
  pthread_mutex_unlock(&seen->mu);
  return device == -1 ? 0 : 1; /* we asked for the host everywhere */
}

/* A rank's own failure: any non-zero value (a MUSTER_E* code, or a code of
 * the caller's like this 7) comes back from muster_run_on_devices, with
 * muster_last_error() naming the rank and device. */
static int fail_on_rank1(int rank, int device, void *arg) {
  (void)device;
  (void)arg;
  return rank == 1 ? 7 : 0;
}

int main(int argc, char **argv) {
  int nranks = argc > 1 ? atoi(argv[1]) : 4, devices[MUSTER_MAX_RANKS], rc = 0;
  seen_t seen = {.mu = PTHREAD_MUTEX_INITIALIZER};
  if (nranks < 2 || nranks > MUSTER_MAX_RANKS) {
    fprintf(stderr, "usage: run_on_devices [R (2..%d)]\n", MUSTER_MAX_RANKS);
    return 2;
  }
  for (int r = 0; r < nranks; r++) devices[r] = -1; /* host; a CUDA ordinal for a GPU */

  CHECK(muster_run_on_devices(nranks, devices, record, &seen));
  for (int r = 0; r < nranks; r++) {
    EXPECT(seen.runs[r] == 1, "rank %d ran %d times", r, seen.runs[r]);
    for (int q = 0; q < r; q++) /* a thread per rank */
      EXPECT(!pthread_equal(seen.thread[q], seen.thread[r]), "ranks %d and %d shared a thread", q, r);
  }
  printf("run_on_devices: %d ranks ran once each, each in its own thread\n", nranks);

  rc = muster_run_on_devices(nranks, devices, fail_on_rank1, NULL);
  EXPECT(rc == 7, "expected rank 1's 7 back, got %d", rc);
  printf("run_on_devices: rank 1's failure came back: %d, \"%s\"\n", rc, muster_last_error());
  rc = 0;
  printf("run_on_devices: ok\n");
out:
  return rc == 0 ? 0 : 1;
}
