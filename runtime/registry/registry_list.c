/*
 * runtime/registry/registry_list.c - muster_providers_list: every provider
 * file on the path, each loaded (registryInt.h has the table it walks).
 */
#include <stdio.h>
#include <string.h>

#include <urcu-bp.h>
#include <urcu/rculfhash.h>

#include "base/env.h"
#include "base/exit_guard.h"
#include "registry/provider_file.h"
#include "registry/registryInt.h"

static int providers_list_call(muster_provider_info_t *out, int cap) {
  if (cap < 0 || (cap > 0 && !out)) return muster__err(MUSTER_EINVAL, "muster_providers_list: bad buffer");
  const char *cost_path;
  int rc = muster__env_check_log();
  if (rc == 0) rc = muster__env_cost_path(&cost_path);
  if (rc < 0) return rc;
  struct cds_lfht *table;
  rc = muster__registry_table(&table);
  if (rc < 0) return rc;
  for (int r = 1; r < NROUTINES; r++)
    if ((rc = muster__registry_scan(r)) < 0) return rc;
  /* one entry per distinct file; listing holds the writer lock so the set
   * is stable (a listing is rare). */
  muster__provider_lock();
  for (int r = 1; r < NROUTINES; r++) muster__registry_load(muster_routine_str(r), NULL, 0);
  const muster__prov_t *seen[MAX_FILES * NROUTINES];
  int n = 0;
  struct cds_lfht_iter it;
  node_t *nd;
  rcu_read_lock();
  cds_lfht_for_each_entry(table, &it, nd, lfht) {
    muster__prov_t *p = node_prov(nd);
    if (!p) continue; /* out of memory while loading */
    int k;
    for (k = 0; k < n; k++)
      if (seen[k] == p) break;
    if (k == n) {
      if (n == MAX_FILES * NROUTINES) continue;
      seen[n++] = p;
      if (k < cap) {
        muster_provider_info_t *i = &out[k];
        memset(i, 0, sizeof *i);
        snprintf(i->name, sizeof i->name, "%s", p->pub.name);
        snprintf(i->path, sizeof i->path, "%s", p->pub.path);
        if (p->pub.v) {
          i->routines = p->pub.v->routines;
          i->dtypes = p->pub.v->dtypes;
          i->mem_kinds = p->pub.v->mem_kinds;
          i->priority = p->pub.v->priority;
        }
        i->available = p->pub.available;
        snprintf(i->why, sizeof i->why, "%s", p->pub.why);
        if (p->pub.v) {
          i->abi = p->pub.abi;
          i->kind = p->pub.v->kind;
          i->spans = p->pub.v->spans;
          snprintf(i->cost, sizeof i->cost, "%s", p->pub.cost_why);
        }
      }
    }
    /* a refused file: say which routine folders named it */
    for (int r = 1; r < NROUTINES && k < cap; r++)
      if (!p->pub.v && !strcmp(nd->routine, muster_routine_str(r))) out[k].routines |= 1u << r;
  }
  TSAN_RELEASE(&muster__registry_tsan_readers_done);
  rcu_read_unlock();
  muster__provider_unlock();
  return n;
}

/* muster_providers_list with exit() safe meanwhile (exit_guard.h) */
int muster_providers_list(muster_provider_info_t *out, int cap) {
  int rc = muster__exit_guard_enter("muster_providers_list");
  if (rc < 0) return rc;
  rc = providers_list_call(out, cap);
  muster__exit_guard_leave();
  return rc;
}
