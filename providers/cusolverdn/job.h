/*
 * providers/cusolverdn/job.h - one solve on the leader: its state (the
 * job), its checks and the gather (job.c), the copies between the ranks'
 * buffers and the target (move.c), the one way a cusolverDn routine is
 * called (dncall.c), and the routine drivers (potrs.c, potri.c, syevd.c,
 * general.c, factors.c with qr.c, svd.c and polar.c).
 * Private to the provider; everything runs with ctx->mu held.
 */
#ifndef MUSTER_DN_JOB_H
#define MUSTER_DN_JOB_H

#include "dnInt.h"
#include "muster/layout.h"

typedef struct dn_job {
  dn_ctx_t *c;
  const muster_provider_call_t *call;
  const muster_solve_args_t *a;
  cuc_err_t *E;
  int R;                   /* ranks                                         */
  int dev;                 /* the target GPU (leader's ordinal)             */
  dn_dev_t *d;             /* its cache                                     */
  size_t esz, rsz;         /* bytes of an element, of an eigenvalue         */
  muster_layout_geom_t L;  /* the caller's layout (block: tile = S, so runs
                              are whole blocks)                             */
  dn_shape_t shape;        /* for the memory rule                           */
  muster_shape_t sh;       /* rows of A, B and X (muster_routine_shape)     */
  int home;                /* lowest rank whose shard is on the target, -1  */
  void *A;                 /* what cusolverDn works on: the caller's buffer
                              (in place) or d->mat                          */
  int64_t lda;
} dn_job_t;

/* ---- job.c ------------------------------------------------------------------------ */

/* Check the call (1..MUSTER_MAX_RANKS ranks, CUDA memory, a, lda >= n,
 * b/ldb for potrs, w for syevd, shards where the block layout puts them or
 * cyclic shards wide enough, the options), pick the target and fill the
 * job.  MUSTER_EINVAL / ETILE / EUNSUPPORTED naming the rank. */
DN_HIDDEN int dn_job_validate(dn_job_t *j);

/* The target's handle and streams, peer access between it and every
 * rank's GPU, and A on the target: the caller's buffer when in place, else
 * d->mat (grown under the memory rule) filled by the gather. */
DN_HIDDEN int dn_job_prepare(dn_job_t *j);

/* The end of a solve, whatever rc: every stream of the target drained (no
 * copy outlives the call), the first failure's message kept, the held
 * bytes published (DN_STAT_TARGET_BYTES).  Returns the call's result. */
DN_HIDDEN int dn_job_finish(dn_job_t *j, int rc);

/* ---- move.c: copies between the ranks and the target ------------------------------- */

/* Columns [c0, c1) of the matrix between the ranks' shards (the caller's
 * layout) and buf on the target (leading dimension ld; its column 0 is
 * global column c0): to_ranks 0 gathers into buf, 1 scatters from it.
 * Issued on the copy streams, one per rank modulo DN_COPY_STREAMS; waits
 * for them before returning. */
DN_HIDDEN int dn_move_cols(dn_job_t *j, int to_ranks, void *buf, int64_t ld, int64_t c0, int64_t c1);

/* B (sh.b_rows x nrhs) from rank 0's b into dst (ld ldd) on the target. */
DN_HIDDEN int dn_fetch_rhs(dn_job_t *j, void *dst, int64_t ldd);

/* B on the target, where the solve overwrites it with X: the home rank's
 * b when one rank's shard lies there (rank 0's B copied into it unless it
 * is rank 0: B is taken from rank 0, as every provider does), else the
 * context's rhs buffer (grown under the memory rule). */
DN_HIDDEN int dn_rhs_on_target(dn_job_t *j, void **b, int64_t *ldb);

/* Replicate a result held on the target to every rank: X (src, ld lds,
 * sh.x_rows rows) into the first rows of each b, W (src, count reals:
 * syevd's n eigenvalues, potrs's one log det, gesvd's k singular values)
 * into each w, count packed elements from src into the start of each b
 * (the factor routines' B); the rank whose buffer is src itself is
 * skipped.  Waits for the copies. */
DN_HIDDEN int dn_replicate_x(dn_job_t *j, const void *src, int64_t lds);
DN_HIDDEN int dn_replicate_w(dn_job_t *j, const void *src, int64_t count);
DN_HIDDEN int dn_replicate_b(dn_job_t *j, const void *src, int64_t count);

/* Wait for the solver stream (host side). */
DN_HIDDEN int dn_sync_solver(dn_job_t *j);

/* ---- dncall.c: bufferSize -> workspace -> call -> info, for every routine ------------ */

