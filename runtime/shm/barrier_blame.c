/*
 * runtime/shm/barrier_blame.c - who holds a round up, and what to say about
 * it: the barrier's liveness ticks and its deadline judge the ranks that
 * have not arrived (dead, stopped, or merely late) and poison the group
 * with an error naming them.  barrier_blame.h is its interface; barrier.c
 * calls it from its sleep loop.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "base/atomics.h"
#include "base/proc.h"
#include "shm/barrier.h"
#include "shm/barrier_blame.h"
#include "shm/barrier_launcher.h"

/* An empty seat whose rank a launcher started: that process is gone. */
static int declared_dead(const struct muster_seg_header *h, int rank, char *buf, size_t cap,
                         uint32_t *phase_out) {
  if (!muster__launch_declared_dead(h, rank, buf, cap)) return 0;
  if (phase_out) *phase_out = LD(&muster__segment_slot((struct muster_seg_header *)h, rank)->phase);
  return 1;
}

/* The seat word names thread `owner` but the seat is not complete (its tid
 * is not written yet): the occupant is taking it right now, or died doing
 * so (killed between the two, it would hold the seat forever).  Judge it by
 * the pid its launcher declared, else by that thread (a tid is a pid to
 * kill(0) and /proc), unless the group was made in another pid namespace
 * (the caller checked the slot's). */
static int seating_dead(const struct muster_seg_header *h, int rank, uint32_t owner, char *buf,
                        size_t cap, uint32_t *phase_out) {
  const struct muster_seg_slot *s = muster__segment_slot((struct muster_seg_header *)h, rank);
  if (declared_dead(h, rank, buf, cap, phase_out)) return 1;
  if (LDA(&s->declared_pid) > 0 || !muster__proc_same_pidns(h->creator_pidns)) return 0;
  if (muster__proc_thread_alive((pid_t)owner) || muster__proc_alive((pid_t)owner, 0)) return 0;
  snprintf(buf, cap, "rank %d (thread %u) died while taking its seat", rank, owner);
  if (phase_out) *phase_out = MUSTER_PHASE_FREE;
  return 1;
}

/* Is rank's occupant gone?  Seated: its process (pid + start time) or, when
 * it is a thread of this process, its thread; half-seated: seating_dead.
 * Not seated: in a formed group only the processes mapping the segment can
 * ever take a seat again, so a dead last occupant means the rank can never
 * arrive; otherwise the pid a launcher declared for it, if any. */
int muster__barrier_rank_dead(const struct muster_seg_header *h, int rank, char *buf,
                              size_t cap, uint32_t *phase_out) {
  const struct muster_seg_slot *s = muster__segment_slot((struct muster_seg_header *)h, rank);
  uint32_t owner = LDA(&s->owner_tid);
  int pid = LD(&s->pid), tid = LDA(&s->tid), dev = LD(&s->device);
  uint64_t start = LD(&s->start_time);
  uint32_t phase = LD(&s->phase);
  int dead;
  /* a pid from another pid namespace means nothing here: only the deadline
   * can judge that rank */
  if (!muster__proc_same_pidns(LD(&s->pidns))) return 0;
  if (owner != 0) {
    if ((uint32_t)tid != owner) return seating_dead(h, rank, owner, buf, cap, phase_out);
    if (pid == muster__proc_self_pid()) dead = !muster__proc_thread_alive(tid);
    else dead = !muster__proc_alive(pid, start);
  } else {
    if (!LD(&h->formed) || pid <= 0 || pid == muster__proc_self_pid())
      return declared_dead(h, rank, buf, cap, phase_out);
    dead = !muster__proc_alive(pid, start);
  }
  if (dead) {
    snprintf(buf, cap, "rank %d (pid %d, device %d) %s", rank, pid, dev,
             pid == muster__proc_self_pid() ? "ended its thread" : owner ? "died" : "died or exited");
    if (phase_out) *phase_out = phase;
  }
  return dead;
}

/* One rank's slot, read once: whether it has arrived and how a timeout
 * describes it come from the same reading, so they cannot disagree. */
struct seen {
  uint32_t owner, phase, gen;
  int pid, dev;
  uint64_t start, pidns, barriers;
};

