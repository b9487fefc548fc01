/*
 * runtime/group/groupInt.h - private to the group files: what runtime/group/group.c (the
 * API: join/leave, rounds, status, abort), group_cache.c (the per-process
 * cache of mapped segments), group_seat.c (taking and giving back a rank's
 * seat) and group_watch.c (a watchdog's check of a group) share.  Other
 * runtime modules use group.h; nothing here is for them.
 */
#ifndef MUSTER_GROUPINT_H
#define MUSTER_GROUPINT_H

#include <stdint.h>

#include "base/atomics.h"
#include "group/group.h"
#include "shm/segment.h"


/* One cached group: (job, name, nranks) with its segment mapped and its fd
 * open, shared by every handle of this process that joined it (group_cache.c
 * owns the list; seg, job, name and nranks are fixed once listed). */
struct gentry {
  struct muster_segment seg;
  char job[MUSTER_MAX_JOB + 1];
  char name[MUSTER_MAX_NAME + 1];
  int nranks;
  int refs;         /* handles using it; under the cache lock */
  int listed;       /* findable in the cache list */
  uint64_t lru;
  struct gentry *next;
};

/* One participant's handle (muster_group_t). */
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
  int saw_abort;       /* reported the poison once; EPOISONED from now on */
  int has_status;      /* a leader status has been seen in this session */
  int status;          /* ... its code, and its data (private copy: the
                          segment's buffer is reused two rounds later) */
  uint32_t status_len;
  uint8_t status_data[MUSTER_MAX_PAYLOAD];
  uint64_t session;
};

/* ---- group_cache.c ---- */

/* Find (job, name, nranks) in this process's cache or open it by name
 * (creating the segment if there is none); takes the cache lock itself.
 * On MUSTER_OK *out is the entry with a reference taken (give it back with
 * muster__group_entry_release) and *made = 1 when this call created the
 * segment.  rank: the joiner's, or -1 for a launcher's hold.  An unhealthy
 * cached entry (poisoned, retired, closing), or one inherited from another
 * pid namespace, leaves the cache and the group is opened by name again,
 * except that a rank >= 0 not yet told of the poison gets
 * the group's error (once).  Errors: MUSTER_EMISMATCH (the group exists
 * with another nranks; it is poisoned and unlinked for everybody),
 * MUSTER_ENOMEM, and those of muster__segment_open; message set. */
MUSTER_HIDDEN int muster__group_cache_get(const char *job, const char *name, int rank, int nranks,
                                          struct gentry **out, int *made);

/* Drop one reference on e.  A dead entry (retired or closed) leaves the
 * cache; an entry out of the cache is freed (unmapped, fd closed) with its
 * last reference.  A poisoned one stays listed (see group_cache.c). */
MUSTER_HIDDEN void muster__group_entry_release(struct gentry *e);

/* Take e out of the cache list (nobody of this process will find it by
 * name again); it is freed with its last reference. */
MUSTER_HIDDEN void muster__group_entry_forget(struct gentry *e);

/* ---- group_seat.c ---- */

/* Take g's seat (g->rank) in e's segment: count a seat, claim the slot,
 * write who we are into it, mark the group formed when every rank has been
 * seen, and set g->e, g->h, g->slot, g->session and g->join_gen.  g->rank,
 * g->nranks and g->device must be set.  Returns MUSTER_OK; 1 (SEAT_RETRY: positive,
 * no message) when the segment is closing (the caller releases e and goes by
 * name again); MUSTER_EBUSY when the seat is held (by this very thread, or
 * by a live occupant); when the occupant is dead, the group is poisoned
 * (MUSTER_EPEERDEAD naming it) and the group's poison code is returned.
 * On failure no seat count is kept; e's reference stays the caller's. */
MUSTER_HIDDEN int muster__group_seat(muster_group_t *g, struct gentry *e);

/* Give back one seat count of e's segment (the slot itself is the
 * caller's to clear); the last one out of a group that never formed closes
 * it and removes its name; in a group that never formed and is poisoned,
 * any caller removes the name. */
MUSTER_HIDDEN void muster__group_seats_release(struct gentry *e);

#endif
