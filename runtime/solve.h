/*
 * runtime/solve.h - the collective and single-caller solves
 * (muster_solve, muster_solve_all in include/muster.h).
 *
 * Protocol of muster_solve over a group of R ranks:
 *   1. every rank resolves the provider locally (registry, reference held),
 *      checks what it can check alone, calls the provider's local_export,
 *      and publishes one descriptor (args, shard, pid, the provider it
 *      resolved, a local problem if any, the export blob) in ONE exchange;
 *   2. every rank validates all R descriptors with the same code, so all
 *      return the same error (and nobody waits further) when one is bad;
 *   3. the leader (rank 0) makes every shard usable in its process (maps
 *      peers' muster_shard_alloc memory, imports CUDA IPC blobs), resolves
 *      the tile, runs provider->solve, and sets the group status (code, info,
 *      tile, seconds, provider, message);
 *   4. a final barrier with liveness checks but no deadline (a solve may
 *      take minutes); a dead leader becomes MUSTER_EPEERDEAD for the rest.
 * The providers write X / W into every rank's b / w themselves.
 */
#ifndef MUSTER_SOLVE_H
#define MUSTER_SOLVE_H

#include "error.h"

/* Tile used when neither the caller nor the provider chooses one: the
 * largest valid tile for (n, nranks) not above 256 (cuSolverMg's sweet spot
 * starts there; the lapack provider ignores the tile). */
MUSTER_HIDDEN int64_t muster__solve_default_tile(int64_t n, int nranks);

#endif
