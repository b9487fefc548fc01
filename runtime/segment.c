/*
 * runtime/segment.c - create, attach, validate and remove group segments.
 * Format and lifetime: segment.h.  Policy and failure semantics:
 * docs/runtime.md.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "proc.h"
#include "segment.h"

#define LD(p) __atomic_load_n((p), __ATOMIC_RELAXED)

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

static int name_chars_ok(const char *s, int allow_dot) {
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c <= 0x20 || c >= 0x7f || c == '/') return 0;
    if (!allow_dot && c == '.') return 0;
  }
  return 1;
}

static int validate_slots(const char *map, int nranks, char *why, size_t whylen) {
  for (int r = 0; r < nranks; r++) {
    const struct muster_seg_slot *s =
        (const void *)(map + MUSTER_SEG_HEADER_SIZE + (size_t)r * MUSTER_SEG_SLOT_SIZE);
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
  const struct muster_seg_header *h = map;
  uint64_t magic = __atomic_load_n(&h->magic, __ATOMIC_ACQUIRE);
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
  if (jl < 1 || jl > MUSTER_MAX_JOB || !name_chars_ok(h->job, 0))
    return why_set(why, whylen, MUSTER_ECORRUPT, "job name invalid or not terminated");
  if (gl < 1 || gl > MUSTER_MAX_NAME || !name_chars_ok(h->group, 1))
    return why_set(why, whylen, MUSTER_ECORRUPT, "group name invalid or not terminated");
  if (h->creator_pid <= 0)
    return why_set(why, whylen, MUSTER_ECORRUPT, "creator pid %d", (int)h->creator_pid);
  int rc = validate_dynamic(h, nranks, why, whylen);
  if (rc < 0) return rc;
  return validate_slots(map, nranks, why, whylen);
}

/* ---------------------------------------------------------------------- */
/* Names                                                                   */
/* ---------------------------------------------------------------------- */

static int all_dots(const char *s) {
  for (; *s; s++)
    if (*s != '.') return 0;
  return 1;
}

int muster__segment_check_job(const char *job) {
  if (!job) return muster__err(MUSTER_EINVAL, "job name is NULL");
  size_t n = strnlen(job, MUSTER_MAX_JOB + 1);
  if (n == 0) return muster__err(MUSTER_EINVAL, "job name is empty");
  if (n > MUSTER_MAX_JOB)
    return muster__err(MUSTER_EINVAL, "job name is longer than %d bytes", MUSTER_MAX_JOB);
  if (!name_chars_ok(job, 0))
    return muster__err(MUSTER_EINVAL,
                       "job name \"%.*s\" has a '/', '.', space or non-printable byte "
                       "(allowed: printable ASCII except '/', '.' and space)",
                       MUSTER_MAX_JOB, job);
  return MUSTER_OK;
}

int muster__segment_check_group(const char *group) {
  if (!group) return muster__err(MUSTER_EINVAL, "group name is NULL");
  size_t n = strnlen(group, MUSTER_MAX_NAME + 1);
  if (n == 0) return muster__err(MUSTER_EINVAL, "group name is empty");
  if (n > MUSTER_MAX_NAME)
    return muster__err(MUSTER_EINVAL, "group name is longer than %d bytes", MUSTER_MAX_NAME);
  if (!name_chars_ok(group, 1))
    return muster__err(MUSTER_EINVAL,
                       "group name \"%.*s\" has a '/', space or non-printable byte",
                       MUSTER_MAX_NAME, group);
  if (all_dots(group))
    return muster__err(MUSTER_EINVAL, "group name \"%s\" is only dots", group);
  return MUSTER_OK;
}

int muster__segment_name(char *buf, size_t cap, const char *job, const char *group) {
  int n = snprintf(buf, cap, MUSTER_SEG_PREFIX "%u.%s.%s", (unsigned)getuid(), job, group);
  if (n < 0 || (size_t)n >= cap)
    return muster__err(MUSTER_EINVAL, "segment name for job %s group %s too long", job, group);
  return MUSTER_OK;
}

static const char *test_dir;   /* test hook: NULL in production */
static int test_alloc_errno;   /* test hook: 0 in production */

void muster__segment_test_set_dir(const char *dir) { test_dir = dir; }
void muster__segment_test_fail_alloc(int err) { test_alloc_errno = err; }

const char *muster__segment_dir(void) { return test_dir ? test_dir : "/dev/shm"; }
