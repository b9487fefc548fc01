/*
 * muster/provider_v1.h - provider ABI version 1: the leader provider.
 * FROZEN: this struct and the call struct never change; a change is a new
 * version (muster/provider_v2.h ...).  Include muster/provider.h, not this.
 *
 * A v1 provider exports the data symbol "muster_provider_v1" of type
 * muster_provider_v1_t with abi_version = MUSTER_PROVIDER_V1_ABI.  The
 * leader of a group calls solve() once with every rank's shard.
 *
 * Threading: solve() is called by the leader thread of one group at a time
 * per group, but several groups may call the same provider concurrently;
 * a provider protects its own caches.  The calling thread is the host
 * framework's, not ours: no thread-local state may outlive the call.
 *
 * Errors: every hook returns 0 or a negative MUSTER_E* code and, on error,
 * writes a NUL-terminated message to err (errlen bytes) that names the
 * device and the failing call.  Providers never exit, abort or print.
 */
#ifndef MUSTER_PROVIDER_V1_H
#define MUSTER_PROVIDER_V1_H

#include "../muster.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MUSTER_PROVIDER_V1_ABI 1
#define MUSTER_PROVIDER_SYMBOL_V1 "muster_provider_v1"

/* One solve, as the leader's provider sees it. */
typedef struct muster_provider_call {
  muster_solve_args_t args;     /* tile resolved (> 0), provider resolved    */
  int nshards;                  /* number of ranks                           */
  const muster_shard_t *shards; /* rank order; pointers usable in the
                                   leader's process (IPC handles already
                                   imported by mem_import)                   */
  int process_mode;             /* shards come from other processes          */
  int64_t *info;                /* out: LAPACK-style info (provider.h: > 0) */
  char *err;                    /* out: message on failure                   */
  size_t errlen;
} muster_provider_call_t;

typedef struct muster_provider_v1 {
  uint32_t abi_version;  /* MUSTER_PROVIDER_V1_ABI                           */
  uint32_t struct_size;  /* sizeof(muster_provider_v1_t)                     */
  const char *name;      /* backend name, [a-z0-9_]+, e.g. "lapack"          */
  const char *description;
  int priority;          /* higher wins among available providers            */
  unsigned routines;     /* bits (1u << MUSTER_POTRS) | ...                   */
  unsigned dtypes;       /* bits (1u << MUSTER_F32) | ...                     */
  unsigned mem_kinds;    /* bits (1u << MUSTER_MEM_HOST) | ...                */
  int max_shards;        /* most ranks one call may have                     */

  /* Can this provider run here (driver, devices, libraries)?  0, or a
   * negative code with the reason in why.  On 0 why may hold a note of
   * what it runs with ("cuSOLVERMp 0.9.1, NCCL 2.30.7"; `muster
   * providers` shows it), else it is left empty.  Cheap; may be called
   * often. */
  int (*probe)(char *why, size_t whylen);

  /* Create/destroy the provider's context (caches).  init runs once per
   * load, before any other hook that takes ctx; fini once at unload. */
  int (*init)(void **ctx, char *err, size_t errlen);
  void (*fini)(void *ctx);

  /* Tile to use when the caller gives none; 0 lets the runtime choose.
   * May be NULL. */
  int64_t (*choose_tile)(void *ctx, muster_routine_t routine, muster_dtype_t dtype,
                         int64_t n, int nshards);

  /* Run the routine on every shard.  Called on the leader only. */
  int (*solve)(void *ctx, const muster_provider_call_t *call);

  /* --- every participant, around the call (may be NULL) ------------------ */
  /* Before publishing: make `mine` ready for the leader (e.g. synchronize
   * its stream) and, in process mode, export what the leader needs to reach
   * it (CUDA IPC handles + offsets) into blob (cap bytes; *len set). */
  int (*local_export)(void *ctx, const muster_shard_t *mine, int process_mode,
                      void *blob, size_t cap, size_t *len, char *err, size_t errlen);
  /* Leader, process mode: turn a peer's blob back into usable pointers in
   * *shard (a, b, w).  Providers cache what is costly to open (IPC). */
  int (*leader_import)(void *ctx, int rank, int64_t peer_pid, const void *blob,
                       size_t len, muster_shard_t *shard, char *err, size_t errlen);
  /* A peer process is gone or has left: drop what was cached for it. */
  void (*forget_peer)(void *ctx, int64_t peer_pid);
} muster_provider_v1_t;

#ifdef __cplusplus
}
#endif
#endif /* MUSTER_PROVIDER_H */
