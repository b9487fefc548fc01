/*
 * runtime/solve/store.c - the store bootstrap (muster/store.h): opening, the
 * allgather, the barrier, the abort, closing.  The heartbeat and the
 * liveness check are in store_beat.c.
 *
 * Allgather k: each rank sets "ag/<k>/<rank>" (a header saying k, len and
 * rank, then its bytes) and gets every other rank's, each get waiting at
 * most a slice; between slices it reads the abort key and checks the
 * awaited rank's liveness, so a wait ends as soon as the set fails, and a
 * running peer, however slow, is waited for.  Having read every rank's
 * value of round k, a rank knows every rank has finished reading round
 * k - 1 (they wrote round k after), so its own value of round k - 1 can
 * go: its heartbeat thread deletes it (store_beat.c), so that the round
 * trip is not on the allgather's path.  A store keeps two values per rank,
 * and for a moment a few more while that thread catches up.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "solve/storeInt.h"

#define AG_MAGIC UINT64_C(0x5254534741545352) /* "RSTAGSTR" */
#define ABORT_MAGIC 0x54524241u               /* "ABRT" */

typedef struct ag_head {
  uint64_t magic, k, len;
  int32_t rank, pad_;
} ag_head_t;

typedef struct abort_msg {
  uint32_t magic;
  int32_t rank, code, pad_;
  char msg[MUSTER__STORE_MSG_MAX];
} abort_msg_t;

void muster__store_key(const muster_store_t *s, char *out, size_t cap, const char *fmt, ...) {
  int n = snprintf(out, cap, "muster/%s/", s->name);
  va_list ap;
  va_start(ap, fmt);
  if (n >= 0 && (size_t)n < cap) vsnprintf(out + n, cap - (size_t)n, fmt, ap);
  va_end(ap);
}

/* ---- failing -------------------------------------------------------------------- */

int muster__store_fail(muster_store_t *s, int code, int publish, const char *msg) {
  pthread_mutex_lock(&s->mu);
  int first = !s->failed;
  if (first) {
    s->failed = code;
    snprintf(s->fail_msg, sizeof s->fail_msg, "%s", msg);
  }
  code = s->failed;
  char kept[MUSTER__STORE_MSG_MAX];
  snprintf(kept, sizeof kept, "%s", s->fail_msg);
  pthread_mutex_unlock(&s->mu);
  if (first && publish) {
    abort_msg_t a = {.magic = ABORT_MAGIC, .rank = s->rank, .code = code};
    snprintf(a.msg, sizeof a.msg, "%s", kept);
    char key[128], err[200];
    muster__store_key(s, key, sizeof key, "abort");
    if (s->kv.set(s->kv.ctx, key, &a, sizeof a, err, sizeof err) < 0)
      muster__log(MUSTER_LOG_WARN, "store set %s: rank %d could not write the abort key: %s", s->name,
                  s->rank, err);
  }
  return muster__err(code, "%s", kept);
}

/* The abort key, if a rank wrote it: fail with its code and message. */
static int read_abort(muster_store_t *s) {
  char key[128], err[200] = "";
  abort_msg_t a;
  size_t got = 0;
  muster__store_key(s, key, sizeof key, "abort");
  int rc = s->kv.get(s->kv.ctx, key, 0, &a, sizeof a, &got, err, sizeof err);
  if (rc == MUSTER_ENOENT) return 0;
  char msg[MUSTER__STORE_MSG_MAX + 100];
  if (rc < 0) {
    snprintf(msg, sizeof msg, "store set %s, rank %d: reading the abort key: %s", s->name, s->rank, err);
    return muster__store_fail(s, rc, 0, msg);
  }
  if (got != sizeof a || a.magic != ABORT_MAGIC || a.code >= 0) {
    snprintf(msg, sizeof msg, "store set %s: the abort key holds %zu bytes that are no abort of muster's",
             s->name, got);
    return muster__store_fail(s, MUSTER_EMISMATCH, 0, msg);
  }
  a.msg[sizeof a.msg - 1] = '\0';
  if (a.rank == s->rank) snprintf(msg, sizeof msg, "%s", a.msg);
  else snprintf(msg, sizeof msg, "rank %d of store set %s failed: %s", (int)a.rank, s->name, a.msg);
  return muster__store_fail(s, a.code, 0, msg);
}

