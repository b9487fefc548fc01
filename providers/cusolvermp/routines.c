/* providers/cusolvermp/routines.c - potrs and syevd on cuSOLVERMp, and the
 * solve on B that potrs, getrs and gels (general.c) share (job.h).
 *
 * mp_b_in / mp_x_out move B's columns into cuSOLVERMp's layout and X back
 * out to every rank (gels.c uses them apart from mp_solve_b); X goes out
 * by mp_replicate, which also gives geqrf's B factor to every rank.
 * potrs: cusolverMpPotrf on A, then B in panels of j->panel columns (the
 * release's documented limit per cusolverMpPotrs, or MUSTER_MP_POTRS_NRHS):
 * each rank picks its 2-D piece of the panel out of its own full copy of B
 * (no traffic), cusolverMpPotrs, then X reaches every rank by one NCCL sum
 * of n x panel (each entry has one owner; the others add zeros).  The
 * factor goes back into the caller's A unless MUSTER_NO_FACTOR (in place it
 * is already there).  MUSTER_LOGDET: each rank sums 2 log L(k,k) over the
 * diagonal entries it holds (one strided copy per diagonal tile), and the
 * last agreement of the call (solve.c) adds the parts: one double per rank
 * over the bootstrap, no extra NCCL traffic, no pass over A.
 * syevd: cusolverMpSyevd ("V", or "N" with MUSTER_NO_VECTORS where the
 * release takes it) into Q and W; W to the caller's w (every rank has all
 * eigenvalues), Q back into the caller's A unless MUSTER_NO_VECTORS.
 * gesvd and polar: svd.c. */
#include <stdlib.h>
#include <string.h>

#include "diag.h"
#include "job.h"
#include "kernels.h"

static int want_vectors(const mp_job_t *j) {
  return !(j->a->flags & MUSTER_NO_VECTORS) || !(j->m->rel && j->m->rel->values_only);
}

int mp_desc(mp_job_t *j, mp_solverDesc_t *d, int64_t m, int64_t n, int64_t lld) {
  cuc_err_t *E = j->E;
  int rc = 0;
  CUC_SO(j->m->device, j->api->CreateMatrixDesc(d, j->m->grid, cuc_cuda_type(j->a->dtype), m, n, j->shape.tile,
                                                j->shape.tile, 0, 0, lld));
out:
  return rc;
}

/* The global rows [0, rows) of this rank's local rows (solver layout: in
 * increasing order, so those of X's n rows come first), and the global
 * columns [0, w) of a B panel it holds: one host list, uploaded; its rows'
 * count in j->idx_rows (where the columns' list starts). */
static int upload_lists(mp_job_t *j, int64_t rows, int64_t w) {
  cuc_err_t *E = j->E;
  int64_t lrl = muster_layout_numroc(rows, j->shape.tile, j->myrow, j->shape.nprow);
  int64_t lcb = muster_layout_numroc(w, j->shape.tile, j->mycol, j->shape.npcol), n = lrl + lcb, k = 0;
  int64_t *h = malloc((size_t)(n > 0 ? n : 1) * sizeof *h);
  int rc = 0;
  if (!h) return cuc_fail(j->E, MUSTER_ENOMEM, "out of host memory");
  for (int64_t g = 0; g < rows; g++)
    if (mp_owner(g, j->shape.tile, j->shape.nprow) == j->myrow) h[k++] = g;
  j->idx_rows = lrl;
  for (int64_t g = 0; g < w; g++)
    if (mp_owner(g, j->shape.tile, j->shape.npcol) == j->mycol) h[k++] = g;
  CUC_CHECK(mp_comm_buf(j->m, MP_BUF_IDX, (size_t)(n > 0 ? n : 1) * sizeof *h, "potrs' index lists", j->E));
  if (n) CUC_CU(j->m->device, cudaMemcpyAsync(j->m->buf[MP_BUF_IDX], h, (size_t)n * sizeof *h,
                                              cudaMemcpyHostToDevice, j->m->stream));
  /* pageable source: the copy is staged before cudaMemcpyAsync returns */
out:
  free(h);
  return rc;
}

