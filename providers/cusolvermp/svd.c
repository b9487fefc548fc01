/* providers/cusolvermp/svd.c - gesvd and polar on cuSOLVERMp 0.9 (job.h):
 * A = U S V^H (cusolverMpGesvd) and A = U_p H (cusolverMpPolar, QDWH),
 * the factors placed by muster_routine_outputs (muster/layout.h) as the
 * other providers place them.  0.8 has neither: mp_refused refuses both
 * there before any NCCL traffic, and a library whose table lacks them
 * (libs.c) is refused here, in prepare, which every rank agrees on.
 *
 * A is always copied into cuSOLVERMp's m x n layout (mp_factors_a_copy):
 * Gesvd destroys it, Polar writes U_p over it.  As in qr.c, each rank
 * first scans its shard of A for NaN/Inf (one anywhere: MUSTER_ENONFINITE
 * on every rank, agreed before any factorization); then
 *   gesvd: jobu = jobvt = "vectors" unless MUSTER_NO_VECTORS, the
 *     descriptor's SHAPE thin (U m x k, V^H k x n) or full (m x m, n x n);
 *     U in MP_BUF_Q, V^H in MP_BUF_B (both NULL, with no descriptor, for
 *     values only), S (k reals, on every rank) in MP_BUF_W.  Gesvd takes
 *     m >= n and m < n alike (its wide path), tile rows = tile columns
 *     (ours always are) and a power-of-two tile (its eigensolver on H:
 *     mp_tile_pow2);
 *   polar: uplo FULL (A general), U_p over the copy of A, H (n x n,
 *     Hermitian: cuSOLVERMp symmetrizes it) in MP_BUF_B; m >= n only
 *     (mp_refused refuses a wide A).
 * Info 1 / 2 (Gesvd: values / vectors did not converge) or any other is
 * MUSTER_EPROVIDER.  Every computed factor is scanned for NaN/Inf and
 * agreed on; only then is anything written: the factor shaped like A back
 * to the caller's layout (the plan's way back), the others to every rank's
 * b (mp_replicate), S to every rank's w.  So a refusal or a failure leaves
 * the caller's A, B and W as they were. */
#include "job.h"

/* V^H: Gesvd's VT is V^H (its A = U Sigma V^H, complex included), the
 * rows our ABI returns (MUSTER_FACTOR_VH), as cusolverDnXgesvd's. */
static int is_gesvd(const mp_job_t *j) { return j->a->routine == MUSTER_GESVD; }

/* Local piece of a rows x cols matrix on this rank (0 x 0 for 0 x 0). */
static void piece(const mp_job_t *j, int64_t rows, int64_t cols, int64_t *lr, int64_t *lc, int64_t *ld) {
  *lr = muster_layout_numroc(rows, j->shape.tile, j->myrow, j->shape.nprow);
  *lc = muster_layout_numroc(cols, j->shape.tile, j->mycol, j->shape.npcol);
  *ld = *lr > 1 ? *lr : 1;
}

/* A matrix's buffer (one element at least: cuSOLVERMp wants non-NULL
 * pointers on ranks that hold nothing) and its descriptor. */
static int matrix(mp_job_t *j, int buf, mp_solverDesc_t *d, int64_t rows, int64_t cols, int64_t ld, int64_t lc,
                  const char *what) {
  int rc = 0;
  CUC_CHECK(mp_comm_buf(j->m, buf, (size_t)(ld * (lc > 0 ? lc : 1)) * j->esz, what, j->E));
  CUC_CHECK(mp_desc(j, d, rows, cols, ld));
out:
  return rc;
}

static int vectors(const mp_job_t *j) { return j->sd.urows > 0; }

