/*
 * muster/providers.h - the providers: those found (muster_providers_list,
 * muster_providers_rescan), what they keep given back
 * (muster_providers_release), the one $MUSTER_PROVIDER forces, the one the
 * runtime would choose for a call (muster_provider_choose), and why the
 * last solve's was chosen (muster_solve_reason).  Included by muster.h,
 * after the solve types it uses; docs/providers.md, docs/choice.md.
 *
 * Conventions: muster.h's (0 or a negative MUSTER_E* code,
 * muster_last_error() says who, what, where).
 */
#ifndef MUSTER_PROVIDERS_H
#define MUSTER_PROVIDERS_H

#include <stddef.h>

#include "../muster.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct muster_provider_info {
  char name[32];         /* backend                                          */
  char path[512];        /* file                                             */
  unsigned routines;     /* bit (1u << MUSTER_POTRS) ...                      */
  unsigned dtypes;       /* bit (1u << MUSTER_F32) ...                        */
  unsigned mem_kinds;    /* bit (1u << MUSTER_MEM_HOST) ...                   */
  int priority;
  int available;         /* probe said usable here                           */
  char why[256];         /* why not available, or load error; available:
                            what its probe found, may be empty ("cuSOLVERMp
                            0.9.1, cuBLASMp 0.10.0, NCCL 2.30.7")             */
  unsigned abi;          /* ABI version it was loaded through (0: refused)   */
  unsigned kind;         /* MUSTER_PROVIDER_LEADER (1) or _COLLECTIVE (2)    */
  unsigned spans;        /* MUSTER_SPAN_* bits (muster/provider_v2.h)        */
  char cost[256];        /* its cost table file, or why it has none          */
} muster_provider_info_t;

/* Rescan MUSTER_PROVIDER_PATH; new files are indexed, replaced files are
 * reloaded, and a replaced provider is unloaded only once no call uses it. */
MUSTER_EXTERN int muster_providers_rescan(void);

/* Give back what the loaded providers keep between calls: every provider
 * loaded in this process is unloaded (release_comms(ctx, 0), then fini:
 * its cached communicators, handles, streams, device buffers and IPC
 * mappings freed, its libraries dlclose()d) as soon as no call uses it,
 * and the open muster_comm_t's stop holding the providers that ran over
 * them.  A provider no call runs is unloaded before this returns; a call
 * in flight (another thread, or a collective call still running) keeps its
 * provider until it returns, and the provider is unloaded then, by that
 * call.  The next call loads its provider again, lazily, as at first use:
 * it pays that again (a GPU provider's libraries ~100 ms, its CUDA context,
 * and what it creates per call: NCCL communicators, solver handles).
 * A call that starts while a released provider still runs another call
 * takes that one back (one instance of a provider per process: no second
 * load, no second init), and it stays loaded as after any load, until the
 * next release; under steady calls from several threads a release may so
 * unload nothing.  Collective
 * providers: call it on every process of a set (between calls, as a
 * barrier would): a rank that kept cached communicators while the others
 * dropped theirs may make the set's next call fail (a provider that
 * checks, as scalapack, says MUSTER_EMISMATCH; the call after is
 * consistent again).  No file is read
 * again: a file replaced since the last scan is picked up by
 * muster_providers_rescan, not here.  Thread-safe, any thread, any time;
 * a no-op returning 0 when nothing is loaded.  0, MUSTER_ENOMEM (the
 * providers released before it stay released), or MUSTER_EEXITING once
 * exit() has begun. */
MUSTER_EXTERN int muster_providers_release(void);

/* The backend $MUSTER_PROVIDER forces for `routine` into name (cap bytes;
 * "" when it forces none).  0, or MUSTER_EINVAL for a bad argument. */
MUSTER_EXTERN int muster_provider_forced(muster_routine_t routine, char *name, size_t cap);

/* Fill up to cap entries (loading every provider found to probe it); returns
 * the number found or a negative code. */
MUSTER_EXTERN int muster_providers_list(muster_provider_info_t *out, int cap);

/* The whole reason for the provider of the calling thread's last
 * muster_solve or muster_solve_all: res.reason without its cut.  The caller
 * of muster_solve_all and rank 0 of a group (it made the choice) hold all
 * of it; another rank holds the MUSTER_MAX_REASON bytes it was sent.
 * Copies it into buf (cap bytes, MUSTER_MAX_REASON_FULL for all of it, "..."
 * at the end when cut; buf may be NULL) and returns its whole length; ""
 * and 0 before this thread's first solve or when no choice was made. */
MUSTER_EXTERN size_t muster_solve_reason(char *buf, size_t cap);

/* The runtime's choice for a call described by q (struct in
 * muster/provider_v2.h: routine, dtype, n, nrhs, nranks, span, mem ...; mem
 * 0 considers every memory kind, span 0 every span; the per-rank arrays may
 * be NULL when the facts are not known yet), exactly as a solve makes it
 * (docs/choice.md): want names a backend ("" or NULL: $MUSTER_PROVIDER,
 * else the expected fastest).  0 with the backend in name (cap bytes) and
 * why it won in reason (rcap bytes, MUSTER_MAX_REASON_FULL for all of it,
 * "..." at the end when cut; may be NULL); MUSTER_ENOPROVIDER /
 * MUSTER_EUNSUPPORTED with a message naming every candidate and why not. */
struct muster_provider_query;
MUSTER_EXTERN int muster_provider_choose(const struct muster_provider_query *q, const char *want,
                                         char *name, size_t cap, char *reason, size_t rcap);

#ifdef __cplusplus
}
#endif
#endif /* MUSTER_PROVIDERS_H */
