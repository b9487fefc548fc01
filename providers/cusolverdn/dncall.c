/* providers/cusolverdn/dncall.c - the one way the provider calls a
 * cusolverDn routine: its _bufferSize query, the cached device and host
 * workspaces grown to that (under the memory check), the call on the
 * solver stream, its info copied back (job.h).  The switches below are the
 * only place that spells out the routines' argument lists. */
#include <string.h>

#include "job.h"

#define LOWER CUBLAS_FILL_MODE_LOWER

static const char *const op_name[] = {
    [DN_POTRF] = "cusolverDnXpotrf",
    [DN_POTRS] = "cusolverDnXpotrs",
    [DN_POTRI] = "cusolverDn<t>potri",
    [DN_SYEVD] = "cusolverDnXsyevd",
    [DN_GETRF] = "cusolverDnXgetrf",
    [DN_GETRS] = "cusolverDnXgetrs",
    [DN_GEQRF] = "cusolverDnXgeqrf",
    [DN_ORMQR] = "cusolverDn<t>ormqr/unmqr",
    [DN_ORGQR] = "cusolverDn<t>orgqr/ungqr",
    [DN_GESVD] = "cusolverDnXgesvd",
};

const char *dn_op_name(dn_op_t op) { return op_name[op]; }

/* The legacy potri (the 64-bit API has none): int sizes, lwork in elements. */
static cusolverStatus_t potri_size(dn_job_t *j, int *lwork) {
  cusolverDnHandle_t h = j->d->handle;
  int n = (int)j->a->n, ld = (int)j->lda;
  switch (j->a->dtype) {
  case MUSTER_F32: return cusolverDnSpotri_bufferSize(h, LOWER, n, j->A, ld, lwork);
  case MUSTER_F64: return cusolverDnDpotri_bufferSize(h, LOWER, n, j->A, ld, lwork);
  case MUSTER_C64: return cusolverDnCpotri_bufferSize(h, LOWER, n, j->A, ld, lwork);
  default: return cusolverDnZpotri_bufferSize(h, LOWER, n, j->A, ld, lwork);
  }
}

static cusolverStatus_t potri(dn_job_t *j, void *ws, int lwork, int *dinfo) {
  cusolverDnHandle_t h = j->d->handle;
  int n = (int)j->a->n, ld = (int)j->lda;
  switch (j->a->dtype) {
  case MUSTER_F32: return cusolverDnSpotri(h, LOWER, n, j->A, ld, ws, lwork, dinfo);
  case MUSTER_F64: return cusolverDnDpotri(h, LOWER, n, j->A, ld, ws, lwork, dinfo);
  case MUSTER_C64: return cusolverDnCpotri(h, LOWER, n, j->A, ld, ws, lwork, dinfo);
  default: return cusolverDnZpotri(h, LOWER, n, j->A, ld, ws, lwork, dinfo);
  }
}

/* The legacy ormqr/unmqr (the 64-bit API has none): b (m x nrhs) <- Q^H b,
 * Q from geqrf's reflectors in A and the scalars in aux; int sizes, lwork
 * in elements (j->sh.a_rows = m <= INT_MAX, checked by validate). */
#define ORMQR_ARGS(T, trans) \
  h, CUBLAS_SIDE_LEFT, trans, (int)j->sh.a_rows, (int)m->nrhs, (int)j->a->n, (const T *)j->A, (int)j->lda, \
      (const T *)j->d->aux
static cusolverStatus_t ormqr_size(dn_job_t *j, const dn_call_t *m, int *lwork) {
  cusolverDnHandle_t h = j->d->handle;
  switch (j->a->dtype) {
  case MUSTER_F32: return cusolverDnSormqr_bufferSize(ORMQR_ARGS(float, CUBLAS_OP_T), m->b, (int)m->ldb, lwork);
  case MUSTER_F64: return cusolverDnDormqr_bufferSize(ORMQR_ARGS(double, CUBLAS_OP_T), m->b, (int)m->ldb, lwork);
  case MUSTER_C64: return cusolverDnCunmqr_bufferSize(ORMQR_ARGS(cuComplex, CUBLAS_OP_C), m->b, (int)m->ldb, lwork);
  default: return cusolverDnZunmqr_bufferSize(ORMQR_ARGS(cuDoubleComplex, CUBLAS_OP_C), m->b, (int)m->ldb, lwork);
  }
}

static cusolverStatus_t ormqr(dn_job_t *j, const dn_call_t *m, void *ws, int lwork, int *dinfo) {
  cusolverDnHandle_t h = j->d->handle;
  int ldb = (int)m->ldb;
  switch (j->a->dtype) {
  case MUSTER_F32: return cusolverDnSormqr(ORMQR_ARGS(float, CUBLAS_OP_T), m->b, ldb, ws, lwork, dinfo);
  case MUSTER_F64: return cusolverDnDormqr(ORMQR_ARGS(double, CUBLAS_OP_T), m->b, ldb, ws, lwork, dinfo);
  case MUSTER_C64: return cusolverDnCunmqr(ORMQR_ARGS(cuComplex, CUBLAS_OP_C), m->b, ldb, ws, lwork, dinfo);
  default: return cusolverDnZunmqr(ORMQR_ARGS(cuDoubleComplex, CUBLAS_OP_C), m->b, ldb, ws, lwork, dinfo);
  }
}
#undef ORMQR_ARGS