static int prepare_gesvd(mp_job_t *j, cudaDataType t, size_t *dw, size_t *hw) {
  cuc_err_t *E = j->E;
  int rc = 0;
  mp_comm_t *m = j->m;
  int job = vectors(j) ? CUSOLVER_EIG_MODE_VECTOR : CUSOLVER_EIG_MODE_NOVECTOR;
  int shape = (j->a->flags & MUSTER_FULL_MATRICES) ? MP_GESVD_FULL : MP_GESVD_THIN;
  void *u = NULL, *vt = NULL;
  if (vectors(j)) {
    CUC_CHECK(matrix(j, MP_BUF_Q, &j->descQ, j->sd.urows, j->sd.ucols, j->uld, j->uc, "U's piece"));
    CUC_CHECK(matrix(j, MP_BUF_B, &j->descB, j->sd.vrows, j->sd.vcols, j->vld, j->vc, "V^H's piece"));
    u = m->buf[MP_BUF_Q];
    vt = m->buf[MP_BUF_B];
  }
  CUC_SO(m->device, j->api->GesvdDescriptorCreate(&j->gesvd_desc));
  CUC_SO(m->device, j->api->GesvdDescriptorSetAttribute(j->gesvd_desc, MP_GESVD_ATTR_SHAPE, &shape, sizeof shape));
  CUC_SO(m->device, j->api->Gesvd_bufferSize(m->handle, j->gesvd_desc, job, job, j->shape.m, j->a->n, j->A, 1, 1,
                                             j->descA, m->buf[MP_BUF_W], u, 1, 1, j->descQ, vt, 1, 1, j->descB, t,
                                             dw, hw));
out:
  return rc;
}

int mp_svd_prepare(mp_job_t *j, size_t *dw, size_t *hw) {
  cuc_err_t *E = j->E;
  int rc = 0;
  mp_comm_t *m = j->m;
  cudaDataType t = cuc_cuda_type(j->a->dtype);
  int64_t k = j->shape.m < j->a->n ? j->shape.m : j->a->n;
  if (!j->api->Gesvd || !j->api->Polar)
    return cuc_fail(E, MUSTER_EUNSUPPORTED, "%s needs cuSOLVERMp 0.9.1: the library loaded has no "
                    "cusolverMpGesvd / cusolverMpPolar", muster_routine_str(j->a->routine));
  j->sd = mp_svd_dims(&j->shape);
  piece(j, j->sd.urows, j->sd.ucols, &j->ur, &j->uc, &j->uld);
  piece(j, j->sd.vrows, j->sd.vcols, &j->vr, &j->vc, &j->vld);
  if (is_gesvd(j)) {
    CUC_CHECK(mp_comm_buf(m, MP_BUF_W, (size_t)k * muster_dtype_real_bytes(j->a->dtype), "the singular values", E));
    CUC_CHECK(prepare_gesvd(j, t, dw, hw));
  } else {
    CUC_CHECK(matrix(j, MP_BUF_B, &j->descB, j->a->n, j->a->n, j->vld, j->vc, "H's piece"));
    CUC_SO(m->device, j->api->PolarDescriptorCreate(&j->polar_desc));
    CUC_SO(m->device, j->api->Polar_bufferSize(m->handle, j->polar_desc, MP_FILL_FULL, j->shape.m, j->a->n, j->A, 1,
                                               1, j->descA, m->buf[MP_BUF_B], 1, 1, j->descB, t, dw, hw));
  }
out:
  return rc;
}

/* The factorization itself, waited for, its info checked. */
static int factor(mp_job_t *j) {
  cuc_err_t *E = j->E;
  int rc = 0, info = 0;
  mp_comm_t *m = j->m;
  cudaDataType t = cuc_cuda_type(j->a->dtype);
  if (is_gesvd(j)) {
    int job = vectors(j) ? CUSOLVER_EIG_MODE_VECTOR : CUSOLVER_EIG_MODE_NOVECTOR;
    void *u = vectors(j) ? m->buf[MP_BUF_Q] : NULL, *vt = vectors(j) ? m->buf[MP_BUF_B] : NULL;
    CUC_SO(m->device, j->api->Gesvd(m->handle, j->gesvd_desc, job, job, j->shape.m, j->a->n, j->A, 1, 1, j->descA,
                                    m->buf[MP_BUF_W], u, 1, 1, j->descQ, vt, 1, 1, j->descB, t, m->buf[MP_BUF_WORK],
                                    j->dwork, m->hwork, j->hwork, m->buf[MP_BUF_INFO]));
  } else {
    CUC_SO(m->device, j->api->Polar(m->handle, j->polar_desc, MP_FILL_FULL, j->shape.m, j->a->n, j->A, 1, 1, j->descA,
                                    m->buf[MP_BUF_B], 1, 1, j->descB, t, m->buf[MP_BUF_WORK], j->dwork, m->hwork,
                                    j->hwork, m->buf[MP_BUF_INFO]));
  }
  CUC_CHECK(mp_wait(j->c, j->run, m, E));
  CUC_CHECK(mp_job_info(j, &info));
  if (info != 0)
    rc = cuc_fail(E, MUSTER_EPROVIDER, "cusolverMp%s: info %d%s", is_gesvd(j) ? "Gesvd" : "Polar", info,
                  is_gesvd(j) && info == 1   ? " (the singular values did not converge)"
                  : is_gesvd(j) && info == 2 ? " (the singular vectors did not converge)"
                                             : "");
out:
  return rc;
}