static void read_slot(const struct muster_seg_header *h, int r, struct seen *v) {
  const struct muster_seg_slot *s = muster__segment_slot((struct muster_seg_header *)h, r);
  v->owner = LDA(&s->owner_tid);
  v->phase = LD(&s->phase);
  v->gen = LD(&s->barrier_gen);
  v->pid = LD(&s->pid);
  v->dev = LD(&s->device);
  v->start = LD(&s->start_time);
  v->pidns = LD(&s->pidns);
  v->barriers = LD(&s->barriers);
}

static int seen_arrived(const struct seen *v, uint32_t g) {
  return v->owner != 0 && v->phase == MUSTER_PHASE_WAITING && v->gen == g;
}

static int arrived_at(const struct muster_seg_header *h, int r, uint32_t g) {
  struct seen v;
  read_slot(h, r, &v);
  return seen_arrived(&v, g);
}

int muster__barrier_uncounted(const struct muster_seg_header *h, uint32_t g) {
  uint32_t shown = 0;
  for (int r = 0; r < h->nranks; r++) shown += (uint32_t)arrived_at(h, r, g);
  /* the round's end resets the counter before it moves the word: read the
   * word last, so a count of a round that ended is not taken as short */
  uint32_t counted = LDA(&h->arrived);
  return LDA(&h->generation) == g && counted < shown;
}

int muster__barrier_check_missing(struct muster_seg_header *h, int me, uint32_t g,
                                  uint64_t barrier_no, int uncounted) {
  char who[256], reason[MUSTER_SEG_REASON_MAX];
  uint32_t phase = 0;
  int rc = muster__launch_check(h, me, g, barrier_no);
  if (rc < 0) return rc;
  for (int r = 0; r < h->nranks; r++) {
    if (r == me || (!uncounted && arrived_at(h, r, g))) continue;
    if (!muster__barrier_rank_dead(h, r, who, sizeof who, &phase)) continue;
    if (LD(&h->generation) != g) return MUSTER_OK; /* completed meanwhile */
    /* its launcher knows how it died (the signal): let it say so */
    if (muster__launch_await_report(h)) return muster__barrier_check_abort(h);
    const struct muster_seg_slot *s = muster__segment_slot(h, r);
    snprintf(reason, sizeof reason, "%.200s while group %s waited at barrier %" PRIu64
             " (generation %" PRIu32 "); it was %s", who, h->group, barrier_no, g,
             muster__phase_name(phase));
    muster__barrier_poison(h, MUSTER_EPEERDEAD, r, LD(&s->pid), reason);
    return muster__barrier_check_abort(h);
  }
  return MUSTER_OK;
}

/* A stopped process (judged only in our pid namespace; a thread of ours
 * is running, since we are). */
static int seen_stopped(const struct seen *v) {
  return v->owner && v->pid != muster__proc_self_pid() && muster__proc_same_pidns(v->pidns) &&
         muster__proc_stopped(v->pid, v->start);
}

/* Where a rank that holds round g up is, truthfully: "rank 1 (pid 77,
 * device 0) is stopped (SIGSTOP?); it last passed barrier 41 (generation
 * 1040) and has not arrived". */
static int describe_missing(char *buf, size_t cap, int r, const struct seen *v, uint32_t g) {
  if (!v->owner && v->phase == MUSTER_PHASE_FREE) return snprintf(buf, cap, "rank %d never joined", r);
  const char *it = seen_stopped(v) ? "is stopped (SIGSTOP?); it " : "";
  int n = snprintf(buf, cap, "rank %d (pid %d, device %d) ", r, v->pid, v->dev);
  if (n < 0 || (size_t)n >= cap) return n;
  buf += n;
  cap -= (size_t)n;
  unsigned long long k = v->barriers;
  if (!v->owner) return n + snprintf(buf, cap, "had left the group (between calls)");
  if (seen_arrived(v, g)) /* inside the arrival window (barrier_blame.h) */
    return n + snprintf(buf, cap, "%swas arriving at this barrier and has not counted itself", it);
  switch (v->phase) {
  case MUSTER_PHASE_JOINED:
    return n + snprintf(buf, cap, "%sjoined and has not arrived", it);
  case MUSTER_PHASE_PUBLISHED:
    return n + snprintf(buf, cap, "%spublished its payload and has not arrived", it);
  case MUSTER_PHASE_PASSED:
    return n + snprintf(buf, cap, "%slast passed barrier %llu (generation %u) and has not arrived",
                        it, k, v->gen);
  case MUSTER_PHASE_WAITING: /* at an earlier barrier: released, not yet out of it */
    return n + snprintf(buf, cap, "%swas released from barrier %llu (generation %u) and has not "
                        "moved on", it, k + 1, v->gen);
  default:
    return n + snprintf(buf, cap, "%s%s", it, muster__phase_name(v->phase));
  }
}

