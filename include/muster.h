/*
 * muster.h - the public header of the muster runtime.
 *
 * muster lets N participants (threads of one process, or processes of one
 * node), one per device, meet at a named group, publish what they hold, and
 * run a dense solver once, from the leader, with every participant's shard.
 *
 * One header per facility (liburcu style), under muster/: included here
 * are errno.h (codes), launch.h (a group's launcher), types.h (routines,
 * dtypes), providers.h (the providers found, forced and chosen), comm.h
 * (communicators: solves across nodes) and named.h (join, solve, leave in
 * one call); a
 * program includes on its own layout.h, parse.h, segment.h (inspecting
 * segments), store.h (a job's bootstrap over a key-value store it
 * supplies: jax.distributed, torch.distributed), proc.h, and provider.h
 * (the provider ABI).
 *
 * Conventions (libuv style):
 *   - every function returns 0 (MUSTER_OK) or a negative MUSTER_E* code;
 *   - muster_strerror(code) gives the short meaning of a code;
 *   - muster_last_error() gives the detailed, thread-local message of the
 *     last failure of a call made by this thread ("who, what, where");
 *   - public symbols are muster_*, macros MUSTER_*; nothing else is exported.
 *   - the library never exits, aborts or writes to stdout.  Diagnostics go
 *     to stderr only when MUSTER_LOG asks for them.
 *
 * Environment (read at each join/solve unless stated; docs/runtime.md has
 * the exact values).  Unset: the default.  Set but empty or malformed:
 * MUSTER_EINVAL, naming the variable and value, from the call that reads it.
 *   MUSTER_PROVIDER_PATH  1..16 ':'-separated folders searched for providers
 *                         (default: <dir of libmuster.so>/muster/providers)
 *   MUSTER_PROVIDER       force a backend: "lapack", or per routine
 *                         "potrs=cusolvermg,syevd=lapack"; else each call
 *                         goes to the provider expected fastest
 *                         (docs/choice.md)
 *   MUSTER_COST_PATH      ':'-separated folders searched first for the
 *                         providers' cost tables (<backend>.cost)
 *   MUSTER_MPI_LIB        the libmpi the MPI bootstrap dlopen()s
 *                         (docs/bootstrap.md)
 *   MUSTER_MPI_ABORT      1 (default): an MPI wait on a silent rank ends the
 *                         job (MPI_Abort); 0: no check there
 *   MUSTER_MPI_HEARTBEAT  1 (default): the ranks beat over MPI, so a stopped
 *                         rank is told from a long solve; 0: deadlines
 *   MUSTER_TIMEOUT        rendezvous deadline in seconds, 0.001..31536000, or
 *                         "inf" for none (default 60)
 *   MUSTER_JOB            job key that isolates groups of one job from those
 *                         of another on the same node (default: "default")
 *   MUSTER_LOG            error|warn|info|debug (default: silent)
 *   MUSTER_COMM_TEST_FAIL_STAGE  tests only: the rank of a kind store comm
 *                         whose first staging region in the process fails
 */
#ifndef MUSTER_H
#define MUSTER_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define MUSTER_EXTERN __attribute__((visibility("default")))
#else
#define MUSTER_EXTERN
#endif

#define MUSTER_VERSION_MAJOR 0
#define MUSTER_VERSION_MINOR 1
#define MUSTER_VERSION_PATCH 0
#define MUSTER_VERSION_STR_(x) #x
#define MUSTER_VERSION_STR(x) MUSTER_VERSION_STR_(x)
/* "0.1.0": the version of this header */
#define MUSTER_VERSION_STRING                                                            \
  MUSTER_VERSION_STR(MUSTER_VERSION_MAJOR) "." MUSTER_VERSION_STR(MUSTER_VERSION_MINOR) "." \
  MUSTER_VERSION_STR(MUSTER_VERSION_PATCH)
/* major * 1000000 + minor * 1000 + patch: 1000 for 0.1.0, ordered as versions */
#define MUSTER_VERSION_NUMBER \
  (MUSTER_VERSION_MAJOR * 1000000 + MUSTER_VERSION_MINOR * 1000 + MUSTER_VERSION_PATCH)

/* The version of the libmuster this program runs with, which may differ
 * from the header it was built with (SQLite's sqlite3_libversion): the
 * string "0.1.0" (static, never NULL) and its MUSTER_VERSION_NUMBER.
 * A program built against 0.2 that needs 0.2's functions checks
 * muster_version_number() >= 2000 before it calls them. */
