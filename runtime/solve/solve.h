/*
 * runtime/solve/solve.h - the collective and single-caller solves
 * (muster_solve, muster_solve_all in include/muster.h).
 *
 * Protocol of muster_solve over a group of R ranks.  The leader (rank 0)
 * chooses the provider and every rank follows it, so the ranks of one call
 * never disagree:
 *   1. every rank describes its part (desc.h: arguments, shard, pid, node,
 *      device facts: free/total memory of a CUDA shard's GPU) and guesses
 *      the provider: the forced one (args.provider, $MUSTER_PROVIDER), else
 *      the leader's last choice for this call signature (hint.h).  For a
 *      guessed leader provider it runs local_export into a blob.  ONE
 *      exchange carries descriptor + blob;
 *   2. every rank validates all R descriptors with the same code: all
 *      return the same error (and nobody waits further) when one is bad;
 *   3. the leader chooses (choice.h) from the published facts.  If it chose
 *      a leader provider that every rank guessed, it runs it at once (maps
 *      peers' muster_shard_alloc memory, imports CUDA IPC blobs, resolves
 *      the tile, calls solve) and sets the status DONE.  Otherwise it sets
 *      the status DECIDED with its choice;
 *   4. a barrier with liveness checks but no deadline (a solve may take
 *      minutes); a dead leader becomes MUSTER_EPEERDEAD for the rest.
 *      DONE (or an error): everyone returns it.  DECIDED:
 *   5a. leader provider: every rank exports for the chosen provider and
 *      publishes again (a second exchange, validated again); the leader
 *      runs it and sets DONE; a final barrier as in 4;
 *   5b. collective provider: every rank calls collective_solve with its own
 *      piece and a bootstrap over the group (bootstrap.h), under a watchdog
 *      that cancels the call when a peer dies or the group is poisoned
 *      (collective.h); a rank whose call fails poisons the group so the
 *      others stop too; a final barrier as in 4.
 * With a forced provider, or from the second call of a signature on, a
 * leader provider costs 2 rounds (as before the choice existed); a wrong
 * guess costs 2 more.  The providers write X / W into every rank's b / w
 * themselves.
 */
#ifndef MUSTER_SOLVE_H
#define MUSTER_SOLVE_H

#include "base/error.h"

#endif
