/*
 * providers/scalapack/slInt.h - private to the scalapack provider.
 *
 * One collective_solve, on every rank (scalapack.c):
 *   1. check the call and this rank's piece, choose the grid and the tile
 *      (grid.c), allocate the 2-D pieces, then agree (agree.c: one
 *      allgather through the bootstrap; every rank learns every rank's
 *      verdict, so all return the same code and message or all go on);
 *   2. the communicator and BLACS contexts of (bootstrap key, grid), cached
 *      (comms.c);
 *   3. A from the caller's layout into the P x Q block-cyclic one, B from
 *      rank 0 (redist.c, ScaLAPACK's pXgemr2d);
 *   4. the routine (routines.c), then agree on its outcome and on a finite
 *      result;
 *   5. only then write back: A's result into the caller's layout (pXgemr2d),
 *      X and W into every rank's b and w.
 * Nothing is written into the caller's buffers on any error.
 */
#ifndef MUSTER_SL_INT_H
#define MUSTER_SL_INT_H

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>

#include "../common/keyed.h"
#include "muster/provider.h"
#include "slApi.h"

#define SL_HIDDEN __attribute__((visibility("hidden")))

/* ---- contexts and their cache (comms.c) ------------------------------------ */

/* Contexts kept per communicator.  One call uses up to 4 (the compute grid,
 * the caller's, the 1 x R line pXgemr2d runs over, rank 0 alone); the rest
 * keep grids of earlier calls (other MUSTER_SCALAPACK_GRID values). */
#define SL_MAX_GRIDS 8

typedef struct sl_grid {
  int nprow, npcol;
  sl_int ctxt;    /* -1 on a process outside the grid */
  unsigned stamp; /* the call that used it last (least recently used goes first) */
} sl_grid_t;

/* Everything made for one bootstrap key: our duplicate of the bootstrap's
 * communicator (so BLACS' table of system handles never shares a slot with
 * the application's own use of that communicator), its BLACS system handle
 * and the grids made from it. */
typedef struct sl_comm {
  muster__keyed_t link; /* first: the entry of ctx->comms (keyed.h) */
  MPI_Comm parent; /* the bootstrap's communicator, as given */
  int size;
  MPI_Comm dup;
  sl_int sys;
  int ngrids;
  sl_grid_t grids[SL_MAX_GRIDS];
} sl_comm_t;

#define SL_MAX_LIVE 64 /* calls of one process inside collective_solve at once */

typedef struct sl_ctx {
  pthread_mutex_t lock; /* one collective_solve at a time per process: BLACS
                           keeps global state and is not thread-safe */
  muster__keyed_t *comms; /* sl_comm_t entries, under lock */
  /* The calls inside collective_solve (waiting for lock or running), with
   * their bootstrap ranks: cancel acts on these only, so a cancel that
   * arrives after its call returned does nothing.  Under live_lock, which
   * is never held across anything that blocks. */
  pthread_mutex_t live_lock;
  const muster_collective_call_t *live[SL_MAX_LIVE];
  int live_rank[SL_MAX_LIVE];
  unsigned calls; /* solves so far (under lock): stamps grid use     */
} sl_ctx_t;

/* MPI initialized and not finalized (MPI_Initialized / MPI_Finalized may be
 * called at any time, from any thread). */
SL_HIDDEN int sl_mpi_usable(void);
/* The cached communicator of boot (created on first use: collective over
 * the bootstrap's communicator).  0 or a code with the message in err. */
SL_HIDDEN int sl_comm_get(sl_ctx_t *c, const muster_bootstrap_t *boot, sl_comm_t **out, char *err,
                          size_t errlen);
/* 1 when boot's key is cached for boot's communicator (no MPI call). */
SL_HIDDEN int sl_comm_cached(sl_ctx_t *c, const muster_bootstrap_t *boot);
/* The context of a P x Q row-major grid over cm (collective the first time;
 * -1 on a rank outside it).  stamp: the calling solve's number, so the
 * grids it holds are not the ones freed when the cache is full. */
SL_HIDDEN sl_int sl_comm_grid(sl_comm_t *cm, int nprow, int npcol, unsigned stamp);
/* Free the cached communicators of key (0: all).  After MPI_Finalize only
 * the memory is freed (no MPI or BLACS call is legal then). */
SL_HIDDEN void sl_comm_release(sl_ctx_t *c, uint64_t key);