MUSTER_EXTERN const char *muster_version(void);
MUSTER_EXTERN int muster_version_number(void);

/* ------------------------------------------------------------------------ */
/* Errors                                                                    */
/* ------------------------------------------------------------------------ */

#include "muster/errno.h" /* MUSTER_ERRNO_MAP: the codes, their meanings and kinds */

/* Short, static description of a code ("peer died"). Never NULL. */
MUSTER_EXTERN const char *muster_strerror(int code);

/* The code's name ("MUSTER_EPEERDEAD"), "MUSTER_OK" for 0, or
 * "MUSTER_E?" for a value that is no code.  Never NULL. */
MUSTER_EXTERN const char *muster_err_name(int code);

/* The kind of failure a code is (muster/errno.h): what adapters map to
 * their framework's errors.  MUSTER_KIND_OK for 0 and MUSTER_KIND_INTERNAL
 * for a value that is no code. */
MUSTER_EXTERN muster_err_kind_t muster_err_kind(int code);

/* Lower-case name of a kind ("numerical"), "internal" for an unknown one. */
MUSTER_EXTERN const char *muster_err_kind_name(muster_err_kind_t kind);

/* Detailed message of the last failure in this thread, e.g.
 * "rank 2 (pid 4242, device 1) died while group potrs.17 waited at barrier 3".
 * Valid until the next muster call in this thread. Never NULL ("" if none). */
MUSTER_EXTERN const char *muster_last_error(void);

/* ------------------------------------------------------------------------ */
/* Groups: named rendezvous of N participants                               */
/* ------------------------------------------------------------------------ */

#define MUSTER_MAX_RANKS        64   /* participants in one group            */
#define MUSTER_MAX_NAME         96   /* group name length, bytes, without NUL */
#define MUSTER_MAX_JOB          64   /* job key length                        */
#define MUSTER_MAX_PAYLOAD    1024   /* bytes one rank publishes per exchange */
#define MUSTER_DEFAULT_TIMEOUT_S 60.0 /* a barrier's deadline when neither
                                         opts->timeout_s nor $MUSTER_TIMEOUT
                                         sets one                            */

typedef struct muster_group muster_group_t;   /* one participant's handle */

typedef struct muster_group_opts {
  const char *job;     /* NULL: $MUSTER_JOB, else "default"                  */
  double timeout_s;    /* <= 0: $MUSTER_TIMEOUT, else MUSTER_DEFAULT_TIMEOUT_S; INFINITY: no
                          deadline; else 0.001..31536000 (MUSTER_EINVAL)    */
  int device;          /* this participant's device ordinal, -1 for host; shown
                          by shmdump and in error messages                     */
} muster_group_opts_t;

/* The deadline a rendezvous gets, by the one precedence rule every part of
 * muster applies (muster_group_join, the launchers, the adapters' own waits,
 * the CLI): requested_s when > 0 (INFINITY: none); else $MUSTER_TIMEOUT
 * (seconds, or "inf": none); else MUSTER_DEFAULT_TIMEOUT_S.  *seconds gets
 * it, 0 meaning no deadline.  MUSTER_EINVAL when requested_s is NaN or out
 * of 0.001..31536000, or MUSTER_TIMEOUT is set but empty or malformed: the
 * message names the variable and quotes its value (never a silent
 * default). */
MUSTER_EXTERN int muster_timeout(double requested_s, double *seconds);

/* Join group `name` as `rank` of `nranks`.  The segment
 * /dev/shm/muster.<uid>.<pidns>.<job>.<name> (<pidns>: this process's pid
 * namespace; muster/segment.h makes and parses these names, docs/runtime.md
 * "Naming" documents them) is created by whoever comes first
 * (O_EXCL, mode 0600), attached by the others; a stale segment whose
 * creator and members are dead is reclaimed.  Every participant must pass
 * the same nranks (else MUSTER_EMISMATCH for all).  name: 1..MUSTER_MAX_NAME
 * bytes, no '/'.  opts may be NULL.  Joining a group this process already
 * has mapped costs no system call (the mapping is cached and the group
 * advanced by a generation).  Returns with *out set; does not wait for the
 * others (the first exchange/barrier does). */
MUSTER_EXTERN int muster_group_join(const char *name, int rank, int nranks,
                                    const muster_group_opts_t *opts,
                                    muster_group_t **out);

