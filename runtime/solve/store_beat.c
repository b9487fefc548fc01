/*
 * runtime/solve/store_beat.c - liveness over a key-value store (muster/store.h).
 *
 * A store cannot tell a stopped peer from a slow one, nor a dead one from a
 * peer that has not written yet.  So every rank runs a thread that, every
 * beat_s, rewrites its beat key (a counter, its pid, start time, host and
 * phase).  A stopped process (SIGSTOP, a debugger) stops beating with all
 * its threads; one that computes, however long, keeps beating: a wait on
 * the peers fails when a peer's counter has not moved for timeout_s, never
 * because the work is long (the MPI kind's rule, docs/bootstrap.md).
 *
 * The thread reads the peers' beats only while someone checks liveness (a
 * wait, the collective watchdog): a store of N ranks then serves N - 1
 * reads per rank and beat, and none while the set is idle.  A check after
 * an idle spell starts every peer's silence afresh.  A tick that comes far
 * later than due means this process did not run (stopped itself, or the
 * machine suspended): that time does not count against the peers.
 * A peer whose beat says it runs on this node (same host name and pid
 * namespace) is also looked up in /proc: dead, it is named at once.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/proc.h"
#include "solve/storeInt.h"

#define BEAT_MAGIC 0x54414542u      /* "BEAT" */
#define STALL_NS 250000000ull       /* a tick this much late: this process did not run */
#define WATCHING_BEATS 3            /* peers are read while a check came within this many beats */

static uint64_t beat_ns(const muster_store_t *s) { return (uint64_t)(s->beat * 1e9); }

void muster__store_phase(muster_store_t *s, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  pthread_mutex_lock(&s->mu);
  vsnprintf(s->phase, sizeof s->phase, fmt, ap);
  pthread_mutex_unlock(&s->mu);
  va_end(ap);
}

void muster__store_within(muster_store_t *s, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  pthread_mutex_lock(&s->mu);
  if (fmt)
    vsnprintf(s->within, sizeof s->within, fmt, ap);
  else
    s->within[0] = '\0';
  if (fmt) snprintf(s->phase, sizeof s->phase, "%s", s->within);
  s->poke = 1; /* beat now */
  pthread_cond_broadcast(&s->cv);
  pthread_mutex_unlock(&s->mu);
  va_end(ap);
}

int muster__store_beat_write(muster_store_t *s, int closed, char *err, size_t errlen) {
  muster__beat_t b = {.magic = BEAT_MAGIC, .pid = (int32_t)muster__proc_self_pid(), .closed = closed,
                      .start = muster__proc_self_start(), .pidns = muster__proc_self_pidns()};
  pthread_mutex_lock(&s->mu);
  if (!s->host[0]) gethostname(s->host, sizeof s->host - 1);
  b.seq = ++s->seq;
  snprintf(b.host, sizeof b.host, "%s", s->host);
  snprintf(b.phase, sizeof b.phase, "%s", closed ? "closed its end" : s->phase);
  pthread_mutex_unlock(&s->mu);
  char key[128];
  muster__store_key(s, key, sizeof key, "beat/%d", s->rank);
  return s->kv.set(s->kv.ctx, key, &b, sizeof b, err, errlen);
}

/* Read rank r's beat; note when its counter moved. */
static void read_peer(muster_store_t *s, int r, uint64_t now) {
  char key[128], err[200];
  muster__beat_t b;
  size_t got = 0;
  muster__store_key(s, key, sizeof key, "beat/%d", r);
  if (s->kv.get(s->kv.ctx, key, 0, &b, sizeof b, &got, err, sizeof err) < 0 || got != sizeof b ||
      b.magic != BEAT_MAGIC)
    return; /* not there yet (or unreadable): its silence goes on */
  b.host[sizeof b.host - 1] = b.phase[sizeof b.phase - 1] = '\0';
  pthread_mutex_lock(&s->mu);
  muster__speer_t *p = &s->peers[r];
  if (!p->heard || p->last.seq != b.seq || p->last.pid != b.pid) p->heard_ns = now;
  p->last = b;
  p->heard = 1;
  pthread_mutex_unlock(&s->mu);
}

void muster__store_forget(muster_store_t *s, uint64_t k) {
  pthread_mutex_lock(&s->mu);
  if (k > s->del_to) s->del_to = k;
  pthread_cond_broadcast(&s->cv);
  pthread_mutex_unlock(&s->mu);
}

void muster__store_delete_read(muster_store_t *s) {
  while (s->del_from < s->del_to) {
    uint64_t k = s->del_from++;
    pthread_mutex_unlock(&s->mu);
    char key[128], err[200];
    muster__store_key(s, key, sizeof key, "ag/%" PRIu64 "/%d", k, s->rank);
    s->kv.del(s->kv.ctx, key, err, sizeof err); /* a key left behind is no error */
    pthread_mutex_lock(&s->mu);
  }
}

