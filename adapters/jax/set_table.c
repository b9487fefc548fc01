/*
 * adapters/jax/set_table.c - the ids by which a compiled program names a
 * store set's communicator (muster_jax.distributed's solve inside jit).
 *
 * A jitted solve carries its set as a static attribute, an id, rather than
 * the muster_comm_t pointer: the set may be closed while a compiled
 * function that names it lives on, and an id that is no longer here is
 * refused with a message, where a freed pointer would be followed.  The
 * Python side gives each set's comm an id (muster_jax_set_register) when it
 * first traces a solve on it and forgets it when the set closes
 * (muster_jax_set_forget, before the comm is closed): forgetting waits for
 * a solve in flight on it (XLA runs jitted solves asynchronously), and one
 * solve runs at a time on a set, as muster_solve_comm requires.
 */
#include <pthread.h>
#include <stdio.h>

#include "mjInt.h"

enum { MJ_MAX_SETS = 256 };

static struct set_entry {
  int64_t id; /* 0: free */
  muster_comm_t *comm;
  int busy;   /* a solve holds it */
} sets[MJ_MAX_SETS];
static int64_t next_id = 1;
static pthread_mutex_t sets_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t sets_cv = PTHREAD_COND_INITIALIZER;

static struct set_entry *find(int64_t id) {
  for (int i = 0; i < MJ_MAX_SETS; i++)
    if (id > 0 && sets[i].id == id) return &sets[i];
  return NULL;
}

/* A new id (> 0) for comm, or MUSTER_EINVAL (NULL) / MUSTER_ENOMEM (every
 * slot taken: that many sets open at once). */
MJ_EXPORT int64_t muster_jax_set_register(void *comm) {
  if (!comm) return MUSTER_EINVAL;
  pthread_mutex_lock(&sets_mu);
  int64_t id = MUSTER_ENOMEM;
  for (int i = 0; i < MJ_MAX_SETS && id < 0; i++)
    if (sets[i].id == 0) {
      sets[i] = (struct set_entry){.id = next_id++, .comm = comm, .busy = 0};
      id = sets[i].id;
    }
  pthread_mutex_unlock(&sets_mu);
  return id;
}

/* Forget id once no solve holds it (the caller then closes the comm). */
MJ_EXPORT int muster_jax_set_forget(int64_t id) {
  pthread_mutex_lock(&sets_mu);
  struct set_entry *e;
  while ((e = find(id)) != NULL && e->busy) pthread_cond_wait(&sets_cv, &sets_mu);
  if (e) *e = (struct set_entry){0};
  pthread_mutex_unlock(&sets_mu);
  return e ? 0 : MUSTER_ENOENT;
}

int mj_set_take(int64_t id, muster_comm_t **comm, char *err, size_t errlen) {
  pthread_mutex_lock(&sets_mu);
  struct set_entry *e;
  while ((e = find(id)) != NULL && e->busy) pthread_cond_wait(&sets_cv, &sets_mu);
  if (e) {
    e->busy = 1;
    *comm = e->comm;
  }
  pthread_mutex_unlock(&sets_mu);
  if (!e)
    snprintf(err, errlen, "muster_jax.distributed: the store set of this compiled solve (id %lld) is closed: "
             "a jitted solve needs its StoreSet open while the compiled function runs", (long long)id);
  return e ? 0 : MUSTER_ENOENT;
}

void mj_set_give(int64_t id) {
  pthread_mutex_lock(&sets_mu);
  struct set_entry *e = find(id);
  if (e) e->busy = 0;
  pthread_cond_broadcast(&sets_cv);
  pthread_mutex_unlock(&sets_mu);
}

/* Hold set id while an eager solve runs on it, so that it never overlaps a
 * jitted one (muster_jax_set_leave ends it); MUSTER_ENOENT if unknown. */
MJ_EXPORT int muster_jax_set_enter(int64_t id) {
  muster_comm_t *unused;
  char err[8];
  return mj_set_take(id, &unused, err, sizeof err);
}

MJ_EXPORT void muster_jax_set_leave(int64_t id) { mj_set_give(id); }
