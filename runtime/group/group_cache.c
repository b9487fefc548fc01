/*
 * runtime/group/group_cache.c - the per-process cache of mapped group segments.
 *
 * One entry per (job, name, nranks) with the segment mapped and its fd
 * open, shared (refcounted) by every handle of this process.  A join of a
 * cached, healthy group takes the seat with a few atomics and no system
 * call.  Entries are dropped when the group is poisoned, retired or closed
 * (at leave, once unused), when over CACHE_MAX (least recently used idle
 * one), and by muster_group_cache_flush() (also run at exit).  Once exit()
 * has begun no join opens anything (exit_guard.h), and the names of the
 * groups only this process was forming are removed.  A
 * launcher's hold (muster__group_hold) is an entry reference without a
 * seat, so processes it forks inherit the mapping.
 *
 * This file owns the list and its lock (`cache`, a forklock.h lock);
 * the seats inside a segment are group_seat.c's, the handles group.c's.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shm/barrier.h"
#include "base/exit_guard.h"
#include "base/forklock.h"
#include "group/groupInt.h"
#include "base/proc.h"
#include "shm/segment.h"

#define CACHE_MAX 64

/* adaptive: the critical sections are a few loads and stores; spinning a
 * little beats a futex sleep when two ranks join at once.  fork-safe
 * (forklock.h): process mode forks while other threads may hold it. */
MUSTER__FORKLOCK_INIT(cache, PTHREAD_ADAPTIVE_MUTEX_INITIALIZER_NP)
static struct gentry *cache_head;
static int cache_len;
static uint64_t cache_clock;

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
 * Caller holds the cache lock. */
static int cache_get(const char *job, const char *name, int rank, int nranks,
                     struct gentry **out, int *made) {
  *made = 0;
  if (muster__exit_guard_exiting()) /* a segment made now would outlive us */
    return muster__err(MUSTER_EEXITING, "joining group %s: the process is exiting (exit() was "
                       "called or main returned)", name);
  struct gentry *e = cache_find(job, name, nranks);
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

int muster__group_cache_get(const char *job, const char *name, int rank, int nranks,
                            struct gentry **out, int *made) {
  cache_lock();
  int rc = cache_get(job, name, rank, nranks, out, made);
  cache_unlock();
  return rc;
}

void muster__group_entry_release(struct gentry *e) {
  cache_lock();
  e->refs--;
  /* a poisoned entry stays listed: ranks of this process that were not in
   * the failing round get its error at their next join (cache_get) */
  if (e->listed && entry_dead(e)) entry_unlist(e);
  if (!e->listed && e->refs == 0) entry_free(e);
  cache_unlock();
}

static void cache_flush(int retire) {
  cache_lock();
  while (cache_head) entry_drop(cache_head, retire);
  cache_unlock();
}

void muster_group_cache_flush(void) { cache_flush(1); }

int muster__group_cache_count(void) {
  cache_lock();
  int n = cache_len;
  cache_unlock();
  return n;
}

int muster__group_hold(const char *job, const char *name, int nranks,
                       struct muster_segment **seg, void **hold, int *created) {
  struct gentry *e;
  int rc = muster__group_cache_get(job, name, -1, nranks, &e, created);
  if (rc < 0) return rc;
  *seg = &e->seg;
  *hold = e;
  return MUSTER_OK;
}

void muster__group_entry_forget(struct gentry *e) {
  cache_lock();
  if (e->listed) entry_unlist(e);
  cache_unlock();
}

void muster__group_release_hold(void *hold, int forget) {
  struct gentry *e = hold;
  if (forget) muster__group_entry_forget(e);
  muster__group_entry_release(e);
}

void muster__group_cache_exit(void) {
  int self = muster__proc_self_pid();
  cache_lock();
  for (struct gentry *e = cache_head; e; e = e->next) {
    const struct muster_seg_header *h = e->seg.hdr;
    int launcher = LD(&h->launcher_pid); /* another's ranks may still come by name */
    /* formed: the name must be gone already, but the rank that formed it
     * may be between marking it and removing the name */
    if (LD(&h->formed) ||
        ((launcher == 0 || launcher == self) && muster__segment_ours_alone(h)))
      muster__segment_unlink(&e->seg);
  }
  cache_unlock();
}

/* The exit guard removes the unformed groups' names when exit begins. */
__attribute__((constructor)) static void cache_at_load(void) {
  muster__exit_guard_at_begin(muster__group_cache_exit);
}

/* At exit: unmap without retiring.  Peers still using a group then see this
 * process gone (MUSTER_EPEERDEAD at once) instead of going by name and
 * waiting for a rank that will never come.  Names of groups this process
 * was forming go first (exit_guard.h): a flushed entry in use is no longer
 * listed. */
__attribute__((destructor)) static void cache_at_exit(void) {
  muster__exit_guard_begin();
  cache_flush(0);
}
