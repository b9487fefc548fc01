/* providers/cusolvermp/qr.c - geqrf on cuSOLVERMp (job.h): A = Q R, Q
 * explicit, for any m x n A (m = ldb, tall or wide), the factors placed by
 * muster_routine_outputs (muster/layout.h) as the other providers place
 * them.
 *
 * A is always copied into cuSOLVERMp's m x n layout (plan.h:
 * mp_factors_a_copy).  Each rank first scans its shard of A for NaN/Inf
 * (as gels): one anywhere is MUSTER_ENONFINITE on every rank, agreed
 * before any factorization.  Then, on the copy:
 *   1. cusolverMpGeqrf: R on and above the diagonal, k = min(m, n)
 *      reflectors below it, tau (zeroed first) one scalar per local column;
 *   2. thin with m >= n (A <- Q m x n, B <- R n x n): R's rows of this
 *      rank's piece (the first numroc(n) local rows) copied into MP_BUF_Q
 *      and zeroed below the diagonal, then cusolverMpOrgqr (m, n, n) forms
 *      Q over the reflectors in the copy;
 *      else (A <- R m x n, B <- Q m x m): the first k columns of the piece
 *      (the reflectors) copied into an m x m matrix of zeros on the same
 *      grid and tile (MP_BUF_Q, its own descriptor), cusolverMpOrgqr (m, m,
 *      k) forms Q there, and the copy is zeroed below its diagonal (R);
 *   3. both factors scanned for NaN/Inf on every rank and agreed on: only
 *      then is anything written, A's factor back to the caller's layout
 *      (the redistribution plan's way back) and B's to every rank's b
 *      (mp_replicate: one NCCL sum).
 * So a refusal or a failure leaves the caller's A and B as they were.  A
 * rank-deficient A is no error (Q R = A all the same).  On more than one
 * process geqrf runs only where the release table has seen cuSOLVERMp's
 * Geqrf + Orgqr right there, or with MUSTER_MP_QR_GRIDS=1 (mp_refused). */
#include "job.h"
#include "kernels.h"

/* Thin with m >= n: Q overwrites A (muster_routine_outputs' rule). */
static int thin(const mp_job_t *j) {
  muster_outputs_t o;
  return muster_routine_outputs(MUSTER_GEQRF, j->a->flags, j->shape.m, j->a->n, &o) == 0 &&
         o.a_holds == MUSTER_FACTOR_Q;
}

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

int mp_geqrf_prepare(mp_job_t *j, size_t *dw, size_t *hw) {
  cuc_err_t *E = j->E;
  int rc = 0;
  size_t d2 = 0, h2 = 0;
  mp_comm_t *m = j->m;
  cudaDataType t = cuc_cuda_type(j->a->dtype);
  int64_t rows = j->shape.m, n = j->a->n, k = min64(rows, n);
  mp_qr_piece(&j->shape, j->myrow, j->mycol, &j->fr, &j->fc);
  /* the full Q shares A's rows, so its piece's leading dimension is A's */
  j->fld = thin(j) ? (j->fr > 1 ? j->fr : 1) : j->lld;
  int64_t ntau = j->fc > j->lc ? j->fc : j->lc;
  CUC_CHECK(mp_comm_buf(m, MP_BUF_TAU, (size_t)(ntau > 0 ? ntau : 1) * j->esz, "geqrf's Householder scalars", E));
  CUC_CHECK(mp_comm_buf(m, MP_BUF_Q, (size_t)(j->fld * (j->fc > 0 ? j->fc : 1)) * j->esz,
                        thin(j) ? "R's piece" : "Q's piece", E));
  CUC_SO(m->device, j->api->Geqrf_bufferSize(m->handle, rows, n, j->A, 1, 1, j->descA, t, dw, hw));
  if (thin(j)) {
    CUC_SO(m->device, j->api->Orgqr_bufferSize(m->handle, rows, n, n, j->A, 1, 1, j->descA, m->buf[MP_BUF_TAU], t,
                                               &d2, &h2));
  } else {
    CUC_CHECK(mp_desc(j, &j->descQ, rows, rows, j->fld));
    CUC_SO(m->device, j->api->Orgqr_bufferSize(m->handle, rows, rows, k, m->buf[MP_BUF_Q], 1, 1, j->descQ,
                                               m->buf[MP_BUF_TAU], t, &d2, &h2));
  }
  mp_work_max(dw, hw, d2, h2);
out:
  return rc;
}

int mp_qr_factor(mp_job_t *j) {
  cuc_err_t *E = j->E;
  int rc = 0, info = 0;
  mp_comm_t *m = j->m;
  CUC_SO(m->device, j->api->Geqrf(m->handle, j->shape.m, j->a->n, j->A, 1, 1, j->descA, m->buf[MP_BUF_TAU],
                                  cuc_cuda_type(j->a->dtype), m->buf[MP_BUF_WORK], j->dwork, m->hwork, j->hwork,
                                  m->buf[MP_BUF_INFO]));
  CUC_CHECK(mp_wait(j->c, j->run, m, E));
  CUC_CHECK(mp_job_info(j, &info));
  if (info != 0) rc = cuc_fail(E, MUSTER_EPROVIDER, "cusolverMpGeqrf: info %d", info);
out:
  return rc;
}