/* B's panel buffers and descriptor (potrs, getrs, gels: m rows). */
static int prepare_b(mp_job_t *j) {
  int rc = 0;
  mp_comm_t *m = j->m;
  j->lrb = j->lr;
  j->lcb = muster_layout_numroc(j->panel, j->shape.tile, j->mycol, j->shape.npcol);
  int64_t lldb = j->lrb > 1 ? j->lrb : 1;
  CUC_CHECK(mp_desc(j, &j->descB, j->shape.m, j->panel, lldb));
  CUC_CHECK(mp_comm_buf(m, MP_BUF_B, (size_t)(lldb * (j->lcb > 0 ? j->lcb : 1)) * j->esz, "a panel of B", j->E));
  CUC_CHECK(mp_comm_buf(m, MP_BUF_X, (size_t)(j->a->n * j->panel) * j->esz, "a panel of X", j->E));
out:
  return rc;
}

static int prepare_potrs(mp_job_t *j, size_t *dw, size_t *hw) {
  cuc_err_t *E = j->E;
  int rc = 0;
  size_t d2 = 0, h2 = 0;
  mp_comm_t *m = j->m;
  CUC_CHECK(prepare_b(j));
  CUC_SO(m->device, j->api->Potrf_bufferSize(m->handle, MP_FILL_LOWER, j->a->n, j->A, 1, 1, j->descA,
                                             cuc_cuda_type(j->a->dtype), dw, hw));
  CUC_SO(m->device, j->api->Potrs_bufferSize(m->handle, MP_FILL_LOWER, j->a->n, j->panel, j->A, 1, 1, j->descA,
                                             m->buf[MP_BUF_B], 1, 1, j->descB, cuc_cuda_type(j->a->dtype), &d2,
                                             &h2));
  mp_work_max(dw, hw, d2, h2);
out:
  return rc;
}

static int prepare_syevd(mp_job_t *j, size_t *dw, size_t *hw) {
  cuc_err_t *E = j->E;
  int rc = 0;
  mp_comm_t *m = j->m;
  char compz[2] = {want_vectors(j) ? 'V' : 'N', 0};
  CUC_CHECK(mp_desc(j, &j->descQ, j->a->n, j->a->n, j->lld));
  CUC_CHECK(mp_comm_buf(m, MP_BUF_Q, (size_t)(j->lld * (j->lc > 0 ? j->lc : 1)) * j->esz, "the eigenvectors", j->E));
  CUC_CHECK(mp_comm_buf(m, MP_BUF_W, (size_t)j->a->n * muster_dtype_real_bytes(j->a->dtype), "the eigenvalues",
                        j->E));
  CUC_SO(m->device, j->api->Syevd_bufferSize(m->handle, compz, MP_FILL_LOWER, j->a->n, j->A, 1, 1, j->descA,
                                             m->buf[MP_BUF_W], m->buf[MP_BUF_Q], 1, 1, j->descQ,
                                             cuc_cuda_type(j->a->dtype), dw, hw));
out:
  return rc;
}

