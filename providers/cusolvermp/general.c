/* providers/cusolvermp/general.c - getrs on cuSOLVERMp (job.h),
 * and the local part of a factor's diagonal.
 *
 * getrs: cusolverMpGetrf on A (cuSOLVERMp's copy unless MUSTER_NO_FACTOR:
 * the caller's A is left as it was, muster.h), its row pivots kept on the
 * GPUs (MP_BUF_PIV, each grid row its part), then cusolverMpGetrs on B in
 * panels as potrs (mp_solve_b), X to every rank.  Between the two, the
 * singularity rule of providers/common/singular.h (|U(k,k)| <= 2 n eps
 * max_{i<=k} |U(i,k)|: cusolverMpGetrf stops only at an exact zero, its
 * info, and two equal columns leave a pivot at rounding level): each rank
 * the largest |U(i,k)|, i <= k, of its entries (a kernel), one NCCL
 * allreduce (max) for every column's scale, each rank its part of U's
 * diagonal against them, and an agreement on the earliest pivot under the
 * rule over the ranks (check_u): info = k on every rank, B untouched,
 * which the runtime words as MUSTER_ESINGULAR naming U(k,k).  NaN/Inf:
 * each rank looks at its part of U's diagonal (where NaN in A ends up) and
 * every rank at X (the same X everywhere); a rank that finds one does not
 * stop (the others are in NCCL calls) but hands MUSTER_ENONFINITE to the
 * last agreement, which every rank returns.
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>

#include "../common/singular.h" /* muster__lu_pivot_small */
#include "diag.h"
#include "job.h"

int mp_local_diag(mp_job_t *j, void **d, int64_t **global, int64_t *count) {
  cuc_err_t *E = j->E;
  mp_comm_t *m = j->m;
  int rc = 0;
  int64_t li, lj, w, lld = j->lld, cap = j->a->n > 0 ? j->a->n : 1;
  *count = 0;
  *d = malloc((size_t)cap * j->esz);
  if (global) *global = malloc((size_t)cap * sizeof **global);
  if (!*d || (global && !*global)) return cuc_fail(E, MUSTER_ENOMEM, "out of host memory for the factor's diagonal");
  for (int64_t t = 0; t * j->shape.tile < j->a->n; t++) {
    if (!mp_diag_tile(&j->solver, t, j->myrow, j->mycol, &li, &lj, &w)) continue;
    if (global)
      for (int64_t i = 0; i < w; i++) (*global)[*count + i] = t * j->shape.tile + i;
    const char *src = (const char *)j->A + (size_t)(lj * lld + li) * j->esz;
    CUC_CU(m->device, cudaMemcpy2DAsync((char *)*d + (size_t)*count * j->esz, j->esz, src, (size_t)(lld + 1) * j->esz,
                                        j->esz, (size_t)w, cudaMemcpyDeviceToHost, m->stream));
    *count += w;
  }
  CUC_CHECK(mp_wait(j->c, j->run, m, E));
out:
  return rc;
}

int mp_getrs_prepare(mp_job_t *j, size_t *dw, size_t *hw) {
  cuc_err_t *E = j->E;
  int rc = 0;
  size_t d2 = 0, h2 = 0;
  mp_comm_t *m = j->m;
  cudaDataType t = cuc_cuda_type(j->a->dtype);
  int64_t npiv = mp_pivot_count(&j->solver, j->myrow);
  CUC_CHECK(mp_comm_buf(m, MP_BUF_PIV, (size_t)npiv * sizeof(int64_t), "getrf's row pivots", E));
  CUC_CHECK(mp_comm_buf(m, MP_BUF_SCAN, (size_t)j->a->n * sizeof(double), "U's column scales", E));
  CUC_SO(m->device, j->api->Getrf_bufferSize(m->handle, j->a->n, j->a->n, j->A, 1, 1, j->descA, m->buf[MP_BUF_PIV],
                                             t, dw, hw));
  CUC_SO(m->device, j->api->Getrs_bufferSize(m->handle, MP_OP_N, j->a->n, j->panel, j->A, 1, 1, j->descA,
                                             m->buf[MP_BUF_PIV], m->buf[MP_BUF_B], 1, 1, j->descB, t, &d2, &h2));
  mp_work_max(dw, hw, d2, h2);
out:
  return rc;
}