/* Does this rank hold round g up?  Pass 0: it has not arrived, or (with
 * uncounted) it shows itself arrived but is stopped, so it may be the one
 * inside the arrival window.  Pass 1, when pass 0 found nobody although
 * the window has been open for two ticks: every other arrived rank (one of
 * them has not counted itself; this process cannot tell which). */
static int holds_up(const struct seen *v, uint32_t g, int uncounted, int pass) {
  if (!seen_arrived(v, g)) return pass == 0;
  return uncounted && (pass == 1 || seen_stopped(v));
}

int muster__barrier_timeout(struct muster_seg_header *h, int me, uint32_t g, uint64_t barrier_no,
                            double waited, double stalled, int uncounted) {
  char list[256] = "", detail[MUSTER_SEG_REASON_MAX] = "", reason[MUSTER_SEG_REASON_MAX];
  char not_counted[96] = "";
  struct seen v[MUSTER_MAX_RANKS];
  int first = -1, nmiss = 0, nranks = h->nranks;
  size_t ll = 0, dl = 0;
  for (int r = 0; r < nranks; r++) read_slot(h, r, &v[r]);
  /* checked after reading the slots: a rank seen not arrived below had not
   * arrived at this barrier when its slot was read */
  __atomic_thread_fence(__ATOMIC_ACQUIRE);
  if (LDA(&h->generation) != g) return MUSTER_OK;
  for (int pass = 0; pass < 2 && nmiss == 0; pass++) {
    for (int r = 0; r < nranks; r++) {
      if (r == me || !holds_up(&v[r], g, uncounted, pass)) continue;
      if (first < 0) first = r;
      nmiss++;
      if (ll < sizeof list)
        ll += snprintf(list + ll, sizeof list - ll, "%s%d", nmiss > 1 ? "," : "", r);
      if (dl < sizeof detail) {
        if (nmiss > 1) dl += snprintf(detail + dl, sizeof detail - dl, "; ");
        if (dl < sizeof detail) dl += describe_missing(detail + dl, sizeof detail - dl, r, &v[r], g);
      }
    }
  }
  if (nmiss == 0) return MUSTER_OK; /* everyone arrived at the last moment */
  if (stalled >= 0.05)
    snprintf(not_counted, sizeof not_counted, ", not counting %.1f s in which this process was "
             "stopped or not scheduled", stalled);
  snprintf(reason, sizeof reason, "rank%s %s missing after %.1f s%s at barrier %" PRIu64
           " of group %s (generation %" PRIu32 "): %s", nmiss > 1 ? "s" : "", list, waited,
           not_counted, barrier_no, h->group, g, detail);
  muster__barrier_poison(h, MUSTER_ETIMEDOUT, first, v[first].pid, reason);
  return muster__barrier_check_abort(h);
}

int muster__barrier_check_stopped(struct muster_seg_header *h, int me, uint32_t g,
                                  uint64_t barrier_no, double limit_s, uint64_t now,
                                  uint64_t *since, int uncounted) {
  int victim = -1;
  struct seen v;
  for (int r = 0; r < h->nranks && victim < 0; r++) {
    if (r == me) continue;
    read_slot(h, r, &v);
    if ((!uncounted && seen_arrived(&v, g)) || !seen_stopped(&v)) continue;
    victim = r;
  }
  if (victim < 0) {
    *since = 0;
    return MUSTER_OK;
  }
  if (!*since) *since = now;
  double secs = (double)(now - *since) * 1e-9;
  if (secs <= limit_s) return MUSTER_OK;
  char where[256], reason[MUSTER_SEG_REASON_MAX];
  describe_missing(where, sizeof where, victim, &v, g);
  if (LDA(&h->generation) != g) return MUSTER_OK;
  snprintf(reason, sizeof reason, "%.200s; it has been stopped (SIGSTOP or a debugger) for %.1f s, "
           "more than the timeout (%.1f s), while group %s waited for it at barrier %" PRIu64
           " (generation %" PRIu32 ")", where, secs, limit_s, h->group, barrier_no, g);
  muster__barrier_poison(h, MUSTER_ETIMEDOUT, victim, v.pid, reason);
  return muster__barrier_check_abort(h);
}
