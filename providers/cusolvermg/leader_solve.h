/*
 * providers/cusolvermg/leader_solve.h - one solve on the leader: its state
 * (cmg_solve_t; not a "job", which is MUSTER_JOB's namespace of groups), its
 * preparation (leader_solve.c), the one way a cuSolverMg routine is called
 * (mgcall.c) and the routine drivers (potrs.c, getrs.c, potri.c, syevd.c).
 * Private to the provider; everything runs with ctx->mu held.
 */
#ifndef MUSTER_CMG_JOB_H
#define MUSTER_CMG_JOB_H

#include "cmgInt.h"
#include "muster/layout.h"

#define CMG_SYEVD_MAX_TILE 1024 /* cuSolverMg's syevd refuses larger tiles */
#define CMG_GETRF_MAX_TILE 512  /* and its getrf: CUSOLVER_STATUS_INVALID_VALUE
                                   (info -6) for tiles 600, 1007, 1024, 2048
                                   on one H200, CUDA 13.0 (2026-11-23)     */

/* Most right-hand-side columns one cusolverMgPotrs call may take.  On 2 or
 * more GPUs cuSolverMg (CUDA 13.0; measured 2026-11-21 on 2 x H200 with
 * tests/gpu/mg-rhs-probe, which repeats the measurement) solves the first
 * 2048 columns of B right and every later column wrong (relative errors
 * 1e-7 .. 1e-4, whatever the tile), and cusolverMgPotri, which shares the
 * defect, returns a wrong trailing block of the inverse for n > 2048.
 * Calls of at most 2048 columns are exact.  On one GPU both are right. */
#define CMG_RHS_PANEL 2048

typedef struct cmg_solve {
  cmg_ctx_t *c;
  const muster_provider_call_t *call;
  const muster_solve_args_t *a;
  cuc_err_t *E;
  int R;                     /* ranks = GPUs                           */
  int ids[CMG_MAX_DEV];      /* rank r's device ordinal                */
  size_t esz;                /* bytes per element                      */
  int64_t lda;               /* every rank's                           */
  muster_layout_geom_t L;    /* n, tile, R                             */
  cmg_devset_t *set;
  cmg_plan_t to_cyc, to_blk;
  void *user[CMG_MAX_DEV];   /* the ranks' A                           */
  void *work[CMG_MAX_DEV];   /* copy plans: the work buffers           */
  void *mats[CMG_MAX_DEV];   /* what cuSolverMg works on               */
  cudaLibMgMatrixDesc_t descA;
} cmg_solve_t;

/* ---- leader_solve.c ------------------------------------------------------------------------ */

/* Check the call (1..16 distinct GPUs, n and nrhs in int range, the tile,
 * one lda >= n, b for potrs, w for syevd, block shards where the block
 * layout puts them or cyclic shards wide enough) and fill j->R, ids, esz,
 * lda, L, user.  MUSTER_EINVAL / ETILE / EUNSUPPORTED naming the rank. */
CMG_HIDDEN int cmg_solve_validate(cmg_solve_t *j);

/* j->mats: the caller's buffers, or for the block layout, A moved into
 * cuSolverMg's cyclic layout (plan.h; copy plans through cached work
 * buffers).  Also builds the plan back (j->to_blk). */
CMG_HIDDEN int cmg_solve_prepare(cmg_solve_t *j);

/* The end of a solve, whatever rc (the result so far): A moved back into
 * the caller's block layout, even after a failure (MUSTER_NO_FACTOR lets a
 * successful potrs skip it), keeping the first failure's message; every
 * device synchronized; the plans freed.  Returns the call's result. */
CMG_HIDDEN int cmg_solve_finish(cmg_solve_t *j, int rc);

/* cudaDeviceSynchronize on every rank's device. */
CMG_HIDDEN int cmg_solve_sync(cmg_solve_t *j);

/* A routine's info into *call->info: 0 ok; k > 0 from a potrf (what names
 * "Potrf") MUSTER_ENOTPD (leading minor k), from a getrf ("Getrf")
 * MUSTER_ESINGULAR (U(k,k) = 0); other k > 0 "did not converge", k < 0
 * "parameter -k refused": MUSTER_EPROVIDER. */
CMG_HIDDEN int cmg_solve_info(cmg_solve_t *j, const char *what, int info);

/* The n diagonal entries of the factor in j->mats (cuSolverMg's cyclic
 * layout, on every GPU) into host (n elements of the dtype): one strided
 * copy per tile.  Every device must be idle (cmg_solve_sync). */
CMG_HIDDEN int cmg_solve_diag(cmg_solve_t *j, void *host);

/* ---- mgcall.c: bufferSize -> workspace -> call, for every routine ----------------- */