static cusolverStatus_t getrs_panel(mp_job_t *j, mp_solverDesc_t db, int64_t w) {
  mp_comm_t *m = j->m;
  return j->api->Getrs(m->handle, MP_OP_N, j->a->n, w, j->A, 1, 1, j->descA, m->buf[MP_BUF_PIV], m->buf[MP_BUF_B], 1,
                       1, db, cuc_cuda_type(j->a->dtype), m->buf[MP_BUF_WORK], j->dwork, m->hwork, j->hwork,
                       m->buf[MP_BUF_INFO]);
}

/* Every column's scale of the singularity rule, max_{i<=k} |U(i,k)|, into
 * scale[] (n doubles) on every rank: each rank's entries on or above the
 * diagonal (a kernel on its piece of the factor), one allreduce (max). */
static int u_scales(mp_job_t *j, double *scale) {
  cuc_err_t *E = j->E;
  int rc = 0;
  mp_comm_t *m = j->m;
  int64_t n = j->a->n, tile = j->shape.tile;
  unsigned long long *w = m->buf[MP_BUF_SCAN];
  cuc_cyclic_t rows = {tile, j->shape.nprow, j->myrow}, cols = {tile, j->shape.npcol, j->mycol};
  CUC_CU(m->device, cudaMemsetAsync(w, 0, (size_t)n * sizeof *w, m->stream));
  CUC_CU(m->device,
         cuc_upper_colmax_launch((int)j->a->dtype, j->A, j->lld, j->lr, j->lc, rows, cols, n, w, m->stream));
  /* the words are non-negative doubles: their max as doubles */
  if (m->nranks > 1) {
    CUC_CHECK(mp_nccl_ready(j->c, j->run, m, E));
    MP_NC(m->device, j->api->ncclAllReduce(w, w, (size_t)n, MP_NCCL_FLOAT64, MP_NCCL_MAX, m->nccl, m->stream));
    CUC_CHECK(mp_nccl_ready(j->c, j->run, m, E));
  }
  CUC_CU(m->device, cudaMemcpyAsync(scale, w, (size_t)n * sizeof *scale, cudaMemcpyDeviceToHost, m->stream));
  CUC_CHECK(mp_wait(j->c, j->run, m, E));
out:
  return rc;
}

/* This rank's part of U's diagonal, entries before global index `limit`:
 * its first pivot under the singularity rule (scale: every column's) or
 * NaN/Inf into j->diag_bad, diag_zero 1 for the first (job.h says why the
 * agreement decides); a NaN/Inf is also this rank's failure (NaN/Inf in
 * A), unless an earlier pivot under the rule on some rank makes it a
 * consequence of a singular A. */
static int check_u(mp_job_t *j, const double *scale, int64_t limit) {
  void *d = NULL;
  int64_t *global = NULL, count = 0;
  muster_dtype_t t = j->a->dtype;
  int rc = mp_local_diag(j, &d, &global, &count);
  for (int64_t k = 0; rc == 0 && k < count && global[k] < limit; k++) { /* global is increasing */
    double u = muster__abs_at(t, d, (size_t)k), floor;
    int small = muster__lu_pivot_small(t, j->a->n, u, scale[global[k]], &floor);
    if (!small && isfinite(u)) continue;
    j->diag_bad = global[k];
    j->diag_zero = small;
    if (!small && !j->deferred)
      j->deferred = cuc_fail(j->E, MUSTER_ENONFINITE, "NaN/Inf in A: cusolverMpGetrf left NaN/Inf on U's diagonal "
                             "at U(%lld,%lld)", (long long)(global[k] + 1), (long long)(global[k] + 1));
    break;
  }
  free(d);
  free(global);
  return rc;
}

