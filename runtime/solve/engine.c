/*
 * runtime/solve/engine.c - a collective provider's call on a thread of its own,
 * which the calling rank can leave behind (see engine.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/clock.h"
#include "solve/engine.h"
#include "base/exit_guard.h"

static void *engine_main(void *arg) {
  muster__engine_t *e = arg;
  double t0 = muster__mono_s();
  /* inside a provider for exit()'s sake (exit_guard.h); the rank's thread,
   * inside its own guarded call, leaves e only after this (e->started) */
  int guarded = muster__exit_guard_enter("a collective provider's call") == 0;
  pthread_mutex_lock(&e->mu);
  e->started = 1;
  pthread_mutex_unlock(&e->mu);
  int rc = guarded ? e->p->v->collective_solve(e->p->ctx, &e->call) : MUSTER_EEXITING;
  if (!guarded) snprintf(e->err, sizeof e->err, "%s", muster_last_error());
  double returned_at = muster__mono_s();
  pthread_mutex_lock(&e->mu);
  e->rc = rc;
  e->seconds = returned_at - t0;
  e->returned_at = returned_at;
  e->done = 1;
  pthread_cond_signal(&e->cv);
  pthread_mutex_unlock(&e->mu);
  /* A record its rank left is never freed (engine.h): the watchdog's
   * cancel, which may not have returned either, still names e->call. */
  if (guarded) muster__exit_guard_leave();
  return NULL;
}

/* call.boot's allgather while the engine has it (engine.h) */
static int guarded_allgather(void *ctx, const void *mine, void *all, size_t len, char *err, size_t errlen) {
  muster__engine_t *e = ctx;
  pthread_mutex_lock(&e->boot_mu);
  int rc = e->revoked ? MUSTER_EPEERDEAD : e->inner.allgather(e->inner.ctx, mine, all, len, err, errlen);
  if (e->revoked)
    snprintf(err, errlen, "rank %d left this call after its cancel: no more exchanges with its peers",
             e->inner.rank);
  pthread_mutex_unlock(&e->boot_mu);
  return rc;
}

int muster__engine_new(muster__provider_t *p, const muster_collective_call_t *call, muster__engine_t **out) {
  *out = NULL;
  muster__engine_t *e = calloc(1, sizeof *e);
  if (!e) return muster__err(MUSTER_ENOMEM, "provider %s: out of memory for its call's record", p->name);
  e->p = p;
  muster__provider_ref(p);
  e->call = *call;
  e->mine = *call->mine;
  e->call.mine = &e->mine;
  e->call.info = &e->info;
  e->call.tile_used = &e->tile;
  e->call.err = e->err;
  e->call.errlen = sizeof e->err;
  if (call->boot) {
    e->inner = *call->boot;
    e->boot = e->inner;
    e->boot.ctx = e;
    e->boot.allgather = guarded_allgather;
    e->call.boot = &e->boot;
  }
  pthread_mutex_init(&e->boot_mu, NULL);
  muster__cond_init_mono(&e->cv);
  pthread_mutex_init(&e->mu, NULL);
  *out = e;
  return 0;
}

int muster__engine_run(muster__engine_t *e) {
  pthread_t tid;
  if (pthread_create(&tid, NULL, engine_main, e) != 0)
    return muster__err(MUSTER_ESYS, "provider %s: cannot start the thread of its call (pthread_create)",
                       e->p->name);
  pthread_detach(tid);
  return 0;
}

/* The rank leaves e: revoke its bootstrap (engine.h). 0, or -1 when the
 * engine stayed inside an allgather. */
static int take_boot_back(muster__engine_t *e) {
  struct timespec until;
  muster__mono_deadline(&until, MUSTER__ENGINE_GRACE_S);
  for (;;) { /* pthread_mutex_timedlock reads CLOCK_REALTIME: poll instead */
    if (pthread_mutex_trylock(&e->boot_mu) == 0) break;
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    if (now.tv_sec > until.tv_sec || (now.tv_sec == until.tv_sec && now.tv_nsec >= until.tv_nsec)) return -1;
    nanosleep(&(struct timespec){0, 1000000}, NULL);
  }
  e->revoked = 1;
  pthread_mutex_unlock(&e->boot_mu);
  return 0;
}

int muster__engine_wait(muster__engine_t *e, int (*give_up)(void *), void *arg) {
  pthread_mutex_lock(&e->mu);
  while (!e->done) {
    struct timespec until;
    muster__mono_deadline(&until, MUSTER__WATCH_TICK_MS * 1e-3);
    if (pthread_cond_timedwait(&e->cv, &e->mu, &until) != ETIMEDOUT || e->done) continue;
    pthread_mutex_unlock(&e->mu);
    int leave = give_up(arg);
    pthread_mutex_lock(&e->mu);
    if (leave && !e->done && e->started) {
      pthread_mutex_unlock(&e->mu);
      return take_boot_back(e);
    }
  }
  pthread_mutex_unlock(&e->mu);
  return 1;
}

void muster__engine_free(muster__engine_t *e) {
  if (!e) return;
  muster__provider_release(e->p);
  pthread_mutex_destroy(&e->boot_mu);
  pthread_cond_destroy(&e->cv);
  pthread_mutex_destroy(&e->mu);
  free(e);
}
