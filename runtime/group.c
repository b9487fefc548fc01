/*
 * runtime/group.c - muster_group_*: join/leave, exchange, status, abort, and
 * the per-process cache of mapped group segments.
 *
 * Cache: one entry per (job, name, nranks) with the segment mapped and its
 * fd open, shared (refcounted) by every handle of this process.  A join of a
 * cached, healthy group takes the seat with a few atomics and no system
 * call.  Entries are dropped when the group is poisoned, retired or closed
 * (at leave, once unused), when over CACHE_MAX (least recently used idle
 * one), and by muster_group_cache_flush() (also run at exit).
 */
#include <errno.h>
#include <math.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "barrier.h"
#include "env.h"
#include "group.h"
#include "muster/parse.h"
#include "proc.h"
#include "segment.h"

#define LD(p) __atomic_load_n((p), __ATOMIC_RELAXED)
#define LDA(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define ST(p, v) __atomic_store_n((p), (v), __ATOMIC_RELAXED)
#define STR(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)

#define CACHE_MAX 64
#define SEAT_RETRY 1 /* internal: the segment is closing, go by name again */

struct gentry {
  struct muster_segment seg;
  char job[MUSTER_MAX_JOB + 1];
  char name[MUSTER_MAX_NAME + 1];
  int nranks;
  int refs;         /* handles using it; under cache_mu */
  int listed;       /* findable in the cache list */
  uint64_t lru;
  struct gentry *next;
};

struct muster_group {
  struct gentry *e;    /* NULL only if a relocation failed to re-join */
  char job[MUSTER_MAX_JOB + 1];
  char name[MUSTER_MAX_NAME + 1];
  struct muster_seg_header *h;
  struct muster_seg_slot *slot;
  int rank, nranks, device;
  double timeout_s;
  uint32_t join_gen;   /* generation word when we joined */
  uint32_t last_gen;   /* round of the last barrier passed */
  uint32_t exch_gen;   /* round of the last exchange passed */
  int passed, has_exch;
  int first_err;
  int saw_abort;
  int has_status;      /* a leader status has been seen in this session */
  int status;          /* ... its code, and its data (private copy: the
                          segment's buffer is reused two rounds later) */
  uint32_t status_len;
  uint8_t status_data[MUSTER_MAX_PAYLOAD];       /* reported the poison once; EPOISONED from now on */
  uint64_t session;
};

/* adaptive: the critical sections are a few loads and stores; spinning a
 * little beats a futex sleep when two ranks join at once */
static pthread_mutex_t cache_mu = PTHREAD_ADAPTIVE_MUTEX_INITIALIZER_NP;
static struct gentry *cache_head;
static int cache_len;
static uint64_t cache_clock;
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

static void fork_prepare(void) { pthread_mutex_lock(&cache_mu); }
static void fork_parent(void) { pthread_mutex_unlock(&cache_mu); }
/* The child has one thread, the one that forked and took cache_mu in
 * fork_prepare: unlock it (re-initialising a held mutex is undefined and
 * confuses TSan's lock-order tracking). */
static void fork_child(void) { pthread_mutex_unlock(&cache_mu); }
static void install_atfork(void) { pthread_atfork(fork_prepare, fork_parent, fork_child); }

/* ---------------------------------------------------------------------- */
/* Cache                                                                   */
/* ---------------------------------------------------------------------- */

/* Retired (dropped by some process) or closed (never formed, now empty):
 * nobody will ever meet in it again. */
static int entry_dead(const struct gentry *e) {
  const struct muster_seg_header *h = e->seg.hdr;
  return LD(&h->retired) || (!LD(&h->formed) && (LD(&h->seats) & MUSTER_SEATS_CLOSING));
}

static int entry_poisoned(const struct gentry *e) {
  return LD(&e->seg.hdr->abort_state) != MUSTER_ABORT_NONE;
}

static int entry_healthy(const struct gentry *e) { return !entry_dead(e) && !entry_poisoned(e); }

