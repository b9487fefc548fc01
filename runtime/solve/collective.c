/*
 * runtime/solve/collective.c - one rank's collective call and its watchdog (see
 * collective.h).
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/clock.h"
#include "solve/collective.h"
#include "solve/engine.h"
#include "solve/mpiInt.h"

muster_dist_t muster__collective_dist(const muster_solve_args_t *args, const muster_shard_t *mine,
                                      int rank, int nranks) {
  muster_dist_t d = args->layout == MUSTER_LAYOUT_CYCLIC
                        ? muster_layout_cyclic_dist(args->n, args->tile, nranks, rank, mine->lda)
                        : muster_layout_block_dist(args->n, nranks, rank, mine->lda);
  muster_shape_t s; /* gels: A has m rows (validated before any call runs) */
  if (muster_routine_shape(args->routine, args->n, args->nrhs, mine->ldb, &s) == 0)
    d.m = d.mb = s.a_rows;
  return d;
}

/* ---- the watchdog -------------------------------------------------------------- */

#define YEAR_S 31536000.0 /* the longest MUSTER_TIMEOUT parse.h takes */

double muster__collective_deadline(const muster__coll_in_t *in, double timeout, char *how, size_t cap) {
  double e = in->expect_s;
  if (in->expect_src == MUSTER__EXPECT_NONE || !isfinite(e) || e < 0) {
    snprintf(how, cap, "MUSTER_TIMEOUT");
    return timeout;
  }
  snprintf(how, cap, "%.3g s MUSTER_TIMEOUT + %d x %.3g s %s %s", timeout, MUSTER__DEADLINE_EXPECT_K, e,
           in->expect_src == MUSTER__EXPECT_ESTIMATE ? "estimated by" : "from the cost table of",
           in->p->name);
  double d = timeout + MUSTER__DEADLINE_EXPECT_K * e;
  return d < YEAR_S ? d : YEAR_S;
}

typedef struct watchdog {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int stop;          /* set by the caller when the call has returned       */
  int fired;         /* the watchdog cancelled the call                     */
  const muster__coll_in_t *in;
  const muster_collective_call_t *call;
  int beats;         /* kind mpi: the peers' heartbeat is the watch        */
  double deadline;   /* kind mpi without it: the call is stuck after this
                        (muster__mono_s()); 0: none                                  */
  double timeout;    /* ... seconds after the call began, for the message    */
  char how[160];     /* ... where timeout came from (muster__collective_deadline) */
  int abort_on;      /* kind mpi: cancel at the deadline, then MPI_Abort when
                        cancel did not end the call                         */
  char why[512];
  int code;          /* the failure it cancelled with                     */
  double fired_at;   /* muster__mono_s() when cancel began; 0 before (atomic)       */
} watchdog_t;

/* Wait on w->cv (w->mu held) until w->stop or `seconds` from now. */
static void nap(watchdog_t *w, double seconds) {
  struct timespec until;
  muster__mono_deadline(&until, seconds);
  while (!w->stop && pthread_cond_timedwait(&w->cv, &w->mu, &until) != ETIMEDOUT) {}
}

/* 0 while the call may go on, else a negative code with the message set:
 * the peers' state (in->watch; kind mpi: their heartbeat), then the
 * deadline (kind mpi without a heartbeat). */
static int check(watchdog_t *w) {
  const muster__coll_in_t *in = w->in;
  int rc = in->watch ? in->watch(in->watch_arg) : w->beats ? muster__mpi_beat_check() : 0;
  if (rc == 0 && w->deadline > 0 && muster__mono_s() > w->deadline)
    rc = muster__err(MUSTER_ETIMEDOUT, "provider %s has not returned after %.1f s (%s) in a "
                     "collective call over MPI: another rank of the job is stopped (SIGSTOP, a debugger) "
                     "or stuck (a kind mpi comm cannot see a remote rank's state)", in->p->name, w->timeout,
                     w->how);
  return rc;
}

