/*
 * runtime/registry/registry.h - providers by routine name (what other modules use).
 *
 * A provider is found on MUSTER_PROVIDER_PATH as <dir>/<routine>/<backend>.so,
 * dlopen()ed the first time its routine is used, loaded through the ABI
 * version table (provider_abi.h), and looked up without locks (urcu-bp RCU
 * hash table keyed by routine name); runtime/registry/choice.c chooses among the
 * providers of a routine for each call.  A call holds a
 * reference on the provider it runs; muster_providers_rescan() may replace
 * the file meanwhile and the old one is unloaded only when the last call
 * holding it releases it.
 */
#ifndef MUSTER_REGISTRY_H
#define MUSTER_REGISTRY_H

#include "base/error.h"
#include "muster/provider.h"
#include "registry/provider_file.h" /* muster__provider_t, its references */

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

/* How many rescans (muster_providers_rescan) this process began: what the
 * providers of a routine are may have changed since the count was read. */
MUSTER_HIDDEN unsigned muster__providers_rescans(void);

/* muster_providers_release's registry part: every loaded provider out of
 * the table (the next lookup loads its file again), unloaded at once when
 * no call or comm holds it, else when the last one drops it.  0, or
 * MUSTER_ENOMEM (the providers swapped before it stay swapped). */
MUSTER_HIDDEN int muster__providers_unload_all(void);

#endif
