/*
 * runtime/shm/segment.c - create, attach, validate and remove group segments
 * (their names: segment_name.c).
 * Format and lifetime: segment.h.  Policy and failure semantics:
 * docs/runtime.md.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/atomics.h"
#include "base/proc.h"
#include "shm/segment.h"


/* ---------------------------------------------------------------------- */
/* Validation                                                              */
/* ---------------------------------------------------------------------- */

static int why_set(char *why, size_t whylen, int code, const char *fmt, ...)
    MUSTER_PRINTF(4, 5);
static int why_set(char *why, size_t whylen, int code, const char *fmt, ...) {
  if (why && whylen) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, whylen, fmt, ap);
    va_end(ap);
  }
  return code;
}

/* length of a NUL-terminated string inside cap bytes, or -1 */
static int bounded_len(const char *s, size_t cap) {
  const char *z = memchr(s, '\0', cap);
  return z ? (int)(z - s) : -1;
}

static int validate_slots(const char *map, int nranks, char *why, size_t whylen) {
  /* copy each slot's fixed part: the map may be misaligned (a buffer from a
   * tool) and is changing under us (a live group) */
  struct muster_seg_slot copy;
  const struct muster_seg_slot *s = &copy;
  for (int r = 0; r < nranks; r++) {
    memcpy(&copy, map + MUSTER_SEG_HEADER_SIZE + (size_t)r * MUSTER_SEG_SLOT_SIZE,
           offsetof(struct muster_seg_slot, payload));
    uint32_t phase = LD(&s->phase);
    if (phase > MUSTER_PHASE_MAX_)
      return why_set(why, whylen, MUSTER_ECORRUPT, "rank %d: phase %" PRIu32 " out of range", r,
                     phase);
    for (int i = 0; i < 2; i++) {
      uint32_t len = LD(&s->payload_len[i]);
      if (len > MUSTER_MAX_PAYLOAD)
        return why_set(why, whylen, MUSTER_ECORRUPT,
                       "rank %d: payload %d length %" PRIu32 " > %d", r, i, len,
                       MUSTER_MAX_PAYLOAD);
    }
    int32_t dev = LD(&s->device), pid = LD(&s->pid);
    if (dev < -1) return why_set(why, whylen, MUSTER_ECORRUPT, "rank %d: device %d", r, (int)dev);
    if (pid < 0) return why_set(why, whylen, MUSTER_ECORRUPT, "rank %d: pid %d", r, (int)pid);
  }
  return MUSTER_OK;
}

static int validate_dynamic(const struct muster_seg_header *h, int nranks, char *why,
                            size_t whylen) {
  uint32_t seats = LD(&h->seats);
  if (MUSTER_SEATS_COUNT(seats) > (uint32_t)nranks || (seats & 0x7fff0000u))
    return why_set(why, whylen, MUSTER_ECORRUPT, "seats word 0x%08" PRIx32 " for %d ranks",
                   seats, nranks);
  uint64_t mask = LD(&h->seen_mask);
  uint64_t full = nranks == 64 ? ~UINT64_C(0) : ((UINT64_C(1) << nranks) - 1);
  if (mask & ~full)
    return why_set(why, whylen, MUSTER_ECORRUPT, "seen_mask 0x%" PRIx64 " names ranks >= %d",
                   mask, nranks);
  if (LD(&h->formed) > 1 || LD(&h->retired) > 1)
    return why_set(why, whylen, MUSTER_ECORRUPT, "formed/retired flags out of range");
  /* more arrivals than ranks would never end a round (the round ends when
   * the counter equals nranks): every waiter would wait forever */
  uint32_t arrived = LD(&h->arrived);
  if (arrived > (uint32_t)nranks)
    return why_set(why, whylen, MUSTER_ECORRUPT, "arrived counter %" PRIu32 " for %d ranks",
                   arrived, nranks);
  uint32_t ab = LD(&h->abort_state);
  if (ab > MUSTER_ABORT_SET)
    return why_set(why, whylen, MUSTER_ECORRUPT, "abort state %" PRIu32 " out of range", ab);
  if (ab == MUSTER_ABORT_SET) {
    int32_t code = LD(&h->abort_code);
    if (code >= 0 || code < -1000)
      return why_set(why, whylen, MUSTER_ECORRUPT, "abort code %d is not an error",
                     (int)code);
    if (bounded_len(h->abort_reason, sizeof h->abort_reason) < 0)
      return why_set(why, whylen, MUSTER_ECORRUPT, "abort reason not terminated");
  }
  for (int i = 0; i < 2; i++) {
    if (LD(&h->status[i].len) > MUSTER_MAX_PAYLOAD || LD(&h->status[i].valid) > 1)
      return why_set(why, whylen, MUSTER_ECORRUPT, "status %d out of range", i);
  }
  return MUSTER_OK;
}

