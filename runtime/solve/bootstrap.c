/*
 * runtime/solve/bootstrap.c - the group bootstrap and bootstrap keys (see
 * bootstrap.h).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "solve/bootstrap.h"

#define CHUNK_MAGIC UINT64_C(0x4b4e484354534f42) /* "BOSTCHNK" */

/* What precedes each rank's bytes in one exchange: lets every rank check
 * that the others are in the same allgather at the same offset. */
typedef struct chunk {
  uint64_t magic, total, off;
} chunk_t;

#define CHUNK_DATA (MUSTER_MAX_PAYLOAD - sizeof(chunk_t))

static int group_allgather(void *ctx, const void *mine, void *all, size_t len, char *err,
                           size_t errlen) {
  muster_group_t *g = ctx;
  int R = muster_group_size(g), me = muster_group_rank(g);
  unsigned char buf[MUSTER_MAX_PAYLOAD];
  size_t off = 0;
  int rc = 0;
  do { /* at least one exchange: an allgather of nothing is a barrier */
    size_t k = len - off < CHUNK_DATA ? len - off : CHUNK_DATA;
    chunk_t h = {CHUNK_MAGIC, len, off};
    memcpy(buf, &h, sizeof h);
    if (k) memcpy(buf + sizeof h, (const char *)mine + off, k);
    if ((rc = muster_group_exchange(g, buf, sizeof h + k)) < 0) break;
    for (int r = 0; r < R && rc == 0; r++) {
      const void *data;
      size_t got;
      if ((rc = muster_group_payload(g, r, &data, &got)) < 0) break;
      chunk_t theirs;
      if (got >= sizeof theirs) memcpy(&theirs, data, sizeof theirs);
      if (got != sizeof h + k || theirs.magic != CHUNK_MAGIC || theirs.total != len || theirs.off != off) {
        rc = muster__err(MUSTER_EMISMATCH, "bootstrap allgather in group %s: rank %d passed %" PRIu64
                         " bytes (at offset %" PRIu64 "), rank %d passed %zu", muster_group_name(g), r,
                         got >= sizeof theirs ? theirs.total : 0, got >= sizeof theirs ? theirs.off : 0,
                         me, len);
        muster_group_abort(g, rc, muster_last_error());
        break;
      }
      memcpy((char *)all + (size_t)r * len + off, (const char *)data + sizeof h, k);
    }
    off += k;
  } while (rc == 0 && off < len);
  if (rc < 0 && err && errlen) snprintf(err, errlen, "%s", muster_last_error());
  return rc;
}

void muster__boot_group(muster_bootstrap_t *b, muster_group_t *g, uint64_t key) {
  memset(b, 0, sizeof *b);
  b->rank = muster_group_rank(g);
  b->size = muster_group_size(g);
  b->kind = "group";
  b->key = key;
  b->ctx = g;
  b->allgather = group_allgather;
}

uint64_t muster__boot_key(const char *what, const muster__desc_t *const *ds, int R) {
  uint64_t h = muster__hash(MUSTER__HASH_START, what, strlen(what) + 1);
  h = muster__hash(h, &R, sizeof R);
  for (int r = 0; r < R; r++) {
    h = muster__hash(h, &ds[r]->host, sizeof ds[r]->host);
    h = muster__hash(h, &ds[r]->pid, sizeof ds[r]->pid);
    h = muster__hash(h, &ds[r]->start_time, sizeof ds[r]->start_time);
  }
  return h ? h : 1;
}
