/* providers/cusolvermp/gels.c - gels (least squares, m >= n) on cuSOLVERMp
 * (job.h).
 *
 * A (m x n) is always copied into cuSOLVERMp's layout (solve.c).  NaN/Inf
 * in A or B: each rank scans its shard of A and its B before any
 * factorization, and every rank returns MUSTER_ENONFINITE (agreed).
 * Then one QR:
 *   1. cusolverMpGeqrf: R in A's upper triangle, the reflectors below;
 *   2. the rank rule on R's diagonal (check_rank: the largest finite
 *      |R(i,i)| over the ranks, then the first k with |R(k,k)| <= m * eps *
 *      max|R(i,i)|, the rule of the lapack and scalapack providers): a
 *      rank-deficient A is info = k on every rank, B untouched;
 *   3. cusolverMpOrmqr: Q^H B, all of B in one call;
 *   4. R X = (Q^H B)(1:n): the reflectors below R's diagonal are zeroed
 *      (mp_zero_below) and cusolverMpGetrs without pivots (d_ipiv NULL, as
 *      cuSOLVERMp documents for an unpivoted factorization) solves with the
 *      unit lower L = I and U = R, in panels of potrs's width;
 *   5. X (B's first n rows) to every rank, as potrs's.
 * Why not cusolverMpGels: on two processes (1x2 grid, cuSOLVERMp 0.8, two
 * H200) it returned X with a normal-equations residual of 1.3e-3 in every
 * dtype, and a cuSOLVER status error on a 2x1 grid (one process was
 * right); and it refactors A, which the rank check needs factored first:
 * this way A is factored once. */
#include <math.h>
#include <stdlib.h>

#include "../common/rank.h" /* muster__abs_at, muster__rank_floor */
#include "diag.h"
#include "job.h"
#include "kernels.h"

/* Q^H for the dtype: the transpose of a real Q, the conjugate transpose of
 * a complex one. */
static int adjoint_op(muster_dtype_t t) { return muster_dtype_bytes(t) != muster_dtype_real_bytes(t) ? MP_OP_C : MP_OP_T; }

int mp_gels_prepare(mp_job_t *j, size_t *dw, size_t *hw) {
  cuc_err_t *E = j->E;
  int rc = 0;
  size_t d2 = 0, h2 = 0;
  mp_comm_t *m = j->m;
  cudaDataType t = cuc_cuda_type(j->a->dtype);
  CUC_CHECK(mp_comm_buf(m, MP_BUF_TAU, (size_t)(j->lc > 0 ? j->lc : 1) * j->esz, "geqrf's Householder scalars", E));
  CUC_SO(m->device, j->api->Geqrf_bufferSize(m->handle, j->shape.m, j->a->n, j->A, 1, 1, j->descA, t, dw, hw));
  CUC_SO(m->device, j->api->Ormqr_bufferSize(m->handle, MP_SIDE_LEFT, adjoint_op(j->a->dtype), j->shape.m,
                                             j->a->nrhs, j->a->n, j->A, 1, 1, j->descA, m->buf[MP_BUF_TAU],
                                             m->buf[MP_BUF_B], 1, 1, j->descB, t, &d2, &h2));
  mp_work_max(dw, hw, d2, h2);
  CUC_SO(m->device, j->api->Getrs_bufferSize(m->handle, MP_OP_N, j->a->n, j->tri_panel, j->A, 1, 1, j->descA, NULL,
                                             m->buf[MP_BUF_B], 1, 1, j->descB, t, &d2, &h2));
  mp_work_max(dw, hw, d2, h2);
out:
  return rc;
}

/* NaN/Inf in this rank's shard of A or in its B (the caller's buffers):
 * this rank's failure in j->deferred. */
static int scan_inputs(mp_job_t *j) {
  const muster_dist_t *d = &j->call->dist;
  int rc = mp_scan(j, j->s->a, d->lld, mp_local_rows(&j->user, d->myrow), mp_local_cols(&j->user, d->mycol), "A");
  /* B: every rank's own full copy (its local rows and columns are B's) */
  return rc == 0 && !j->deferred ? mp_scan(j, j->s->b, j->s->ldb, j->shape.m, j->a->nrhs, "B") : rc;
}

/* R's diagonal against the rank rule, agreed by every rank (all of them
 * are here, no NCCL call in flight): first the largest finite |R(i,i)|
 * over the ranks, then the earliest entry over the ranks that is under
 * m * eps * max|R(i,i)| or NaN/Inf.  Under: *agreed = its k (1-based) on
 * every rank.  NaN/Inf (A and B were finite: from the factorization):
 * MUSTER_ENONFINITE on every rank, unless an earlier entry is under the
 * rule (as getrs's zero pivot, job.h: a zero column's QR may leave NaN
 * after it). */
