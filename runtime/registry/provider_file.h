/*
 * runtime/registry/provider_file.h - one provider file, loaded once (private to the
 * registry: runtime/registry/registry.c and runtime/registry/provider_file.c).
 *
 * A provider is one file: its ld.so object, the fd it was loaded through,
 * its context and its cost table live and die together, however many
 * table nodes (one per routine folder that lists the file) point to it.
 * Every provider not yet unloaded is on one list (the "live" list), so a
 * rescan that finds the same file again shares it instead of loading it
 * twice.  The registry's writer lock (muster__registry_lock) guards that
 * list and serializes every dlopen/dlclose.
 */
#ifndef MUSTER_PROVIDER_FILE_H
#define MUSTER_PROVIDER_FILE_H

#include <stdatomic.h>
#include <sys/stat.h>
#include <time.h>

#include "registry/cost.h"
#include "base/error.h"
#include "muster/provider.h"

/* What a caller may read of a provider it holds a reference on. */
typedef struct muster__provider {
  const muster_provider_v2_t *v;  /* hooks and capabilities, as a v2 struct
                                     whatever ABI it was built for
                                     (provider_abi.h); NULL: refused file   */
  uint32_t abi;                   /* ABI version it was loaded through     */
  void *ctx;                      /* from v->init                          */
  char name[32];                  /* backend name                          */
  char path[512];                 /* the file it came from (real path)     */
  int available;                  /* loaded, init and probe succeeded      */
  char why[256];                  /* why not available (load/probe error)  */
  const struct muster__cost *cost;/* its cost table (cost.h), NULL if none */
  muster_provider_engine_version_fn engine_version; /* its optional
                                     muster_provider_engine_version (provider.h),
                                     NULL if it has none                    */
  char cost_why[256];             /* why there is none (no file, or the
                                     parse error), or the file it came from */
} muster__provider_t;

/* Take one more reference on a provider already held. */
MUSTER_HIDDEN void muster__provider_ref(muster__provider_t *p);

/* Drop a reference; the last one of a replaced provider unloads it. */
MUSTER_HIDDEN void muster__provider_release(muster__provider_t *p);

typedef struct muster__prov {
  muster__provider_t pub;       /* first: callers see this part          */
  _Atomic long refs;            /* nodes + calls                          */
  void *handle;                 /* dlopen handle; NULL when refused       */
  int fd;                       /* the file, open while loaded (see load) */
  char alias[64];               /* "/proc/self/fd/N" it was loaded as     */
  struct muster__prov *live_next;       /* every provider not yet unloaded        */
  dev_t dev;                    /* identity of the file when loaded       */
  ino_t ino;
  struct timespec mtime;
  off_t size;
  char id[96];                  /* what the file is (provider_elf.h): a copy
                                   of the same file elsewhere is this one */
  int nodes;                    /* table nodes pointing to it (writer lock) */
  muster_provider_v2_t view;    /* what pub.v points to                   */
  muster__cost_t *table;        /* what pub.cost points to                */
} muster__prov_t;


/* Load the provider file `path` (listed as backend `backend` with identity
 * *st, and `id`, muster__provider_file_id's, "" if unknown): dlopen through an fd kept open, the ABI table, init, probe, cost
 * table; put it on the live list with one reference (the caller's).
 * Never fails as a whole: a refused file gives a provider with pub.v NULL
 * and pub.why saying why, so listings and errors can show it.  NULL only
 * when out of memory.  Writer lock held. */
MUSTER_HIDDEN muster__prov_t *muster__prov_load(const char *path, const char *backend,
                                                const struct stat *st, const char *id);

/* A stand-in for a file not loaded for a call of memory kind it does not
 * take (its file says so, provider_elf.h): pub.v NULL, pub.available 0 and
 * pub.why `why`, so a choice lists it and says why it cannot run; one
 * reference (the caller's); never on the live list.  NULL when out of
 * memory. */
MUSTER_HIDDEN muster__prov_t *muster__prov_stub(const char *path, const char *backend,
                                                const char *why);

/* The live provider of backend `backend` loaded from the file with
 * identity *st, or from a copy of it (the same id, when id is not ""),
 * with a new reference; NULL if none (or it is being unloaded).  Writer
 * lock held. */
MUSTER_HIDDEN muster__prov_t *muster__prov_find_live(const struct stat *st, const char *id,
                                                     const char *backend);

/* A loaded provider of backend `backend` that some table node points to
 * and is not the file with identity *st / id: another build of the same
 * backend, found in another folder or routine; NULL if none.  Loading the
 * file too would make two instances of one provider in the process (two
 * CUDA contexts, two caches of handles): the caller refuses it instead.
 * A provider replaced by a rescan is not counted (no node points to it
 * once the rescan is done).  Writer lock held. */
MUSTER_HIDDEN const muster__prov_t *muster__prov_other_build(const struct stat *st, const char *id,
                                                             const char *backend);

/* The registry's writer lock (provider_lock.c): recursive; taken by a
 * scan, a load, a listing and the last release of a provider.  Here, below
 * registry.c, because the last release (provider_file.c) takes it too. */
MUSTER_HIDDEN void muster__provider_lock(void);
MUSTER_HIDDEN void muster__provider_unlock(void);
/* Make the lock fork-safe (pthread_atfork); once, at the registry's first
 * use, after urcu-bp's own handlers (ours then run first before a fork). */
MUSTER_HIDDEN void muster__provider_lock_atfork(void);

#endif
