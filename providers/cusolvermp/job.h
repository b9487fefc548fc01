/*
 * providers/cusolvermp/job.h - one collective call while it runs (solve.c
 * drives it, routines.c holds potrs and syevd, general.c getrs, gels.c
 * gels, qr.c geqrf, svd.c gesvd and polar).
 */
#ifndef MUSTER_MP_JOB_H
#define MUSTER_MP_JOB_H

#include "mp.h"

typedef struct mp_job {
  mp_ctx_t *c;
  const muster_collective_call_t *call;
  const muster_solve_args_t *a;
  const muster_shard_t *s;
  const muster_bootstrap_t *boot;
  cuc_err_t *E;
  mp_run_t *run;
  mp_comm_t *m;
  const mp_api_t *api;
  mp_shape_t shape;
  size_t esz;          /* bytes of one element                           */
  int64_t cap;         /* elements of each relayout scratch buffer         */
  mp_layout_t user;    /* the caller's layout (row-major ranks)          */
  mp_layout_t solver;  /* cuSOLVERMp's (column-major ranks)              */
  int myrow, mycol;    /* this rank in the solver's grid                 */
  int64_t lr, lc, lld; /* its local piece there                          */
  void *A;             /* cuSOLVERMp's A: the caller's buffer in place   */
  int in_place;
  mp_solverDesc_t descA, descB, descQ;
  int64_t panel;       /* potrs, getrs: right-hand sides per solve call;
                          gels: all of them (B's descriptor: Q^H B is one
                          call)                                            */
  int64_t tri_panel;   /* gels: right-hand sides per triangular solve (the
                          unpivoted cusolverMpGetrs on R: potrs's limit)  */
  int64_t lrb, lcb;    /* potrs, getrs: local piece of one B panel         */
  size_t dwork, hwork; /* workspace bytes                                  */
  double logdet;       /* potrs with MUSTER_LOGDET: this rank's part of log
                          det A, then (after the last agreement) all of it */
  int deferred;        /* a failure every rank must return together (NaN
                          met on this rank's part of U's diagonal), given
                          to the last agreement instead of returned at once:
                          the other ranks are still in NCCL calls         */
  int64_t diag_bad;    /* getrs: the first (global, 0-based) entry of U's
                          diagonal on this rank that is under the
                          singularity rule (providers/common/singular.h: an
                          exact 0 included) or NaN/Inf, INT64_MAX none;
                          diag_zero: it is under the rule.  The last
                          agreement takes the earliest over the ranks: a
                          pivot under the rule there is a singular A
                          (info), whatever NaN/Inf followed from it
                          (cusolverMpGetrf reports no info for a zero
                          pivot that NaN follows: seen on one H200,
                          cuSOLVERMp 0.8).
                          gels: the first |R(k,k)| under the rank rule,
                          with diag_zero 1                                 */
  int diag_zero;
  int agreed_failure;  /* the last mp_agree failed on a rank's own rc,
                          known to every rank (not a failed exchange)     */
  double rmax;         /* gels: the largest |R(i,i)| on this rank, then
                          (after an agreement) over every rank            */
  int64_t fr, fc, fld; /* geqrf: B's factor's local piece in MP_BUF_Q
                          (mp_qr_piece): rows, columns, leading dimension */
  int64_t idx_rows;    /* local rows listed first in MP_BUF_IDX (the
                          columns' list follows): upload_lists, routines.c */
  mp_svd_dims_t sd;    /* gesvd, polar (svd.c): U's and V^H's (H's) global
                          shapes; their local pieces: */
  int64_t ur, uc, uld, vr, vc, vld;
  mp_gesvdDesc_t gesvd_desc; /* Gesvd's and Polar's own descriptors     */
  mp_polarDesc_t polar_desc;
} mp_job_t;

/* Move this rank's part of a plan (redist.c): src (device, leading
 * dimension lds) to dst (ldd), through j->m's send / receive scratch of
 * j->cap elements each, NCCL send/recv with every peer (the rank itself: a
 * local gather and scatter).  Ordered on the stream (not waited for).  0,
 * or a code with j->E. */
MP_HIDDEN int mp_redist(mp_job_t *j, const mp_plan_t *p, const void *src, int64_t lds, void *dst, int64_t ldd);

/* The solve on B shared by potrs and getrs (routines.c): B in panels of
 * j->panel columns, each rank's 2-D piece picked out of its full copy,
 * solve(j, panel's descriptor, w) on it, then X to every rank's b; waits
 * for the GPU after every panel. */
typedef cusolverStatus_t (*mp_solve_panel_fn)(mp_job_t *j, mp_solverDesc_t db, int64_t w);
MP_HIDDEN int mp_solve_b(mp_job_t *j, mp_solve_panel_fn solve, const char *what);
/* Its two halves (routines.c): B's columns [j0, j0 + w) from the caller's
 * b (every rank's full copy) into this rank's piece of MP_BUF_B (solver
 * layout, w columns); and X, the first n rows of the w columns in MP_BUF_B,
 * back into columns [j0, j0 + w) of every rank's b (one NCCL sum).  Both
 * are ordered on the stream, not waited for.  0, or a code with E. */
