/*
 * runtime/registry/provider_abi.h - the table of provider ABI versions the runtime
 * loads, newest first, and the one view of a provider the rest of the
 * runtime uses whatever version it was built for.
 *
 * The view is a muster_provider_v2_t owned by the runtime:
 *   v2 provider  a copy of its struct, checked (abi_version 2, struct_size,
 *                layout_rules == MUSTER_LAYOUT_RULES_VERSION, kind and the
 *                hooks that kind needs, spans);
 *   v1 provider  its fields and hooks copied, plus: kind LEADER, spans
 *                THREADS|PROCESSES, layout_rules 1 (the rules v1 was frozen
 *                with: a runtime with other rules refuses v1 providers),
 *                no estimate, no collective hooks.
 * docs/providers.md has the table of refusals and their messages.
 */
#ifndef MUSTER_PROVIDER_ABI_H
#define MUSTER_PROVIDER_ABI_H

#include <stdint.h>

#include "base/error.h"
#include "muster/provider.h"

/* The layout rules ABI v1 was frozen with (v1 has no field for them). */
#define MUSTER__V1_LAYOUT_RULES 1

/* Look up the provider symbols of dlopen handle h, newest ABI first; the
 * first one found decides (a refused v2 struct is not retried as v1).
 * backend: the file's name without ".so" (the struct's name must match).
 * 0 with *view filled and *abi the version loaded, or a negative code
 * (MUSTER_EVERSION, MUSTER_EINVAL) with the reason in why. */
MUSTER_HIDDEN int muster__abi_resolve(void *h, const char *backend, muster_provider_v2_t *view,
                                      uint32_t *abi, char *why, size_t cap);

#endif
