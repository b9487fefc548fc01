/*
 * muster/provider_v2.h - provider ABI version 2.  FROZEN once released: a
 * change is a new version.  Include muster/provider.h, not this.
 *
 * A v2 provider exports the data symbol "muster_provider_v2" of type
 * muster_provider_v2_t with abi_version = MUSTER_PROVIDER_V2_ABI and
 * layout_rules = MUSTER_LAYOUT_RULES_VERSION.  It is one of two kinds:
 *
 *   MUSTER_PROVIDER_LEADER      as in v1: the group's leader calls solve()
 *                               once with every rank's shard (reached
 *                               through threads, CUDA IPC or mapped host
 *                               memory).  One node.
 *   MUSTER_PROVIDER_COLLECTIVE  every rank calls collective_solve() with its
 *                               own piece of the matrix (a muster_dist_t
 *                               describes how it is laid out) and a
 *                               bootstrap through which the provider builds
 *                               its communicator (BLACS context, NCCL
 *                               communicator).  Any number of nodes.
 *
 * Choosing: unless a provider is forced, the runtime sends each call to the
 * provider expected to be fastest.  It asks every candidate's estimate()
 * whether it can run the call here (memory, devices, span of the ranks) and
 * how long it would take; a provider without a model answers seconds < 0
 * and the runtime uses the provider's cost table file (<backend>.cost next
 * to the .so, see docs/choice.md), else its priority.  The leader decides,
 * from facts every rank published, and every rank follows, so the ranks of
 * one call never disagree about the provider.
 *
 * Threading and errors: as in v1 (muster/provider_v1.h).  collective_solve
 * runs on every rank's calling thread; cancel() is called from another
 * thread of the runtime while it runs.
 */
#ifndef MUSTER_PROVIDER_V2_H
#define MUSTER_PROVIDER_V2_H

#include "../muster.h"
#include "layout.h"
#include "provider_v1.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MUSTER_PROVIDER_V2_ABI 2
#define MUSTER_PROVIDER_SYMBOL_V2 "muster_provider_v2"

/* muster_provider_v2_t.kind */
#define MUSTER_PROVIDER_LEADER 1u
#define MUSTER_PROVIDER_COLLECTIVE 2u

/* Where the ranks of one call live (muster_provider_query_t.span, and the
 * spans a provider supports in muster_provider_v2_t.spans). */
#define MUSTER_SPAN_THREADS 0x1u   /* threads of one process               */
#define MUSTER_SPAN_PROCESSES 0x2u /* processes of one node                */
#define MUSTER_SPAN_NODES 0x4u     /* processes of several nodes           */

/* ---- choosing -------------------------------------------------------------- */

/* One call as the leader sees it when choosing: what every rank agreed on
 * and published.  Arrays have nranks entries, in rank order; they may be
 * NULL when the facts are not known (muster_provider_choose() asked before
 * any shard exists): a provider then assumes the call fits. */
typedef struct muster_provider_query {
  muster_routine_t routine;
  muster_dtype_t dtype;
  int64_t n, nrhs;            /* nrhs 0 unless potrs                         */
  int64_t tile;               /* the caller's tile, 0: the provider's choice */
  muster_layout_t layout;     /* how the caller holds A                      */
  unsigned flags;             /* MUSTER_NO_VECTORS, MUSTER_NO_FACTOR         */
  muster_mem_t mem;           /* where the caller's shards are; 0 in a
                                 muster_provider_choose() query: any kind   */
  int nranks;
  int ndevices;               /* CUDA memory: distinct GPUs among the ranks
                                 (by PCI bus id, so processes that each see
                                 "device 0" count right); host memory: the
                                 number of ranks (each a CPU participant)   */
  int nnodes;                 /* distinct hosts among the ranks, >= 1        */
  unsigned span;              /* one MUSTER_SPAN_* bit                        */
  const int *devices;         /* each rank's device, -1 host                */
  const uint64_t *free_bytes; /* free memory of each rank's device when the
                                 rank published (cudaMemGetInfo), 0 unknown
                                 (and 0 for host memory)                    */
  const uint64_t *total_bytes;/* total memory of each rank's device, 0 unknown */
} muster_provider_query_t;

