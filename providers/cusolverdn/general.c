/*
 * providers/cusolverdn/general.c - the routines on a general A (job.h):
 *   getrs  Xgetrf, U's diagonal and column scales judged on the host
 *          (providers/common/singular.h, the lapack provider's rule: an
 *          exact zero, or the rounding-level pivot two equal columns
 *          leave), Xgetrs (LU with partial pivoting, the n pivots in the
 *          target's aux buffer);
 *   gels   Xgeqrf, R's diagonal judged on the host (providers/common/rank.h,
 *          the lapack provider's rule), <t>ormqr/unmqr (B <- Q^H B), then
 *          cuBLAS trsm (R X = the first n rows);
 * on the target's copy of A, or, under MUSTER_NO_FACTOR with the one rank
 * on the target, on the caller's buffer (dn_in_place).  A is never written
 * back: without the pivots / Householder scalars the factors are of no use
 * to the caller (muster.h).  NaN/Inf in A or B is refused before anything
 * runs, as the lapack provider does (these factorizations read all of A),
 * and a NaN/Inf X is refused rather than returned.  X goes to every rank's
 * b (its first n rows).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "../common/rank.h"     /* muster__rank_deficient */
#include "../common/singular.h" /* muster__lu_singular */
#include "job.h"

/* Refuse NaN/Inf input; B on the target (overwritten with X there). */
static int take_input(dn_job_t *j, dn_call_t *m) {
  int rc = 0;
  CUC_CHECK(dn_refuse_nonfinite(j, "A", j->A, j->lda, j->sh.a_rows, j->a->n));
  CUC_CHECK(dn_rhs_on_target(j, &m->b, &m->ldb));
  CUC_CHECK(dn_refuse_nonfinite(j, "B", m->b, m->ldb, j->sh.b_rows, j->a->nrhs));
out:
  return rc;
}

/* X (the first n rows of b) checked and copied to every rank. */
static int give_x(dn_job_t *j, const dn_call_t *m) {
  int rc = 0;
  int64_t row, col;
  CUC_CHECK(dn_scan_finite(j, (int)j->a->dtype, m->b, m->ldb, j->sh.x_rows, j->a->nrhs, &row, &col));
  if (row >= 0)
    return cuc_fail(j->E, MUSTER_ENONFINITE, "NaN/Inf in the solution X at row %" PRId64 ", column %" PRId64
                    " (A too ill-conditioned?)", row + 1, col + 1);
  rc = dn_replicate_x(j, m->b, m->ldb);
out:
  return rc;
}

/* The aux buffer for n pivots or Householder scalars of `bytes` each. */
static int grow_aux(dn_job_t *j, size_t bytes, const char *what) {
  return cuc_grow_checked(j->dev, &j->d->aux, &j->d->aux_bytes, (size_t)j->a->n * bytes, what, j->E);
}

/* U's first `upto` pivots against the rule of providers/common/singular.h:
 * the column scales from the factor on the target (a kernel, n words back:
 * cudacommon's cuc_upper_colmax), its diagonal copied to the pinned host
 * buffer after the info word and the scan word, judged there. */
static int check_pivots(dn_job_t *j, int64_t upto) {
  int rc = 0;
  cuc_err_t *E = j->E;
  dn_dev_t *d = j->d;
  int64_t n = j->a->n;
  const size_t at = 64; /* past the words of dn_run and dn_scan_finite */
  double *scale = calloc((size_t)n, sizeof *scale), ukk, floor;
  if (!scale) return cuc_fail(E, MUSTER_ENOMEM, "cannot allocate %" PRId64 " column scales", n);
  cuc_cyclic_t whole = {n, 1, 0};
  /* d->scan is free between calls: dn_run's info was read */
  CUC_CHECK(cuc_upper_colmax(j->dev, (int)j->a->dtype, j->A, j->lda, n, n, whole, whole, n, &d->scan,
                             &d->scan_bytes, d->stream, scale, E));
  CUC_CHECK(cuc_grow_checked(-1, &d->hscan, &d->hscan_bytes, at + (size_t)n * j->esz, "U's diagonal", E));
  CUC_CU(j->dev, cudaMemcpy2DAsync((char *)d->hscan + at, j->esz, j->A, (size_t)(j->lda + 1) * j->esz, j->esz,
                                   (size_t)n, cudaMemcpyDeviceToHost, d->stream));
  CUC_CHECK(dn_sync_solver(j));
  int64_t k = muster__lu_singular(j->a->dtype, (char *)d->hscan + at, 1, n, upto, scale, &ukk, &floor);
  if (k >= 0) {
    char what[160];
    muster__lu_singular_text(what, sizeof what, k, ukk, floor);
    *j->call->info = k + 1;
    rc = cuc_fail(E, MUSTER_ESINGULAR, "%s; cusolverDnXgetrf on device %d, A is %" PRId64 " x %" PRId64, what,
                  j->dev, n, n); /* the detail: the runtime words "singular" */
  }
out:
  free(scale);
  return rc;
}