/* A peer is gone (muster__store_live's message, then `where`).  Unless a
 * rank's abort came in meanwhile: a rank that failed and then ended (its
 * process exits) looks dead, and its abort names the first cause. */
static int lost_peer(muster_store_t *s, int code, const char *where) {
  char msg[MUSTER__STORE_MSG_MAX];
  snprintf(msg, sizeof msg, "%s%s", muster_last_error(), where);
  int rc = read_abort(s);
  return rc < 0 ? rc : muster__store_fail(s, code, 1, msg);
}

int muster_store_check(muster_store_t *s) {
  if (!s) return muster__err(MUSTER_EINVAL, "muster_store_check: NULL store");
  pthread_mutex_lock(&s->mu);
  int failed = s->failed;
  pthread_mutex_unlock(&s->mu);
  if (failed) return muster__store_fail(s, failed, 0, "");
  int rc = read_abort(s);
  if (rc < 0) return rc;
  if ((rc = muster__store_live(s, -1)) < 0) return lost_peer(s, rc, "");
  return 0;
}

int muster__store_watch(void *store) { return muster_store_check(store); }

int muster_store_abort(muster_store_t *s, int code, const char *why) {
  if (!s) return muster__err(MUSTER_EINVAL, "muster_store_abort: NULL store");
  if (code >= 0) code = MUSTER_EPROVIDER;
  char msg[MUSTER__STORE_MSG_MAX];
  snprintf(msg, sizeof msg, "rank %d aborted the store set %s: %s", s->rank, s->name, why ? why : "");
  return muster__store_fail(s, code, 1, msg);
}

/* ---- the allgather -------------------------------------------------------------- */

/* Wait for rank r's value of round k into buf (head + len bytes). */
static int take(muster_store_t *s, int r, uint64_t k, unsigned char *buf, size_t len) {
  char key[128], err[300] = "", msg[MUSTER__STORE_MSG_MAX];
  muster__store_key(s, key, sizeof key, "ag/%" PRIu64 "/%d", k, r);
  double slice = s->beat < 0.2 ? s->beat : 0.2;
  for (;;) {
    size_t got = 0;
    int rc = s->kv.get(s->kv.ctx, key, slice, buf, sizeof(ag_head_t) + len, &got, err, sizeof err);
    if (rc == 0) {
      ag_head_t h;
      memcpy(&h, buf, got < sizeof h ? got : sizeof h);
      if (got < sizeof h || h.magic != AG_MAGIC || h.k != k || h.rank != r) {
        snprintf(msg, sizeof msg, "store set %s: key %s holds %zu bytes that are not rank %d's value of "
                 "allgather %" PRIu64, s->name, key, got, r, k);
        return muster__store_fail(s, MUSTER_EMISMATCH, 1, msg);
      }
      if (h.len != len || got != sizeof h + len) {
        snprintf(msg, sizeof msg, "store set %s, allgather %" PRIu64 ": rank %d passed %" PRIu64 " bytes, "
                 "rank %d passed %zu", s->name, k, r, h.len, s->rank, len);
        return muster__store_fail(s, MUSTER_EMISMATCH, 1, msg);
      }
      return 0;
    }
    if (rc != MUSTER_ENOENT) {
      snprintf(msg, sizeof msg, "store set %s, rank %d, allgather %" PRIu64 ": the store failed reading %s: "
               "%s", s->name, s->rank, k, key, err[0] ? err : muster_strerror(rc));
      return muster__store_fail(s, rc, 1, msg);
    }
    if ((rc = read_abort(s)) < 0) return rc;
    if ((rc = muster__store_live(s, r)) < 0) {
      snprintf(msg, sizeof msg, "; rank %d was in allgather %" PRIu64 ", waiting for rank %d", s->rank, k, r);
      return lost_peer(s, rc, msg);
    }
  }
}

/* Allgather k's phase for the beats: in it, or after it; inside the call
 * muster__store_within named, if any. */
