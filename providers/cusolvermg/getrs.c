/* providers/cusolvermg/getrs.c - LU with partial pivoting: cusolverMgGetrf
 * on A (the caller's, or a private copy: leader_solve.c decides), then
 * cusolverMgGetrs on rank 0's B with X copied to every rank
 * (leader_solve.h).
 *
 * The row pivots stay where cusolverMgGetrf leaves them, in per-GPU int
 * buffers laid out like one row of A (rank r's local tiles: local_cols
 * entries), and cusolverMgGetrs reads them there: they never travel, which
 * is why the caller cannot get the factors back (muster.h).
 *
 * Errors, as the lapack provider words them: a singular A is
 * MUSTER_ESINGULAR with info = k, the first pivot that fails the rule of
 * providers/common/singular.h (|U(k,k)| <= 2 n eps max_{i<=k} |U(i,k)|:
 * U's diagonal and, from a kernel on each GPU, its columns' largest
 * entries; cuSolverMg itself stops only at an exact zero, which it reports
 * as getrf's info or, failing without one, leaves on U's diagonal, as
 * potrs does for a failed potrf); NaN/Inf in A: every rank's shard is scanned on its GPU
 * before the factorization (an O(n^2) read: cusolverMgGetrf on one H200
 * returned success, with no NaN on U's diagonal nor in X, for an A with one
 * NaN below the diagonal), and NaN/Inf on U's diagonal after it (overflow)
 * is caught too; NaN/Inf in B shows in X.  All MUSTER_ENONFINITE. */
#include <stdlib.h>

#include "../common/singular.h" /* muster__lu_singular */
#include "diag.h"
#include "leader_solve.h"

/* A failed cusolverMgGetrf status with info <= 0: look for the zero pivot
 * on U's diagonal (the columns before it are factored), else a NaN/Inf
 * there. */
static int getrf_failed(cmg_solve_t *j, cusolverStatus_t st, int info) {
  int64_t k = -1;
  char keep[16];
  cuc_err_t quiet = {keep, sizeof keep, CMG_NAME}, *E = j->E;
  j->E = &quiet;
  int64_t bad = -1;
  if (cmg_solve_diag_first(j, CUC_DIAG_ZERO, &k) == 0 && k < 0)
    (void)cmg_solve_diag_first(j, CUC_DIAG_NONFINITE, &bad);
  j->E = E;
  if (bad >= 0)
    return cuc_fail(j->E, MUSTER_ENONFINITE, "NaN/Inf in A: cusolverMgGetrf on devices %d.. failed (%s) with "
                    "U(%lld,%lld) = NaN/Inf", j->ids[0], cuc_solver_status_name(st), (long long)(bad + 1),
                    (long long)(bad + 1));
  if (k >= 0) {
    *j->call->info = k + 1;
    return cuc_fail(j->E, MUSTER_ESINGULAR, "U(%lld,%lld) is exactly zero; cusolverMgGetrf on devices %d..: %s",
                    (long long)(k + 1), (long long)(k + 1), j->ids[0], cuc_solver_status_name(st)); /* detail */
  }
  return cuc_fail(j->E, MUSTER_ECUDA, "device %d: cusolverMgGetrf failed: %s (%d), info=%d", j->ids[0],
                  cuc_solver_status_name(st), (int)st, info);
}

/* Every device's pivot buffer: local_cols ints (cached, grown). */
static int reserve_pivots(cmg_solve_t *j, int **ipiv) {
  int rc = 0;
  for (int r = 0; r < j->R; r++) {
    cmg_dev_t *d = &j->c->dev[j->ids[r]];
    CUC_CHECK(cuc_grow(j->ids[r], &d->ipiv, &d->ipiv_bytes, (size_t)j->L.local_cols * sizeof(int), j->E));
    ipiv[r] = d->ipiv;
  }
out:
  return rc;
}

/* NaN/Inf in X (rank 0's B, n x nrhs), read back to the host: the
 * solve's cost is O(n^2 nrhs), this O(n nrhs). */
static int check_x(cmg_solve_t *j) {
  const muster_shard_t *s0 = &j->call->shards[0];
  int64_t n = j->a->n, nrhs = j->a->nrhs;
  char *h = malloc((size_t)(n * nrhs) * j->esz);
  int rc = 0;
  cuc_err_t *E = j->E;
  if (!h) return cuc_fail(E, MUSTER_ENOMEM, "cannot allocate %lld x %lld elements to check X", (long long)n,
                          (long long)nrhs);
  CUC_CU(j->ids[0], cudaSetDevice(j->ids[0]));
  CUC_CU(j->ids[0], cudaMemcpy2D(h, (size_t)n * j->esz, s0->b, (size_t)s0->ldb * j->esz, (size_t)n * j->esz,
                                 (size_t)nrhs, cudaMemcpyDefault));
  int64_t k = cuc_diag_first(j->a->dtype, h, n * nrhs, CUC_DIAG_NONFINITE);
  if (k >= 0)
    rc = cuc_fail(E, MUSTER_ENONFINITE, "NaN/Inf in the solution X at row %lld, column %lld (NaN/Inf in B?)",
                  (long long)(k % n + 1), (long long)(k / n + 1));
out:
  free(h);
  return rc;
}

