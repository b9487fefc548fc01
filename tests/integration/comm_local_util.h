/*
 * tests/integration/comm_local_util.h - R forked ranks of one kind store
 * comm on this node (a store in a folder, every key a file: kv_util.h),
 * for the tests of muster_solve_comm's one-node route
 * (runtime/solve/comm_local.c): test_comm_local.c and
 * tests/fault/test_comm_local_faults.c.
 */
#ifndef COMM_LOCAL_UTIL_H
#define COMM_LOCAL_UTIL_H

#include <sys/types.h>

#include "muster.h"

#define CL_MAX_RANKS 4

/* What one rank does over its comm; shared: the test's MAP_SHARED area. */
typedef void (*cl_rank_fn)(muster_comm_t *c, int rank, int R, void *shared);

/* A fresh provider folder (tp_env_fresh: MUSTER_PROVIDER_PATH) with lapack
 * and the collective test provider colllapack for potrs, getrs and syevd,
 * and a store folder in it; dir gets the provider folder. */
void cl_setup(char *dir, size_t cap);

/* Cost tables lapack.cost and colllapack.cost in dir: for R ranks (host
 * memory: ndevices = R), every routine of cl_setup in f64 and c128, at n,
 * nrhs 2 (potrs, getrs) or 0 (syevd); lapack_fast says which is faster. */
void cl_write_tables(const char *dir, int R, int64_t n, int lapack_fast);

/* Fork R ranks: each opens store set "local" in dir/store (timeout_s) and a
 * kind store comm "local" over it, calls fn, closes both and exits 0;
 * cached (shared memory, R entries, or NULL) gets each rank's count of
 * cached groups once its comm closed.  pids: R entries. */
void cl_fork(const char *dir, int R, double timeout_s, cl_rank_fn fn, void *shared, int *cached, pid_t *pids);

/* The store allgathers this process (a rank of cl_fork) began: the store
 * rounds its calls took. */
long cl_store_rounds(void);

/* Reap the ranks (skip: a rank killed by the test, reaped anyway); every
 * other one must have exited 0. */
void cl_wait(int R, const pid_t *pids, int skip);

/* MAP_SHARED zeroed memory of bytes, and its release. */
void *cl_shared(size_t bytes);
void cl_unshare(void *p, size_t bytes);

/* The same random A (SPD for potrs, Hermitian for syevd, general for
 * getrs) and B (n x nrhs) on every rank and in the test, from seed; both
 * column-major with ld n, malloc'ed. */
void cl_problem(muster_routine_t r, muster_dtype_t t, int64_t n, int64_t nrhs, uint64_t seed, void **a, void **b);

/* Rank `rank`'s shard of the block layout of (a, b) over R ranks: copies
 * in muster_shard_alloc memory when shm (the leader reaches it as it is),
 * else malloc (the route stages it); w of n reals.  cl_shard_free undoes. */
muster_shard_t cl_shard(muster_dtype_t t, int64_t n, int64_t nrhs, const void *a, const void *b, int R, int rank,
                        int shm);
void cl_shard_free(muster_shard_t *s, int shm);

#endif