/* Publish `len` (<= MUSTER_MAX_PAYLOAD) bytes and wait until every rank has
 * published in this round.  After it returns 0 every rank's payload of this
 * round is readable with muster_group_payload() until this participant's
 * next exchange/barrier.  On a dead or missing peer returns
 * MUSTER_EPEERDEAD / MUSTER_ETIMEDOUT and poisons the group. */
MUSTER_EXTERN int muster_group_exchange(muster_group_t *g, const void *payload,
                                        size_t len);

/* Payload that `rank` published in the last completed exchange. */
MUSTER_EXTERN int muster_group_payload(muster_group_t *g, int rank,
                                       const void **data, size_t *len);

/* Wait until every rank reaches this barrier. Same failure semantics. */
MUSTER_EXTERN int muster_group_barrier(muster_group_t *g);

/* Leader (rank 0) only: publish a status code and up to MUSTER_MAX_PAYLOAD
 * bytes; then everybody's next barrier makes it visible through
 * muster_group_status(). */
MUSTER_EXTERN int muster_group_set_status(muster_group_t *g, int status,
                                          const void *data, size_t len);
MUSTER_EXTERN int muster_group_status(muster_group_t *g, int *status,
                                      const void **data, size_t *len);

/* Poison the group: every participant waiting or arriving later gets
 * `code` (a MUSTER_E* value) and `why` in its message.  Idempotent. */
MUSTER_EXTERN int muster_group_abort(muster_group_t *g, int code, const char *why);

/* Leave the group and free the handle.  The last participant out removes
 * the segment's name; the mapping is kept in a per-process cache only while
 * the group is healthy, so a later join of the same group costs nothing.
 * Always frees `g`; returns the first error seen, if any. */
MUSTER_EXTERN int muster_group_leave(muster_group_t *g);

/* Drop every cached group mapping of this process (also done at exit). */
MUSTER_EXTERN void muster_group_cache_flush(void);

MUSTER_EXTERN int muster_group_rank(const muster_group_t *g);
MUSTER_EXTERN int muster_group_size(const muster_group_t *g);
MUSTER_EXTERN const char *muster_group_name(const muster_group_t *g);
/* The session of this handle: how many times this seat of this group
 * segment has been joined (1, 2, 3, ... for successive calls on a cached
 * group), so all ranks of one call see the same value as long as they all
 * join once per call.  Not the barrier round (the segment's "generation",
 * which shmdump and timeout messages show). */
MUSTER_EXTERN uint64_t muster_group_session(const muster_group_t *g);
/* Deprecated name of muster_group_session (it returned the session count,
 * which the barrier's "generation" made ambiguous); kept for source and
 * binary compatibility. */
MUSTER_EXTERN uint64_t muster_group_generation(const muster_group_t *g)
    __attribute__((deprecated("use muster_group_session")));

#include "muster/launch.h" /* launchers: the process that starts a group's ranks */

/* ------------------------------------------------------------------------ */
/* Solves                                                                    */
/* ------------------------------------------------------------------------ */

#include "muster/types.h" /* MUSTER_ROUTINE_MAP, MUSTER_DTYPE_MAP */

