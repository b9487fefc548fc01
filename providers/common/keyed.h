/*
 * providers/common/keyed.h - the per-key cache of a collective provider:
 * what it made for a bootstrap key (communicators, grids, handles) kept
 * in a list, and release_comms's rule (muster/provider_v2.h): free every
 * entry of that key, or of every key for 0.  The entry's struct begins
 * with a muster__keyed_t; how an entry matches a call (key alone, or key,
 * grid and device) stays the provider's.  Not thread-safe: the provider
 * holds its lock.  Static inline: providers link nothing of the runtime.
 */
#ifndef MUSTER_PROVIDERS_KEYED_H
#define MUSTER_PROVIDERS_KEYED_H

#include <stddef.h>
#include <stdint.h>

typedef struct muster__keyed {
  struct muster__keyed *next;
  uint64_t key; /* the bootstrap's key (muster_bootstrap_t), never 0 */
} muster__keyed_t;

static inline void muster__keyed_push(muster__keyed_t **head, muster__keyed_t *e) {
  e->next = *head;
  *head = e;
}

static inline void muster__keyed_unlink(muster__keyed_t **head, const muster__keyed_t *gone) {
  for (muster__keyed_t **p = head; *p; p = &(*p)->next)
    if (*p == gone) {
      *p = gone->next;
      return;
    }
}

/* Unlink and return the first entry of `key` (0: of any key), NULL when
 * none is left: release_comms is
 *     for (muster__keyed_t *e; (e = muster__keyed_take(&ctx->comms, key));) free_entry(e); */
static inline muster__keyed_t *muster__keyed_take(muster__keyed_t **head, uint64_t key) {
  for (muster__keyed_t **p = head; *p; p = &(*p)->next)
    if (key == 0 || (*p)->key == key) {
      muster__keyed_t *e = *p;
      *p = e->next;
      return e;
    }
  return NULL;
}

#endif
