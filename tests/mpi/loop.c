/*
 * tests/mpi/loop.c - "loop": potrs f64 of order n again and again until
 * `seconds` pass, for the fault tests of run-mpi-tests.sh (a rank SIGKILLed
 * or SIGSTOPped mid-solve).  Every rank prints "loop rank R pid P" once its
 * second solve has started, so the script knows whom to hit.
 *
 * Without --deadline the solves go through muster_solve_comm (kind mpi), as
 * a user's do: a killed rank ends the job through mpirun.  With --deadline D
 * they go straight to the provider and a watchdog thread plays the part the
 * runtime plays for kind group: the runtime has no watchdog for kind mpi
 * (docs/bootstrap.md: MPI ends a job whose rank died, but a stopped rank
 * is not dead), so when one solve has run for D seconds it calls the
 * provider's cancel(ctx, call, MUSTER_ETIMEDOUT, why) for the call under way,
 * as the runtime's watchdog does when MUSTER_TIMEOUT passes for a stopped
 * peer.  The provider then aborts the MPI job.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

#include "mpi/driver.h"

typedef struct watch {
  drv_t *d;
  double deadline;
  _Atomic double started; /* MPI_Wtime of the running solve, 0 between solves */
  atomic_int done;
} watch_t;

static void *watchdog(void *arg) {
  watch_t *w = arg;
  while (!atomic_load(&w->done)) {
    struct timespec ts = {0, 50 * 1000 * 1000};
    nanosleep(&ts, NULL);
    double t0 = atomic_load(&w->started);
    if (t0 > 0 && MPI_Wtime() - t0 > w->deadline) {
      char why[160];
      snprintf(why, sizeof why,
               "a solve has run %.1f s, past the %.1f s deadline (a peer stopped?)",
               MPI_Wtime() - t0, w->deadline);
      const muster_collective_call_t *call = atomic_load(&w->d->running);
      /* between two solves: the next one is timed afresh */
      if (call) w->d->sl->cancel(w->d->sl_ctx, call, MUSTER_ETIMEDOUT, why);
    }
  }
  return NULL;
}

int drv_mode_loop(drv_t *d, int64_t n, double seconds, double deadline) {
  lfx_seed(d->seed);
  d->via_comm = deadline <= 0;
  lfx_t fx = {.routine = MUSTER_POTRS,
              .t = MUSTER_F64,
              .n = n,
              .nrhs = 1,
              .R = d->size,
              .layout = MUSTER_LAYOUT_BLOCK,
              .flags = MUSTER_NO_FACTOR};
  lfx_setup(&fx);
  watch_t w = {.d = d, .deadline = deadline};
  pthread_t th;
  if (deadline > 0) ASSERT_EQ(pthread_create(&th, NULL, watchdog, &w), 0);
  double end = MPI_Wtime() + seconds;
  int solves = 0, rc = 0;
  while (MPI_Wtime() < end && rc == 0) {
    atomic_store(&w.started, MPI_Wtime());
    if (solves == 1) { /* the second solve is under way: the ranks are inside ScaLAPACK */
      printf("loop rank %d pid %d\n", d->rank, (int)getpid());
      fflush(stdout);
    }
    rc = drv_solve(d, &fx);
    atomic_store(&w.started, 0.0);
    solves++;
  }
  atomic_store(&w.done, 1);
  if (deadline > 0) pthread_join(th, NULL);
  if (rc) fprintf(stderr, "loop rank %d: rc %d: %s\n", d->rank, rc, fx.err);
  if (d->rank == 0) printf("loop: %d solves of n=%" PRId64 " in %.1f s\n", solves, n, seconds);
  lfx_free(&fx);
  return rc ? 1 : 0;
}