static void entry_unlist(struct gentry *e) {
  for (struct gentry **p = &cache_head; *p; p = &(*p)->next) {
    if (*p == e) {
      *p = e->next;
      e->listed = 0;
      cache_len--;
      return;
    }
  }
}

static void entry_free(struct gentry *e) {
  muster__segment_close(&e->seg);
  free(e);
}

/* Drop a formed, healthy group from our cache: other processes may still
 * hold it cached, so mark it retired; their next join then goes by name and
 * meets ours there instead of waiting for us in the old segment. */
static void entry_drop(struct gentry *e, int retire) {
  if (e->listed) entry_unlist(e);
  if (retire && LD(&e->seg.hdr->formed) && entry_healthy(e)) STR(&e->seg.hdr->retired, 1);
  if (e->refs == 0) entry_free(e);
}

static void cache_trim(void) {
  while (cache_len > CACHE_MAX) {
    struct gentry *old = NULL;
    for (struct gentry *e = cache_head; e; e = e->next)
      if (e->refs == 0 && (!old || e->lru < old->lru)) old = e;
    if (!old) return; /* all in use: allow more */
    entry_drop(old, 1);
  }
}

/* An entry inherited through fork by a child in a new pid namespace
 * (unshare(CLONE_NEWPID), then fork) is a segment of its parent's
 * namespace; the child's group of that name is another segment
 * (segment.h), so the entry is dropped, without retiring it (the parent
 * still uses it). */
static struct gentry *cache_find(const char *job, const char *name, int nranks) {
  for (struct gentry *e = cache_head; e; e = e->next) {
    if (e->nranks != nranks || strcmp(e->name, name) || strcmp(e->job, job)) continue;
    if (e->seg.pidns == muster__proc_self_pidns()) return e;
    entry_drop(e, 0);
    return NULL;
  }
  return NULL;
}

/* nranks disagrees with an existing group: everyone gets EMISMATCH. */
static int mismatch(struct muster_segment *seg, const char *name, int rank, int nranks) {
  char reason[MUSTER_SEG_REASON_MAX];
  char who[32] = "its launcher";
  if (rank >= 0) snprintf(who, sizeof who, "rank %d", rank);
  snprintf(reason, sizeof reason, "participants disagree on the size of group %s: %s "
           "(pid %d) joined with nranks %d, the group was created with nranks %d by pid %d",
           name, who, (int)muster__proc_self_pid(), nranks, (int)seg->hdr->nranks,
           (int)seg->hdr->creator_pid);
  muster__barrier_poison(seg->hdr, MUSTER_EMISMATCH, rank, muster__proc_self_pid(), reason);
  muster__segment_unlink(seg);
  muster__segment_close(seg);
  return muster__err(MUSTER_EMISMATCH, "%s", reason);
}

/* Find or open (job, name, nranks); returns it with a reference taken, and
 * *made = 1 when this call created the segment.  rank -1: a launcher's.
 * Caller holds cache_mu. */
static int cache_get(const char *job, const char *name, int rank, int nranks,
                     struct gentry **out, int *made) {
  struct gentry *e = cache_find(job, name, nranks);
  *made = 0;
  if (e && rank >= 0 && !entry_dead(e) && entry_poisoned(e)) {
    /* A rank that has not been told yet (it was between calls, or late)
     * gets the group's error now, like the ranks that waited; one that was
     * told starts afresh. */
    struct muster_seg_slot *s = muster__segment_slot(e->seg.hdr, rank);
    uint32_t unseen = 0;
    if (__atomic_compare_exchange_n(&s->abort_seen, &unseen, 1, 0, __ATOMIC_ACQ_REL,
                                    __ATOMIC_RELAXED)) {
      int rc = muster__barrier_check_abort(e->seg.hdr);
      return muster__err_prefix(rc, "joining group %s as rank %d", name, rank);
    }
  }
  if (e && !entry_healthy(e)) {
    entry_unlist(e);
    if (e->refs == 0) entry_free(e);
    e = NULL;
  }
  if (!e) {
    struct muster_segment seg;
    int created = 0;
    int rc = muster__segment_open(&seg, job, name, nranks, &created);
    if (rc < 0) return rc;
    *made = created;
    if (seg.hdr->nranks != nranks) return mismatch(&seg, name, rank, nranks);
    e = calloc(1, sizeof *e);
    if (!e) {
      if (created) muster__segment_unlink(&seg);
      muster__segment_close(&seg);
      return muster__err(MUSTER_ENOMEM, "joining group %s: out of memory", name);
    }
    e->seg = seg;
    snprintf(e->job, sizeof e->job, "%s", job);
    snprintf(e->name, sizeof e->name, "%s", name);
    e->nranks = nranks;
    e->listed = 1;
    e->next = cache_head;
    cache_head = e;
    cache_len++;
  }
  e->refs++;
  e->lru = ++cache_clock;
  cache_trim();
  *out = e;
  return MUSTER_OK;
}

