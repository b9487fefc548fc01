/*
 * providers/cusolvermg/leader_solve.h - one solve on the leader: its state
 * (cmg_solve_t; not a "job", which is MUSTER_JOB's namespace of groups), its
 * preparation (leader_solve.c), the one way a cuSolverMg routine is called
 * (mgcall.c) and the routine drivers (potrs.c, potri.c, syevd.c).
 * Private to the provider; everything runs with ctx->mu held.
 */
#ifndef MUSTER_CMG_JOB_H
#define MUSTER_CMG_JOB_H

#include "cmgInt.h"
#include "muster/layout.h"

#define CMG_SYEVD_MAX_TILE 1024 /* cuSolverMg's syevd refuses larger tiles */

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
 * "Potrf") MUSTER_ENOTPD (leading minor k); other k > 0 "did not
 * converge", k < 0 "parameter -k refused": MUSTER_EPROVIDER. */
CMG_HIDDEN int cmg_solve_info(cmg_solve_t *j, const char *what, int info);

/* ---- mgcall.c: bufferSize -> workspace -> call, for every routine ----------------- */

typedef enum { CMG_MG_POTRF, CMG_MG_POTRS, CMG_MG_POTRI, CMG_MG_SYEVD } cmg_mg_op_t;

/* One cuSolverMg call (lower triangle of the solve's A: j->mats, j->descA)
 * and what only its routine takes. */
typedef struct cmg_mg_call {
  cmg_mg_op_t op;
  int nrhs;                    /* potrs: columns of B                      */
  void **b;                    /* potrs: B's pointer per grid column       */
  cudaLibMgMatrixDesc_t descB; /* potrs                                    */
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
CMG_HIDDEN int cmg_potrs(cmg_solve_t *j);  /* potrs.c: L in A, X in every rank's b */
CMG_HIDDEN int cmg_potri(cmg_solve_t *j);  /* potri.c: the full Hermitian inverse  */
CMG_HIDDEN int cmg_syevd(cmg_solve_t *j);  /* syevd.c: vectors in A, values in w   */

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