/* The legacy orgqr/ungqr (the 64-bit API has none): b (rows x cols, ld
 * ldb, its first k columns the reflectors) <- the first cols columns of Q;
 * int sizes (validate keeps m and n <= INT_MAX), lwork in elements. */
#define ORGQR_ARGS(T) h, (int)m->rows, (int)m->cols, (int)m->k, (T *)m->b, (int)m->ldb, (const T *)j->d->aux
static cusolverStatus_t orgqr_size(dn_job_t *j, const dn_call_t *m, int *lwork) {
  cusolverDnHandle_t h = j->d->handle;
  switch (j->a->dtype) {
  case MUSTER_F32: return cusolverDnSorgqr_bufferSize(ORGQR_ARGS(float), lwork);
  case MUSTER_F64: return cusolverDnDorgqr_bufferSize(ORGQR_ARGS(double), lwork);
  case MUSTER_C64: return cusolverDnCungqr_bufferSize(ORGQR_ARGS(cuComplex), lwork);
  default: return cusolverDnZungqr_bufferSize(ORGQR_ARGS(cuDoubleComplex), lwork);
  }
}

static cusolverStatus_t orgqr(dn_job_t *j, const dn_call_t *m, void *ws, int lwork, int *dinfo) {
  cusolverDnHandle_t h = j->d->handle;
  switch (j->a->dtype) {
  case MUSTER_F32: return cusolverDnSorgqr(ORGQR_ARGS(float), ws, lwork, dinfo);
  case MUSTER_F64: return cusolverDnDorgqr(ORGQR_ARGS(double), ws, lwork, dinfo);
  case MUSTER_C64: return cusolverDnCungqr(ORGQR_ARGS(cuComplex), ws, lwork, dinfo);
  default: return cusolverDnZungqr(ORGQR_ARGS(cuDoubleComplex), ws, lwork, dinfo);
  }
}
#undef ORGQR_ARGS

/* Xgesvd's arguments from jobu up to ldvt: b (rows x cols, rows >= cols,
 * as cusolverDn's gesvd requires), the singular values into w, the vectors
 * into u and vt (NULL with job 'N'; the leading dimensions stay valid). */
#define GESVD_ARGS                                                                                             \
  m->jobu, m->jobvt, m->rows, m->cols, t, m->b, m->ldb, cuc_real_type(j->a->dtype), m->w, t, m->u, m->ldu, t, \
      m->vt, m->ldvt, t

static cusolverStatus_t buffer_size(dn_job_t *j, const dn_call_t *m, size_t *dev_bytes, size_t *host_bytes) {
  dn_dev_t *d = j->d;
  cudaDataType t = cuc_cuda_type(j->a->dtype);
  *dev_bytes = *host_bytes = 0;
  switch (m->op) {
  case DN_POTRF:
    return cusolverDnXpotrf_bufferSize(d->handle, d->params, LOWER, j->a->n, t, j->A, j->lda, t, dev_bytes,
                                       host_bytes);
  case DN_POTRS: return CUSOLVER_STATUS_SUCCESS; /* no workspace */
  case DN_POTRI: {
    int lwork = 0;
    cusolverStatus_t st = potri_size(j, &lwork);
    *dev_bytes = (size_t)(lwork > 0 ? lwork : 0) * j->esz;
    return st;
  }
  case DN_SYEVD:
    return cusolverDnXsyevd_bufferSize(d->handle, d->params, m->jobz, LOWER, j->a->n, t, j->A, j->lda,
                                       cuc_real_type(j->a->dtype), m->w, t, dev_bytes, host_bytes);
  case DN_GETRF:
    return cusolverDnXgetrf_bufferSize(d->handle, d->params, j->a->n, j->a->n, t, j->A, j->lda, t, dev_bytes,
                                       host_bytes);
  case DN_GETRS: return CUSOLVER_STATUS_SUCCESS; /* no workspace */
  case DN_GEQRF:
    return cusolverDnXgeqrf_bufferSize(d->handle, d->params, j->sh.a_rows, j->a->n, t, j->A, j->lda, t, d->aux, t,
                                       dev_bytes, host_bytes);
  case DN_ORMQR:
  case DN_ORGQR: {
    int lwork = 0;
    cusolverStatus_t st = m->op == DN_ORMQR ? ormqr_size(j, m, &lwork) : orgqr_size(j, m, &lwork);
    *dev_bytes = (size_t)(lwork > 0 ? lwork : 0) * j->esz;
    return st;
  }
  case DN_GESVD: return cusolverDnXgesvd_bufferSize(d->handle, d->params, GESVD_ARGS, dev_bytes, host_bytes);
  }
  return CUSOLVER_STATUS_INVALID_VALUE;
}