/* Routines (muster_routine_t):
 *   MUSTER_POTRS  A X = B, A SPD/HPD: A overwritten by its Cholesky factor
 *                 (unless MUSTER_NO_FACTOR), B (replicated, n x nrhs)
 *                 overwritten by X
 *   MUSTER_POTRI  A overwritten by the full Hermitian inverse
 *   MUSTER_SYEVD  A overwritten by eigenvectors (unless MUSTER_NO_VECTORS),
 *                 W (replicated) by eigenvalues, ascending
 *   MUSTER_GETRS  A X = B for a general square A (LU with partial
 *                 pivoting): B (replicated, n x nrhs) overwritten by X.  A
 *                 is left as it was: the factors are not returned (their
 *                 row pivots would not travel back); MUSTER_NO_FACTOR lets a
 *                 provider factor A in place instead (A unspecified after).
 *                 Singular A: MUSTER_ESINGULAR, res->info = k (1-based),
 *                 the first pivot with |U(k,k)| <= 2 n eps max_{i<=k}
 *                 |U(i,k)| (an exact zero included; docs/routines.md),
 *                 B untouched.
 *   MUSTER_GELS   least squares min ||A X - B||_2 for a tall A of full
 *                 column rank: A is m x n with m >= n, B (replicated) m x
 *                 nrhs in, X (n x nrhs) out in B's first n rows (rows
 *                 n .. m-1 of B afterwards: unspecified, may differ
 *                 between ranks).  m is
 *                 ldb: B must be packed (ldb = m on every rank) and lda >= m.
 *                 m travels in ldb because muster_solve_args_t and
 *                 muster_shard_t are embedded in the frozen provider ABI
 *                 (muster/provider_v1.h) and cannot grow.  A is left as
 *                 it was (MUSTER_NO_FACTOR: unspecified).  A rank-deficient
 *                 A (R's diagonal has an exact zero, or |R(k,k)| <=
 *                 m * eps * max|R(i,i)|) is refused: MUSTER_ESINGULAR with
 *                 res->info = k, never a silently wrong X.
 *   MUSTER_GEQRF  A = Q R, MUSTER_GESVD  A = U S V^H, MUSTER_POLAR  A = U_p H
 *                 (right polar: U_p with orthonormal columns or rows, H
 *                 Hermitian positive semidefinite), for any m x n A (tall or
 *                 wide; m = ldb, B packed, lda >= m).  The factors are the
 *                 outputs: the one shaped like A overwrites A, the others go
 *                 into B (replicated, packed one after another), the
 *                 singular values into W: muster_routine_outputs()
 *                 (muster/layout.h) is the rule and gives the least nrhs
 *                 (columns of m rows) B must have; nrhs 0 and b NULL are
 *                 fine when B gets nothing (gesvd with MUSTER_NO_VECTORS).
 *                 A rank-deficient A is no error (Q R = A and U S V^H = A
 *                 still hold; polar's U_p is then one of several).  NaN/Inf
 *                 in A: MUSTER_ENONFINITE, nothing written.
 * The rows of A, B and X of each routine: muster_routine_shape()
 * (muster/layout.h).  Every routine distributes A by columns: n columns
 * over the ranks, each rank holding all rows of its columns.
 * Element types (muster_dtype_t): MUSTER_F32, MUSTER_F64, MUSTER_C64,
 * MUSTER_C128. */

typedef enum muster_mem {
  MUSTER_MEM_HOST = 1,   /* host memory (threads: any; processes: see
                            muster_shard_alloc)                          */
  MUSTER_MEM_CUDA = 2    /* CUDA device memory of shard.device             */
} muster_mem_t;

typedef enum muster_layout {
  MUSTER_LAYOUT_BLOCK = 0,  /* contiguous column blocks, as frameworks hold
                               them: rank r holds columns [col0, col0+ncols) */
  MUSTER_LAYOUT_CYCLIC = 1  /* already 1-D column block-cyclic with `tile`  */
} muster_layout_t;

#define MUSTER_NO_VECTORS   0x1u   /* syevd: eigenvalues only; gesvd: values only */
/* potrs: the caller wants X only; A's content after the call is unspecified
 * (a provider may leave the factor in its own layout: cusolvermg then skips
 * moving it back from cuSolverMg's block-cyclic layout, 5% of a large potrs). */
#define MUSTER_NO_FACTOR    0x2u
/* potrs: also return log det A (real: A is HPD), computed from the
 * Cholesky factor's diagonal at no extra pass over A, into shard.w on
 * every rank: ONE real (float for f32/c64, double for f64/c128), as syevd
 * writes its eigenvalues.  Only providers that declare MUSTER_CAP_LOGDET
 * in their routines bits are chosen for it.  Any other routine: EINVAL. */
#define MUSTER_LOGDET       0x4u
/* geqrf: the full m x m Q (and R m x n); gesvd: the full U (m x m) and V^H
 * (n x n).  Without it the thin factors (k = min(m, n) columns of Q or U,
 * k rows of V^H).  Where each lands: muster_routine_outputs (muster/layout.h). */
#define MUSTER_FULL_MATRICES 0x8u
#define MUSTER_FLAGS_KNOWN  (MUSTER_NO_VECTORS | MUSTER_NO_FACTOR | MUSTER_LOGDET | MUSTER_FULL_MATRICES)

/* A provider's routines bits may carry, besides (1u << routine), what it
 * can do beyond a routine's plain form (bits above every routine value). */
#define MUSTER_CAP_LOGDET   (1u << 31) /* potrs with MUSTER_LOGDET          */

