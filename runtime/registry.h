/*
 * runtime/registry.h - providers by routine name (what other modules use).
 *
 * A provider is found on MUSTER_PROVIDER_PATH as <dir>/<routine>/<backend>.so,
 * dlopen()ed the first time its routine is used, loaded through the ABI
 * version table (provider_abi.h), and looked up without locks (urcu-bp RCU
 * hash table keyed by routine name); runtime/choice.c chooses among the
 * providers of a routine for each call.  A call holds a
 * reference on the provider it runs; muster_providers_rescan() may replace
 * the file meanwhile and the old one is unloaded only when the last call
 * holding it releases it.
 */
#ifndef MUSTER_REGISTRY_H
#define MUSTER_REGISTRY_H

#include "error.h"
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
  char cost_why[256];             /* why there is none (no file, or the
                                     parse error), or the file it came from */
} muster__provider_t;

/* Every provider file of `routine` on the path (only backend `only` when
 * it is a non-empty name), loaded if not yet, each with a reference the
 * caller drops with muster__provider_release: refused and unavailable ones
 * too (their `why` says why).  mem (a muster_mem_t, 0: any): a file whose
 * struct says it does not take that memory kind (provider_elf.h) is not
 * loaded for it: a stand-in, unavailable, says so ("no host memory ...").
 * Returns the count (at most cap; several folders may hold more), or a
 * negative code. */
MUSTER_HIDDEN int muster__provider_collect(muster_routine_t routine, const char *only, int mem,
                                           muster__provider_t **out, int cap);

/* Take one more reference on a provider already held. */
MUSTER_HIDDEN void muster__provider_ref(muster__provider_t *p);

/* Drop a reference; the last one of a replaced provider unloads it. */
MUSTER_HIDDEN void muster__provider_release(muster__provider_t *p);

#endif