/* Step 2 of the top: Q and R in their places on the grid, Orgqr's info
 * checked. */
static int form(mp_job_t *j) {
  cuc_err_t *E = j->E;
  int rc = 0, info = 0;
  mp_comm_t *m = j->m;
  cudaDataType t = cuc_cuda_type(j->a->dtype);
  int64_t rows = j->shape.m, n = j->a->n, k = min64(rows, n), T = j->shape.tile;
  void *f = m->buf[MP_BUF_Q];
  if (thin(j)) { /* R: A's piece's first fr rows, zeroed below the diagonal; Q over A */
    if (j->fr > 0 && j->fc > 0)
      CUC_CU(m->device, cudaMemcpy2DAsync(f, (size_t)j->fld * j->esz, j->A, (size_t)j->lld * j->esz,
                                          (size_t)j->fr * j->esz, (size_t)j->fc, cudaMemcpyDeviceToDevice, m->stream));
    CUC_CU(m->device, mp_zero_below(j->esz, f, j->fld, j->fr, j->fc, T, j->shape.nprow, j->shape.npcol, j->myrow,
                                    j->mycol, n, m->stream));
    CUC_SO(m->device, j->api->Orgqr(m->handle, rows, n, n, j->A, 1, 1, j->descA, m->buf[MP_BUF_TAU], t,
                                    m->buf[MP_BUF_WORK], j->dwork, m->hwork, j->hwork, m->buf[MP_BUF_INFO]));
  } else { /* Q (m x m) from the reflectors, its columns past k zeros; R over A */
    int64_t kc = muster_layout_numroc(k, T, j->mycol, j->shape.npcol); /* local columns of the first k */
    CUC_CU(m->device, cudaMemsetAsync(f, 0, (size_t)(j->fld * j->fc) * j->esz, m->stream));
    if (j->lr > 0 && kc > 0)
      CUC_CU(m->device, cudaMemcpy2DAsync(f, (size_t)j->fld * j->esz, j->A, (size_t)j->lld * j->esz,
                                          (size_t)j->lr * j->esz, (size_t)kc, cudaMemcpyDeviceToDevice, m->stream));
    CUC_SO(m->device, j->api->Orgqr(m->handle, rows, rows, k, f, 1, 1, j->descQ, m->buf[MP_BUF_TAU], t,
                                    m->buf[MP_BUF_WORK], j->dwork, m->hwork, j->hwork, m->buf[MP_BUF_INFO]));
    CUC_CU(m->device, mp_zero_below(j->esz, j->A, j->lld, j->lr, j->lc, T, j->shape.nprow, j->shape.npcol, j->myrow,
                                    j->mycol, rows, m->stream));
  }
  CUC_CHECK(mp_wait(j->c, j->run, m, E));
  CUC_CHECK(mp_job_info(j, &info));
  if (info != 0) rc = cuc_fail(E, MUSTER_EPROVIDER, "cusolverMpOrgqr: info %d", info);
out:
  return rc;
}

int mp_geqrf_run(mp_job_t *j) {
  cuc_err_t *E = j->E;
  int rc = 0;
  mp_comm_t *m = j->m;
  const muster_dist_t *d = &j->call->dist;
  muster_outputs_t o;
  muster_routine_outputs(MUSTER_GEQRF, j->a->flags, j->shape.m, j->a->n, &o); /* check() took the flags */
  /* A's relayout (solve.c) may be in flight: drain it before agreeing */
  CUC_CHECK(mp_wait(j->c, j->run, m, E));
  CUC_CHECK(mp_scan(j, j->s->a, d->lld, mp_local_rows(&j->user, d->myrow), mp_local_cols(&j->user, d->mycol), "A"));
  CUC_CHECK(mp_agree(j, j->deferred, "checking A for NaN/Inf", NULL, NULL));
  CUC_CU(m->device, cudaMemsetAsync(m->buf[MP_BUF_TAU], 0, m->have[MP_BUF_TAU], m->stream));
  CUC_CHECK(mp_qr_factor(j));
  CUC_CHECK(form(j));
  /* every factor finite on every rank before anything is written */
  CUC_CHECK(mp_scan(j, j->A, j->lld, j->lr, j->lc, "the computed factor in A's place"));
  CUC_CHECK(mp_scan(j, m->buf[MP_BUF_Q], j->fld, j->fr, j->fc, "the computed factor for B"));
  CUC_CHECK(mp_agree(j, j->deferred, "checking the factors for NaN/Inf", NULL, NULL));
  CUC_CHECK(mp_job_move(j, 0, j->A));
  CUC_CHECK(mp_wait(j->c, j->run, m, E)); /* the move's index lists are in MP_BUF_IDX, which mp_replicate refills */
  CUC_CHECK(mp_replicate(j, m->buf[MP_BUF_Q], j->fld, o.part[0].rows, o.part[0].cols,
                         (char *)j->s->b + (size_t)o.part[0].offset * j->esz));
  CUC_CHECK(mp_wait(j->c, j->run, m, E));
out:
  return rc;
}