int muster__segment_validate(const void *map, size_t maplen, char *why, size_t whylen) {
  if (why && whylen) why[0] = '\0';
  if (!map || maplen < 16)
    return why_set(why, whylen, MUSTER_ECORRUPT, "truncated: %zu bytes, the header needs %u",
                   maplen, MUSTER_SEG_HEADER_SIZE);
  /* work on an aligned snapshot of the header (see validate_slots) */
  struct muster_seg_header copy;
  const struct muster_seg_header *h = &copy;
  uint64_t magic;
  if (((uintptr_t)map & 7) == 0) /* the magic is published last (release) */
    magic = __atomic_load_n((const uint64_t *)map, __ATOMIC_ACQUIRE);
  else
    memcpy(&magic, map, sizeof magic);
  memset(&copy, 0, sizeof copy);
  memcpy(&copy, map, maplen < sizeof copy ? maplen : sizeof copy);
  copy.magic = magic;
  if (magic == 0)
    return why_set(why, whylen, MUSTER_ECORRUPT,
                   "no magic (being created, or its creator died while creating it)");
  if (magic != MUSTER_SEG_MAGIC)
    return why_set(why, whylen, MUSTER_ECORRUPT, "bad magic 0x%016" PRIx64 " (want 0x%016" PRIx64
                   ")", magic, MUSTER_SEG_MAGIC);
  if (h->version != MUSTER_SEG_VERSION)
    return why_set(why, whylen, MUSTER_EVERSION, "layout version %" PRIu32
                   ", this build reads version %u", h->version, MUSTER_SEG_VERSION);
  if (maplen < MUSTER_SEG_HEADER_SIZE)
    return why_set(why, whylen, MUSTER_ECORRUPT, "truncated: %zu bytes, the header needs %u",
                   maplen, MUSTER_SEG_HEADER_SIZE);
  if (h->header_size != MUSTER_SEG_HEADER_SIZE || h->slot_size != MUSTER_SEG_SLOT_SIZE ||
      h->max_payload != MUSTER_MAX_PAYLOAD)
    return why_set(why, whylen, MUSTER_ECORRUPT,
                   "header/slot/payload sizes %" PRIu32 "/%" PRIu32 "/%" PRIu32
                   ", want %u/%u/%d", h->header_size, h->slot_size, h->max_payload,
                   MUSTER_SEG_HEADER_SIZE, MUSTER_SEG_SLOT_SIZE, MUSTER_MAX_PAYLOAD);
  int nranks = h->nranks;
  if (nranks < 1 || nranks > MUSTER_MAX_RANKS)
    return why_set(why, whylen, MUSTER_ECORRUPT, "nranks %d out of 1..%d", nranks,
                   MUSTER_MAX_RANKS);
  if (h->total_size != muster__segment_size(nranks))
    return why_set(why, whylen, MUSTER_ECORRUPT, "total size %" PRIu64 ", want %zu for %d ranks",
                   h->total_size, muster__segment_size(nranks), nranks);
  if (maplen != h->total_size)
    return why_set(why, whylen, MUSTER_ECORRUPT, "file is %zu bytes, header says %" PRIu64
                   " (truncated or padded)", maplen, h->total_size);
  int jl = bounded_len(h->job, sizeof h->job), gl = bounded_len(h->group, sizeof h->group);
  if (jl < 1 || jl > MUSTER_MAX_JOB || !muster__segment_name_chars_ok(h->job, 0))
    return why_set(why, whylen, MUSTER_ECORRUPT, "job name invalid or not terminated");
  if (gl < 1 || gl > MUSTER_MAX_NAME || !muster__segment_name_chars_ok(h->group, 1))
    return why_set(why, whylen, MUSTER_ECORRUPT, "group name invalid or not terminated");
  if (h->creator_pid <= 0)
    return why_set(why, whylen, MUSTER_ECORRUPT, "creator pid %d", (int)h->creator_pid);
  int rc = validate_dynamic(h, nranks, why, whylen);
  if (rc < 0) return rc;
  return validate_slots(map, nranks, why, whylen);
}

