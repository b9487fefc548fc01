/*
 * runtime/group/group.c - muster_group_*: join/leave, exchange, barrier, status,
 * abort, the accessors.  The per-process cache of mapped segments is
 * group_cache.c's, taking a seat group_seat.c's, the watchdog's check
 * group_watch.c's; what they share is in groupInt.h.
 */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shm/barrier.h"
#include "base/env.h"
#include "group/groupInt.h"
#include "muster/parse.h"
#include "base/proc.h"
#include "shm/segment.h"

/* ---------------------------------------------------------------------- */
/* Join / leave                                                            */
/* ---------------------------------------------------------------------- */

/* The job of opts, else $MUSTER_JOB, else "default"; checked. */
static int pick_job(const muster_group_opts_t *opts, const char **job) {
  if (opts && opts->job) {
    *job = opts->job;
    return muster_segment_check_job(opts->job);
  }
  return muster__env_job(job);
}

/* muster_timeout's rule (env.c) for opts; *out = 0 means no deadline
 * (muster__barrier_wait). */
static int pick_timeout(const char *name, const muster_group_opts_t *opts, double *out) {
  int rc = muster_timeout(opts ? opts->timeout_s : 0, out);
  return rc < 0 ? muster__err_prefix(rc, "group %s", name) : rc;
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
    rc = muster__group_cache_get(g->job, g->name, g->rank, g->nranks, &e, &made);
    if (rc < 0) return rc;
    rc = muster__group_seat(g, e);
    if (rc == MUSTER_OK) return MUSTER_OK;
    muster__group_entry_release(e); /* a closing entry is unhealthy: it leaves the cache */
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
  muster__group_seats_release(g->e);
  muster__group_entry_release(g->e);
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

int muster__group_leave_forget(muster_group_t *g) {
  if (g && g->e) muster__group_entry_forget(g->e);
  return muster_group_leave(g);
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
  /* the aborting rank knows: its next join of this name through the cache
   * starts afresh rather than reporting its own abort back (group_cache.c) */
  ST(&g->slot->abort_seen, 1);
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
