/*
 * runtime/solve/comm_used.c - the providers each open comm ran, and the
 * list of open comms (comm_used.h).
 */
#include <stdlib.h>

#include "solve/comm_used.h"

static pthread_mutex_t open_mu = PTHREAD_MUTEX_INITIALIZER;
static muster__used_t *open_head;

void muster__used_open(muster__used_t *u) {
  u->n = 0;
  pthread_mutex_init(&u->mu, NULL);
  pthread_mutex_lock(&open_mu);
  u->next_open = open_head;
  open_head = u;
  pthread_mutex_unlock(&open_mu);
}

void muster__used_add(muster__used_t *u, muster__provider_t *p) {
  pthread_mutex_lock(&u->mu);
  int have = 0;
  for (int i = 0; i < u->n; i++) have |= u->p[i] == p;
  if (!have && u->n < MUSTER__USED_MAX) {
    muster__provider_ref(p);
    u->p[u->n++] = p;
  }
  pthread_mutex_unlock(&u->mu);
}

void muster__used_close(muster__used_t *u, uint64_t key) {
  pthread_mutex_lock(&open_mu);
  for (muster__used_t **pp = &open_head; *pp; pp = &(*pp)->next_open)
    if (*pp == u) {
      *pp = u->next_open;
      break;
    }
  pthread_mutex_unlock(&open_mu);
  /* off the list: muster__comms_forget cannot reach p[] any more */
  for (int i = 0; i < u->n; i++) {
    muster__provider_t *p = u->p[i];
    if (p->v->release_comms && key) p->v->release_comms(p->ctx, key);
    muster__provider_release(p);
  }
  u->n = 0;
  pthread_mutex_destroy(&u->mu);
}

void muster__comms_forget(void) {
  size_t n = 0, cap = 0;
  muster__provider_t **drop = NULL;
  pthread_mutex_lock(&open_mu);
  for (muster__used_t *u = open_head; u; u = u->next_open) {
    pthread_mutex_lock(&u->mu);
    if (n + (size_t)u->n > cap) {
      size_t want = 2 * (n + MUSTER__USED_MAX);
      muster__provider_t **more = realloc(drop, want * sizeof *drop);
      if (!more) { /* out of memory: this comm keeps them (its close drops them) */
        pthread_mutex_unlock(&u->mu);
        continue;
      }
      drop = more;
      cap = want;
    }
    for (int i = 0; i < u->n; i++) drop[n++] = u->p[i];
    u->n = 0;
    pthread_mutex_unlock(&u->mu);
  }
  pthread_mutex_unlock(&open_mu);
  for (size_t i = 0; i < n; i++) muster__provider_release(drop[i]);
  free(drop);
}