static void *watch_main(void *arg) {
  watchdog_t *w = arg;
  const muster__coll_in_t *in = w->in;
  pthread_mutex_lock(&w->mu);
  while (!w->stop) {
    nap(w, MUSTER__WATCH_TICK_MS * 1e-3);
    if (w->stop) break;
    pthread_mutex_unlock(&w->mu);
    int rc = check(w);
    pthread_mutex_lock(&w->mu);
    if (rc < 0 && !w->stop) {
      /* under the mutex: the caller cannot finish (and free the call)
       * while cancel runs */
      w->fired = 1;
      snprintf(w->why, sizeof w->why, "%s", muster_last_error());
      muster__log(MUSTER_LOG_WARN, "rank %d: cancelling provider %s: %s", in->rank, in->p->name, w->why);
      if (w->beats) { /* say it now: the provider's cancel may end the job (scalapack's MPI_Abort), and
                         the others, told by the heartbeat within a tick, say it too meanwhile */
        char msg[700];
        snprintf(msg, sizeof msg, "rank %d: provider %s: %s: ending the call in %.1f s", in->rank,
                 in->p->name, w->why, MUSTER__MPI_REPORT_GRACE_S);
        muster__mpi_report(msg);
        nap(w, MUSTER__MPI_REPORT_GRACE_S);
        if (w->stop) break; /* it returned meanwhile */
      }
      w->code = rc;
      double at = muster__mono_s();
      __atomic_store(&w->fired_at, &at, __ATOMIC_RELEASE);
      if (in->p->v->cancel) in->p->v->cancel(in->p->ctx, w->call, rc, w->why);
      if (w->abort_on) { /* kind mpi: nothing else can release the peers */
        nap(w, MUSTER__MPI_ABORT_GRACE_S);
        if (w->stop) break;
        char msg[700];
        snprintf(msg, sizeof msg, "rank %d: provider %s, cancelled, has not returned within %.1f s: %s",
                 in->rank, in->p->name, MUSTER__MPI_ABORT_GRACE_S, w->why);
        if (!w->stop) muster__mpi_abort(rc, msg);
      }
      break;
    }
  }
  pthread_mutex_unlock(&w->mu);
  return NULL;
}

static int watch_start(watchdog_t *w, pthread_t *tid) {
  muster__cond_init_mono(&w->cv);
  pthread_mutex_init(&w->mu, NULL);
  if (pthread_create(tid, NULL, watch_main, w) != 0) {
    pthread_cond_destroy(&w->cv);
    pthread_mutex_destroy(&w->mu);
    return muster__err(MUSTER_ESYS, "rank %d: cannot start the watchdog of a collective call "
                       "(pthread_create)", w->in->rank);
  }
  return 0;
}

static void watch_stop(watchdog_t *w, pthread_t tid) {
  pthread_mutex_lock(&w->mu);
  w->stop = 1;
  pthread_cond_signal(&w->cv);
  pthread_mutex_unlock(&w->mu);
  pthread_join(tid, NULL);
  pthread_cond_destroy(&w->cv);
  pthread_mutex_destroy(&w->mu);
}

/* ---- the call ------------------------------------------------------------------------ */

/* Did the call end by its cancel: cancel(code, why) was called on it
 * before it returned, and it returned that code (provider_v2.h: what a
 * cancelled call returns).  Its message then only words the cancel, which
 * the runtime words itself; a call that failed with another code, or
 * before its cancel, failed on its own, and its message is quoted. */
static int ended_by_cancel(watchdog_t *w, int rc, double returned_at) {
  double at;
  __atomic_load(&w->fired_at, &at, __ATOMIC_ACQUIRE);
  return at > 0 && at <= returned_at && rc == w->code;
}

/* engine.h's give_up: the call was cancelled MUSTER__ENGINE_GRACE_S ago */
static int cancel_ignored(void *arg) {
  watchdog_t *w = arg;
  double at;
  __atomic_load(&w->fired_at, &at, __ATOMIC_ACQUIRE);
  return at > 0 && muster__mono_s() - at > MUSTER__ENGINE_GRACE_S;
}

/* Run the call on its own thread (engine.h) under the watchdog w (started
 * here): 0 when it returned (its rc, seconds, muster__mono_s() when it
 * returned, info, tile and err copied out), 1 when it was cancelled and is left running (w and the thread
 * with it), 2 the same but still inside an exchange of its bootstrap, or
 * a code when nothing ran. */
static int run_threaded(muster__provider_t *p, const muster_collective_call_t *call, watchdog_t *w,
                        int *rc, double *seconds, double *returned_at, int64_t *info, int64_t *tile, char *err,
                        size_t errlen) {
  muster__engine_t *e;
  int r = muster__engine_new(p, call, &e);
  if (r < 0) return r;
  w->call = &e->call; /* cancel names the call the engine runs */
  pthread_t tid;
  if ((r = watch_start(w, &tid)) < 0) {
    muster__engine_free(e);
    return r;
  }
  if ((r = muster__engine_run(e)) < 0) {
    watch_stop(w, tid);
    muster__engine_free(e);
    return r;
  }
  int waited = muster__engine_wait(e, cancel_ignored, w);
  if (waited <= 0) {
    pthread_detach(tid); /* it may be inside cancel still: w stays its */
    return waited == 0 ? 1 : 2;
  }
  watch_stop(w, tid);
  *rc = e->rc;
  *seconds = e->seconds;
  *returned_at = e->returned_at;
  *info = e->info;
  *tile = e->tile;
  snprintf(err, errlen, "%s", e->err);
  muster__engine_free(e);
  return 0;
}