static void ag_phase(muster_store_t *s, int after, uint64_t k, size_t len) {
  char within[MUSTER__STORE_PHASE_MAX];
  pthread_mutex_lock(&s->mu);
  snprintf(within, sizeof within, "%s", s->within);
  pthread_mutex_unlock(&s->mu);
  if (within[0])
    muster__store_phase(s, "%.100s, %s its allgather %" PRIu64, within, after ? "after" : "in", k);
  else if (after)
    muster__store_phase(s, "between calls (after allgather %" PRIu64 ")", k);
  else
    muster__store_phase(s, "in allgather %" PRIu64 " (%zu bytes)", k, len);
}

static int allgather(muster_store_t *s, const void *mine, void *all, size_t len) {
  pthread_mutex_lock(&s->mu);
  int failed = s->failed;
  pthread_mutex_unlock(&s->mu);
  if (failed) return muster__store_fail(s, failed, 0, "");
  uint64_t k = s->k++;
  size_t sz = sizeof(ag_head_t) + len;
  unsigned char *buf = malloc(sz);
  if (!buf) return muster__err(MUSTER_ENOMEM, "store set %s: out of memory for %zu bytes", s->name, sz);
  ag_head_t h = {.magic = AG_MAGIC, .k = k, .len = len, .rank = s->rank};
  memcpy(buf, &h, sizeof h);
  if (len) memcpy(buf + sizeof h, mine, len);
  ag_phase(s, 0, k, len);
  char key[128], err[300] = "", msg[MUSTER__STORE_MSG_MAX];
  muster__store_key(s, key, sizeof key, "ag/%" PRIu64 "/%d", k, s->rank);
  int rc = s->kv.set(s->kv.ctx, key, buf, sz, err, sizeof err);
  if (rc < 0) {
    snprintf(msg, sizeof msg, "store set %s, rank %d, allgather %" PRIu64 ": the store failed writing %s: %s",
             s->name, s->rank, k, key, err[0] ? err : muster_strerror(rc));
    rc = muster__store_fail(s, rc, 1, msg);
  }
  if (len) memcpy((char *)all + (size_t)s->rank * len, mine, len);
  for (int r = 0; r < s->size && rc == 0; r++) {
    if (r == s->rank || (rc = take(s, r, k, buf, len)) < 0) continue;
    if (len) memcpy((char *)all + (size_t)r * len, buf + sizeof h, len);
  }
  free(buf);
  if (rc == 0 && k > 0 && s->kv.del) muster__store_forget(s, k); /* every rank has read round k - 1 */
  ag_phase(s, 1, k, len);
  return rc;
}

int muster_store_allgather(void *store, const void *mine, void *all, size_t len, char *err, size_t errlen) {
  muster_store_t *s = store;
  int rc = !s ? muster__err(MUSTER_EINVAL, "muster_store_allgather: NULL store")
           : (len && (!mine || !all)) ? muster__err(MUSTER_EINVAL, "muster_store_allgather: %s is NULL",
                                                    !mine ? "mine" : "all")
                                      : allgather(s, mine, all, len);
  if (rc < 0 && err && errlen) snprintf(err, errlen, "%s", muster_last_error());
  return rc;
}

int muster_store_barrier(muster_store_t *s) { return muster_store_allgather(s, NULL, NULL, 0, NULL, 0); }

/* ---- opening and closing -------------------------------------------------------- */