int mp_routine_prepare(mp_job_t *j) {
  int rc = 0;
  mp_comm_t *m = j->m;
  size_t dw = 0, hw = 0;
  if (!j->in_place) {
    CUC_CHECK(mp_comm_buf(m, MP_BUF_A, (size_t)(j->lld * (j->lc > 0 ? j->lc : 1)) * j->esz,
                          "cuSOLVERMp's copy of A", j->E));
    CUC_CHECK(mp_comm_buf(m, MP_BUF_SEND, (size_t)j->cap * j->esz, "the relayout's send scratch", j->E));
    CUC_CHECK(mp_comm_buf(m, MP_BUF_RECV, (size_t)j->cap * j->esz, "the relayout's receive scratch", j->E));
  }
  j->A = j->in_place ? j->s->a : m->buf[MP_BUF_A];
  CUC_CHECK(mp_comm_buf(m, MP_BUF_INFO, sizeof(int), "the info word", j->E));
  CUC_CHECK(mp_desc(j, &j->descA, j->shape.m, j->a->n, j->lld));
  if (j->a->routine == MUSTER_POTRS)
    CUC_CHECK(prepare_potrs(j, &dw, &hw));
  else if (j->a->routine == MUSTER_GEQRF)
    CUC_CHECK(mp_geqrf_prepare(j, &dw, &hw));
  else if (j->a->routine == MUSTER_GESVD || j->a->routine == MUSTER_POLAR)
    CUC_CHECK(mp_svd_prepare(j, &dw, &hw));
  else if (j->a->routine == MUSTER_GETRS || j->a->routine == MUSTER_GELS) {
    CUC_CHECK(prepare_b(j));
    CUC_CHECK(j->a->routine == MUSTER_GETRS ? mp_getrs_prepare(j, &dw, &hw) : mp_gels_prepare(j, &dw, &hw));
  } else
    CUC_CHECK(prepare_syevd(j, &dw, &hw));
  j->dwork = dw;
  j->hwork = hw;
  CUC_CHECK(mp_comm_buf(m, MP_BUF_WORK, dw, "cuSOLVERMp's device workspace", j->E));
  if (hw > m->hhave) {
    void *p = realloc(m->hwork, hw);
    if (!p) {
      rc = cuc_fail(j->E, MUSTER_ENOMEM, "cuSOLVERMp's host workspace needs %zu bytes", hw);
      goto out;
    }
    m->hwork = p;
    m->hhave = hw;
  }
out:
  return rc;
}

/* mp_replicate with the index lists of a matrix of `cols` columns already
 * on the device (upload_b_lists). */
static int scatter_sum(mp_job_t *j, const void *piece, int64_t ld, int64_t rows, int64_t cols, void *dst) {
  cuc_err_t *E = j->E;
  int rc = 0;
  mp_comm_t *m = j->m;
  /* this rank's local rows of the matrix: those of its rows of the solver's
   * layout below `rows` (gels's X, geqrf's R: rows = n < m; gesvd's full
   * V^H of a wide A: n > m), listed first in MP_BUF_IDX (upload_lists) */
  int64_t lrows = muster_layout_numroc(rows, j->shape.tile, j->myrow, j->shape.nprow);
  int64_t lcols = muster_layout_numroc(cols, j->shape.tile, j->mycol, j->shape.npcol);
  const int64_t *ri = m->buf[MP_BUF_IDX], *ci = ri + j->idx_rows;
  CUC_CU(m->device, cudaMemsetAsync(dst, 0, (size_t)(rows * cols) * j->esz, m->stream));
  CUC_CU(m->device, mp_scatter(j->esz, dst, rows, piece, ld, ri, ci, lrows, lcols, m->stream));
  if (m->nranks > 1) {
    int real8 = muster_dtype_real_bytes(j->a->dtype) == 8;
    size_t count = (size_t)(rows * cols) * j->esz / (real8 ? 8 : 4);
    CUC_CHECK(mp_nccl_ready(j->c, j->run, m, E));
    MP_NC(m->device, j->api->ncclAllReduce(dst, dst, count, real8 ? MP_NCCL_FLOAT64 : MP_NCCL_FLOAT32, MP_NCCL_SUM,
                                            m->nccl, m->stream));
    CUC_CHECK(mp_nccl_ready(j->c, j->run, m, E));
  }
out:
  return rc;
}

int mp_replicate(mp_job_t *j, const void *piece, int64_t ld, int64_t rows, int64_t cols, void *dst) {
  int rc = upload_lists(j, rows, cols);
  return rc < 0 ? rc : scatter_sum(j, piece, ld, rows, cols, dst);
}