MP_HIDDEN int mp_b_in(mp_job_t *j, int64_t j0, int64_t w);
MP_HIDDEN int mp_x_out(mp_job_t *j, int64_t j0, int64_t w);
/* Every rank's copy of a rows x cols matrix the solver's layout spreads
 * (the job's tile and grid, like A: global (i, j) on grid (i / tile % P,
 * j / tile % Q)): this rank's local piece at `piece` (ld), scattered into
 * dst (rows x cols, packed, device memory: zeroed first) and summed over
 * the ranks by one NCCL allreduce (each entry has one owner).  rows may
 * pass the job's m (gesvd's full V^H of a wide A): the piece's local rows
 * are this rank's of [0, rows) in the solver's layout.  Ordered on
 * the stream, not waited for (routines.c). */
MP_HIDDEN int mp_replicate(mp_job_t *j, const void *piece, int64_t ld, int64_t rows, int64_t cols, void *dst);
/* A descriptor of an m x n matrix on the job's grid and tile (routines.c). */
MP_HIDDEN int mp_desc(mp_job_t *j, mp_solverDesc_t *d, int64_t m, int64_t n, int64_t lld);

/* A routine's workspace when it runs a second call: the larger of each. */
static inline void mp_work_max(size_t *dw, size_t *hw, size_t d2, size_t h2) {
  if (d2 > *dw) *dw = d2;
  if (h2 > *hw) *hw = h2;
}

/* getrs (general.c): prepare adds the pivots and sizes the workspace of
 * getrf and getrs into *dw, *hw; run factors and solves.  Their contract is
 * mp_routine_prepare's / mp_routine_run's. */
MP_HIDDEN int mp_getrs_prepare(mp_job_t *j, size_t *dw, size_t *hw);
MP_HIDDEN int mp_getrs_run(mp_job_t *j);
/* gels (gels.c), the same contract: B's buffers (mp_routine_prepare
 * made them, one panel of all nrhs), tau, workspace of geqrf, ormqr and
 * the triangular solve. */
MP_HIDDEN int mp_gels_prepare(mp_job_t *j, size_t *dw, size_t *hw);
/* geqrf (qr.c), the same contract: tau, B's factor's piece (and Q's
 * descriptor), workspace of Geqrf and Orgqr. */
MP_HIDDEN int mp_geqrf_prepare(mp_job_t *j, size_t *dw, size_t *hw);
MP_HIDDEN int mp_geqrf_run(mp_job_t *j);
/* gesvd and polar (svd.c, cuSOLVERMp 0.9), the same contract: S, U and
 * V^H (gesvd) or H (polar) pieces, their descriptors, the workspace. */
MP_HIDDEN int mp_svd_prepare(mp_job_t *j, size_t *dw, size_t *hw);
MP_HIDDEN int mp_svd_run(mp_job_t *j);
/* The QR both share (qr.c): cusolverMpGeqrf on j->A (m x n), tau into
 * MP_BUF_TAU, waited for, its info checked (MUSTER_EPROVIDER).  0, or a
 * code with E. */
MP_HIDDEN int mp_qr_factor(mp_job_t *j);
/* NaN/Inf in this rank's piece x (device, ld, rows x cols) of `what`:
 * MUSTER_ENONFINITE naming the rank and the local place into j->deferred
 * (unless one is there), for an agreement (general.c).  0, or a code. */
MP_HIDDEN int mp_scan(mp_job_t *j, const void *x, int64_t ld, int64_t rows, int64_t cols, const char *what);
/* NaN/Inf in X, the first n rows of this rank's b (general.c; the same X
 * on every rank): MUSTER_ENONFINITE into j->deferred, for the last
 * agreement.  0, or a code with E. */
MP_HIDDEN int mp_check_x(mp_job_t *j);
MP_HIDDEN int mp_gels_run(mp_job_t *j);

/* Every rank's rc, the same result on every rank (solve.c): a failing
 * rank's code and message; else info (when given) the largest, or the
 * earliest pivot under the singularity rule on U's diagonal over the ranks
 * (diag_bad; then rc 0); sum
 * (when given) the sum of every rank's; j->rmax the largest of every
 * rank's.  A bootstrap allgather: call it
 * only where every rank is (no NCCL call in flight). */
MP_HIDDEN int mp_agree(mp_job_t *j, int rc, const char *phase, int64_t *info, double *sum);

/* This rank's part of the factor's diagonal (j->A, solver layout), copied
 * to the host: *d (malloc'ed, n entries at most; the caller frees it) gets
 * *count entries, in increasing global order; *global (NULL: not wanted;
 * malloc'ed, the caller frees it) their global indices, 0-based.  Waits
 * for the stream. */
MP_HIDDEN int mp_local_diag(mp_job_t *j, void **d, int64_t **global, int64_t *count);

/* The routines (routines.c).  prepare: descriptors, workspace sizes and
 * every buffer, before any rank talks over NCCL (so a refusal, e.g. of
 * memory, is agreed on by every rank).  run: from A in the solver's layout
 * to the results in the caller's buffers, waiting for the GPU.  0 (info in
 * *call->info), or a code with E. */
MP_HIDDEN int mp_routine_prepare(mp_job_t *j);
MP_HIDDEN int mp_routine_run(mp_job_t *j);
MP_HIDDEN void mp_routine_done(mp_job_t *j);

/* Move A between the caller's layout and the solver's (solve.c):
 * to_solver 1: caller's a -> j->A; 0: `from` (solver layout, lld j->lld)
 * -> caller's a.  Ordered on the stream. */
MP_HIDDEN int mp_job_move(mp_job_t *j, int to_solver, const void *from);

/* The device info word after the stream drained. */
MP_HIDDEN int mp_job_info(mp_job_t *j, int *info);

#endif