int dn_getrs(dn_job_t *j) {
  int rc = 0, info = 0;
  dn_call_t f = {.op = DN_GETRF}, m = {.op = DN_GETRS, .nrhs = j->a->nrhs};
  CUC_CHECK(take_input(j, &m));
  CUC_CHECK(grow_aux(j, sizeof(int64_t), "the pivots"));
  CUC_CHECK(dn_run(j, &f, &info));
  if (info < 0) CUC_CHECK(dn_info(j, DN_GETRF, info));
  /* info = k > 0: U(k,k) is exactly zero; an earlier pivot may fail the
   * rule (the columns before k are factored), else k is named */
  CUC_CHECK(check_pivots(j, info > 0 ? info - 1 : j->a->n));
  CUC_CHECK(dn_info(j, DN_GETRF, info));
  CUC_CHECK(dn_run(j, &m, &info));
  CUC_CHECK(dn_info(j, DN_GETRS, info));
  rc = give_x(j, &m);
out:
  return rc;
}

/* R's diagonal (n entries, ld + 1 apart in j->A) copied to the pinned host
 * buffer after the info word and the scan word, and judged there. */
static int check_rank(dn_job_t *j) {
  int rc = 0;
  cuc_err_t *E = j->E;
  dn_dev_t *d = j->d;
  int64_t n = j->a->n, m = j->sh.a_rows;
  const size_t at = 64; /* past the words of dn_run and dn_scan_finite */
  CUC_CHECK(cuc_grow_checked(-1, &d->hscan, &d->hscan_bytes, at + (size_t)n * j->esz, "R's diagonal", E));
  CUC_CU(j->dev, cudaMemcpy2DAsync((char *)d->hscan + at, j->esz, j->A, (size_t)(j->lda + 1) * j->esz, j->esz,
                                   (size_t)n, cudaMemcpyDeviceToHost, d->stream));
  CUC_CHECK(dn_sync_solver(j));
  double r, floor;
  int64_t k = muster__rank_deficient(j->a->dtype, (char *)d->hscan + at, 1, n, m, &r, &floor);
  if (k < 0) return 0;
  char what[160];
  muster__rank_text(what, sizeof what, k, r, floor, m, n);
  *j->call->info = k + 1;
  return cuc_fail(E, MUSTER_ESINGULAR, "%s; cusolverDnXgeqrf on device %d", what, j->dev); /* detail */
out:
  return rc;
}

/* b (its first n rows, ld ldb) <- R^-1 b: cuBLAS trsm on the solver stream. */
#define TRSM_ARGS(T)                                                                                          \
  j->d->blas, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_N, CUBLAS_DIAG_NON_UNIT, j->a->n, m->nrhs, \
      &one, (const T *)j->A, j->lda, (T *)m->b, m->ldb
static int solve_r(dn_job_t *j, const dn_call_t *m) {
  cublasStatus_t st;
  switch (j->a->dtype) {
  case MUSTER_F32: {
    const float one = 1;
    st = cublasStrsm_v2_64(TRSM_ARGS(float));
    break;
  }
  case MUSTER_F64: {
    const double one = 1;
    st = cublasDtrsm_v2_64(TRSM_ARGS(double));
    break;
  }
  case MUSTER_C64: {
    const cuComplex one = {1, 0};
    st = cublasCtrsm_v2_64(TRSM_ARGS(cuComplex));
    break;
  }
  default: {
    const cuDoubleComplex one = {1, 0};
    st = cublasZtrsm_v2_64(TRSM_ARGS(cuDoubleComplex));
    break;
  }
  }
  if (st != CUBLAS_STATUS_SUCCESS)
    return cuc_fail(j->E, MUSTER_ECUDA, "device %d: cublas<t>trsm: %s (status %d)", j->dev, cublasGetStatusName(st),
                    (int)st);
  return dn_sync_solver(j);
}
#undef TRSM_ARGS

int dn_gels(dn_job_t *j) {
  int rc = 0, info = 0;
  dn_call_t f = {.op = DN_GEQRF}, m = {.op = DN_ORMQR, .nrhs = j->a->nrhs};
  CUC_CHECK(take_input(j, &m));
  CUC_CHECK(grow_aux(j, j->esz, "the Householder scalars"));
  CUC_CHECK(dn_blas_ready(j->c, j->dev, j->E));
  CUC_CHECK(dn_run(j, &f, &info));
  CUC_CHECK(dn_info(j, DN_GEQRF, info));
  CUC_CHECK(check_rank(j));
  CUC_CHECK(dn_run(j, &m, &info));
  CUC_CHECK(dn_info(j, DN_ORMQR, info));
  CUC_CHECK(solve_r(j, &m));
  rc = give_x(j, &m);
out:
  return rc;
}