int mp_x_out(mp_job_t *j, int64_t j0, int64_t w) {
  cuc_err_t *E = j->E;
  int rc = 0;
  mp_comm_t *m = j->m;
  int64_t n = j->a->n;
  CUC_CHECK(scatter_sum(j, m->buf[MP_BUF_B], j->lrb > 1 ? j->lrb : 1, n, w, m->buf[MP_BUF_X]));
  CUC_CU(m->device, cudaMemcpy2DAsync((char *)j->s->b + (size_t)(j0 * j->s->ldb) * j->esz, (size_t)j->s->ldb * j->esz,
                                      m->buf[MP_BUF_X], (size_t)n * j->esz, (size_t)n * j->esz, (size_t)w,
                                      cudaMemcpyDeviceToDevice, m->stream));
out:
  return rc;
}

int mp_b_in(mp_job_t *j, int64_t j0, int64_t w) {
  cuc_err_t *E = j->E;
  int rc = 0;
  mp_comm_t *m = j->m;
  CUC_CHECK(upload_lists(j, j->shape.m, w));
  const int64_t *rows = m->buf[MP_BUF_IDX], *cols = rows + j->lr;
  CUC_CU(m->device, mp_gather(j->esz, m->buf[MP_BUF_B], j->lrb > 1 ? j->lrb : 1,
                              (char *)j->s->b + (size_t)(j0 * j->s->ldb) * j->esz, j->s->ldb, rows, cols, j->lr,
                              muster_layout_numroc(w, j->shape.tile, j->mycol, j->shape.npcol), m->stream));
out:
  return rc;
}

int mp_solve_b(mp_job_t *j, mp_solve_panel_fn solve, const char *what) {
  int rc = 0, info = 0;
  mp_comm_t *m = j->m;
  for (int64_t j0 = 0; j0 < j->a->nrhs; j0 += j->panel) {
    int64_t w = j->a->nrhs - j0 < j->panel ? j->a->nrhs - j0 : j->panel;
    mp_solverDesc_t db = j->descB;
    if (w != j->panel) { /* the last, narrower panel */
      CUC_CHECK(mp_desc(j, &db, j->shape.m, w, j->lrb > 1 ? j->lrb : 1));
    }
    rc = mp_b_in(j, j0, w);
    cusolverStatus_t st = rc == 0 ? solve(j, db, w) : CUSOLVER_STATUS_SUCCESS;
    if (db != j->descB) j->api->DestroyMatrixDesc(db);
    if (rc < 0) goto out;
    if (st != CUSOLVER_STATUS_SUCCESS) {
      rc = cuc_solver(j->E, m->device, what, st);
      goto out;
    }
    CUC_CHECK(mp_x_out(j, j0, w));
    CUC_CHECK(mp_wait(j->c, j->run, m, j->E));
    CUC_CHECK(mp_job_info(j, &info));
    if (info != 0) {
      rc = cuc_fail(j->E, MUSTER_EPROVIDER, "%s: info %d", what, info);
      goto out;
    }
  }
out:
  return rc;
}

static cusolverStatus_t potrs_panel(mp_job_t *j, mp_solverDesc_t db, int64_t w) {
  mp_comm_t *m = j->m;
  return j->api->Potrs(m->handle, MP_FILL_LOWER, j->a->n, w, j->A, 1, 1, j->descA, m->buf[MP_BUF_B], 1, 1, db,
                       cuc_cuda_type(j->a->dtype), m->buf[MP_BUF_WORK], j->dwork, m->hwork, j->hwork,
                       m->buf[MP_BUF_INFO]);
}

/* MUSTER_LOGDET: this rank's part, 2 sum log L(k,k) over the diagonal
 * entries it holds; the last agreement (solve.c) adds the ranks' parts. */
static int logdet_part(mp_job_t *j) {
  void *d = NULL;
  int64_t count = 0;
  int rc = mp_local_diag(j, &d, NULL, &count);
  if (rc == 0) j->logdet = cuc_diag_chol_logdet(j->a->dtype, d, count);
  free(d);
  return rc;
}

