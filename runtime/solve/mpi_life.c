/*
 * runtime/solve/mpi_life.c - waits on the other ranks of an MPI job that may
 * never end (mpiInt.h): MPI_Init and MPI_Finalize, which wait inside MPI
 * for every rank and cannot be interrupted, run on a thread of their own
 * (the process's MPI thread), and the caller waits for it under a watch;
 * the nonblocking calls (MPI_Test of a request) are waited for the same
 * way.  A wait that gives up returns MUSTER_ETIMEDOUT naming who it waited
 * for: library code never ends the process; the program decides (the CLI
 * reports and _exit()s: the blocked thread cannot be joined).
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/env.h"
#include "solve/mpiInt.h"
#include "base/proc.h"

#define CHECK_NS 100000000ull /* a liveness look every 100 ms */
#define STALL_NS 250000000ull /* a nap this much too long: this process did not run */

static struct life {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int started;
  int (*fn)(void *); /* the job posted, NULL when none */
  void *arg;
  int done, rc;
  char err[600];      /* its message */
  int stuck;          /* a job never returned: the thread is gone for good */
  char stuck_why[700];
} L = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};

static void *life_main(void *unused) {
  (void)unused;
  pthread_mutex_lock(&L.mu);
  for (;;) {
    while (!L.fn) pthread_cond_wait(&L.cv, &L.mu);
    int (*fn)(void *) = L.fn;
    void *arg = L.arg;
    pthread_mutex_unlock(&L.mu);
    int rc = fn(arg);
    pthread_mutex_lock(&L.mu);
    L.rc = rc;
    snprintf(L.err, sizeof L.err, "%s", rc < 0 ? muster_last_error() : "");
    L.fn = NULL;
    L.done = 1;
    pthread_cond_broadcast(&L.cv);
  }
  return NULL;
}

static int life_done(void *unused) {
  (void)unused;
  pthread_mutex_lock(&L.mu);
  int done = L.done;
  pthread_mutex_unlock(&L.mu);
  return done;
}

int muster__mpi_life_run(const char *what, int (*fn)(void *), void *arg) {
  pthread_mutex_lock(&L.mu);
  if (L.stuck) {
    pthread_mutex_unlock(&L.mu);
    return muster__err(MUSTER_ETIMEDOUT, "%s: MPI is unusable in this process: %s", what, L.stuck_why);
  }
  if (!L.started) {
    pthread_t tid;
    sigset_t all, old;
    sigfillset(&all); /* signals are for the program's threads (MPI's inherit this mask) */
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int err = pthread_create(&tid, NULL, life_main, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (err) {
      pthread_mutex_unlock(&L.mu);
      return muster__err(MUSTER_ESYS, "%s: cannot start the MPI thread (pthread_create: %s)", what,
                         strerror(err));
    }
    pthread_detach(tid);
    L.started = 1;
  }
  L.fn = fn;
  L.arg = arg;
  L.done = 0;
  pthread_cond_broadcast(&L.cv);
  pthread_mutex_unlock(&L.mu);
  int rc = muster__mpi_wait(what, life_done, NULL, MUSTER__WAIT_LOCAL);
  pthread_mutex_lock(&L.mu);
  if (rc < 0) { /* the watch gave up on a job that may never return */
    L.stuck = 1;
    snprintf(L.stuck_why, sizeof L.stuck_why, "%s", muster_last_error());
  } else if ((rc = L.rc) < 0) {
    muster__err(rc, "%s", L.err);
  }
  pthread_mutex_unlock(&L.mu);
  return rc;
}

static uint64_t now_ns(void) { return muster__now_mono_ns(); }

/* The no-beat deadline of a wait among the ranks (an exchange without a
 * heartbeat: mpi.c starts none in a program that initialised MPI itself). */
static int past_deadline(const char *what, double waited, double timeout) {
  if (timeout <= 0 || waited <= timeout) return 0;
  return muster__err(MUSTER_ETIMEDOUT, "%s has not completed after %.1f s (MUSTER_TIMEOUT): another rank of "
                     "the job is stopped (SIGSTOP, a debugger) or stuck (no heartbeat in this process to "
                     "tell which: docs/bootstrap.md)", what, waited);
}

int muster__mpi_wait(const char *what, int (*poll)(void *), void *arg, int mode) {
  if (mode == MUSTER__WAIT_SEEN) mode = muster__mpi_beat_on() ? MUSTER__WAIT_PEERS : MUSTER__WAIT_LOCAL;
  int beats = mode != MUSTER__WAIT_LOCAL;
  double timeout = 0, waited = 0;
  int rc = muster__env_timeout(&timeout);
  if (rc < 0) return rc;
  muster__mpi_local_t *local = beats ? NULL : calloc(1, sizeof *local);
  if (!beats && !local) return muster__err(MUSTER_ENOMEM, "%s: out of memory", what);
  uint64_t last = now_ns(), looked = last;
  long nap_ns = 20000; /* short naps first: most waits end at once */
  while ((rc = poll(arg)) == 0) {
    uint64_t now = now_ns(), step = now - last;
    last = now;
    /* time in which this process did not run does not count */
    waited += (step > (uint64_t)nap_ns + STALL_NS ? (uint64_t)nap_ns : step) * 1e-9;
    if (mode != MUSTER__WAIT_FOREVER && now - looked >= CHECK_NS) {
      looked = now;
      if (!beats) rc = muster__mpi_local_check(local, what, waited, timeout);
      else if (muster__mpi_beat_on()) rc = muster__mpi_beat_check();
      else rc = past_deadline(what, waited, timeout);
      if (rc < 0) break;
    }
    struct timespec ts = {0, nap_ns};
    nanosleep(&ts, NULL);
    if (nap_ns < (beats ? 1000000L : 10000000L)) nap_ns *= 2;
  }
  free(local);
  return rc < 0 ? rc : 0;
}