static void entry_release(struct gentry *e) {
  pthread_mutex_lock(&cache_mu);
  e->refs--;
  /* a poisoned entry stays listed: ranks of this process that were not in
   * the failing round get its error at their next join (cache_get) */
  if (e->listed && entry_dead(e)) entry_unlist(e);
  if (!e->listed && e->refs == 0) entry_free(e);
  pthread_mutex_unlock(&cache_mu);
}

static void cache_flush(int retire) {
  pthread_mutex_lock(&cache_mu);
  while (cache_head) entry_drop(cache_head, retire);
  pthread_mutex_unlock(&cache_mu);
}

void muster_group_cache_flush(void) { cache_flush(1); }

int muster__group_cache_count(void) {
  pthread_mutex_lock(&cache_mu);
  int n = cache_len;
  pthread_mutex_unlock(&cache_mu);
  return n;
}

int muster__group_hold(const char *job, const char *name, int nranks,
                       struct muster_segment **seg, void **hold, int *created) {
  pthread_once(&atfork_once, install_atfork);
  pthread_mutex_lock(&cache_mu);
  struct gentry *e;
  int rc = cache_get(job, name, -1, nranks, &e, created);
  pthread_mutex_unlock(&cache_mu);
  if (rc < 0) return rc;
  *seg = &e->seg;
  *hold = e;
  return MUSTER_OK;
}

void muster__group_release_hold(void *hold, int forget) {
  struct gentry *e = hold;
  if (forget) {
    pthread_mutex_lock(&cache_mu);
    if (e->listed) entry_unlist(e);
    pthread_mutex_unlock(&cache_mu);
  }
  entry_release(e);
}

/* At exit: unmap without retiring.  Peers still using a group then see this
 * process gone (MUSTER_EPEERDEAD at once) instead of going by name and
 * waiting for a rank that will never come. */
__attribute__((destructor)) static void cache_at_exit(void) { cache_flush(0); }

/* ---------------------------------------------------------------------- */
/* Seats                                                                   */
/* ---------------------------------------------------------------------- */

/* seats -1; the last one out of a group that never formed closes it (sets
 * the closing bit in the same CAS, so no attacher can slip in) and removes
 * the name. */