static int run_potrs(mp_job_t *j) {
  cuc_err_t *E = j->E;
  int rc = 0, info = 0;
  mp_comm_t *m = j->m;
  cudaDataType t = cuc_cuda_type(j->a->dtype);
  CUC_SO(m->device, j->api->Potrf(m->handle, MP_FILL_LOWER, j->a->n, j->A, 1, 1, j->descA, t, m->buf[MP_BUF_WORK],
                                  j->dwork, m->hwork, j->hwork, m->buf[MP_BUF_INFO]));
  CUC_CHECK(mp_wait(j->c, j->run, m, j->E));
  CUC_CHECK(mp_job_info(j, &info));
  if (info != 0) { /* the same on every rank: cuSOLVERMp reduces it */
    *j->call->info = info;
    return 0;
  }
  if (j->a->flags & MUSTER_LOGDET) CUC_CHECK(logdet_part(j));
  CUC_CHECK(mp_solve_b(j, potrs_panel, "cusolverMpPotrs"));
  if (!j->in_place && !(j->a->flags & MUSTER_NO_FACTOR)) {
    CUC_CHECK(mp_job_move(j, 0, j->A));
    CUC_CHECK(mp_wait(j->c, j->run, m, j->E));
  }
out:
  return rc;
}

static int run_syevd(mp_job_t *j) {
  cuc_err_t *E = j->E;
  int rc = 0, info = 0;
  mp_comm_t *m = j->m;
  char compz[2] = {want_vectors(j) ? 'V' : 'N', 0};
  CUC_SO(m->device, j->api->Syevd(m->handle, compz, MP_FILL_LOWER, j->a->n, j->A, 1, 1, j->descA, m->buf[MP_BUF_W],
                                  m->buf[MP_BUF_Q], 1, 1, j->descQ, cuc_cuda_type(j->a->dtype), m->buf[MP_BUF_WORK],
                                  j->dwork, m->hwork, j->hwork, m->buf[MP_BUF_INFO]));
  CUC_CHECK(mp_wait(j->c, j->run, m, j->E));
  CUC_CHECK(mp_job_info(j, &info));
  if (info != 0) {
    *j->call->info = info;
    return 0;
  }
  CUC_CU(m->device, cudaMemcpyAsync(j->s->w, m->buf[MP_BUF_W], (size_t)j->a->n * muster_dtype_real_bytes(j->a->dtype),
                                    cudaMemcpyDeviceToDevice, m->stream));
  if (!(j->a->flags & MUSTER_NO_VECTORS)) {
    if (j->in_place)
      CUC_CU(m->device, mp_gather(j->esz, j->s->a, j->lld, m->buf[MP_BUF_Q], j->lld, NULL, NULL, j->lr, j->lc,
                                  m->stream));
    else
      CUC_CHECK(mp_job_move(j, 0, m->buf[MP_BUF_Q]));
  }
  CUC_CHECK(mp_wait(j->c, j->run, m, j->E));
out:
  return rc;
}

int mp_routine_run(mp_job_t *j) {
  switch (j->a->routine) {
  case MUSTER_POTRS: return run_potrs(j);
  case MUSTER_GETRS: return mp_getrs_run(j);
  case MUSTER_GELS: return mp_gels_run(j);
  case MUSTER_GEQRF: return mp_geqrf_run(j);
  case MUSTER_GESVD:
  case MUSTER_POLAR: return mp_svd_run(j);
  default: return run_syevd(j);
  }
}

void mp_routine_done(mp_job_t *j) {
  if (!j->m || j->m->aborted) return;
  if (j->descA) j->api->DestroyMatrixDesc(j->descA);
  if (j->descB) j->api->DestroyMatrixDesc(j->descB);
  if (j->descQ) j->api->DestroyMatrixDesc(j->descQ);
  if (j->gesvd_desc) j->api->GesvdDescriptorDestroy(j->gesvd_desc);
  if (j->polar_desc) j->api->PolarDescriptorDestroy(j->polar_desc);
}
