/*
 * runtime/solve/comm_stage.h - the staging of muster_solve_comm's one-node
 * route (comm_local.h): a rank outside the leader's process whose pieces
 * the leader cannot reach copies them into a region it can, for the call,
 * and copies back what the engine wrote.  Host memory: reachable when it
 * is muster_shard_alloc memory (the leader maps it, shard.h), else copied
 * into such a region.  CUDA memory: reachable when its allocation opens by
 * CUDA IPC (cudaMalloc's; devices.h muster__cuda_shareable), else copied
 * into a cudaMalloc'ed region on the piece's device, on the shard's stream
 * (XLA's own allocations refuse CUDA IPC: jax arrays on GPUs take this
 * way).  The region is kept (per comm) and grown, never shrunk, so the
 * leader opens it once; so is what CUDA IPC said of each allocation
 * (devices.h muster__shareable_cache_t), so a call asks the driver for no
 * IPC handle of an allocation an earlier call of the comm asked about.
 */
#ifndef MUSTER_COMM_STAGE_H
#define MUSTER_COMM_STAGE_H

#include "base/devices.h"
#include "solve/desc.h"

enum { MUSTER__STAGE_A, MUSTER__STAGE_B, MUSTER__STAGE_W, MUSTER__NSTAGE };

typedef struct muster__stage {
  int rank;                               /* the comm rank staging (the test fault) */
  void *region;                           /* NULL: none yet             */
  size_t cap;                             /* its bytes                  */
  int mem, device;                        /* where it is                */
  size_t off[MUSTER__NSTAGE], len[MUSTER__NSTAGE]; /* this call's pieces (len 0: as they are) */
  int a_back;                             /* this call's A goes back (muster_routine_writes_a) */
  muster__shareable_cache_t seen;         /* CUDA IPC's verdicts        */
} muster__stage_t;

/* *use = *mine, with each piece the leader could not reach replaced by a
 * staged copy (d: this rank's validated descriptor of mine).  0, or a code
 * with the message set (the region could not be made, a copy failed). */
MUSTER_HIDDEN int muster__stage_in(muster__stage_t *s, const muster__desc_t *d, const muster_shard_t *mine,
                                   muster_shard_t *use);

/* What the engine wrote into the staged pieces, back into mine's: B and W
 * when staged, A only where the caller reads it after the call
 * (muster_routine_writes_a: not potrs's with MUSTER_NO_FACTOR, getrs's,
 * gels's; the store route's adapters ask for no factor, so a jax array's
 * A is copied in only).  0 or the copy's error. */
MUSTER_HIDDEN int muster__stage_out(muster__stage_t *s, const muster_shard_t *mine);

/* Free the region and forget the verdicts (the comm closes). */
MUSTER_HIDDEN void muster__stage_free(muster__stage_t *s);

#endif
