/*
 * runtime/group/group_seat.c - taking and giving back a rank's seat in a group
 * segment: the seat count (whose closing bit ends a group that never
 * formed), the slot's owner word and the identity written behind it, and
 * the moment the group becomes formed (everyone seen; its name goes).
 * What a seat is made of is segment.h's; how others judge a seat's
 * occupant alive is barrier.c's (muster__barrier_rank_dead).
 */
#include <stdio.h>
#include <time.h>

#include "shm/barrier.h"
#include "group/groupInt.h"
#include "base/proc.h"
#include "shm/segment.h"
#include "muster/clock.h"

#define SEAT_RETRY 1 /* internal: the segment is closing, go by name again */

/* seats -1; the last one out of a group that never formed closes it (sets
 * the closing bit in the same CAS, so no attacher can slip in) and removes
 * the name. */
void muster__group_seats_release(struct gentry *e) {
  struct muster_seg_header *h = e->seg.hdr;
  uint32_t w = LD(&h->seats), nw;
  int closing;
  do {
    uint32_t count = MUSTER_SEATS_COUNT(w);
    nw = (w & MUSTER_SEATS_CLOSING) | (count ? count - 1 : 0);
    closing = MUSTER_SEATS_COUNT(nw) == 0 && !LDA(&h->formed) && !(w & MUSTER_SEATS_CLOSING);
    if (closing) nw |= MUSTER_SEATS_CLOSING;
  } while (!__atomic_compare_exchange_n(&h->seats, &w, nw, 1, __ATOMIC_ACQ_REL,
                                        __ATOMIC_RELAXED));
  if (closing || (!LD(&h->formed) && LD(&h->abort_state))) muster__segment_unlink(&e->seg);
}

static int seats_take(struct muster_seg_header *h) {
  uint32_t w = LD(&h->seats);
  do {
    if (w & MUSTER_SEATS_CLOSING) return SEAT_RETRY;
  } while (!__atomic_compare_exchange_n(&h->seats, &w, w + 1, 1, __ATOMIC_ACQ_REL,
                                        __ATOMIC_RELAXED));
  return MUSTER_OK;
}

/* Is the seat whose owner word we found held by this very thread?  A tid
 * names a thread only within its pid namespace, so our pid and pid
 * namespace must be there too (our own join stored them before it
 * returned).  Processes of another namespace never share our segments
 * (segment.h), so this is belt and braces, and not airtight: a thread of
 * another namespace with our tid number, between its CAS and its stores
 * just after we left the seat, would still show our pid and pidns. */
static int seat_is_mine(const struct muster_seg_slot *s, uint32_t owner) {
  return owner == (uint32_t)muster__proc_self_tid() && LD(&s->pid) == muster__proc_self_pid() &&
         LD(&s->pidns) == muster__proc_self_pidns();
}

static int seat_taken(struct gentry *e, int rank, uint32_t owner) {
  struct muster_seg_header *h = e->seg.hdr;
  char who[256], reason[MUSTER_SEG_REASON_MAX];
  if (seat_is_mine(muster__segment_slot(h, rank), owner))
    return muster__err(MUSTER_EBUSY, "rank %d of group %s: this thread has already joined it "
                       "(leave first)", rank, e->name);
  if (muster__barrier_rank_dead(h, rank, who, sizeof who, NULL)) {
    snprintf(reason, sizeof reason, "%.200s while holding its seat in group %s (found by pid %d "
             "joining as that rank)", who, e->name, (int)muster__proc_self_pid());
    muster__barrier_poison(h, MUSTER_EPEERDEAD, rank, LD(&muster__segment_slot(h, rank)->pid),
                           reason);
    if (!LD(&h->formed)) muster__segment_unlink(&e->seg);
    return muster__barrier_check_abort(h);
  }
  const struct muster_seg_slot *s = muster__segment_slot(h, rank);
  return muster__err(MUSTER_EBUSY, "rank %d of group %s is already taken by pid %d (thread %d)",
                     rank, e->name, (int)LD(&s->pid), (int)owner);
}

static void mark_formed(struct gentry *e, int rank) {
  struct muster_seg_header *h = e->seg.hdr;
  uint64_t bit = UINT64_C(1) << rank;
  if (LD(&h->seen_mask) & bit) return;
  uint64_t full = e->nranks == 64 ? ~UINT64_C(0) : (UINT64_C(1) << e->nranks) - 1;
  uint64_t old = __atomic_fetch_or(&h->seen_mask, bit, __ATOMIC_ACQ_REL);
  if ((old | bit) == full && old != full) {
    /* everyone has attached: from now on only mappings keep it alive */
    STR(&h->formed, 1);
    muster__segment_unlink(&e->seg);
  }
}

int muster__group_seat(muster_group_t *g, struct gentry *e) {
  struct muster_seg_header *h = e->seg.hdr;
  struct muster_seg_slot *s = muster__segment_slot(h, g->rank);
  int rc = seats_take(h);
  if (rc != MUSTER_OK) return rc;
  uint32_t owner = 0;
  pid_t tid = muster__proc_self_tid();
  /* Who we are, before the seat is ours: between the CAS and the tid store
   * below there are only plain stores, so a seat is seldom seen half-taken
   * (barrier.c judges one by its declared pid or its thread). */
  pid_t pid = muster__proc_self_pid();
  uint64_t start = muster__proc_self_start(), pidns = muster__proc_self_pidns();
  uint64_t now = muster__now_real_ns();
  if (!__atomic_compare_exchange_n(&s->owner_tid, &owner, (uint32_t)tid, 0, __ATOMIC_ACQ_REL,
                                   __ATOMIC_ACQUIRE)) {
    rc = seat_taken(e, g->rank, owner);
    muster__group_seats_release(e);
    return rc;
  }
  ST(&s->pid, pid);
  ST(&s->start_time, start);
  ST(&s->pidns, pidns);
  ST(&s->device, g->device);
  ST(&s->join_ns, now);
  ST(&s->wait_start_ns, 0);
  ST(&s->barriers, 0);
  /* tag the buffer of the open round as "nothing published", so a rank
   * that never publishes is told apart from one that did.  Only that one:
   * the other buffer may still be read by a rank finishing the last round
   * of our previous session. */
  uint32_t now_gen = LDA(&h->generation);
  ST(&s->payload_gen[now_gen & 1], ~now_gen);
  ST(&s->phase, MUSTER_PHASE_JOINED);
  g->session = LD(&s->sessions) + 1;
  ST(&s->sessions, g->session);
  STR(&s->tid, tid); /* last: the seat is complete (see barrier_rank_dead) */
  mark_formed(e, g->rank);
  g->e = e;
  g->h = h;
  g->slot = s;
  g->join_gen = LDA(&h->generation);
  return MUSTER_OK;
}

int muster__group_await_formed(const muster_group_t *g, double timeout_s) {
  if (!g || !g->h) return 0;
  const struct muster_seg_header *h = g->h;
  double deadline = timeout_s > 0 ? muster_clock_s() + timeout_s : 0;
  long ns = 1000 * 1000;
  while (!LDA(&h->formed)) {
    if (LDA(&h->abort_state) != MUSTER_ABORT_NONE || (deadline && muster_clock_s() >= deadline)) return 0;
    struct timespec ts = {0, ns};
    nanosleep(&ts, NULL);
    if (ns < 10 * 1000 * 1000) ns *= 2;
  }
  return 1;
}
