/*
 * runtime/registry.h - providers by routine name (what other modules use).
 *
 * A provider is found on MUSTER_PROVIDER_PATH as <dir>/<routine>/<backend>.so,
 * dlopen()ed the first time its routine is used, and looked up without
 * locks (urcu-bp RCU hash table keyed by routine name).  A call holds a
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
  const muster_provider_v1_t *v;  /* the provider's hooks and capabilities */
  void *ctx;                      /* from v->init                          */
  char name[32];                  /* backend name                          */
  char path[512];                 /* the file it came from (real path)     */
} muster__provider_t;

/* Choose and reference the provider for (routine, dtype, mem).
 * want: a backend name, or NULL/"" for $MUSTER_PROVIDER, else the highest
 * priority available one (want and $MUSTER_PROVIDER are checked: a malformed
 * one is MUSTER_EINVAL, runtime/env.h).  MUSTER_ENOPROVIDER / MUSTER_EUNSUPPORTED with a
 * message listing the candidates and why each was not taken. */
MUSTER_HIDDEN int muster__provider_acquire(muster_routine_t routine, muster_dtype_t dtype,
                                           muster_mem_t mem, const char *want,
                                           muster__provider_t **out);

/* Take one more reference on a provider already held. */
MUSTER_HIDDEN void muster__provider_ref(muster__provider_t *p);

/* Drop a reference; the last one of a replaced provider unloads it. */
MUSTER_HIDDEN void muster__provider_release(muster__provider_t *p);

#endif
