/*
 * runtime/shm/segment_view.c - muster_segment_view (include/muster/segment.h):
 * a segment's bytes validated by the runtime's own check, then copied field
 * by field into the public struct, so tools read a segment without the
 * internal layout (segment.h) and the layout stays free to gain fields.
 */
#include <string.h>

#include "base/proc.h"
#include "shm/segment.h"

_Static_assert(MUSTER_SEGMENT_PHASE_FREE == MUSTER_PHASE_FREE &&
                   MUSTER_SEGMENT_PHASE_JOINED == MUSTER_PHASE_JOINED &&
                   MUSTER_SEGMENT_PHASE_PUBLISHED == MUSTER_PHASE_PUBLISHED &&
                   MUSTER_SEGMENT_PHASE_WAITING == MUSTER_PHASE_WAITING &&
                   MUSTER_SEGMENT_PHASE_PASSED == MUSTER_PHASE_PASSED &&
                   MUSTER_SEGMENT_PHASE_LEFT == MUSTER_PHASE_LEFT,
               "public phases are the segment's");

size_t muster_segment_size(int nranks) {
  return nranks >= 1 && nranks <= MUSTER_MAX_RANKS ? muster__segment_size(nranks) : 0;
}

/* The payload of the latest round rank's slot published: the buffer of the
 * newer generation, unless it is empty and the other is not. */
static void copy_payload(const struct muster_seg_slot *sl, muster_segment_rank_t *r) {
  int b = (int32_t)(sl->payload_gen[1] - sl->payload_gen[0]) > 0 ? 1 : 0;
  if (sl->payload_len[b] == 0 && sl->payload_len[!b] != 0) b = !b;
  r->payload_len = sl->payload_len[b]; /* validated <= MUSTER_MAX_PAYLOAD; clamped
                                          for a caller that passed a live mapping */
  if (r->payload_len > MUSTER_MAX_PAYLOAD) r->payload_len = MUSTER_MAX_PAYLOAD;
  r->payload_round = sl->payload_gen[b];
  memcpy(r->payload, sl->payload[b], r->payload_len);
}

static void copy_rank(const struct muster_seg_slot *sl, muster_segment_rank_t *r) {
  memset(r, 0, sizeof *r);
  r->pid = sl->pid;
  r->tid = sl->tid;
  r->start_time = sl->start_time;
  r->pidns = sl->pidns;
  r->device = sl->device;
  r->phase = sl->phase;
  r->barrier_gen = sl->barrier_gen;
  r->abort_seen = sl->abort_seen;
  r->sessions = sl->sessions;
  r->barriers = sl->barriers;
  r->arrive_ns = sl->arrive_ns;
  r->wait_start_ns = sl->wait_start_ns;
  r->join_ns = sl->join_ns;
  r->declared_pid = sl->declared_pid;
  r->declared_start = sl->declared_start;
  copy_payload(sl, r);
}

/* src (srccap bytes, NUL-terminated within them by validation) into dst */
static void copy_str(char *dst, size_t cap, const char *src, size_t srccap) {
  size_t n = strnlen(src, srccap < cap ? srccap : cap - 1);
  memcpy(dst, src, n);
  dst[n] = '\0';
}

static void copy_identity(const struct muster_seg_header *h, muster_segment_view_t *v) {
  v->version = h->version;
  v->total_size = h->total_size;
  v->uid = h->uid;
  v->nranks = h->nranks;
  v->creator_pid = h->creator_pid;
  v->creator_start = h->creator_start;
  v->creator_pidns = h->creator_pidns;
  v->created_ns = h->created_ns;
  copy_str(v->job, sizeof v->job, h->job, sizeof h->job);
  copy_str(v->group, sizeof v->group, h->group, sizeof h->group);
}

static void copy_state(const struct muster_seg_header *h, muster_segment_view_t *v) {
  v->generation = h->generation;
  v->arrived = h->arrived;
  v->seated = MUSTER_SEATS_COUNT(h->seats);
  v->closing = (h->seats & MUSTER_SEATS_CLOSING) != 0;
  v->seen_mask = h->seen_mask;
  v->formed = (int)h->formed;
  v->retired = (int)h->retired;
  v->launcher_pid = h->launcher_pid;
  v->launcher_start = h->launcher_start;
  v->launcher_pidns = h->launcher_pidns;
  v->aborted = h->abort_state == MUSTER_ABORT_SET;
  if (v->aborted) {
    v->abort_code = h->abort_code;
    v->abort_rank = h->abort_rank;
    v->abort_pid = h->abort_pid;
    v->abort_ns = h->abort_ns;
    copy_str(v->abort_reason, sizeof v->abort_reason, h->abort_reason, sizeof h->abort_reason);
  }
  /* the latest status: the newer round of the valid ones */
  int b = (int32_t)(h->status[1].gen - h->status[0].gen) > 0 && h->status[1].valid ? 1 : 0;
  v->status_valid = h->status[0].valid || h->status[1].valid;
  v->status = h->status[b].status;
  v->status_round = h->status[b].gen;
  v->status_len = h->status[b].len;
}

/* Shorter than a header, or than the total size its header states.  Told
 * from validate's own words (this file's sibling writes them), since the
 * first failing check decides: a file whose header is wrong in an earlier
 * field is corrupt, not truncated, whatever its size. */
static int is_truncated(const void *bytes, size_t len, const char *why) {
  uint64_t total = 0;
  if (strncmp(why, "truncated", 9) == 0) return 1;
  if (!strstr(why, "truncated or padded") || len < MUSTER_SEG_HEADER_SIZE) return 0;
  memcpy(&total, (const char *)bytes + offsetof(struct muster_seg_header, total_size),
         sizeof total);
  return (uint64_t)len < total;
}

int muster_segment_view(const void *bytes, size_t len, muster_segment_view_t *out,
                        muster_segment_verdict_t *verdict) {
  muster_segment_verdict_t local;
  muster_segment_verdict_t *vd = verdict ? verdict : &local;
  memset(vd, 0, sizeof *vd);
  int rc = muster__segment_validate(bytes, len, vd->why, sizeof vd->why);
  if (rc < 0) {
    vd->truncated = is_truncated(bytes, len, vd->why);
    return rc;
  }
  struct muster_seg_header h; /* aligned copies: bytes may be any buffer */
  struct muster_seg_slot sl;
  memcpy(&h, bytes, sizeof h);
  memset(out, 0, offsetof(muster_segment_view_t, ranks));
  copy_identity(&h, out);
  copy_state(&h, out);
  /* nranks was validated; the bounds hold even if a live mapping was passed */
  for (int r = 0; r < out->nranks && r < MUSTER_MAX_RANKS && muster__segment_size(r + 1) <= len;
       r++) {
    memcpy(&sl, (const char *)bytes + muster__segment_size(r), sizeof sl);
    copy_rank(&sl, &out->ranks[r]);
  }
  return MUSTER_OK;
}

int muster_segment_pid_alive(int32_t pid, uint64_t start_time, uint64_t pidns) {
  if (!muster__proc_same_pidns(pidns)) return MUSTER_SEGMENT_UNKNOWN;
  return muster__proc_alive(pid, start_time) ? MUSTER_SEGMENT_ALIVE : MUSTER_SEGMENT_DEAD;
}