static const char *test_dir;   /* test hook: NULL in production */
static int test_alloc_errno;   /* test hook: 0 in production */

void muster__segment_test_set_dir(const char *dir) { test_dir = dir; }
void muster__segment_test_fail_alloc(int err) { test_alloc_errno = err; }

const char *muster__segment_dir(void) { return test_dir ? test_dir : "/dev/shm"; }

/* ---------------------------------------------------------------------- */
/* Create / attach                                                         */
/* ---------------------------------------------------------------------- */

#define ATTACH_WAIT_NS (1000ull * 1000 * 1000)    /* for a creator to finish */
#define ABANDONED_AGE_S 2                         /* a creation never takes this long */

static void sleep_ms(int ms) {
  struct timespec ts = {0, ms * 1000000L};
  nanosleep(&ts, NULL);
}

static int sys_err(int err, const char *what, const char *path) {
  int code = MUSTER_ESYS;
  if (err == EACCES || err == EPERM || err == EROFS) code = MUSTER_EACCES;
  else if (err == ENOSPC || err == EFBIG || err == EDQUOT) code = MUSTER_ENOSPC;
  else if (err == ENOMEM) code = MUSTER_ENOMEM;
  else if (err == ENAMETOOLONG || err == ENOENT) code = err == ENOENT ? MUSTER_ENOENT : MUSTER_EINVAL;
  return muster__err(code, "%s %s: %s", what, path, strerror(err));
}

static void fill_header(struct muster_seg_header *h, const char *job, const char *group,
                        int nranks) {
  h->version = MUSTER_SEG_VERSION;
  h->header_size = MUSTER_SEG_HEADER_SIZE;
  h->total_size = muster__segment_size(nranks);
  h->slot_size = MUSTER_SEG_SLOT_SIZE;
  h->max_payload = MUSTER_MAX_PAYLOAD;
  h->uid = (uint32_t)getuid();
  h->nranks = nranks;
  h->creator_pid = muster__proc_self_pid();
  h->creator_start = muster__proc_self_start();
  h->creator_pidns = muster__proc_self_pidns();
  h->created_ns = muster__now_real_ns();
  snprintf(h->job, sizeof h->job, "%s", job);
  snprintf(h->group, sizeof h->group, "%s", group);
  h->abort_rank = -1;
  for (int r = 0; r < nranks; r++) muster__segment_slot(h, r)->device = -1;
  /* publish last: an attacher that sees the magic sees every field above */
  __atomic_store_n(&h->magic, MUSTER_SEG_MAGIC, __ATOMIC_RELEASE);
}

static int map_fd(struct muster_segment *seg, size_t size) {
  void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, seg->fd, 0);
  if (p == MAP_FAILED) return sys_err(errno, "mmap", seg->path);
  seg->hdr = p;
  seg->size = size;
  return MUSTER_OK;
}

/* fd is ours (O_EXCL succeeded): size, allocate, map, write the header. */
static int create_new(struct muster_segment *seg, const char *job, const char *group,
                      int nranks) {
  size_t size = muster__segment_size(nranks);
  int rc = MUSTER_OK, err;
  struct stat st;
  if (fstat(seg->fd, &st) < 0) {
    rc = sys_err(errno, "fstat", seg->path);
    goto out;
  }
  seg->dev = st.st_dev;
  seg->ino = st.st_ino;
  if (ftruncate(seg->fd, (off_t)size) < 0) {
    rc = sys_err(errno, "ftruncate", seg->path);
    goto out;
  }
  /* Reserve every page now: a full /dev/shm fails here with ENOSPC instead
   * of a SIGBUS at the first touch of an unbacked page later. */
  err = test_alloc_errno ? test_alloc_errno : posix_fallocate(seg->fd, 0, (off_t)size);
  if (err) {
    rc = sys_err(err, "allocating segment", seg->path);
    if (err == ENOSPC)
      rc = muster__err(MUSTER_ENOSPC, "no space for group %s (%zu bytes) in %s: %s", group, size,
                       muster__segment_dir(), strerror(err));
    goto out;
  }
  MUSTER_CHECK(map_fd(seg, size));
  fill_header(seg->hdr, job, group, nranks);
out:
  if (rc < 0) {
    unlink(seg->path);
    close(seg->fd);
    seg->fd = -1;
  }
  return rc;
}

