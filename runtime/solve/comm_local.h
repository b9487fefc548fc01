/*
 * runtime/solve/comm_local.h - muster_solve_comm's one-node route: when
 * every rank of a kind store comm is a process (or thread) of this node
 * that can meet the others in a muster group, rank 0's choice also weighs
 * the one-node (leader) providers (cusolvermg, cusolverdn, tiled over CUDA
 * IPC; lapack on host memory), with the query the group path makes; a
 * winner of that kind runs through muster_solve over a group of the
 * comm's ranks, each rank seated at its comm rank with its own shard.
 * comm.c runs the rounds (its protocol comment); this file has the group,
 * its name, and the staging of host shards.  docs/multinode.md.
 *
 * The group: named by rank 0 (the comm's name, its key and a number no
 * other comm of rank 0's process has), joined at the first call that
 * needs it with the job rank 0 names, kept joined between calls (the
 * comm's cache), left and forgotten when a call on it fails (every rank
 * alike: the agreed outcome; the next call names a new one) and when the
 * comm closes.  A group's name leaves /dev/shm once every rank has taken
 * its seat (docs/runtime-lifetime.md), and one that never forms is
 * removed by the last rank out, or by whoever poisons it.
 *
 * Staging (comm_stage.h): a rank outside the leader's process whose
 * pieces the leader cannot reach (host memory not from muster_shard_alloc,
 * device memory CUDA IPC refuses) copies them into a region it can for
 * the call, and what the engine wrote back.
 */
#ifndef MUSTER_COMM_LOCAL_H
#define MUSTER_COMM_LOCAL_H

#include "solve/desc.h"
#include "solve/leader.h"

/* A comm's one-node state: its group and staging region (NULL: none yet). */
typedef struct muster__local muster__local_t;

/* What rank 0 tells every rank with a one-node decision. */
typedef struct muster__local_plan {
  char group[MUSTER_MAX_NAME + 1];
  char job[MUSTER_MAX_JOB + 1];
} muster__local_plan_t;

/* desc.meet of this process: a hash of its segment folder (device and
 * inode: another mount of /dev/shm, a container's own, differs), its pid
 * namespace and its uid, never 0; 0 when one of them is unknown (no
 * group can be made here).  Ranks with the same host and meet can form
 * a group. */
MUSTER_HIDDEN uint64_t muster__local_meet(void);

/* Rank 0: NULL when a one-node provider may run this validated call of a
 * kind store comm, else why not (into why, < 195 bytes: the choice's note
 * of every leader provider): a 2-D piece, a rank on another node, a rank
 * that cannot meet rank 0 in a group. */
MUSTER_HIDDEN const char *muster__local_why(const muster__desc_t *const *ds, int R, char *why, size_t cap);

/* Rank 0: the group this call runs in: *l's (allocated on first need)
 * while it has one, else a new name made from comm_name and key; the job
 * (opts_job, else MUSTER_JOB, else "default") as a join resolves it.  0 or
 * a code with the message set. */
MUSTER_HIDDEN int muster__local_plan(muster__local_t **l, const char *comm_name, uint64_t key,
                                     const char *opts_job, int R, muster__local_plan_t *plan);

/* Every rank: seated at `rank` of plan's group (its cached one, or joined
 * now with timeout_s: muster_group_opts_t's), and its pieces staged when
 * the leader (process leader_pid) could not reach them (d: this
 * rank's validated descriptor of mine); *use gets the shard to solve on.
 * 0 or a code with the message set. */
MUSTER_HIDDEN int muster__local_prepare(muster__local_t **l, const muster__local_plan_t *plan, int rank, int R,
                                        double timeout_s, const muster_shard_t *mine, const muster__desc_t *d,
                                        int64_t leader_pid, muster_shard_t *use);

/* Every rank: muster_solve over the group with `provider` forced (rank 0's
 * choice), then what the engine wrote copied from the staged pieces back
 * to mine.  out gets info, tile and seconds.  muster_solve's return, or
 * the copy's error. */
MUSTER_HIDDEN int muster__local_solve(muster__local_t *l, const muster_solve_args_t *args, const char *provider,
                                      const muster_shard_t *mine, const muster_shard_t *use,
                                      muster__outcome_t *out);

/* 1 when this rank sits in group `group` (joined at an earlier call and
 * kept), else 0. */
MUSTER_HIDDEN int muster__local_seated(const muster__local_t *l, const char *group);

/* Poison this rank's group with its failure (code, msg): the others, in
 * or entering the group's call, fail with it instead of waiting for this
 * rank (a call that skipped the meeting round, comm.c). */
MUSTER_HIDDEN void muster__local_abort(muster__local_t *l, int code, const char *msg);

/* Every rank, seated: len bytes of each rank's, in rank order into all,
 * over the group (an exchange in shared memory, with the group's liveness:
 * a dead peer fails it at once, and a poisoned group fails it on every
 * rank).  0 or a code with the message set. */
MUSTER_HIDDEN int muster__local_agree(muster__local_t *l, const void *mine, void *all, size_t len);

/* Leave and forget the group (after a failed call: every rank does). */
MUSTER_HIDDEN void muster__local_drop(muster__local_t *l);

/* The comm closes: drop the group, free the staging region and l. */
MUSTER_HIDDEN void muster__local_close(muster__local_t *l);

#endif
