/*
 * adapters/jax/group_name.c - the muster group a launch meets in.
 *
 * Every instance of one launch (one per device) must name the same group,
 * and no two launches may: "jx.<key>.<routine>.<site>.<replica>" (the base,
 * the same for every launch of one call site) plus a suffix that tells
 * launches apart:
 *   key     "p<pid>" in one process, else a key shared by the processes of
 *           one jax.distributed job (set by the Python side);
 *   site    the Python call site (two solves in one program never mix);
 *   replica the index over the mesh axes the matrix is not sharded on (a
 *           2-D mesh runs one independent solve per row).
 *
 * A new name per launch costs a segment (shm_open, ftruncate, mmap, unlink:
 * about 50 us on a 2-core VM, docs/performance/jax.md); a reused name costs
 * nothing (the runtime keeps the mapping and advances a generation).  So
 * when every rank of the group lives in this process (SPMD), launches share
 * a small pool of names, "<base>.s<k>": the first instance of a launch to
 * arrive takes the lowest k no running launch of that base holds, the
 * others of the same run id find it, and k is free again once all local
 * instances have left.  Across processes (MPMD) the processes could not
 * agree on k without talking, so the suffix is XLA's run id instead,
 * "<base>.<run id in hex>" (the same in every process of a jax.distributed
 * launch).  MUSTER_JAX_GROUP_POOL=0 turns the pool off.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mjInt.h"

/* Longest suffix, NUL included: "." and 16 hex digits of a run id (a
 * pooled ".s<k>" is shorter). */
enum { MJ_SUFFIX_MAX = 18 };

/* One pooled name in use: by the launch run_id of base, as "<base>.s<k>". */
enum { MJ_POOLED = 64 };
typedef struct pooled {
  char base[MUSTER_MAX_NAME + 1];
  int64_t run_id;
  int k;
  int arrived, left, failed; /* instances of this process */
  int used;
} pooled_t;
static pooled_t pool[MJ_POOLED];
static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;

/* Called with pool_lock held. */
static int suffix_taken(const char *base, int k) {
  for (int i = 0; i < MJ_POOLED; i++)
    if (pool[i].used && pool[i].k == k && strcmp(pool[i].base, base) == 0) return 1;
  return 0;
}

/* The entry of launch run_id of base, or a new one with the lowest free k;
 * -1 when the pool is full.  Called with pool_lock held. */
static int pool_find_or_add(const char *base, int64_t run_id) {
  for (int i = 0; i < MJ_POOLED; i++)
    if (pool[i].used && pool[i].run_id == run_id && strcmp(pool[i].base, base) == 0) return i;
  for (int i = 0; i < MJ_POOLED; i++) {
    if (pool[i].used) continue;
    int k = 0;
    while (suffix_taken(base, k)) k++;
    pooled_t *p = &pool[i];
    snprintf(p->base, sizeof p->base, "%s", base);
    p->run_id = run_id;
    p->k = k;
    p->arrived = p->left = p->failed = 0;
    p->used = 1;
    return i;
  }
  return -1;
}

/* This instance's arrival: the entry's index (its k in *k), or -1. */
static int pool_acquire(const char *base, int64_t run_id, int *k) {
  pthread_mutex_lock(&pool_lock);
  int idx = pool_find_or_add(base, run_id);
  if (idx >= 0) {
    pool[idx].arrived++;
    *k = pool[idx].k;
  }
  pthread_mutex_unlock(&pool_lock);
  return idx;
}

void mj_group_name_release(int pooled, int failed, int local_ranks) {
  if (pooled < 0) return;
  pthread_mutex_lock(&pool_lock);
  pooled_t *p = &pool[pooled];
  p->left++;
  p->failed |= failed;
  /* after a failure, instances that never arrived may never come */
  if (p->left >= local_ranks || (p->failed && p->left == p->arrived)) p->used = 0;
  pthread_mutex_unlock(&pool_lock);
}

/* MUSTER_JAX_GROUP_POOL=0 turns the pool off (a name per launch), for
 * measuring it and as a way out; read once per process. */
static pthread_once_t pool_once = PTHREAD_ONCE_INIT;
static int pool_on = 1;
static void pool_read_env(void) {
  const char *v = getenv("MUSTER_JAX_GROUP_POOL");
  pool_on = !(v && strcmp(v, "0") == 0);
}
static int pool_enabled(void) {
  pthread_once(&pool_once, pool_read_env);
  return pool_on;
}

int mj_group_name(mj_call_t *c, char *name, size_t cap, int *pooled) {
  char base[MUSTER_MAX_NAME + 1];
  int k = 0;
  *pooled = -1;
  int len = snprintf(base, sizeof base, "jx.%s.%s.%" PRId64 ".%d", c->at.group_key,
                     muster_routine_name((muster_routine_t)c->at.routine), c->at.site, c->replica);
  if (len < 0 || (size_t)len + MJ_SUFFIX_MAX > cap)
    return mj_set_err(c, MUSTER_EINVAL, "muster_jax: group name %s... too long (group_key %s)", base,
                      c->at.group_key);
  /* the pool tells the instances of one launch by its run id; 0 (an XLA
   * without RunId_Get) would put every launch in one entry */
  if (c->at.local_ranks == c->at.nranks && c->run_id != 0 && pool_enabled())
    *pooled = pool_acquire(base, c->run_id, &k);
  if (*pooled >= 0)
    snprintf(name, cap, "%.*s.s%d", len, base, k);
  else
    snprintf(name, cap, "%.*s.%" PRIx64, len, base, (uint64_t)c->run_id);
  return 0;
}