typedef enum { CMG_MG_POTRF, CMG_MG_POTRS, CMG_MG_POTRI, CMG_MG_SYEVD, CMG_MG_GETRF, CMG_MG_GETRS } cmg_mg_op_t;

/* One cuSolverMg call (the solve's A: j->mats, j->descA) and what only its
 * routine takes. */
typedef struct cmg_mg_call {
  cmg_mg_op_t op;
  int nrhs;                    /* potrs, getrs: columns of B               */
  void **b;                    /* potrs, getrs: B's pointer per grid column */
  cudaLibMgMatrixDesc_t descB; /* potrs, getrs                             */
  int **ipiv;                  /* getrf, getrs: each GPU's row pivots      */
  cusolverEigMode_t jobz;      /* syevd                                    */
  void *w;                     /* syevd: eigenvalues (pinned host)         */
  /* A failed status with info <= 0: the code to return instead of
   * MUSTER_ECUDA naming the call (potrf: find the failing pivot).  NULL:
   * MUSTER_ECUDA whatever info says. */
  int (*on_failure)(cmg_solve_t *j, cusolverStatus_t st, int info);
} cmg_mg_call_t;

/* The workspace m needs on every device, in elements (its _bufferSize). */
CMG_HIDDEN int cmg_mg_lwork(cmg_solve_t *j, const cmg_mg_call_t *m, int64_t *lwork);

/* Every device's cached workspace grown to at least lwork elements. */
CMG_HIDDEN int cmg_mg_reserve(cmg_solve_t *j, int64_t lwork);

/* Run m: its bufferSize, the workspace grown (cmg_mg_reserve), the call
 * with rank 0's device current, its info checked (cmg_solve_info). */
CMG_HIDDEN int cmg_mg_run(cmg_solve_t *j, const cmg_mg_call_t *m);

/* ---- the drivers: A (j->mats) gets what the lapack provider gives -------------------- */

CMG_HIDDEN int cmg_potrf(cmg_solve_t *j);  /* potrs.c: L in A                      */
/* potrs.c: L in A, X in every rank's b, with MUSTER_LOGDET log det A in
 * every rank's w */
CMG_HIDDEN int cmg_potrs(cmg_solve_t *j);
CMG_HIDDEN int cmg_getrs(cmg_solve_t *j);  /* getrs.c: X in every rank's b        */
CMG_HIDDEN int cmg_potri(cmg_solve_t *j);  /* potri.c: the full Hermitian inverse  */
CMG_HIDDEN int cmg_syevd(cmg_solve_t *j);  /* syevd.c: vectors in A, values in w   */

/* ---- potrs.c: what potrs and getrs share ------------------------------------------------ */

/* Run m (CMG_MG_POTRS or _GETRS, after the factorization) on rank 0's B in
 * chunks of at most min(tile, CMG_RHS_PANEL) columns (m->b, nrhs, descB
 * set here); every device synchronized after. */
CMG_HIDDEN int cmg_solve_b(cmg_solve_t *j, cmg_mg_call_t *m);
/* X (rank 0's B) copied into every other rank's b (on their streams 0). */
CMG_HIDDEN int cmg_x_to_ranks(cmg_solve_t *j);
/* Every device synchronized, then the first k (0-based) where the factor's
 * diagonal is `what` (cudacommon's diag.h: CUC_DIAG_*) into *first, -1 when none. */
CMG_HIDDEN int cmg_solve_diag_first(cmg_solve_t *j, int what, int64_t *first);

/* ---- estimate.c ------------------------------------------------------------------------ */

/* The estimate hook (muster/provider_v2.h). */
CMG_HIDDEN int cmg_estimate(void *ctx, const muster_provider_query_t *q, muster_provider_estimate_t *est);
/* The model's seconds for a routine it models (getrs), else -1. */
CMG_HIDDEN double cmg_model_seconds(muster_routine_t routine, muster_dtype_t dtype, int64_t n, int ndevices);

/* ---- tile.c -------------------------------------------------------------------------- */

/* The choose_tile hook: the measured table (docs/tiles.md), or
 * MUSTER_CMG_TILE, fitted by cmg_fit_tile. */
CMG_HIDDEN int64_t cmg_choose_tile(void *ctx, muster_routine_t routine, muster_dtype_t dtype, int64_t n,
                                   int nshards);
/* want moved to a tile that is valid for the block layout and, if it can,
 * divides the block width S (whole tiles move as single copies); S itself
 * (no relayout at all) when want reaches it (syevd: at most
 * CMG_SYEVD_MAX_TILE). */
CMG_HIDDEN int64_t cmg_fit_tile(muster_routine_t routine, int64_t want, int64_t n, int nshards);

#endif