/* ---- grid shape and tile (grid.c) ---------------------------------------------- */

/* P x Q for nranks: $MUSTER_SCALAPACK_GRID ("PxQ", P*Q = nranks), else the
 * most square P <= Q with P*Q = nranks.  0 or MUSTER_EINVAL with why. */
SL_HIDDEN int sl_grid_shape(int nranks, int *nprow, int *npcol, char *why, size_t whylen);
/* The square tile for (routine, dtype, n) on P x Q when the caller gives none:
 * the measured table, capped so every grid row and column holds a tile. */
SL_HIDDEN int64_t sl_auto_tile(muster_routine_t routine, muster_dtype_t dtype, int64_t n, int nprow,
                               int npcol);

/* ---- the engine choice (estimate.c) ---------------------------------------------- */

/* muster_provider_v2_t.estimate. */
SL_HIDDEN int sl_estimate(void *ctx, const muster_provider_query_t *q,
                          muster_provider_estimate_t *est);

/* ---- the four precisions (kinds.c) ------------------------------------------------ */

/* ScaLAPACK's entry points for one dtype (letter s, d, c or z). */
typedef struct sl_kind {
  char letter;
  sl_gemr2d_fn *gemr2d;
  sl_tradd_fn *tradd;
  sl_potrf_fn *potrf, *potri;
  sl_potrs_fn *potrs;
  sl_syevd_fn *syevd;                 /* real dtypes, else NULL */
  sl_heevd_fn *heevd;                 /* complex dtypes, else NULL */
  sl_ormtr_fn *ormtr;                 /* pXormtr, pXunmtr */
  sl_getrf_fn *getrf;
  sl_getrs_fn *getrs;
  sl_geqrf_fn *geqrf;
  sl_ormqr_fn *ormqr;                 /* pXormqr, pXunmqr */
  sl_trtrs_fn *trtrs;
  sl_gebs2d_fn *gebs2d, *real_gebs2d; /* the dtype, and its real type (W) */
  sl_gebr2d_fn *gebr2d, *real_gebr2d;
  const void *one, *zero; /* 1 and 0 of the dtype (alpha, beta) */
} sl_kind_t;

/* The entry points of dtype t (a valid MUSTER_F32 .. MUSTER_C128). */
SL_HIDDEN const sl_kind_t *sl_kind(muster_dtype_t t);

/* ---- one call's state ------------------------------------------------------------ */

/* A distributed matrix on this rank: its descriptor and local array. */
typedef struct sl_mat {
  sl_int desc[SL_DLEN];
  void *a;
  int64_t rows, cols; /* local */
} sl_mat_t;

typedef struct sl_call {
  const muster_collective_call_t *cc;
  int64_t *info; /* cc->info, or a local sink when the caller gave none */
  const muster_solve_args_t *args;
  muster_dtype_t t;
  const sl_kind_t *k;
  size_t esz;
  int rank, size;
  int nprow, npcol, myrow, mycol; /* the provider's grid */
  int64_t tile;
  int64_t m;       /* rows of A and B: n, or gels's m (= ldb) */
  int cached;      /* the bootstrap key's communicators were cached      */
  int cache_split; /* ...on some ranks only (set by sl_agree)           */
  int planned;     /* arguments valid, grid and tile chosen              */
  sl_comm_t *comm;
  sl_int ctxt, caller_ctxt, line_ctxt, root_ctxt;
  sl_mat_t A; /* the provider's copy of A, P x Q, tile x tile blocks */
  sl_mat_t B; /* potrs, getrs: B, then X (n x nrhs); gels: B (m x nrhs),
                 then X in its first n rows                         */
  sl_mat_t Z; /* syevd: eigenvectors; potri: the mirror's copy       */
  void *w;    /* syevd: eigenvalues (replicated)                     */
  double logdet; /* potrs with MUSTER_LOGDET (the same on every rank) */
} sl_call_t;

/* 1 when the routine takes B (potrs, getrs, gels). */
SL_HIDDEN int sl_takes_b(const sl_call_t *s);

/* Write the provider's message (who, what call, then fmt) into cc->err and
 * return code. */