int mp_scan(mp_job_t *j, const void *x, int64_t ld, int64_t rows, int64_t cols, const char *what) {
  mp_comm_t *m = j->m;
  int64_t row = -1, col = -1;
  int rc = cuc_first_nonfinite(m->device, j->a->dtype, x, ld, rows, cols, &m->buf[MP_BUF_SCAN], &m->have[MP_BUF_SCAN],
                               m->stream, &row, &col, j->E);
  if (rc == 0 && row >= 0 && !j->deferred)
    j->deferred = cuc_fail(j->E, MUSTER_ENONFINITE, "NaN/Inf in %s: rank %d holds one at its local row %lld, "
                           "column %lld; nothing written", what, j->boot->rank, (long long)(row + 1),
                           (long long)(col + 1));
  return rc;
}

int mp_check_x(mp_job_t *j) {
  cuc_err_t *E = j->E;
  int64_t n = j->a->n, nrhs = j->a->nrhs, k;
  char *h = malloc((size_t)(n * nrhs) * j->esz);
  int rc = 0;
  if (!h) return cuc_fail(E, MUSTER_ENOMEM, "out of host memory to check X");
  CUC_CU(j->m->device, cudaMemcpy2D(h, (size_t)n * j->esz, j->s->b, (size_t)j->s->ldb * j->esz, (size_t)n * j->esz,
                                    (size_t)nrhs, cudaMemcpyDeviceToHost));
  k = cuc_diag_first(j->a->dtype, h, n * nrhs, CUC_DIAG_NONFINITE);
  if (k >= 0 && !j->deferred)
    j->deferred = cuc_fail(E, MUSTER_ENONFINITE, "NaN/Inf in the solution X at row %lld, column %lld (NaN/Inf in B?)",
                           (long long)(k % n + 1), (long long)(k / n + 1));
out:
  free(h);
  return rc;
}

int mp_getrs_run(mp_job_t *j) {
  cuc_err_t *E = j->E;
  int rc = 0, info = 0;
  mp_comm_t *m = j->m;
  double *scale = NULL;
  CUC_SO(m->device, j->api->Getrf(m->handle, j->a->n, j->a->n, j->A, 1, 1, j->descA, m->buf[MP_BUF_PIV],
                                  cuc_cuda_type(j->a->dtype), m->buf[MP_BUF_WORK], j->dwork, m->hwork, j->hwork,
                                  m->buf[MP_BUF_INFO]));
  CUC_CHECK(mp_wait(j->c, j->run, m, E));
  CUC_CHECK(mp_job_info(j, &info));
  if (info < 0) { /* a refused argument, on every rank */
    *j->call->info = info;
    return 0;
  }
  /* U's diagonal before the solve against the singularity rule, agreed by
   * every rank (all of them are here, no NCCL call in flight): a pivot
   * under the rule first is a singular A (info, B untouched), a NaN/Inf
   * first is MUSTER_ENONFINITE on every rank.  info = k > 0 (the same on
   * every rank: cuSOLVERMp reduces it): U(k,k) = 0, and only the pivots
   * up to k are looked at (the columns before k are factored whatever
   * getrf did after). */
  scale = malloc((size_t)j->a->n * sizeof *scale);
  if (!scale) {
    rc = cuc_fail(E, MUSTER_ENOMEM, "out of host memory for U's column scales");
    goto out;
  }
  CUC_CHECK(u_scales(j, scale));
  CUC_CHECK(check_u(j, scale, info > 0 ? info : j->a->n));
  int64_t agreed = 0;
  CUC_CHECK(mp_agree(j, j->deferred, "checking U's diagonal", &agreed, NULL));
  if (agreed != 0 || info > 0) {
    *j->call->info = agreed != 0 ? agreed : info;
    goto out;
  }
  CUC_CHECK(mp_solve_b(j, getrs_panel, "cusolverMpGetrs"));
  CUC_CHECK(mp_check_x(j));
  /* A: the caller's untouched, or (MUSTER_NO_FACTOR, in place) factored
   * there; the factors are never moved back (their pivots would not be) */
out:
  free(scale);
  return rc;
}