static void seats_release(struct gentry *e) {
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

static int seat(muster_group_t *g, struct gentry *e) {
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
    seats_release(e);
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

/* ---------------------------------------------------------------------- */
/* Join / leave                                                            */
/* ---------------------------------------------------------------------- */

/* The job of opts, else $MUSTER_JOB, else "default"; checked. */
static int pick_job(const muster_group_opts_t *opts, const char **job) {
  if (opts && opts->job) {
    *job = opts->job;
    return muster__segment_check_job(opts->job);
  }
  return muster__env_job(job);
}

/* opts->timeout_s when > 0 (INFINITY: no deadline), else $MUSTER_TIMEOUT;
 * *out = 0 means no deadline (muster__barrier_wait). */
static int pick_timeout(const char *name, const muster_group_opts_t *opts, double *out) {
  double t = opts ? opts->timeout_s : 0;
  if (t != t || (t > MUSTER_MAX_SECONDS && t != INFINITY) || (t > 0 && t < MUSTER_MIN_SECONDS))
    return muster__err(MUSTER_EINVAL, "group %s: timeout_s %g out of range (%g..%.0f s, "
                       "INFINITY for none, <= 0 for $MUSTER_TIMEOUT)", name, t,
                       MUSTER_MIN_SECONDS, MUSTER_MAX_SECONDS);
  if (t > 0) {
    *out = t == INFINITY ? 0 : t;
    return MUSTER_OK;
  }
  return muster__env_timeout(out);
}

int muster__group_check_args(const char *name, int rank, int nranks,
                             const muster_group_opts_t *opts, const char **job, double *timeout) {
  int rc = muster__segment_check_group(name);
  if (rc < 0) return rc;
  if (nranks <= 0 || nranks > MUSTER_MAX_RANKS)
    return muster__err(MUSTER_EINVAL, "group %s: nranks %d out of range 1..%d", name, nranks,
                       MUSTER_MAX_RANKS);
  if (rank < -1 || rank >= nranks)
    return muster__err(MUSTER_EINVAL, "group %s: rank %d out of range 0..%d", name, rank,
                       nranks - 1);
  if (opts && opts->device < -1)
    return muster__err(MUSTER_EINVAL, "group %s: device %d (use -1 for host)", name,
                       opts->device);
  if ((rc = muster__env_check_log()) < 0 || (rc = pick_timeout(name, opts, timeout)) < 0)
    return rc;
  return pick_job(opts, job);
}

/* Find or open the group of g (job, name, nranks) and take g's seat. */
static int attach(muster_group_t *g) {
  int rc = MUSTER_OK;
  for (int attempt = 0; attempt < 100; attempt++) {
    struct gentry *e;
    int made;
    pthread_mutex_lock(&cache_mu);
    rc = cache_get(g->job, g->name, g->rank, g->nranks, &e, &made);
    pthread_mutex_unlock(&cache_mu);
    if (rc < 0) return rc;
    rc = seat(g, e);
    if (rc == MUSTER_OK) return MUSTER_OK;
    entry_release(e); /* a closing entry is unhealthy: it leaves the cache */
    if (rc < 0) return rc;
  }
  return muster__err(MUSTER_EBUSY, "group %s keeps closing under us; gave up joining", g->name);
}

int muster_group_join(const char *name, int rank, int nranks, const muster_group_opts_t *opts,
                      muster_group_t **out) {
  if (!out) return muster__err(MUSTER_EINVAL, "muster_group_join: out is NULL");
  *out = NULL;
  const char *job;
  double timeout;
  int rc = muster__group_check_args(name, rank, nranks, opts, &job, &timeout);
  if (rc == MUSTER_OK && rank < 0) /* -1 is a launcher's (launch.c) */
    rc = muster__err(MUSTER_EINVAL, "group %s: rank %d out of range 0..%d", name, rank, nranks - 1);
  if (rc < 0) return rc;
  pthread_once(&atfork_once, install_atfork);
  muster_group_t *g = calloc(1, sizeof *g);
  if (!g) return muster__err(MUSTER_ENOMEM, "joining group %s: out of memory", name);
  g->rank = rank;
  g->nranks = nranks;
  g->device = opts ? opts->device : -1;
  g->timeout_s = timeout;
  snprintf(g->job, sizeof g->job, "%s", job);
  snprintf(g->name, sizeof g->name, "%s", name);
  rc = attach(g);
  if (rc < 0) {
    free(g);
    return rc;
  }
  *out = g;
  return MUSTER_OK;
}

/* Give the seat back and drop our reference on the segment. */
static void vacate(muster_group_t *g) {
  if (!g->e) return;
  struct muster_seg_slot *s = g->slot;
  ST(&s->wait_start_ns, 0);
  ST(&s->phase, MUSTER_PHASE_LEFT);
  STR(&s->owner_tid, 0); /* pid/start_time stay: they name the last occupant */
  seats_release(g->e);
  entry_release(g->e);
  g->e = NULL;
  g->h = NULL;
  g->slot = NULL;
}

int muster_group_leave(muster_group_t *g) {
  if (!g) return muster__err(MUSTER_EINVAL, "muster_group_leave: NULL group");
  int rc = g->first_err;
  vacate(g);
  free(g);
  return rc;
}

/* ---------------------------------------------------------------------- */
/* Rounds                                                                  */
/* ---------------------------------------------------------------------- */

static int note_error(muster_group_t *g, int rc) {
  if (g->h && LD(&g->h->abort_state) != MUSTER_ABORT_NONE) {
    g->saw_abort = 1;
    ST(&g->slot->abort_seen, 1);
    if (!LD(&g->h->formed)) muster__segment_unlink(&g->e->seg);
  }
  if (!g->first_err) g->first_err = rc;
  return rc;
}

static int poisoned_before(muster_group_t *g) {
  if (!g->h)
    return muster__err(MUSTER_EPOISONED, "group %s: this handle lost its group (an earlier "
                       "error); leave it", g->name);
  char reason[MUSTER_SEG_REASON_MAX];
  snprintf(reason, sizeof reason, "%s", g->h->abort_reason);
  return muster__err(MUSTER_EPOISONED, "group %s was poisoned earlier: %s", g->name, reason);
}

/* The group was retired by a process that dropped it from its cache while
 * we waited in our first round: the others meet in a new segment by name.
 * (barrier.c poisons it this way: EPOISONED, no rank blamed.) */
static int retired_under_us(const muster_group_t *g) {
  const struct muster_seg_header *h = g->h;
  return LD(&g->slot->barriers) == 0 && LD(&h->retired) &&
         LDA(&h->abort_state) == MUSTER_ABORT_SET && LD(&h->abort_code) == MUSTER_EPOISONED &&
         LD(&h->abort_rank) == -1;
}

/* Move g to the group's new segment: leave the old seat, join by name.
 * A status the leader set for the round being moved goes along. */
static int relocate(muster_group_t *g, uint32_t round) {
  muster__log(MUSTER_LOG_INFO, "rank %d of group %s: the group was retired; joining it again "
              "by name", g->rank, g->name);
  uint8_t data[MUSTER_MAX_PAYLOAD];
  const struct muster_seg_status *old = &g->h->status[round & 1];
  int carry = g->rank == 0 && LD(&old->valid) && LD(&old->gen) == round;
  int status = LD(&old->status);
  uint32_t len = LD(&old->len);
  if (len > MUSTER_MAX_PAYLOAD) len = MUSTER_MAX_PAYLOAD;
  if (carry) memcpy(data, old->data, len);
  vacate(g);
  int rc = attach(g);
  if (rc == MUSTER_OK && carry) rc = muster_group_set_status(g, status, data, len);
  return rc;
}

static void take_status(muster_group_t *g, uint32_t gen) {
  /* a status the leader set in this round becomes ours now */
  const struct muster_seg_status *st = &g->h->status[gen & 1];
  if (LD(&st->valid) && LD(&st->gen) == gen && (int32_t)(gen - g->join_gen) >= 0) {
    g->status = LD(&st->status);
    g->status_len = LD(&st->len);
    if (g->status_len > MUSTER_MAX_PAYLOAD) g->status_len = MUSTER_MAX_PAYLOAD;
    memcpy(g->status_data, st->data, g->status_len);
    g->has_status = 1;
  }
}

/* Publish into our buffer of the open round: the payload, or for a plain
 * barrier "nothing" (so a rank that exchanged in this round sees the
 * mismatch).  The round cannot end before we arrive, so gen is stable. */
static void publish(muster_group_t *g, uint32_t gen, const void *payload, size_t len, int exch) {
  struct muster_seg_slot *s = g->slot;
  int b = gen & 1;
  if (len) memcpy(s->payload[b], payload, len);
  ST(&s->payload_len[b], (uint32_t)len);
  ST(&s->payload_gen[b], exch ? gen : ~gen);
  if (exch) ST(&s->phase, MUSTER_PHASE_PUBLISHED);
}

/* One round: publish (or not), wait for everyone. */
static int do_round(muster_group_t *g, const void *payload, size_t len, int exch,
                    double timeout_s) {
  for (int moves = 0;; moves++) {
    if (g->saw_abort || !g->h) return poisoned_before(g);
    g->has_exch = 0; /* the previous exchange's payloads may now be overwritten */
    uint32_t gen = LD(&g->h->generation), passed;
    publish(g, gen, payload, len, exch);
    uint64_t no = LD(&g->slot->barriers) + 1;
    /* no deadline of its own (waiting for a computing leader): the group's
     * timeout still bounds a peer that is stopped */
    int rc = timeout_s > 0 ? muster__barrier_wait(g->h, g->rank, timeout_s, no, &passed)
                           : muster__barrier_wait_busy(g->h, g->rank, g->timeout_s, no, &passed);
    if (rc == MUSTER_OK) {
      g->last_gen = passed;
      g->passed = 1;
      take_status(g, passed);
      if (exch) {
        g->exch_gen = passed;
        g->has_exch = 1;
      }
      return MUSTER_OK;
    }
    if (moves < 3 && retired_under_us(g)) {
      if ((rc = relocate(g, gen)) == MUSTER_OK) continue;
      g->first_err = g->first_err ? g->first_err : rc;
      return rc;
    }
    return note_error(g, rc);
  }
}

int muster_group_exchange(muster_group_t *g, const void *payload, size_t len) {
  if (!g) return muster__err(MUSTER_EINVAL, "muster_group_exchange: NULL group");
  if (!g->h) return poisoned_before(g);
  if (len > MUSTER_MAX_PAYLOAD || (len && !payload)) {
    muster__group_abortf(g, MUSTER_EINVAL, "rank %d of group %s passed a bad payload (%zu bytes, "
                         "max %d%s)", g->rank, g->name, len, MUSTER_MAX_PAYLOAD,
                         payload ? "" : ", NULL pointer");
    return note_error(g, muster__barrier_check_abort(g->h));
  }
  return do_round(g, payload, len, 1, g->timeout_s);
}

int muster_group_payload(muster_group_t *g, int rank, const void **data, size_t *len) {
  if (!g || !data || !len) return muster__err(MUSTER_EINVAL, "muster_group_payload: NULL argument");
  if (rank < 0 || rank >= g->nranks)
    return muster__err(MUSTER_EINVAL, "group %s: rank %d out of range 0..%d", g->name, rank,
                       g->nranks - 1);
  if (!g->has_exch)
    return muster__err(MUSTER_EINVAL, "group %s: no exchange completed since the last "
                       "barrier/join of rank %d", g->name, g->rank);
  const struct muster_seg_slot *s = muster__segment_slot(g->h, rank);
  int b = g->exch_gen & 1;
  if (LD(&s->payload_gen[b]) != g->exch_gen)
    return muster__err(MUSTER_EMISMATCH, "group %s: rank %d published nothing in round %" PRIu32
                       " (it called a barrier where rank %d called an exchange)", g->name,
                       rank, g->exch_gen, g->rank);
  *data = s->payload[b];
  *len = LD(&s->payload_len[b]);
  return MUSTER_OK;
}

int muster_group_barrier(muster_group_t *g) {
  if (!g) return muster__err(MUSTER_EINVAL, "muster_group_barrier: NULL group");
  return do_round(g, NULL, 0, 0, g->timeout_s);
}

int muster__group_barrier_ex(muster_group_t *g, double timeout_s) {
  if (!g) return muster__err(MUSTER_EINVAL, "muster__group_barrier_ex: NULL group");
  return do_round(g, NULL, 0, 0, timeout_s);
}

int muster_group_set_status(muster_group_t *g, int status, const void *data, size_t len) {
  if (!g) return muster__err(MUSTER_EINVAL, "muster_group_set_status: NULL group");
  if (g->rank != 0)
    return muster__err(MUSTER_EINVAL, "group %s: rank %d set a status; only the leader (rank 0) "
                       "may", g->name, g->rank);
  if (len > MUSTER_MAX_PAYLOAD || (len && !data))
    return muster__err(MUSTER_EINVAL, "group %s: status data of %zu bytes (max %d)",
                       g->name, len, MUSTER_MAX_PAYLOAD);
  if (!g->h) return poisoned_before(g);
  uint32_t gen = LD(&g->h->generation);
  struct muster_seg_status *st = &g->h->status[gen & 1];
  if (len) memcpy(st->data, data, len);
  ST(&st->len, (uint32_t)len);
  ST(&st->status, status);
  ST(&st->gen, gen);
  ST(&st->valid, 1);
  return MUSTER_OK;
}

int muster_group_status(muster_group_t *g, int *status, const void **data, size_t *len) {
  if (!g || !status) return muster__err(MUSTER_EINVAL, "muster_group_status: NULL argument");
  *status = 0;
  if (data) *data = NULL;
  if (len) *len = 0;
  if (!g->has_status) return MUSTER_OK;
  *status = g->status;
  if (data) *data = g->status_data;
  if (len) *len = g->status_len;
  return MUSTER_OK;
}

static int abort_v(muster_group_t *g, int code, const char *fmt, va_list ap) {
  char why[MUSTER_SEG_REASON_MAX - 128], reason[MUSTER_SEG_REASON_MAX];
  vsnprintf(why, sizeof why, fmt, ap);
  snprintf(reason, sizeof reason, "rank %d (pid %d, device %d) aborted group %s: %.300s", g->rank,
           (int)muster__proc_self_pid(), g->device, g->name, why);
  muster__barrier_poison(g->h, code, g->rank, muster__proc_self_pid(), reason);
  if (!LD(&g->h->formed)) muster__segment_unlink(&g->e->seg);
  return MUSTER_OK;
}

int muster__group_abortf(muster_group_t *g, int code, const char *fmt, ...) {
  if (!g || code >= 0)
    return muster__err(MUSTER_EINVAL, "muster_group_abort: %s", g ? "code must be a negative "
                       "MUSTER_E* value" : "NULL group");
  if (!g->h) return MUSTER_OK; /* lost its group already: nothing to poison */
  va_list ap;
  va_start(ap, fmt);
  int rc = abort_v(g, code, fmt, ap);
  va_end(ap);
  return rc;
}

int muster_group_abort(muster_group_t *g, int code, const char *why) {
  return muster__group_abortf(g, code, "%s", why ? why : "(no reason given)");
}

/* ---------------------------------------------------------------------- */
/* Accessors                                                               */
/* ---------------------------------------------------------------------- */

int muster_group_rank(const muster_group_t *g) { return g ? g->rank : MUSTER_EINVAL; }
int muster_group_size(const muster_group_t *g) { return g ? g->nranks : MUSTER_EINVAL; }
const char *muster_group_name(const muster_group_t *g) { return g ? g->name : ""; }
uint64_t muster_group_session(const muster_group_t *g) { return g ? g->session : 0; }
uint64_t muster_group_generation(const muster_group_t *g) { return muster_group_session(g); }

pid_t muster__group_peer_pid(const muster_group_t *g, int rank) {
  if (!g || !g->h || rank < 0 || rank >= g->nranks) return 0;
  const struct muster_seg_slot *s = muster__segment_slot(g->h, rank);
  return LD(&s->owner_tid) ? LD(&s->pid) : 0;
}

int muster__group_all_local(const muster_group_t *g) {
  if (!g || !g->h) return 0;
  pid_t me = muster__proc_self_pid();
  for (int r = 0; r < g->nranks; r++) {
    const struct muster_seg_slot *s = muster__segment_slot(g->h, r);
    if (!LD(&s->owner_tid) || LD(&s->pid) != me) return 0;
  }
  return 1;
}

int muster__group_device(const muster_group_t *g, int rank) {
  if (!g || !g->h || rank < 0 || rank >= g->nranks) return -1;
  return LD(&muster__segment_slot(g->h, rank)->device);
}

double muster__group_timeout(const muster_group_t *g) { return g ? g->timeout_s : 0; }

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