static cusolverStatus_t compute(dn_job_t *j, const dn_call_t *m, size_t dev_bytes, size_t host_bytes, int *dinfo) {
  dn_dev_t *d = j->d;
  cudaDataType t = cuc_cuda_type(j->a->dtype);
  switch (m->op) {
  case DN_POTRF:
    return cusolverDnXpotrf(d->handle, d->params, LOWER, j->a->n, t, j->A, j->lda, t, d->ws, dev_bytes, d->hws,
                            host_bytes, dinfo);
  case DN_POTRS:
    return cusolverDnXpotrs(d->handle, d->params, LOWER, j->a->n, m->nrhs, t, j->A, j->lda, t, m->b, m->ldb, dinfo);
  case DN_POTRI: return potri(j, d->ws, (int)(dev_bytes / j->esz), dinfo);
  case DN_SYEVD:
    return cusolverDnXsyevd(d->handle, d->params, m->jobz, LOWER, j->a->n, t, j->A, j->lda,
                            cuc_real_type(j->a->dtype), m->w, t, d->ws, dev_bytes, d->hws, host_bytes, dinfo);
  case DN_GETRF:
    return cusolverDnXgetrf(d->handle, d->params, j->a->n, j->a->n, t, j->A, j->lda, (int64_t *)d->aux, t, d->ws,
                            dev_bytes, d->hws, host_bytes, dinfo);
  case DN_GETRS:
    return cusolverDnXgetrs(d->handle, d->params, CUBLAS_OP_N, j->a->n, m->nrhs, t, j->A, j->lda,
                            (const int64_t *)d->aux, t, m->b, m->ldb, dinfo);
  case DN_GEQRF:
    return cusolverDnXgeqrf(d->handle, d->params, j->sh.a_rows, j->a->n, t, j->A, j->lda, t, d->aux, t, d->ws,
                            dev_bytes, d->hws, host_bytes, dinfo);
  case DN_ORMQR: return ormqr(j, m, d->ws, (int)(dev_bytes / j->esz), dinfo);
  case DN_ORGQR: return orgqr(j, m, d->ws, (int)(dev_bytes / j->esz), dinfo);
  case DN_GESVD:
    return cusolverDnXgesvd(d->handle, d->params, GESVD_ARGS, d->ws, dev_bytes, d->hws, host_bytes, dinfo);
  }
  return CUSOLVER_STATUS_INVALID_VALUE;
}

int dn_run(dn_job_t *j, const dn_call_t *m, int *info) {
  int rc = 0;
  cuc_err_t *E = j->E;
  dn_dev_t *d = j->d;
  size_t dev_bytes = 0, host_bytes = 0;
  cusolverStatus_t st = buffer_size(j, m, &dev_bytes, &host_bytes);
  *info = 0;
  if (st != CUSOLVER_STATUS_SUCCESS) return cuc_solver(E, j->dev, op_name[m->op], st);
  if (dev_bytes)
    CUC_CHECK(cuc_grow_checked(j->dev, &d->ws, &d->ws_bytes, dev_bytes, "the cusolverDn workspace", E));
  if (host_bytes)
    CUC_CHECK(cuc_grow_checked(-1, &d->hws, &d->hws_bytes, host_bytes, "the cusolverDn host workspace", E));
  CUC_CU(j->dev, cudaSetDevice(j->dev));
  st = compute(j, m, dev_bytes, host_bytes, (int *)d->scan);
  if (st != CUSOLVER_STATUS_SUCCESS) return cuc_solver(E, j->dev, op_name[m->op], st);
  CUC_CU(j->dev, cudaMemcpyAsync(d->hscan, d->scan, sizeof(int), cudaMemcpyDeviceToHost, d->stream));
  CUC_CHECK(dn_sync_solver(j));
  memcpy(info, d->hscan, sizeof(int));
out:
  return rc;
}

int dn_info(dn_job_t *j, dn_op_t op, int info) {
  *j->call->info = info;
  if (info == 0) return 0;
  /* info > 0: the detail only, the runtime words the verdict (muster/provider.h) */
  if (info > 0 && op == DN_POTRF) return cuc_fail(j->E, MUSTER_ENOTPD, "%s on device %d", op_name[op], j->dev);
  if (info > 0 && op == DN_GETRF)
    return cuc_fail(j->E, MUSTER_ESINGULAR, "U(%d,%d) is exactly zero; %s on device %d", info, info, op_name[op],
                    j->dev);
  if (info > 0 && op == DN_POTRI)
    return cuc_fail(j->E, MUSTER_ENOTPD, "the factor is singular at %d; %s on device %d", info, op_name[op], j->dev);
  if (info > 0 && op == DN_GESVD)
    return cuc_fail(j->E, MUSTER_EPROVIDER, "%d superdiagonals did not converge; %s on device %d", info, op_name[op],
                    j->dev);
  if (info > 0) return cuc_fail(j->E, MUSTER_EPROVIDER, "%s on device %d", op_name[op], j->dev);
  return cuc_fail(j->E, MUSTER_EPROVIDER, "%s on device %d: parameter %d was refused (info=%d)", op_name[op], j->dev,
                  -info, info);
}