typedef struct muster_solve_args {
  muster_routine_t routine;
  muster_dtype_t dtype;
  int64_t n;             /* global order of A (gels: its columns), > 0      */
  int64_t nrhs;          /* potrs, getrs, gels: columns of B, >= 1; else
                            ignored                                         */
  int64_t tile;          /* T_A; 0: the provider's choice                   */
  muster_layout_t layout;
  unsigned flags;        /* MUSTER_NO_VECTORS, MUSTER_NO_FACTOR             */
  const char *provider;  /* backend name, or NULL: $MUSTER_PROVIDER, else the
                            runtime's choice (docs/choice.md)               */
} muster_solve_args_t;

typedef struct muster_shard {
  muster_mem_t mem;
  int device;            /* CUDA ordinal for MEM_CUDA, -1 for host          */
  void *a;               /* this rank's columns of A, column-major          */
  int64_t lda;           /* leading dimension of a, >= n (gels, geqrf,
                            gesvd, polar: >= m)                             */
  int64_t col0;          /* LAYOUT_BLOCK: first global column held          */
  int64_t ncols;         /* columns held (LAYOUT_CYCLIC: local padded width) */
  void *b;               /* potrs, getrs: n x nrhs, ldb; gels: m x nrhs in,
                            X in its first n rows out; every rank holds all
                            of B and every rank gets all of X back          */
  int64_t ldb;           /* >= n; gels: = m, the rows of A and B (>= n);
                            geqrf, gesvd, polar: = m (>= 1), B the factors'
                            output (muster_routine_outputs)                 */
  void *w;               /* syevd: n eigenvalues (float for f32/c64, double
                            for f64/c128), written on every rank; potrs
                            with MUSTER_LOGDET: one real, log det A; gesvd:
                            min(m,n) singular values, descending           */
  void *stream;          /* cudaStream_t the caller's data is ordered on;
                            NULL: the legacy default stream                 */
} muster_shard_t;

#define MUSTER_MAX_REASON 256 /* bytes of muster_solve_result_t.reason     */
/* Bytes that hold any reason of muster_provider_choose whole; a reason cut
 * to fit a smaller buffer (res.reason) ends in "...". */
#define MUSTER_MAX_REASON_FULL 2048

typedef struct muster_solve_result {
  int64_t info;          /* LAPACK-style: 0 ok; k > 0 e.g. leading minor k not
                            positive definite                               */
  int64_t tile;          /* tile actually used                              */
  double seconds;        /* provider time (wall): the leader's for a leader
                            provider, this rank's for a collective one      */
  char provider[32];     /* backend that ran (or was chosen, when the call
                            failed after the choice)                        */
  char reason[MUSTER_MAX_REASON]; /* why that backend: "forced by
                            MUSTER_PROVIDER", "fastest: 0.012 s (cost table
                            cusolverdn.cost: ...) vs cusolvermg 0.019 s", ...
                            (docs/choice.md); "" when no choice was made    */
} muster_solve_result_t;

/* Collective solve: every rank of `g` calls it with its own shard.  All must
 * agree on args (routine, dtype, n, nrhs, tile, layout, provider) or all get
 * MUSTER_EMISMATCH.  The leader chooses the provider from every rank's
 * facts (docs/choice.md) and every rank follows: a leader provider runs once
 * on the leader with every shard, a collective one on every rank with its
 * own piece.  Status and info reach everyone.  info > 0 is returned as the
 * routine's code with res->info = k (muster/types.h's `info` column:
 * MUSTER_ENOTPD "not positive definite (leading minor k)" for potrs/potri,
 * MUSTER_ESINGULAR for getrs/gels). */
MUSTER_EXTERN int muster_solve(muster_group_t *g, const muster_solve_args_t *args,
                               const muster_shard_t *mine,
                               muster_solve_result_t *res);

/* Single-caller solve: one thread holds every shard (PyTorch, CuPy, C).
 * shards[r] is rank r's shard. */
MUSTER_EXTERN int muster_solve_all(const muster_solve_args_t *args, int nshards,
                                   const muster_shard_t *shards,
                                   muster_solve_result_t *res);

/* Process mode on the CPU: host shards must live in memory the leader can
 * map.  Allocate them here (a shared segment owned by this process, freed by
 * muster_shard_free or at exit; nothing remains in /dev/shm after). */
MUSTER_EXTERN int muster_shard_alloc(size_t bytes, void **out);
MUSTER_EXTERN void muster_shard_free(void *p);