/* Remove path only if it still names (dev, ino).  flock on the old inode
 * serialises concurrent removers: the second one, once it holds the lock,
 * sees that the name now refers to a new inode (or nothing) and keeps it. */
static void unlink_if_same(int fd, const char *path, dev_t dev, ino_t ino) {
  int locked = flock(fd, LOCK_EX) == 0;
  struct stat st;
  if (stat(path, &st) == 0 && st.st_dev == dev && st.st_ino == ino) unlink(path);
  if (locked) flock(fd, LOCK_UN);
}

void muster__segment_unlink(const struct muster_segment *seg) {
  if (seg->fd >= 0) unlink_if_same(seg->fd, seg->path, seg->dev, seg->ino);
}

void muster__segment_close(struct muster_segment *seg) {
  if (seg->hdr) munmap(seg->hdr, seg->size);
  if (seg->fd >= 0) close(seg->fd);
  seg->hdr = NULL;
  seg->fd = -1;
}

/* Is pid (start time `start`, pid namespace ns) alive?  Process `gone` of
 * ours counts as dead; one of another pid namespace cannot be judged, so
 * counts as alive. */
static int alive_but(int pid, uint64_t start, uint64_t ns, int gone) {
  if (!muster__proc_same_pidns(ns)) return 1;
  return pid != gone && muster__proc_alive(pid, start);
}

/* Everyone who could still use the segment is gone: its creator and every
 * rank seated in it (process `gone` counted as gone, 0: none). */
static int all_dead_but(const struct muster_seg_header *h, int gone) {
  if (alive_but(h->creator_pid, h->creator_start, h->creator_pidns, gone)) return 0;
  for (int r = 0; r < h->nranks; r++) {
    const struct muster_seg_slot *s = muster__segment_slot((struct muster_seg_header *)h, r);
    if (LD(&s->owner_tid) == 0) continue;
    if (alive_but(LD(&s->pid), LD(&s->start_time), LD(&s->pidns), gone)) return 0;
  }
  return 1;
}

static int all_dead(const struct muster_seg_header *h) { return all_dead_but(h, 0); }

int muster__segment_ours_alone(const struct muster_seg_header *h) {
  return all_dead_but(h, muster__proc_self_pid());
}

enum verdict { V_ATTACH, V_RETRY, V_RECLAIM };

/* A valid segment found by our name was made by our uid in our pid
 * namespace (the name says so; only a hand-made file says otherwise). */
/* Who made it, and for which group: the header's job and group must be
 * the ones its name says.  A hard link (or a copy) of another job's
 * segment planted at our name would otherwise let us sit in that job's
 * group, and its ranks in ours. */
static int check_identity(const struct muster_segment *seg, const char *job, const char *group) {
  const struct muster_seg_header *h = seg->hdr;
  if (h->uid != (uint32_t)getuid())
    return muster__err(MUSTER_EACCES, "segment %s was made by uid %u, not uid %u", seg->path,
                       (unsigned)h->uid, (unsigned)getuid());
  if (h->creator_pidns != seg->pidns)
    return muster__err(MUSTER_ECORRUPT, "segment %s was made in pid namespace %" PRIu64 ", not "
                       "in %" PRIu64 " as its name says (remove it or run shmdump --clean)",
                       seg->path, h->creator_pidns, seg->pidns);
  /* validated: both strings are NUL-terminated inside their fields */
  if (strcmp(h->job, job) != 0 || strcmp(h->group, group) != 0)
    return muster__err(MUSTER_ECORRUPT, "segment %s holds group %s of job %s, not group %s of "
                       "job %s as its name says (a hard link or a copy of another group's "
                       "segment: remove it)", seg->path, h->group, h->job, group, job);
  return MUSTER_OK;
}