/* A provider's answer to "can you run this here, and how fast?". */
typedef struct muster_provider_estimate {
  double seconds;             /* expected wall time of the whole call; < 0:
                                 no model (the cost table, else the priority,
                                 decides)                                   */
  uint64_t peak_bytes;        /* most memory it needs on one device, 0 if
                                 not known (shown in the choice's reason)    */
  char note[120];             /* how it was estimated, or why it cannot run */
} muster_provider_estimate_t;

/* ---- collective calls -------------------------------------------------------- */

/* The out-of-band bootstrap a collective provider builds its communicator
 * with (UCC's ucc_oob_coll is the model): a blocking allgather of a few
 * hundred bytes among the ranks of one solve.  The runtime supplies it: the
 * muster group (one node), MPI (processes started by mpirun/srun; libmpi is
 * dlopen()ed, never linked), or one an adapter provides (a framework's
 * key-value store).  The provider never writes network code either. */
typedef struct muster_bootstrap {
  int rank, size;
  const char *kind;           /* "group", "mpi" or "store"                   */
  uint64_t key;               /* identifies this set of ranks (the same
                                 processes in the same job): equal on every
                                 rank, different for another set, never 0.
                                 A provider may cache a communicator per
                                 (key, grid) and must free it when
                                 release_comms names the key (docs/bootstrap.md
                                 says when the runtime does)                 */
  void *mpi_comm;             /* kind "mpi": address of the MPI_Comm the
                                 ranks share (an MPI_Comm object, whatever
                                 the MPI), else NULL                        */
  void *ctx;
  /* Every rank passes len bytes in `mine` (the same len on every rank, any
   * size: the runtime splits it into rounds); `all` receives size * len
   * bytes, rank r's at r * len.  Waits with the runtime's deadline and
   * liveness checks (kind "group"), MPI's semantics ("mpi") or the
   * adapter's ("store").  0, or a negative MUSTER_E* code with a message in
   * err.  Every rank must make the same sequence of allgather calls. */
  int (*allgather)(void *ctx, const void *mine, void *all, size_t len, char *err,
                   size_t errlen);
} muster_bootstrap_t;

/* *info of a collective call refused alike on every rank before any engine
 * traffic, returned with the refusal's code (collective_solve below). */
#define MUSTER_PROVIDER_REFUSED_ALIKE (-1)

/* One rank's part of a collective solve. */
typedef struct muster_collective_call {
  muster_solve_args_t args;   /* routine, dtype, n, nrhs, flags; tile: the
                                 caller's (0: the provider chooses its own)  */
  const muster_shard_t *mine; /* this rank's buffers: a laid out as `dist`
                                 says; b (potrs, n x nrhs, ldb) and w (syevd,
                                 n reals) replicated on every rank, in and
                                 out, as for leader providers               */
  muster_dist_t dist;         /* the layout of mine->a (muster/layout.h)     */
  const muster_bootstrap_t *boot;
  int64_t *info;              /* out: LAPACK-style info, the same on every rank (provider.h: > 0) */
  int64_t *tile_used;         /* out: the tile (block size) it ran with, 0
                                 when that means nothing for it           */
  char *err;                  /* out: message on failure                    */
  size_t errlen;
} muster_collective_call_t;

/* ---- the provider ------------------------------------------------------------ */