typedef enum { DN_POTRF, DN_POTRS, DN_POTRI, DN_SYEVD, DN_GETRF, DN_GETRS, DN_GEQRF, DN_ORMQR, DN_ORGQR, DN_GESVD } dn_op_t;

/* One cusolverDn call on j->A (Cholesky and syevd: its lower triangle;
 * getrf, geqrf: all of it, m x n) and what only its routine takes.  getrf
 * and getrs keep their pivots, geqrf, ormqr and orgqr their Householder
 * scalars, in the target's aux buffer. */
typedef struct dn_call {
  dn_op_t op;
  void *b;                 /* potrs, getrs, ormqr: right-hand sides on the
                              target; orgqr: the reflectors in, Q out;
                              gesvd: the matrix it factors (destroyed)      */
  int64_t ldb, nrhs;
  cusolverEigMode_t jobz;  /* syevd                                          */
  void *w;                 /* syevd: eigenvalues; gesvd: singular values    */
  int64_t rows, cols, k;   /* orgqr: Q's rows and columns, reflectors;
                              gesvd: the shape of b (rows >= cols)           */
  signed char jobu, jobvt; /* gesvd: 'N', 'S' or 'A'                         */
  void *u, *vt;            /* gesvd: the vectors, ld ldu and ldvt            */
  int64_t ldu, ldvt;
} dn_call_t;

/* Run m on the solver stream: its bufferSize, the cached workspaces grown
 * (cuc_grow_checked: MUSTER_ENOMEM when they do not fit), the call, its info copied
 * back and read (the stream is synchronized).  *info gets the routine's
 * info; the return is 0 or a failed status (MUSTER_ECUDA naming the call);
 * info is judged by the driver (dn_info). */
DN_HIDDEN int dn_run(dn_job_t *j, const dn_call_t *m, int *info);

/* A routine's info into *call->info: 0 ok; k > 0 from potrf
 * MUSTER_ENOTPD (leading minor k); from getrf MUSTER_ESINGULAR (U(k,k) is
 * exactly zero); from syevd "did not converge" MUSTER_EPROVIDER; k < 0
 * "parameter -k refused" MUSTER_EPROVIDER. */
DN_HIDDEN int dn_info(dn_job_t *j, dn_op_t op, int info);

/* The name of the cusolverDn function behind op ("cusolverDnXpotrf"). */
DN_HIDDEN const char *dn_op_name(dn_op_t op);

/* ---- the drivers: what the lapack provider gives, in the ranks' buffers ------------- */

DN_HIDDEN int dn_potrf(dn_job_t *j); /* potrs.c: L in j->A, checked (info, NaN/Inf) */
DN_HIDDEN int dn_potrs(dn_job_t *j); /* potrs.c: L in A unless MUSTER_NO_FACTOR, X in every b */
DN_HIDDEN int dn_potri(dn_job_t *j); /* potri.c: the full Hermitian inverse in A */
DN_HIDDEN int dn_syevd(dn_job_t *j); /* syevd.c: vectors in A, values in every w */
DN_HIDDEN int dn_getrs(dn_job_t *j); /* general.c: X in every b, A never written back */
DN_HIDDEN int dn_gels(dn_job_t *j);  /* general.c: X in every b's first n rows, likewise */
/* geqrf, gesvd, polar: the factors where muster_routine_outputs puts them,
 * written only once every factor is made and found finite (factors.c
 * runs them: qr.c, svd.c, polar.c) */
DN_HIDDEN int dn_factors(dn_job_t *j);


/* ---- small kernels on the target (scan.c): NaN/Inf checks, the log det ----------------- */

/* The first NaN/Inf (column-major order) of an m x k matrix of type dtype
 * (a muster_dtype_t; f32/f64 for eigenvalues) with leading dimension ld on
 * the target, as (row, column); both -1 for none.  The diagonal of an
 * n x n matrix: m = 1, k = n, ld = lda + 1 (the column is the index). */
DN_HIDDEN int dn_scan_finite(dn_job_t *j, int dtype, const void *x, int64_t ld, int64_t m, int64_t k,
                             int64_t *row, int64_t *col);

/* The same on input: MUSTER_ENONFINITE naming the first NaN/Inf element
 * (1-based row and column) of `what` ("A", "B"), else 0. */
DN_HIDDEN int dn_refuse_nonfinite(dn_job_t *j, const char *what, const void *x, int64_t ld, int64_t rows,
                                  int64_t cols);

/* potrs with MUSTER_LOGDET: 2 sum log L(i,i) of the factor in j->A (its
 * real diagonal, summed in double on the target) into out on the target,
 * one real of the dtype's real type; waits for it. */
DN_HIDDEN int dn_logdet(dn_job_t *j, void *out);

#endif