/* Every peer's silence starts now. */
static void restart_silences(muster_store_t *s, uint64_t now) {
  for (int r = 0; r < s->size; r++) s->peers[r].heard_ns = now;
}

static void *beat_main(void *arg) {
  muster_store_t *s = arg;
  pthread_mutex_lock(&s->mu);
  while (!s->stop) {
    uint64_t now = muster__now_mono_ns();
    if (now - s->tick_ns > beat_ns(s) + STALL_NS) restart_silences(s, now); /* we did not run */
    s->tick_ns = now;
    int watching = now - s->watch_ns < WATCHING_BEATS * beat_ns(s);
    pthread_mutex_unlock(&s->mu);
    char err[200];
    muster__store_beat_write(s, 0, err, sizeof err); /* a failing store shows as our silence */
    for (int r = 0; r < s->size && watching; r++)
      if (r != s->rank) read_peer(s, r, now);
    pthread_mutex_lock(&s->mu);
    struct timespec until;
    muster__mono_deadline(&until, beat_ns(s) * 1e-9);
    for (;;) { /* until the next beat is due, deleting what the allgathers name meanwhile */
      while (!s->stop && !s->poke && s->del_from == s->del_to &&
             pthread_cond_timedwait(&s->cv, &s->mu, &until) == 0) {
      }
      if (s->stop || s->del_from == s->del_to) break;
      muster__store_delete_read(s);
      if (s->poke) break;
    }
    s->poke = 0;
  }
  pthread_mutex_unlock(&s->mu);
  return NULL;
}

int muster__store_beat_start(muster_store_t *s) {
  pthread_cond_destroy(&s->cv);
  muster__cond_init_mono(&s->cv);
  s->tick_ns = muster__now_mono_ns();
  int e = pthread_create(&s->tid, NULL, beat_main, s);
  if (e) return muster__err(MUSTER_ESYS, "muster_store_open: store set %s: cannot start the heartbeat thread: %s",
                            s->name, strerror(e));
  s->running = 1;
  return 0;
}

void muster__store_beat_stop(muster_store_t *s) {
  if (!s->running) return;
  pthread_mutex_lock(&s->mu);
  s->stop = 1;
  pthread_cond_broadcast(&s->cv);
  pthread_mutex_unlock(&s->mu);
  pthread_join(s->tid, NULL);
  s->running = 0;
}

/* ---- the check ------------------------------------------------------------------- */

/* "rank 1 (pid 447 on vm)", on this node (and its /proc visible) or not. */
static int describe(const muster_store_t *s, int r, char *out, size_t cap) {
  const muster__speer_t *p = &s->peers[r];
  if (!p->heard) {
    snprintf(out, cap, "rank %d (never heard: its pid and host are unknown)", r);
    return 0;
  }
  snprintf(out, cap, "rank %d (pid %d on %s)", r, (int)p->last.pid, p->last.host);
  return !strcmp(p->last.host, s->host) && muster__proc_same_pidns(p->last.pidns);
}

static int peer_gone(muster_store_t *s, int r, int awaited, uint64_t now) {
  const muster__speer_t *p = &s->peers[r];
  char who[200];
  int here = describe(s, r, who, sizeof who);
  if (p->heard && p->last.closed)
    return r == awaited ? muster__err(MUSTER_EPEERDEAD, "store set %s: %s closed its end", s->name, who) : 0;
  if (here && !muster__proc_alive(p->last.pid, p->last.start))
    return muster__err(MUSTER_EPEERDEAD, "store set %s: %s died; when last heard it was %s", s->name, who,
                       p->last.phase);
  double quiet = (double)(now - p->heard_ns) * 1e-9;
  if (s->timeout <= 0 || quiet <= s->timeout) return 0;
  const char *state = here && muster__proc_stopped(p->last.pid, p->last.start)
                          ? "it is stopped (SIGSTOP or a debugger)"
                          : "it is stopped (SIGSTOP, a debugger) or stuck, or its node or the store failed";
  return muster__err(MUSTER_ETIMEDOUT, "store set %s: %s has written no heartbeat for %.1f s, more than the "
                     "timeout (%g s): %s; when last heard it was %s", s->name, who, quiet, s->timeout, state,
                     p->heard ? p->last.phase : "starting");
}

int muster__store_live(muster_store_t *s, int awaited) {
  pthread_mutex_lock(&s->mu);
  uint64_t now = muster__now_mono_ns();
  if (now - s->watch_ns >= WATCHING_BEATS * beat_ns(s)) { /* nobody watched: the thread read no peer */
    restart_silences(s, now);
    s->poke = 1; /* read them now, not a beat later */
    pthread_cond_broadcast(&s->cv);
  }
  s->watch_ns = now;
  int rc = 0;
  /* the thread has not ticked lately: our view of the others is stale */
  if (now - s->tick_ns <= beat_ns(s) + STALL_NS)
    for (int r = 0; r < s->size && rc == 0; r++)
      if (r != s->rank) rc = peer_gone(s, r, awaited, now);
  pthread_mutex_unlock(&s->mu);
  return rc;
}
