/*
 * runtime/registry/registryInt.h - private to the registry files: what
 * runtime/registry/registry.c (the table: scans, loads, release, lookups)
 * and registry_list.c (muster_providers_list) share: the table's node, the
 * table itself and its TSan annotations.  Other runtime modules use
 * registry.h; nothing here is for them.
 */
#ifndef MUSTER_REGISTRYINT_H
#define MUSTER_REGISTRYINT_H

#include <sys/stat.h>

#include <urcu/rculfhash.h>

#include "base/error.h"
#include "registry/provider_file.h"

/* TSan cannot see the ordering urcu provides (uninstrumented library), so
 * tell it: a writer publishes after RELEASE(&publish) and readers ACQUIRE
 * before reading a node; readers RELEASE(&readers_done) when they unlock and
 * the writer ACQUIREs after synchronize_rcu before freeing nodes.  The two
 * addresses are objects of registry.c: every file annotates the same ones. */
#if defined(__SANITIZE_THREAD__)
void __tsan_acquire(void *addr);
void __tsan_release(void *addr);
#define TSAN_ACQUIRE(a) __tsan_acquire(a)
#define TSAN_RELEASE(a) __tsan_release(a)
#else
#define TSAN_ACQUIRE(a) ((void)0)
#define TSAN_RELEASE(a) ((void)0)
#endif
MUSTER_HIDDEN extern char muster__registry_tsan_publish, muster__registry_tsan_readers_done;

/* routine ids are 1..MUSTER_ROUTINE_END-1 (muster/types.h) */
#define NROUTINES MUSTER_ROUTINE_END

/* provider files of one routine, at most */
#define MAX_FILES 64

typedef struct node {
  struct cds_lfht_node lfht;
  char routine[16];             /* key                                    */
  char backend[32];             /* <backend>.so in <dir>/<routine>/       */
  char *path;                   /* that file                              */
  struct stat st;               /* its identity when listed               */
  char id[96];                  /* and what it is (provider_elf.h)        */
  muster__prov_t *prov;         /* NULL until loaded (set once, atomic);
                                   holds one reference (provider_file.h)  */
  unsigned file_mem;            /* memory kinds its file declares, 0
                                   unknown (provider_elf.h)               */
  muster__prov_t *stub;         /* stands in for it, unloaded, in calls of
                                   a memory kind it lacks; NULL when it
                                   lacks none or file_mem is unknown (one
                                   reference)                             */
} node_t;

static inline muster__prov_t *node_prov(const node_t *nd) {
  return __atomic_load_n(&nd->prov, __ATOMIC_ACQUIRE);
}

/* The table (made on first use): 0 and *out, or MUSTER_ENOMEM. */
MUSTER_HIDDEN int muster__registry_table(struct cds_lfht **out);

/* The files of routine r (an id) scanned once: its nodes in the table. */
MUSTER_HIDDEN int muster__registry_scan(int r);

/* Load the not yet loaded providers of `routine` (only backend `only`
 * when given) that take memory kind mem (0: any).  Writer lock held. */
MUSTER_HIDDEN void muster__registry_load(const char *routine, const char *only, int mem);

#endif