/* Factor f's piece on this rank: its buffer and leading dimension. */
static const void *factor_piece(mp_job_t *j, int f, int64_t *ld) {
  switch (f) {
  case MUSTER_FACTOR_U: *ld = j->uld; return j->m->buf[MP_BUF_Q];
  case MUSTER_FACTOR_UP: *ld = j->lld; return j->A;
  default: *ld = j->vld; return j->m->buf[MP_BUF_B]; /* V^H, H */
  }
}

/* Every factor into its place: the one shaped like A into the caller's
 * layout, the others to every rank's b, S to every rank's w. */
static int place(mp_job_t *j, const muster_outputs_t *o) {
  cuc_err_t *E = j->E;
  int rc = 0;
  mp_comm_t *m = j->m;
  int64_t ld;
  if (o->w_count > 0)
    CUC_CU(m->device, cudaMemcpyAsync(j->s->w, m->buf[MP_BUF_W], (size_t)o->w_count * muster_dtype_real_bytes(j->a->dtype),
                                      cudaMemcpyDeviceToDevice, m->stream));
  if (o->a_holds != MUSTER_FACTOR_NONE) {
    const void *src = factor_piece(j, o->a_holds, &ld); /* m x n, A's local shape and ld (j->lld) */
    CUC_CHECK(mp_job_move(j, 0, src));
  }
  for (int p = 0; p < o->nparts; p++) {
    /* the move's (or the last part's) index lists are in MP_BUF_IDX, which mp_replicate refills */
    CUC_CHECK(mp_wait(j->c, j->run, m, E));
    const void *src = factor_piece(j, o->part[p].what, &ld);
    CUC_CHECK(mp_replicate(j, src, ld, o->part[p].rows, o->part[p].cols,
                           (char *)j->s->b + (size_t)o->part[p].offset * j->esz));
  }
  CUC_CHECK(mp_wait(j->c, j->run, m, E));
out:
  return rc;
}

int mp_svd_run(mp_job_t *j) {
  cuc_err_t *E = j->E;
  int rc = 0;
  mp_comm_t *m = j->m;
  const muster_dist_t *d = &j->call->dist;
  muster_outputs_t o;
  muster_routine_outputs(j->a->routine, j->a->flags, j->shape.m, j->a->n, &o); /* check() took the flags */
  /* A's relayout (solve.c) may be in flight: drain it before agreeing */
  CUC_CHECK(mp_wait(j->c, j->run, m, E));
  CUC_CHECK(mp_scan(j, j->s->a, d->lld, mp_local_rows(&j->user, d->myrow), mp_local_cols(&j->user, d->mycol), "A"));
  CUC_CHECK(mp_agree(j, j->deferred, "checking A for NaN/Inf", NULL, NULL));
  CUC_CHECK(factor(j));
  /* every factor finite on every rank before anything is written */
  if (!is_gesvd(j)) CUC_CHECK(mp_scan(j, j->A, j->lld, j->lr, j->lc, "the computed U_p"));
  if (j->ur > 0 && j->uc > 0) CUC_CHECK(mp_scan(j, m->buf[MP_BUF_Q], j->uld, j->ur, j->uc, "the computed U"));
  if (j->vr > 0 && j->vc > 0)
    CUC_CHECK(mp_scan(j, m->buf[MP_BUF_B], j->vld, j->vr, j->vc, is_gesvd(j) ? "the computed V^H" : "the computed H"));
  CUC_CHECK(mp_agree(j, j->deferred, "checking the factors for NaN/Inf", NULL, NULL));
  CUC_CHECK(place(j, &o));
out:
  return rc;
}