/* Decide what to do with an invalid segment (rc from validate). */
static int judge_invalid(struct muster_segment *seg, const struct stat *st, int vrc,
                         const char *why, enum verdict *v) {
  const struct muster_seg_header *h = seg->hdr;
  int age = (int)(time(NULL) - st->st_mtime);
  uint64_t magic = h ? __atomic_load_n(&h->magic, __ATOMIC_ACQUIRE) : 0;
  if (vrc == MUSTER_EVERSION)
    return muster__err(MUSTER_EVERSION, "segment %s has another layout: %s (remove it with "
                       "shmdump --clean once its users are gone)", seg->path, why);
  if (magic == MUSTER_SEG_MAGIC && seg->size >= 248 && h->creator_pid > 0 &&
      muster__proc_same_pidns(h->creator_pidns) &&
      !muster__proc_alive(h->creator_pid, h->creator_start)) {
    *v = V_RECLAIM; /* corrupt, and whoever made it is gone */
    return MUSTER_OK;
  }
  if (magic == 0 && age >= ABANDONED_AGE_S &&
      (seg->size < 56 || h->creator_pid <= 0 ||
       !muster__proc_alive(h->creator_pid, h->creator_start))) {
    *v = V_RECLAIM; /* a creation that never finished */
    return MUSTER_OK;
  }
  return muster__err(vrc, "segment %s is invalid: %s (creator %s; remove it or run "
                     "shmdump --clean)", seg->path, why,
                     magic == MUSTER_SEG_MAGIC ? "still alive" : "unknown");
}

/* The file we opened (st) is no longer what the name refers to: its
 * creator failed and removed it (a full /dev/shm), or it was reclaimed and
 * replaced.  Its content says nothing about the group: go back to the name
 * (and create it, meeting the creator's error ourselves). */
static int name_moved(const struct muster_segment *seg, const struct stat *st) {
  struct stat now;
  if (st->st_nlink == 0) return 1;
  return stat(seg->path, &now) != 0 || now.st_dev != st->st_dev || now.st_ino != st->st_ino;
}

/* The existing segment is mapped (or too small to map); wait for a creator
 * in progress, validate, and decide. */
static int judge_existing(struct muster_segment *seg, const char *job, const char *group,
                          int nranks, enum verdict *v) {
  char why[256];
  struct stat st;
  int rc = MUSTER_OK, vrc = MUSTER_ECORRUPT;
  uint64_t t0 = muster__now_mono_ns();
  for (;;) {
    if (fstat(seg->fd, &st) < 0) return sys_err(errno, "fstat", seg->path);
    if (st.st_uid != getuid())
      return muster__err(MUSTER_EACCES, "segment %s belongs to uid %u, not to uid %u",
                         seg->path, (unsigned)st.st_uid, (unsigned)getuid());
    if (!S_ISREG(st.st_mode))
      return muster__err(MUSTER_ECORRUPT, "segment %s is not a regular file", seg->path);
    seg->dev = st.st_dev;
    seg->ino = st.st_ino;
    if (seg->hdr) munmap(seg->hdr, seg->size);
    seg->hdr = NULL;
    seg->size = (size_t)st.st_size;
    if (seg->size > 0) MUSTER_CHECK(map_fd(seg, seg->size));
    /* magic first: if it was already there, a failed validation is final */
    uint64_t magic = seg->hdr && seg->size >= 8 ? __atomic_load_n(&seg->hdr->magic,
                                                                  __ATOMIC_ACQUIRE) : 0;
    vrc = muster__segment_validate(seg->hdr, seg->size, why, sizeof why);
    if (vrc == MUSTER_OK) break;
    if (magic == 0 && name_moved(seg, &st)) {
      *v = V_RETRY;
      return MUSTER_OK;
    }
    /* else a creator between open and publishing the magic: give it a moment */
    if (magic != 0 || muster__now_mono_ns() - t0 > ATTACH_WAIT_NS ||
        time(NULL) - st.st_mtime >= ABANDONED_AGE_S)
      break;
    sleep_ms(2);
  }
  if (vrc < 0) return judge_invalid(seg, &st, vrc, why, v);
  MUSTER_CHECK(check_identity(seg, job, group));
  struct muster_seg_header *h = seg->hdr;
  if (LD(&h->abort_state) != MUSTER_ABORT_NONE || LD(&h->retired)) {
    /* poisoned/retired: whoever did it removes the name; help, then retry */
    *v = V_RECLAIM;
    return MUSTER_OK;
  }
  if (LD(&h->seats) & MUSTER_SEATS_CLOSING) {
    *v = V_RETRY; /* the last one out is removing it right now */
    return MUSTER_OK;
  }
  if (all_dead(h)) {
    *v = V_RECLAIM;
    return MUSTER_OK;
  }
  if (h->nranks != nranks) {
    *v = V_ATTACH; /* caller reports EMISMATCH and poisons it for everyone */
    return MUSTER_OK;
  }
  *v = V_ATTACH;
out:
  return rc;
}