int muster__collective_run(const muster__coll_in_t *in, muster__outcome_t *out, int *engine_rc) {
  muster__provider_t *p = in->p;
  *engine_rc = 0;
  muster_collective_call_t call;
  memset(&call, 0, sizeof call);
  call.args = *in->args;
  call.args.provider = p->name;
  call.mine = in->mine;
  call.dist = in->dist ? *in->dist : muster__collective_dist(in->args, in->mine, in->rank, in->nranks);
  call.boot = in->boot;
  int64_t info = 0, tile = 0;
  char err[512] = "";
  call.info = &info;
  call.tile_used = &tile;
  call.err = err;
  call.errlen = sizeof err;
  snprintf(out->provider, sizeof out->provider, "%s", p->name);
  /* on the heap: a call left running keeps its watchdog (run_threaded) */
  watchdog_t *w = calloc(1, sizeof *w);
  if (!w) return *engine_rc = muster__err(MUSTER_ENOMEM, "rank %d: out of memory for a watchdog", in->rank);
  w->in = in;
  w->call = &call;
  pthread_t tid;
  double returned_at = 0;
  int rc, watching = in->watch != NULL;
  int mpi = !watching && in->boot && in->boot->kind && !strcmp(in->boot->kind, "mpi");
  char was[MUSTER__MPI_PHASE_MAX];
  if (mpi) {
    muster__mpi_phase_get(was, sizeof was);
    /* MPI: the peers' heartbeat, else (none in this process) a deadline */
    if ((rc = muster__mpi_deadline(&w->timeout, &w->abort_on)) < 0) {
      free(w);
      return *engine_rc = rc;
    }
    w->beats = muster__mpi_beat_on();
    watching = w->abort_on && (w->beats || w->timeout > 0); /* MUSTER_MPI_ABORT=0: wait, as MPI would */
    if (watching && !w->beats) {
      w->timeout = muster__collective_deadline(in, w->timeout, w->how, sizeof w->how);
      muster__log(MUSTER_LOG_DEBUG, "rank %d: provider %s: deadline %.1f s (%s)", in->rank, p->name,
                  w->timeout, w->how);
      w->deadline = muster__mono_s() + w->timeout;
    }
    muster__mpi_phase("inside provider %s's collective_solve (%s n=%lld)", p->name,
                      muster_routine_name(in->args->routine), (long long)in->args->n);
  }
  if (in->watch) { /* a group's watch: the engine on its own thread, so that this rank can leave it */
    int r = run_threaded(p, &call, w, &rc, &out->seconds, &returned_at, &info, &tile, err, sizeof err);
    if (r < 0) {
      free(w);
      return *engine_rc = r;
    }
    if (r >= 1) { /* w, the call's record and its thread are left (engine.h) */
      out->seconds = 0;
      *engine_rc = MUSTER__ENGINE_LEFT;
      return muster__err(w->code, "rank %d: provider %s was cancelled: %s; it has not returned within "
                         "%.0f s of the cancel, so its call is left running on a thread of this process "
                         "(with the memory and GPU work it holds%s): end this process (exit() ends it at "
                         "once)", in->rank, p->name, w->why, MUSTER__ENGINE_GRACE_S,
                         r == 2 ? ", and inside an exchange with its peers: do not leave the group" : "");
    }
  } else {
    if (watching && (rc = watch_start(w, &tid)) < 0) {
      free(w);
      return *engine_rc = rc;
    }
    double t0 = muster__mono_s();
    rc = p->v->collective_solve(p->ctx, &call);
    returned_at = muster__mono_s();
    out->seconds = returned_at - t0;
    if (watching) watch_stop(w, tid);
  }
  if (mpi) muster__mpi_phase("%s", was);
  out->info = info;
  out->tile = tile;
  err[sizeof err - 1] = '\0';
  *engine_rc = rc < 0 ? rc : 0;
  int fired = w->fired, by_cancel = rc < 0 && ended_by_cancel(w, rc, returned_at);
  char why[sizeof w->why];
  snprintf(why, sizeof why, "%s", w->why);
  free(w);
  /* the provider's own words, unless its call ended by the cancel */
  if (rc < 0 && fired && (by_cancel || !err[0]))
    return muster__err(rc, "rank %d: provider %s was cancelled: %s", in->rank, p->name, why);
  if (rc < 0 && fired)
    return muster__err(rc, "rank %d: provider %s was cancelled: %s (provider: %s)", in->rank, p->name, why, err);
  if (rc < 0 && info == MUSTER_PROVIDER_REFUSED_ALIKE) { /* every rank refused before any traffic (provider_v2.h) */
    *engine_rc = 0;
    out->info = 0;
    return muster__err(rc, "rank %d: provider %s (%s) refused %s: %s", in->rank, p->name, p->path,
                       muster_routine_name(in->args->routine), err[0] ? err : muster_strerror(rc));
  }
  if (rc < 0 && !muster__info_verdict(in->args->routine, rc, info))
    return muster__err(rc, "rank %d: provider %s (%s) failed in %s: %s", in->rank, p->name, p->path,
                       muster_routine_name(in->args->routine), err[0] ? err : muster_strerror(rc));
  if (rc < 0) *engine_rc = 0; /* a verdict, the same on every rank (the ABI's contract) */
  return muster__info_rc(p->name, in->args->routine, info, err);
}
