/*
 * runtime/group/group_watch.c - a watchdog's check of a group whose ranks are
 * inside a collective provider call (runtime/solve/collective.c's watch hook):
 * the poison word, dead occupants, processes stopped past the timeout.
 * Reads only the segment and /proc; it does not wait in the barrier.
 */
#include <stdio.h>

#include "shm/barrier.h"
#include "group/groupInt.h"
#include "base/proc.h"
#include "shm/segment.h"

/* A peer process stopped for longer than the timeout: poison, say so. */
static int watch_stopped(const muster_group_t *g, int r, muster__group_watch_t *w) {
  const struct muster_seg_slot *s = muster__segment_slot(g->h, r);
  pid_t pid = LD(&s->pid);
  if (pid == muster__proc_self_pid() || !muster__proc_stopped(pid, LD(&s->start_time))) {
    w->stopped_since_ns[r] = 0;
    return 0;
  }
  uint64_t now = muster__now_mono_ns();
  if (!w->stopped_since_ns[r]) w->stopped_since_ns[r] = now;
  double secs = (now - w->stopped_since_ns[r]) * 1e-9;
  if (secs <= g->timeout_s) return 0;
  char reason[MUSTER_SEG_REASON_MAX];
  snprintf(reason, sizeof reason, "rank %d (pid %d, device %d) has been stopped (SIGSTOP or a debugger) "
           "for %.1f s, more than the timeout, while group %s was in a collective provider call", r,
           (int)pid, (int)LD(&s->device), secs, g->name);
  muster__barrier_poison(g->h, MUSTER_ETIMEDOUT, r, pid, reason);
  return muster__barrier_check_abort(g->h);
}

int muster__group_watch(void *arg) {
  muster__group_watch_t *w = arg;
  const muster_group_t *g = w->g;
  if (!g || !g->h) return muster__err(MUSTER_EPOISONED, "group %s: the handle lost its group", g ? g->name : "?");
  int rc = muster__barrier_check_abort(g->h);
  if (rc < 0) return rc;
  char who[256], reason[MUSTER_SEG_REASON_MAX];
  uint32_t phase = 0;
  for (int r = 0; r < g->nranks; r++) {
    if (r == g->rank) continue;
    if (!muster__barrier_rank_dead(g->h, r, who, sizeof who, &phase)) {
      if ((rc = watch_stopped(g, r, w)) < 0) return rc;
      continue;
    }
    snprintf(reason, sizeof reason, "%.200s while group %s was in a collective provider call (it was %s)",
             who, g->name, muster__phase_name(phase));
    muster__barrier_poison(g->h, MUSTER_EPEERDEAD, r, LD(&muster__segment_slot(g->h, r)->pid), reason);
    return muster__barrier_check_abort(g->h);
  }
  return 0;
}
