/*
 * runtime/solve/desc.h - the solve descriptor: what one rank publishes about its
 * part of a call (arguments, shard, process, device facts), checked the
 * same way on every rank so that all of them reach the same verdict, and
 * turned into the query the engine choice reads.
 *
 * Used by both solve protocols: muster_solve over a group (runtime/solve/solve.c,
 * the descriptor travels in a group exchange, followed by a provider's
 * export blob) and muster_solve_comm over a bootstrap (runtime/solve/comm.c).
 */
#ifndef MUSTER_DESC_H
#define MUSTER_DESC_H

#include <stdint.h>

#include "muster/parse.h"
#include "muster/provider.h"
#include "solve/shard.h"

#define MUSTER__DESC_MAGIC UINT64_C(0x34435344524d534d) /* "MSMRDSC4" */

/* desc.layout of a 2-D piece (muster_solve_comm_dist): not a
 * muster_layout_t, never seen outside the runtime. */
#define MUSTER__LAYOUT_DIST 100

/* A 2-D piece's layout as published (muster_dist_t less m, n and lld). */
typedef struct muster__desc_grid {
  int64_t mb, nb;
  int32_t nprow, npcol, myrow, mycol;
} muster__desc_grid_t;

typedef struct muster__desc {
  uint64_t magic;
  int32_t problem; /* 0, or the code of what this rank found wrong alone */
  int32_t routine, dtype, layout, mem, device;
  uint32_t flags, bloblen; /* bloblen: bytes of export blob after it    */
  int64_t n, nrhs, tile, col0, ncols, lda, ldb, pid; /* a 2-D piece: col0 0,
                              ncols its local columns (0 with no local rows) */
  muster__desc_grid_t grid; /* a 2-D piece: blocks, grid, place (else 0)  */
  uint64_t a, b, w;        /* addresses in the publisher's process        */
  muster__shard_ref_t ra, rb, rw;
  uint64_t free_bytes, total_bytes; /* its device's memory, 0 unknown/host */
  uint64_t host;           /* identity of its node (hostname, boot id)    */
  uint64_t meet;           /* where it can meet others in a muster group:
                              its segment folder, pid namespace and uid
                              (muster_solve_comm only, comm_local.h; 0 not
                              told or none)                               */
  uint64_t start_time;     /* its process's start time (proc.h)           */
  char busid[16];          /* its device's PCI bus id, "" unknown/host     */
  char want[MUSTER_MAX_BACKEND + 1]; /* provider asked for by args ("" none) */
  char provider[32];       /* the provider it expects the leader to choose,
                              its blob made for it ("" none)               */
  char msg[200];           /* the problem, when problem != 0               */
} muster__desc_t;

/* How many reals the call writes into w: n for syevd, 1 for potrs with
 * MUSTER_LOGDET, else 0 (w unused). */
MUSTER_HIDDEN int64_t muster__desc_w_count(const muster__desc_t *d);

/* Record a problem in d (the first one is kept); returns code. */
MUSTER_HIDDEN int muster__desc_problem(muster__desc_t *d, int code, const char *fmt, ...)
    MUSTER_PRINTF(3, 4);

/* Fill d from (args, mine): arguments checked alone, shard refs (host
 * memory), device facts (CUDA memory).  A problem goes into d, it is not
 * returned: every rank must still publish so that all can report it. */
MUSTER_HIDDEN void muster__desc_describe(const muster_solve_args_t *args, const muster_shard_t *mine,
                                         muster__desc_t *d);

/* The same for a 2-D piece: mine->a holds this rank's blocks of A as dist
 * says (lld = mine->lda); args->layout, mine->col0 and ncols are not read;
 * dist checked alone (desc_dist.c).  dist NULL: muster__desc_describe. */
MUSTER_HIDDEN void muster__desc_describe_dist(const muster_solve_args_t *args, const muster_shard_t *mine,
                                              const muster_dist_t *dist, muster__desc_t *d);

/* desc_dist.c: the 2-D piece of one rank checked alone (into d's problem),
 * given the rows of A (m); sets d's dist fields, layout, col0, ncols. */
MUSTER_HIDDEN void muster__desc_set_dist(const muster_dist_t *dist, int64_t m, int64_t tile, int64_t lda,
                                         muster__desc_t *d);

/* desc_dist.c: every rank's 2-D piece together: one grid of R ranks, the
 * same blocks, rank r at grid place (r / npcol, r % npcol).  0 or
 * MUSTER_EINVAL / MUSTER_EMISMATCH naming the rank. */
MUSTER_HIDDEN int muster__desc_validate_dist(const muster__desc_t *const *ds, int R);

/* Identical on every rank given the same descriptors: the first problem
 * any rank published, disagreements with rank 0, bad shards, the layout.
 * lens[r]: bytes rank r published (descriptor + blob); pass NULL when the
 * transport has fixed-size slots (no blob).  0 or the code, with a
 * message naming the rank. */
MUSTER_HIDDEN int muster__desc_validate(const muster__desc_t *const *ds, const size_t *lens, int R);

/* The choice's view of a validated call (muster/provider_v2.h).  The
 * arrays (R entries each) are the caller's; q points into them. */
typedef struct muster__query {
  muster_provider_query_t q;
  int devices[MUSTER_MAX_RANKS];
  uint64_t free_bytes[MUSTER_MAX_RANKS], total_bytes[MUSTER_MAX_RANKS];
} muster__query_t;
MUSTER_HIDDEN void muster__desc_query(const muster__desc_t *const *ds, int R, muster__query_t *out);

/* NULL when a leader provider can reach every rank's shard from rank 0's
 * process, else why not (host shards of another process that are not
 * muster_shard_alloc memory; ranks on other nodes).  why: buffer. */
MUSTER_HIDDEN const char *muster__desc_leader_reach(const muster__desc_t *const *ds, int R, char *why,
                                                    size_t cap);

/* FNV-1a of len bytes at p, continuing from h (start with
 * MUSTER__HASH_START): the runtime's one hash of ids and keys. */
#define MUSTER__HASH_START UINT64_C(1469598103934665603)
MUSTER_HIDDEN uint64_t muster__hash(uint64_t h, const void *p, size_t len);

/* This node's identity: a hash of its hostname and boot id, cached. */
MUSTER_HIDDEN uint64_t muster__host_id(void);

#endif