/* Parse/print names: "potrs" <-> MUSTER_POTRS, "f64" <-> MUSTER_F64. */
MUSTER_EXTERN int muster_routine_from_name(const char *s, muster_routine_t *out);
MUSTER_EXTERN const char *muster_routine_name(muster_routine_t r);
MUSTER_EXTERN int muster_dtype_from_name(const char *s, muster_dtype_t *out);
MUSTER_EXTERN const char *muster_dtype_name(muster_dtype_t t);
MUSTER_EXTERN size_t muster_dtype_size(muster_dtype_t t);
/* Bytes of the real part type (syevd's eigenvalues): 4 or 8; 0 if unknown. */
MUSTER_EXTERN size_t muster_dtype_real_size(muster_dtype_t t);

/* ------------------------------------------------------------------------ */
/* 1-D column block-cyclic layout (cuSolverMg's)                            */
/* ------------------------------------------------------------------------ */
/* Column tile j (columns [j*T, (j+1)*T)) lives on rank j % R at local tile
 * j / R.  Every rank stores ceil(ceil(N/T)/R) tiles (padded); see
 * docs/layout.md for a drawn example. */

/* The columns rank `rank` holds in the block layout of n columns over
 * nranks ranks: [*col0, *col0 + *ncols) (muster/layout.h has the rule).
 * MUSTER_EINVAL for n, nranks or rank out of range. */
MUSTER_EXTERN int muster_layout_block_cols(int64_t n, int nranks, int rank, int64_t *col0,
                                           int64_t *ncols);

/* Local padded column count of each rank for (n, tile, nranks). */
MUSTER_EXTERN int64_t muster_layout_local_cols(int64_t n, int64_t tile, int nranks);

/* The global column each local column of rank `rank`'s cyclic shard holds,
 * or -1 for a padding column: gcols[l] for l in [0, local_cols), of which
 * only the first cap are written.  Returns local_cols (which may exceed cap)
 * or a negative code (MUSTER_EINVAL for n, nranks, rank or cap out of
 * range, MUSTER_ETILE for a tile < 1 or too large).  Any tile >= 1 defines
 * the layout; muster_layout_check_tile says whether the runtime takes it. */
MUSTER_EXTERN int64_t muster_layout_cyclic_cols(int64_t n, int64_t tile, int nranks, int rank,
                                                int64_t *gcols, int64_t cap);

/* Check `tile` for (n, nranks) as block shards of (n/nranks rounded up)
 * columns.  MUSTER_ETILE with a message naming the nearest valid smaller and
 * larger tiles when it is not valid. */
MUSTER_EXTERN int muster_layout_check_tile(int64_t n, int64_t tile, int nranks);

/* All valid tiles for (n, nranks), ascending; returns the count (may exceed
 * cap; only cap are written) or a negative code. */
MUSTER_EXTERN int64_t muster_layout_valid_tiles(int64_t n, int nranks,
                                                int64_t *tiles, int64_t cap);

/* Host relayout of one full matrix: block shards <-> cyclic shards.
 * block[r]: rank r's contiguous columns (lda >= n each, layout by equal
 * blocks of ceil(n/R) columns, the last possibly shorter); cyc[r]: rank r's
 * cyclic buffer of muster_layout_local_cols() columns, same lda. */
MUSTER_EXTERN int muster_layout_block_to_cyclic(muster_dtype_t t, int64_t n,
                                                int64_t lda, int64_t tile, int nranks,
                                                void *const *block, void *const *cyc);
MUSTER_EXTERN int muster_layout_cyclic_to_block(muster_dtype_t t, int64_t n,
                                                int64_t lda, int64_t tile, int nranks,
                                                void *const *cyc, void *const *block);

#include "muster/providers.h" /* the providers found, forced and chosen; a solve's reason */
#include "muster/comm.h"  /* communicators: solves whose ranks share no /dev/shm */
#include "muster/named.h" /* join, solve, leave in one call; the named abort */

/* ------------------------------------------------------------------------ */
/* Running one thread per device                                             */
/* ------------------------------------------------------------------------ */

/* Start one thread per entry of devices[] (ndevices >= 1), with that CUDA
 * device current for the whole thread (host: pass -1 entries), and call
 * fn(rank, device, arg) in each; waits for all and returns the first
 * non-zero return of fn (or an error of its own).  What ICICLE's RunOnDevice
 * is for Go: the way a plain C program drives muster in threads mode. */
typedef int (*muster_device_fn)(int rank, int device, void *arg);
MUSTER_EXTERN int muster_run_on_devices(int ndevices, const int *devices,
                                        muster_device_fn fn, void *arg);

#ifdef __cplusplus
}
#endif
#endif /* MUSTER_H */