SL_HIDDEN int sl_err(const sl_call_t *s, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* ---- agreement (agree.c) ----------------------------------------------------------- */

/* What one rank found at an agreement point. */
typedef struct sl_verdict {
  int code;         /* 0 or a MUSTER_E* code                            */
  int order;        /* which failure wins when several ranks fail: lower
                       first (SL_ORDER_*), then the first (col, row)    */
  int64_t row, col; /* a NaN/Inf's global place, or -1                   */
  char what[160];   /* the rank's own words for a failure               */
} sl_verdict_t;

enum { SL_ORDER_ARGS = 0, SL_ORDER_NAN_A, SL_ORDER_NAN_B, SL_ORDER_RESULT };

/* Allgather every rank's verdict (and, at the first point, the facts every
 * rank must share) through the bootstrap.  Returns 0 when every rank is
 * fine, else the lowest failing rank's code with one message, the same on
 * every rank.  `first` also checks agreement on the call's arguments. */
SL_HIDDEN int sl_agree(sl_call_t *s, const sl_verdict_t *mine, int first);

/* ---- redistribution (redist.c) -------------------------------------------------------- */

/* Descriptor of the caller's piece (cc->dist) in caller_ctxt. */
SL_HIDDEN void sl_caller_desc(const sl_call_t *s, sl_int *desc);
/* Local size and descriptor of an m x n matrix on the provider's grid;
 * allocates m->a (zeroed).  0 or MUSTER_ENOMEM. */
SL_HIDDEN int sl_mat_alloc(sl_call_t *s, sl_mat_t *m, int64_t rows, int64_t cols);
SL_HIDDEN void sl_mat_free(sl_mat_t *m);
/* Fill the descriptors' context fields once the contexts exist. */
SL_HIDDEN void sl_mat_bind(const sl_call_t *s, sl_mat_t *m);
/* Provider's A <- caller's piece (m x n); provider's B <- rank 0's b (m x nrhs). */
SL_HIDDEN void sl_scatter_inputs(sl_call_t *s);
/* Caller's piece of A <- m (the provider's A or Z: the result). */
SL_HIDDEN void sl_gather_result(sl_call_t *s, const sl_mat_t *m);
/* Every rank's b <- the first n rows of provider's B (X). */
SL_HIDDEN void sl_gather_x(sl_call_t *s);
/* First NaN/Inf (global row, col, column order) in the local array of m,
 * among its first `rows` global rows (lower triangle only when lower),
 * checked on this rank: 1, or 0. */
SL_HIDDEN int sl_find_nonfinite(const sl_call_t *s, const sl_mat_t *m, int lower, int64_t rows,
                                int64_t *row, int64_t *col);
/* The same on the caller's piece of A (all rows; lower triangle when lower). */
SL_HIDDEN int sl_caller_nonfinite(const sl_call_t *s, int lower, int64_t *row, int64_t *col);
/* |m(i,i)| for i < k on every rank of the grid, in d (k doubles): each
 * process fills the diagonal entries it holds, one element-wise sum over
 * the grid (Cdgsum2d) adds the zeros of the others.  Every entry has one
 * non-zero term, so the sums are exact and the same on every rank, in any
 * reduction order: decisions taken from d need no agreement. */
SL_HIDDEN void sl_diag_abs(const sl_call_t *s, const sl_mat_t *m, int64_t k, double *d);
/* scale[k] = max_{i<=k} |m(i,k)| for the n columns of the factor m, on
 * every rank: each process the entries it holds on or above the diagonal,
 * then one element-wise max over the grid (Cdgamx2d: exact, the same on
 * every rank, as sl_diag_abs). */
SL_HIDDEN void sl_upper_col_max(const sl_call_t *s, const sl_mat_t *m, int64_t n, double *scale);

/* ---- routines (routines.c) -------------------------------------------------------------- */

/* Run the routine on s->A (and B, Z, w).  Returns 0, or a code with *info
 * and the message set; collective, the same result on every rank. */
SL_HIDDEN int sl_run(sl_call_t *s);
/* getrs and gels (general.c), as sl_run. */
SL_HIDDEN int sl_run_getrs(sl_call_t *s);
SL_HIDDEN int sl_run_gels(sl_call_t *s);
/* The message for ScaLAPACK's info < 0 (an argument it refused), as a code. */
SL_HIDDEN int sl_illegal(const sl_call_t *s, const char *what, sl_int info);
/* Workspace the routine needs beyond A, B (Z for syevd and potri). */
SL_HIDDEN int sl_needs_z(const muster_solve_args_t *a);

#endif
