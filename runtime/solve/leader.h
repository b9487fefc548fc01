/*
 * runtime/solve/leader.h - running a leader provider: the hook every rank runs
 * before publishing (local_export), and what the leader then does with
 * every rank's descriptor and blob (reach each shard from its process,
 * resolve the tile, call solve).  Used by muster_solve (solve.c) and
 * muster_solve_all.
 */
#ifndef MUSTER_LEADER_H
#define MUSTER_LEADER_H

#include "solve/desc.h"
#include "registry/registry.h"

/* Room for a provider's export blob after the descriptor in one payload. */
#define MUSTER__BLOB_CAP (MUSTER_MAX_PAYLOAD - sizeof(muster__desc_t))

/* muster__outcome_t.phase */
enum { MUSTER__DONE = 1, MUSTER__DECIDED = 2 };

/* What a call ended with, or what the leader decided (the leader publishes
 * it with its status). */
typedef struct muster__outcome {
  int32_t phase;        /* MUSTER__DONE: the call is over; MUSTER__DECIDED:
                           the leader chose, every rank goes on (solve.c) */
  uint32_t kind;        /* kind of the provider chosen                     */
  int64_t info, tile;
  double seconds;
  char provider[32];
  char reason[MUSTER_MAX_REASON];
  char msg[512];        /* the error, when the status is one              */
} muster__outcome_t;

/* Run p's local_export for `mine` (CUDA: sync its stream; processes: IPC
 * handles) into blob (MUSTER__BLOB_CAP bytes); sets d->bloblen.  A failure
 * goes into d as its problem.  Nothing when d has a problem already, p is
 * NULL or has no such hook. */
MUSTER_HIDDEN void muster__leader_export(muster__provider_t *p, const muster_shard_t *mine,
                                         int process_mode, muster__desc_t *d, void *blob);

/* On the leader: make every shard usable here (map muster_shard_alloc
 * memory of peers, import their blobs), resolve the tile, run p->solve.
 * shards: R entries of scratch.  Fills out->info/tile/seconds/provider.
 * 0, or a code with the message set (info > 0 included, see
 * muster__info_rc). */
MUSTER_HIDDEN int muster__leader_run(muster__provider_t *p, const muster__desc_t *const *ds,
                                     const void *const *blobs, int R, muster_shard_t *shards,
                                     muster__outcome_t *out);

/* The info > 0 contract (muster/provider.h): 1 when a provider's return
 * (rc, info) is a verdict on the input that the runtime words: info > 0
 * with rc 0 or the routine's info code (muster/types.h's `info` column). */
MUSTER_HIDDEN int muster__info_verdict(int routine, int rc, int64_t info);

/* What LAPACK-style info means for the call: 0 for info 0, else the
 * routine's info code worded by muster/types.h's map with the provider's
 * detail (may be NULL or empty) in parentheses, or MUSTER_EPROVIDER for a
 * rejected argument (info < 0); the message set. */
MUSTER_HIDDEN int muster__info_rc(const char *provider, int routine, int64_t info, const char *detail);

/* Copy an outcome into the caller's result (res may be NULL). */
MUSTER_HIDDEN void muster__outcome_result(const muster__outcome_t *o, muster_solve_result_t *res);

#endif
