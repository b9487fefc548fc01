/*
 * runtime/solve/hint.c - the per-process memory of leaders' choices (hint.h):
 * a small table, overwritten round-robin when full, under one mutex (two
 * lookups per call; no allocation).
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "base/forklock.h"
#include "solve/hint.h"

#define HINTS 64

typedef struct key {
  int nranks;
  int32_t routine, dtype, layout, mem;
  uint32_t flags;
  int64_t n, nrhs, tile;
  char want[32];
} key_t_;

typedef struct hint {
  key_t_ key;
  char name[32];
  int used;
} hint_t;

/* fork-safe: process mode forks while other threads may hold it */
MUSTER__FORKLOCK(table)
static hint_t hints[HINTS];
static int next_slot;

static void make_key(key_t_ *k, int nranks, const muster__desc_t *d) {
  memset(k, 0, sizeof *k); /* padding too: keys are compared with memcmp */
  k->nranks = nranks;
  k->routine = d->routine;
  k->dtype = d->dtype;
  k->layout = d->layout;
  k->mem = d->mem;
  k->flags = d->flags;
  k->n = d->n;
  k->nrhs = d->nrhs;
  k->tile = d->tile;
  memcpy(k->want, d->want, sizeof k->want);
}

static hint_t *find(const key_t_ *k) {
  for (int i = 0; i < HINTS; i++)
    if (hints[i].used && !memcmp(&hints[i].key, k, sizeof *k)) return &hints[i];
  return NULL;
}

int muster__hint_get(int nranks, const muster__desc_t *d, char *name, size_t cap) {
  key_t_ k;
  make_key(&k, nranks, d);
  table_lock();
  hint_t *h = find(&k);
  snprintf(name, cap, "%s", h ? h->name : "");
  table_unlock();
  return h != NULL;
}

void muster__hint_put(int nranks, const muster__desc_t *d, const char *name) {
  key_t_ k;
  make_key(&k, nranks, d);
  table_lock();
  hint_t *h = find(&k);
  if (!h) {
    h = &hints[next_slot];
    next_slot = (next_slot + 1) % HINTS;
    h->key = k;
    h->used = 1;
  }
  snprintf(h->name, sizeof h->name, "%s", name);
  table_unlock();
}