static int check_opts(const muster_kv_t *kv, const muster_store_opts_t *o) {
  if (!kv || !o) return muster__err(MUSTER_EINVAL, "muster_store_open: %s is NULL", kv ? "opts" : "kv");
  if (!kv->set || !kv->get) return muster__err(MUSTER_EINVAL, "muster_store_open: the store needs set and get");
  size_t n = o->name ? strlen(o->name) : 0;
  if (n < 1 || n > 64 || strspn(o->name, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-") != n)
    return muster__err(MUSTER_EINVAL, "muster_store_open: name '%.80s': 1..64 of [A-Za-z0-9._-]",
                       o->name ? o->name : "(null)");
  if (o->size < 1 || o->size > MUSTER_MAX_RANKS || o->rank < 0 || o->rank >= o->size)
    return muster__err(MUSTER_EINVAL, "muster_store_open: rank %d of size %d (size 1..%d)", o->rank, o->size,
                       MUSTER_MAX_RANKS);
  if (!(o->timeout_s >= 0) || !(o->beat_s >= 0))
    return muster__err(MUSTER_EINVAL, "muster_store_open: timeout_s %g, beat_s %g: not >= 0", o->timeout_s,
                       o->beat_s);
  return 0; /* timeout_s's range: muster_timeout's, below */
}

/* The name is new in the store: this rank's beat key is not there. */
static int check_new(muster_store_t *s) {
  char key[128], err[300] = "";
  muster__beat_t b;
  size_t got = 0;
  muster__store_key(s, key, sizeof key, "beat/%d", s->rank);
  int rc = s->kv.get(s->kv.ctx, key, 0, &b, sizeof b, &got, err, sizeof err);
  if (rc == MUSTER_ENOENT) return 0;
  if (rc < 0)
    return muster__err(rc, "muster_store_open: store set %s, rank %d: the store failed reading %s: %s", s->name,
                       s->rank, key, err[0] ? err : muster_strerror(rc));
  return muster__err(MUSTER_EEXIST, "muster_store_open: store set %s, rank %d: key %s is already in the store "
                     "(a set of this name was opened before): give each open a new name", s->name, s->rank, key);
}

int muster_store_open(const muster_kv_t *kv, const muster_store_opts_t *opts, muster_store_t **out) {
  if (out) *out = NULL;
  int rc = out ? check_opts(kv, opts) : muster__err(MUSTER_EINVAL, "muster_store_open: out is NULL");
  if (rc < 0) return rc;
  double timeout; /* the one rule of every wait (muster.h): opts, else MUSTER_TIMEOUT, else 60 s */
  if ((rc = muster_timeout(opts->timeout_s, &timeout)) < 0)
    return muster__err_prefix(rc, "muster_store_open: store set %s, rank %d", opts->name, opts->rank);
  muster_store_t *s = calloc(1, sizeof *s);
  if (!s) return muster__err(MUSTER_ENOMEM, "muster_store_open: out of memory");
  s->kv = *kv;
  snprintf(s->name, sizeof s->name, "%s", opts->name);
  s->rank = opts->rank;
  s->size = opts->size;
  s->timeout = timeout;
  s->beat = opts->beat_s > 0 ? opts->beat_s : timeout > 0 && timeout / 4 < 1 ? timeout / 4 : 1;
  if (s->beat < 0.01) s->beat = 0.01;
  pthread_mutex_init(&s->mu, NULL);
  pthread_cond_init(&s->cv, NULL);
  muster__store_phase(s, "opened, before the first allgather");
  char err[300] = "";
  if ((rc = check_new(s)) == 0 && (rc = muster__store_beat_write(s, 0, err, sizeof err)) < 0)
    rc = muster__err(rc, "muster_store_open: store set %s, rank %d: the store failed writing the first beat: %s",
                     s->name, s->rank, err);
  if (rc == 0) rc = muster__store_beat_start(s);
  if (rc < 0) {
    pthread_cond_destroy(&s->cv);
    pthread_mutex_destroy(&s->mu);
    free(s);
    return rc;
  }
  *out = s;
  return 0;
}

int muster_store_close(muster_store_t *s) {
  if (!s) return muster__err(MUSTER_EINVAL, "muster_store_close: NULL store");
  muster__store_beat_stop(s);
  pthread_mutex_lock(&s->mu);
  muster__store_delete_read(s); /* what the beat thread had not deleted yet */
  pthread_mutex_unlock(&s->mu);
  char err[300] = "";
  int rc = muster__store_beat_write(s, 1, err, sizeof err);
  if (rc < 0) rc = muster__err(rc, "muster_store_close: store set %s, rank %d: the store failed writing the last "
                               "beat: %s", s->name, s->rank, err);
  pthread_cond_destroy(&s->cv);
  pthread_mutex_destroy(&s->mu);
  free(s);
  return rc;
}