int muster_segment_reclaim_stale(const char *job, const char *group) {
  struct muster_segment seg;
  char name[MUSTER_SEG_NAME_MAX + 1];
  memset(&seg, 0, sizeof seg);
  seg.fd = -1;
  if (!job || !group || muster__segment_pidns(&seg.pidns) < 0 ||
      muster__segment_name_in(name, sizeof name, seg.pidns, job, group) < 0 ||
      (size_t)snprintf(seg.path, sizeof seg.path, "%s/%s", muster__segment_dir(), name) >=
          sizeof seg.path)
    return 0;
  seg.fd = open(seg.path, O_RDWR | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (seg.fd < 0) return 0;
  enum verdict v = V_ATTACH;
  int removed = judge_existing(&seg, job, group, 0, &v) == MUSTER_OK && v == V_RECLAIM;
  if (removed) {
    muster__log(MUSTER_LOG_INFO, "reclaiming stale segment %s", seg.path);
    unlink_if_same(seg.fd, seg.path, seg.dev, seg.ino);
  }
  muster__segment_close(&seg);
  return removed;
}

int muster__segment_open(struct muster_segment *seg, const char *job, const char *group,
                         int nranks, int *created) {
  int rc = MUSTER_OK;
  memset(seg, 0, sizeof *seg);
  seg->fd = -1;
  char name[MUSTER_SEG_NAME_MAX + 1];
  rc = muster__segment_pidns(&seg->pidns);
  if (rc == MUSTER_OK) rc = muster__segment_name_in(name, sizeof name, seg->pidns, job, group);
  if (rc < 0) return rc;
  if ((size_t)snprintf(seg->path, sizeof seg->path, "%s/%s", muster__segment_dir(), name) >=
      sizeof seg->path)
    return muster__err(MUSTER_EINVAL, "segment path for %s too long", name);
  for (int attempt = 0; attempt < 200; attempt++) {
    seg->fd = open(seg->path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (seg->fd >= 0) {
      *created = 1;
      return create_new(seg, job, group, nranks);
    }
    if (errno != EEXIST) return sys_err(errno, "cannot create group segment", seg->path);
    seg->fd = open(seg->path, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
    if (seg->fd < 0) {
      if (errno == ENOENT) continue; /* removed between our two opens */
      if (errno == ELOOP)
        return muster__err(MUSTER_ECORRUPT, "segment %s is a symbolic link", seg->path);
      return sys_err(errno, "cannot open group segment", seg->path);
    }
    enum verdict v = V_ATTACH;
    rc = judge_existing(seg, job, group, nranks, &v);
    if (rc == MUSTER_OK && v == V_ATTACH) {
      *created = 0;
      return MUSTER_OK;
    }
    if (rc == MUSTER_OK && v == V_RECLAIM) {
      muster__log(MUSTER_LOG_INFO, "reclaiming stale segment %s", seg->path);
      unlink_if_same(seg->fd, seg->path, seg->dev, seg->ino);
    }
    muster__segment_close(seg);
    if (rc < 0) return rc;
    if (v == V_RETRY) sleep_ms(1);
  }
  return muster__err(MUSTER_EBUSY, "segment %s: gave up after 200 attempts to create or attach "
                     "(it keeps being removed and re-created)", seg->path);
}