/* NaN/Inf in any rank's shard of A (the caller's, before any copy). */
static int scan_a(cmg_solve_t *j) {
  int rc = 0;
  for (int r = 0; r < j->R; r++) {
    const muster_shard_t *s = &j->call->shards[r];
    cmg_dev_t *d = &j->c->dev[j->ids[r]];
    int64_t row = -1, col = -1;
    CUC_CHECK(cuc_first_nonfinite(j->ids[r], j->a->dtype, j->user[r], j->lda, j->a->n, s->ncols, &d->scan,
                                  &d->scan_bytes, d->streams[0], &row, &col, j->E));
    if (row >= 0)
      return cuc_fail(j->E, MUSTER_ENONFINITE, "NaN/Inf in A: rank %d (device %d) holds one at row %lld of its "
                      "local column %lld", r, j->ids[r], (long long)(row + 1), (long long)(col + 1));
  }
out:
  return rc;
}

/* U's first `upto` pivots against the rule of providers/common/singular.h:
 * each GPU's part of the columns' scales (its cyclic tiles, whole columns:
 * cuc_upper_colmax), U's diagonal (cmg_solve_diag), judged on the host. */
static int check_pivots(cmg_solve_t *j, int64_t upto) {
  int64_t n = j->a->n;
  double *scale = calloc((size_t)n, sizeof *scale), ukk, floor;
  void *diag = malloc((size_t)n * j->esz);
  int rc = scale && diag ? cmg_solve_sync(j)
                         : cuc_fail(j->E, MUSTER_ENOMEM, "cannot allocate %lld column scales", (long long)n);
  if (rc < 0) goto out;
  cuc_cyclic_t rows = {n, 1, 0};
  for (int r = 0; r < j->R; r++) {
    cmg_dev_t *d = &j->c->dev[j->ids[r]];
    cuc_cyclic_t cols = {j->a->tile, j->R, r};
    CUC_CHECK(cuc_upper_colmax(j->ids[r], j->a->dtype, j->mats[r], j->lda, n, muster_layout_cyclic_real_cols(&j->L, r),
                               rows, cols, n, &d->scan, &d->scan_bytes, d->streams[0], scale, j->E));
  }
  CUC_CHECK(cmg_solve_diag(j, diag));
  int64_t k = muster__lu_singular(j->a->dtype, diag, 1, n, upto, scale, &ukk, &floor);
  if (k >= 0) {
    char what[160];
    muster__lu_singular_text(what, sizeof what, k, ukk, floor);
    *j->call->info = k + 1;
    rc = cuc_fail(j->E, MUSTER_ESINGULAR, "%s; cusolverMgGetrf on devices %d.., A is %lld x %lld", what, j->ids[0],
                  (long long)n, (long long)n); /* the detail: the runtime words "singular" */
  }
out:
  free(scale);
  free(diag);
  return rc;
}

/* cusolverMgGetrf; an exact zero pivot it reports (info = k, U(k,k) = 0)
 * is named unless an earlier pivot fails the rule (the columns before k
 * are factored). */
static int getrf(cmg_solve_t *j, int **ipiv) {
  cmg_mg_call_t f = {.op = CMG_MG_GETRF, .ipiv = ipiv, .on_failure = getrf_failed};
  int rc = cmg_mg_run(j, &f);
  if (rc != MUSTER_ESINGULAR) return rc;
  int rc2 = check_pivots(j, *j->call->info - 1);
  return rc2 < 0 ? rc2 : rc;
}

int cmg_getrs(cmg_solve_t *j) {
  int rc = 0;
  int *ipiv[CMG_MAX_DEV];
  int64_t k = -1;
  CUC_CHECK(scan_a(j));
  CUC_CHECK(reserve_pivots(j, ipiv));
  CUC_CHECK(getrf(j, ipiv));
  CUC_CHECK(cmg_solve_diag_first(j, CUC_DIAG_NONFINITE, &k));
  if (k >= 0) {
    rc = cuc_fail(j->E, MUSTER_ENONFINITE, "NaN/Inf in A: cusolverMgGetrf on devices %d.. left U(%lld,%lld) = "
                  "NaN/Inf", j->ids[0], (long long)(k + 1), (long long)(k + 1));
    goto out;
  }
  CUC_CHECK(check_pivots(j, j->a->n));
  cmg_mg_call_t s = {.op = CMG_MG_GETRS, .ipiv = ipiv};
  CUC_CHECK(cmg_solve_b(j, &s));
  CUC_CHECK(check_x(j));
  CUC_CHECK(cmg_x_to_ranks(j));
out:
  return rc;
}
