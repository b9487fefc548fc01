/*
 * runtime/registry/provider_abi.c - the provider ABI version table (see
 * provider_abi.h).  As NCCL does for its plugins: one frozen struct per
 * version, the newest symbol tried first, older ones adapted.  Adding ABI
 * v3 is one header (muster/provider_v3.h), one adapt_v3 that turns the new
 * struct into the view (and, if the view must grow, a new view type), and
 * one line at the top of `abis`.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "registry/provider_abi.h"

/* Checks common to every version: the name, then what a kind needs. */
static int check_name(const char *name, const char *backend, char *why, size_t cap) {
  if (!name || strcmp(name, backend) != 0) {
    snprintf(why, cap, "provider name '%s' does not match the file name '%s.so'",
             name ? name : "(null)", backend);
    return MUSTER_EINVAL;
  }
  return 0;
}

static int check_kind(const muster_provider_v2_t *v, char *why, size_t cap) {
  const unsigned known = MUSTER_SPAN_THREADS | MUSTER_SPAN_PROCESSES | MUSTER_SPAN_NODES;
  if (v->kind == MUSTER_PROVIDER_LEADER) {
    if (!v->solve) {
      snprintf(why, cap, "leader provider without a solve hook");
      return MUSTER_EINVAL;
    }
    if (v->spans & MUSTER_SPAN_NODES) {
      snprintf(why, cap, "a leader provider cannot span nodes (spans 0x%x): the leader must reach "
               "every shard's memory", v->spans);
      return MUSTER_EINVAL;
    }
  } else if (v->kind == MUSTER_PROVIDER_COLLECTIVE) {
    if (!v->collective_solve) {
      snprintf(why, cap, "collective provider without a collective_solve hook");
      return MUSTER_EINVAL;
    }
  } else {
    snprintf(why, cap, "unknown provider kind %u (1 leader, 2 collective)", v->kind);
    return MUSTER_EINVAL;
  }
  if (!v->spans || (v->spans & ~known)) {
    snprintf(why, cap, "spans 0x%x: must be a non-empty set of MUSTER_SPAN_* bits", v->spans);
    return MUSTER_EINVAL;
  }
  return 0;
}

static int check_header(uint32_t abi, uint32_t want, uint32_t size, size_t need, const char *sym,
                        char *why, size_t cap) {
  if (abi != want) {
    snprintf(why, cap, "symbol %s says ABI version %u; it must say %u (this runtime loads ABI "
             "versions %d and %d)", sym, abi, want, MUSTER_PROVIDER_V1_ABI, MUSTER_PROVIDER_V2_ABI);
    return MUSTER_EVERSION;
  }
  if (size < need) {
    snprintf(why, cap, "struct_size %u too small (runtime needs %zu)", size, need);
    return MUSTER_EVERSION;
  }
  return 0;
}

static int adapt_v2(const void *sym, const char *backend, muster_provider_v2_t *view, char *why,
                    size_t cap) {
  const muster_provider_v2_t *v = sym;
  int rc = check_header(v->abi_version, MUSTER_PROVIDER_V2_ABI, v->struct_size, sizeof *v,
                        MUSTER_PROVIDER_SYMBOL_V2, why, cap);
  if (rc < 0) return rc;
  if (v->layout_rules != MUSTER_LAYOUT_RULES_VERSION) {
    snprintf(why, cap, "built with layout rules version %u, this runtime has version %d "
             "(muster/layout.h): rebuild the provider against this muster's headers",
             v->layout_rules, MUSTER_LAYOUT_RULES_VERSION);
    return MUSTER_EVERSION;
  }
  if ((rc = check_name(v->name, backend, why, cap)) < 0) return rc;
  *view = *v; /* frozen struct: copy exactly its size, ignore any tail */
  view->struct_size = sizeof *view;
  return check_kind(view, why, cap);
}

static int adapt_v1(const void *sym, const char *backend, muster_provider_v2_t *view, char *why,
                    size_t cap) {
  const muster_provider_v1_t *v = sym;
  int rc = check_header(v->abi_version, MUSTER_PROVIDER_V1_ABI, v->struct_size, sizeof *v,
                        MUSTER_PROVIDER_SYMBOL_V1, why, cap);
  if (rc < 0) return rc;
  if (MUSTER_LAYOUT_RULES_VERSION != MUSTER__V1_LAYOUT_RULES) {
    snprintf(why, cap, "ABI v1 providers carry layout rules version %d, this runtime has %d: "
             "rebuild it as an ABI v2 provider", MUSTER__V1_LAYOUT_RULES, MUSTER_LAYOUT_RULES_VERSION);
    return MUSTER_EVERSION;
  }
  if ((rc = check_name(v->name, backend, why, cap)) < 0) return rc;
  memset(view, 0, sizeof *view);
  view->abi_version = MUSTER_PROVIDER_V1_ABI;
  view->struct_size = sizeof *view;
  view->layout_rules = MUSTER__V1_LAYOUT_RULES;
  view->kind = MUSTER_PROVIDER_LEADER;
  view->name = v->name;
  view->description = v->description;
  view->priority = v->priority;
  view->routines = v->routines;
  view->dtypes = v->dtypes;
  view->mem_kinds = v->mem_kinds;
  view->spans = MUSTER_SPAN_THREADS | MUSTER_SPAN_PROCESSES;
  view->max_shards = v->max_shards;
  view->probe = v->probe;
  view->init = v->init;
  view->fini = v->fini;
  view->choose_tile = v->choose_tile;
  view->solve = v->solve;
  view->local_export = v->local_export;
  view->leader_import = v->leader_import;
  view->forget_peer = v->forget_peer;
  return check_kind(view, why, cap);
}

/* Known ABI symbols, newest first. */
static const struct abi_entry {
  const char *sym;
  uint32_t version;
  int (*adapt)(const void *sym, const char *backend, muster_provider_v2_t *view, char *why,
               size_t cap);
} abis[] = {
    {MUSTER_PROVIDER_SYMBOL_V2, MUSTER_PROVIDER_V2_ABI, adapt_v2},
    {MUSTER_PROVIDER_SYMBOL_V1, MUSTER_PROVIDER_V1_ABI, adapt_v1},
};

int muster__abi_resolve(void *h, const char *backend, muster_provider_v2_t *view, uint32_t *abi,
                        char *why, size_t cap) {
  for (size_t i = 0; i < sizeof abis / sizeof abis[0]; i++) {
    const void *sym = dlsym(h, abis[i].sym);
    if (!sym) continue;
    *abi = abis[i].version;
    return abis[i].adapt(sym, backend, view, why, cap);
  }
  snprintf(why, cap, "no symbol %s nor %s (not a muster provider, or built for an unknown ABI)",
           MUSTER_PROVIDER_SYMBOL_V2, MUSTER_PROVIDER_SYMBOL_V1);
  return MUSTER_EVERSION;
}