typedef struct muster_provider_v2 {
  uint32_t abi_version;  /* MUSTER_PROVIDER_V2_ABI                           */
  uint32_t struct_size;  /* sizeof(muster_provider_v2_t)                     */
  uint32_t layout_rules; /* MUSTER_LAYOUT_RULES_VERSION it was built with    */
  uint32_t kind;         /* MUSTER_PROVIDER_LEADER or _COLLECTIVE            */
  const char *name;      /* backend name, [a-z0-9_]+, e.g. "cusolverdn"      */
  const char *description;
  int priority;          /* among providers without an estimate or a cost
                            table, higher wins                              */
  unsigned routines;     /* bits (1u << MUSTER_POTRS) | ...                   */
  unsigned dtypes;       /* bits (1u << MUSTER_F32) | ...                     */
  unsigned mem_kinds;    /* bits (1u << MUSTER_MEM_HOST) | ...                */
  unsigned spans;        /* MUSTER_SPAN_* it can run                         */
  int max_shards;        /* most ranks one call may have, 0: no limit        */

  /* As in v1. */
  int (*probe)(char *why, size_t whylen);
  int (*init)(void **ctx, char *err, size_t errlen);
  void (*fini)(void *ctx);

  /* Can this call run here, and how long would it take?  Called where the
   * choice is made (the leader of the call, before anything is exported;
   * or muster_provider_choose() in any thread).  0 with *est filled, or a
   * negative code (MUSTER_EUNSUPPORTED: does not fit in memory, wrong
   * devices, ...) with the reason in est->note.  Cheap (no allocation on a
   * device).  May be NULL: always runnable, no model. */
  int (*estimate)(void *ctx, const muster_provider_query_t *q, muster_provider_estimate_t *est);

  /* Leader kind: as in v1 (tile resolution, the leader's solve, and the
   * hooks every participant runs around it).  NULL for a collective one. */
  int64_t (*choose_tile)(void *ctx, muster_routine_t routine, muster_dtype_t dtype, int64_t n,
                         int nshards);
  int (*solve)(void *ctx, const muster_provider_call_t *call);
  int (*local_export)(void *ctx, const muster_shard_t *mine, int process_mode, void *blob,
                      size_t cap, size_t *len, char *err, size_t errlen);
  int (*leader_import)(void *ctx, int rank, int64_t peer_pid, const void *blob, size_t len,
                       muster_shard_t *shard, char *err, size_t errlen);
  void (*forget_peer)(void *ctx, int64_t peer_pid);

  /* Collective kind: every rank calls it, each with its own piece.  It
   * returns the same code and info on every rank.  NULL for a leader one.
   * A failure is taken as one that may leave peers inside the engine: the
   * runtime aborts the group or store set the ranks met over.  A call the
   * provider refused alike on every rank before any engine traffic (its
   * own check, agreed over the bootstrap) is the exception: it returns its
   * code with *info = MUSTER_PROVIDER_REFUSED_ALIKE, the same code and
   * info on every rank, and the set stays usable for the next call. */
  int (*collective_solve)(void *ctx, const muster_collective_call_t *call);

  /* Called from another thread of the runtime (its watchdog) while
   * collective_solve(ctx, call) runs on this rank, at most once per call,
   * when the runtime learned that a peer died or the group was poisoned:
   * make that collective_solve return soon with `code` and `why` in its
   * message, e.g. through ncclCommAbort.  Returning `code` is what marks
   * the call as ended by its cancel: the runtime's error then says why,
   * and the call's message, which only words the cancel, is not quoted; a
   * call that returns another code failed on its own, and its message is
   * quoted after why.  `call` is the pointer that
   * collective_solve received (it tells concurrent calls of one process
   * apart).  A cancel may cross collective_solve's return: it can arrive
   * just after that call returned (the pointer is still valid then), and
   * must then do no harm (ignore a call that is not running).  Any
   * communicator that call touched is then unusable and must not be cached.
   * May be NULL for a provider whose engine fails by itself when a peer
   * dies (MPI_ERRORS_ARE_FATAL under mpirun). */
  void (*cancel)(void *ctx, const muster_collective_call_t *call, int code, const char *why);

  /* Free the communicators cached for bootstrap key `key` (0: all).  The
   * runtime calls it, never while a collective_solve of that key runs:
   * with the key of a muster_comm_t the caller closes (muster_comm_close);
   * with the key of a group whose collective solve failed (a peer died, the
   * call was cancelled: that set of ranks will not meet again as it was);
   * and with 0 just before fini when the provider is unloaded.  May be
   * NULL. */
  void (*release_comms)(void *ctx, uint64_t key);
} muster_provider_v2_t;

#ifdef __cplusplus
}
#endif
#endif /* MUSTER_PROVIDER_V2_H */