static int check_rank(mp_job_t *j, int64_t *agreed) {
  void *d = NULL;
  int64_t *global = NULL, count = 0;
  muster_dtype_t t = j->a->dtype;
  int rc = mp_local_diag(j, &d, &global, &count);
  if (rc == 0) {
    for (int64_t k = 0; k < count; k++) {
      double r = muster__abs_at(t, d, (size_t)k);
      if (isfinite(r) && r > j->rmax) j->rmax = r;
    }
    rc = mp_agree(j, 0, "agreeing on R's largest diagonal entry", NULL, NULL);
  }
  if (rc == 0) {
    double floor = muster__rank_floor(t, j->shape.m, j->rmax);
    for (int64_t k = 0; k < count; k++) { /* the first: global is increasing */
      double r = muster__abs_at(t, d, (size_t)k);
      if (isfinite(r) && !muster__rank_fails(r, floor)) continue;
      j->diag_bad = global[k];
      j->diag_zero = isfinite(r);
      if (!j->diag_zero && !j->deferred)
        j->deferred = cuc_fail(j->E, MUSTER_ENONFINITE, "NaN/Inf on R's diagonal at R(%lld,%lld) (A and B are "
                               "finite: from cusolverMpGeqrf)", (long long)(global[k] + 1), (long long)(global[k] + 1));
      break;
    }
    rc = mp_agree(j, j->deferred, "checking R's diagonal (the rank)", agreed, NULL);
  }
  free(d);
  free(global);
  return rc;
}

/* Steps 3 to 5 of the top: X = R \ (Q^H B)(1:n) into every rank's b. */
static int solve_r(mp_job_t *j) {
  cuc_err_t *E = j->E;
  int rc = 0, info = 0;
  mp_comm_t *m = j->m;
  cudaDataType t = cuc_cuda_type(j->a->dtype);
  int64_t n = j->a->n, nrhs = j->a->nrhs;
  CUC_CHECK(mp_b_in(j, 0, nrhs));
  CUC_SO(m->device, j->api->Ormqr(m->handle, MP_SIDE_LEFT, adjoint_op(j->a->dtype), j->shape.m, nrhs, n, j->A, 1, 1,
                                  j->descA, m->buf[MP_BUF_TAU], m->buf[MP_BUF_B], 1, 1, j->descB, t,
                                  m->buf[MP_BUF_WORK], j->dwork, m->hwork, j->hwork, m->buf[MP_BUF_INFO]));
  CUC_CU(m->device, mp_zero_below(j->esz, j->A, j->lld, j->lr, j->lc, j->shape.tile, j->shape.nprow, j->shape.npcol,
                                  j->myrow, j->mycol, n, m->stream));
  for (int64_t j0 = 0; j0 < nrhs; j0 += j->tri_panel) {
    int64_t w = nrhs - j0 < j->tri_panel ? nrhs - j0 : j->tri_panel;
    CUC_SO(m->device, j->api->Getrs(m->handle, MP_OP_N, n, w, j->A, 1, 1, j->descA, NULL, m->buf[MP_BUF_B], 1,
                                    j0 + 1, j->descB, t, m->buf[MP_BUF_WORK], j->dwork, m->hwork, j->hwork,
                                    m->buf[MP_BUF_INFO]));
  }
  CUC_CHECK(mp_x_out(j, 0, nrhs));
  CUC_CHECK(mp_wait(j->c, j->run, m, E));
  CUC_CHECK(mp_job_info(j, &info));
  if (info != 0) rc = cuc_fail(E, MUSTER_EPROVIDER, "cusolverMpOrmqr / cusolverMpGetrs on R: info %d", info);
out:
  return rc;
}

int mp_gels_run(mp_job_t *j) {
  cuc_err_t *E = j->E;
  int rc = 0;
  int64_t agreed = 0;
  mp_comm_t *m = j->m;
  /* A's relayout (solve.c) may be in flight: drain it before agreeing */
  CUC_CHECK(mp_wait(j->c, j->run, m, E));
  CUC_CHECK(scan_inputs(j));
  CUC_CHECK(mp_agree(j, j->deferred, "checking A and B for NaN/Inf", NULL, NULL));
  CUC_CHECK(mp_qr_factor(j));
  CUC_CHECK(check_rank(j, &agreed));
  if (agreed != 0) { /* rank deficient: B untouched, info on every rank */
    *j->call->info = agreed;
    return 0;
  }
  CUC_CHECK(solve_r(j));
  CUC_CHECK(mp_check_x(j));
out:
  return rc;
}
