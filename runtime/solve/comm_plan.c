/*
 * runtime/solve/comm_plan.c - a kind store comm's last choice (see
 * comm_plan.h).
 */
#include <stdlib.h>
#include <string.h>

#include "solve/comm_plan.h"
#include "base/env.h"
#include "registry/registry.h"

/* Free device memory drifts between calls by a few allocations (a staging
 * region, an allocator's growth); the choice reads it only to refuse an
 * engine that would not fit, so a drift of at most 1/FREE_SLACK of the
 * device's memory from the kept call's keeps the choice, and more chooses
 * again. */
#define FREE_SLACK 256

struct muster__plan {
  uint64_t tag; /* 0: nothing kept */
  int R;
  muster__plan_word_t kept[MUSTER_MAX_RANKS]; /* the words, as views (below) */
  uint64_t free_bytes[MUSTER_MAX_RANKS];      /* each rank's, as kept */
  void *dec;
  size_t len;
};

uint64_t muster__plan_ctx(void) {
  const char *forced = NULL;
  if (muster__env_get("MUSTER_PROVIDER", &forced) < 0 || !forced) forced = "";
  unsigned rescans = muster__providers_rescans();
  uint64_t h = muster__hash(MUSTER__HASH_START, forced, strlen(forced) + 1);
  return muster__hash(h, &rescans, sizeof rescans);
}

/* w less what changes from call to call without reaching the choice: the
 * pieces' addresses and shard refs, and the tag; free memory is compared
 * apart (FREE_SLACK). */
static void view(const muster__plan_word_t *w, muster__plan_word_t *out) {
  *out = *w;
  out->d.a = out->d.b = out->d.w = 0;
  out->d.free_bytes = 0;
  memset(&out->d.ra, 0, sizeof out->d.ra);
  memset(&out->d.rb, 0, sizeof out->d.rb);
  memset(&out->d.rw, 0, sizeof out->d.rw);
  out->tag = 0;
}

uint64_t muster__plan_tag(const muster__plan_t *p) { return p ? p->tag : 0; }
const void *muster__plan_decision(const muster__plan_t *p) { return p && p->tag ? p->dec : NULL; }

int muster__plan_hit(const muster__plan_t *p, const muster__plan_word_t *all, int R, uint64_t mine) {
  if (!p || !mine || mine != p->tag || p->R != R) return 0;
  for (int r = 0; r < R; r++)
    if (all[r].tag != mine) return 0;
  for (int r = 0; r < R; r++) {
    muster__plan_word_t v;
    view(&all[r], &v);
    uint64_t now = all[r].d.free_bytes, then = p->free_bytes[r];
    if (memcmp(&v, &p->kept[r], sizeof v) || (now > then ? now - then : then - now) > v.d.total_bytes / FREE_SLACK)
      return 0;
  }
  return 1;
}

int muster__plan_keep(muster__plan_t **pp, const muster__plan_word_t *all, int R, const void *dec, size_t len) {
  if (!*pp && !(*pp = calloc(1, sizeof **pp)))
    return muster__err(MUSTER_ENOMEM, "muster_solve_comm: out of memory for the kept choice");
  muster__plan_t *p = *pp;
  p->tag = 0;
  if (p->len != len) {
    free(p->dec);
    p->len = 0;
    if (!(p->dec = malloc(len))) return muster__err(MUSTER_ENOMEM, "muster_solve_comm: out of memory for the "
                                                    "kept choice");
    p->len = len;
  }
  memcpy(p->dec, dec, len);
  p->R = R;
  uint64_t h = muster__hash(MUSTER__HASH_START, dec, len);
  for (int r = 0; r < R; r++) {
    view(&all[r], &p->kept[r]);
    p->free_bytes[r] = all[r].d.free_bytes;
    h = muster__hash(h, &p->kept[r], sizeof p->kept[r]);
    h = muster__hash(h, &p->free_bytes[r], sizeof p->free_bytes[r]);
  }
  p->tag = h ? h : 1; /* the same on every rank: the same bytes */
  return 0;
}

void muster__plan_forget(muster__plan_t *p) {
  if (p) p->tag = 0;
}

void muster__plan_free(muster__plan_t *p) {
  if (!p) return;
  free(p->dec);
  free(p);
}
