/* providers/cusolvermg/mgcall.c - the one way the provider calls a
 * cuSolverMg routine: its _bufferSize query, every device's cached
 * workspace grown to that, the call with rank 0's device current, its info
 * checked (leader_solve.h).  The switches below are the only place that
 * spells out the routines' argument lists (the Cholesky routines and syevd
 * on the lower triangle, getrf/getrs on all of A). */
#include "leader_solve.h"

#define LOWER CUBLAS_FILL_MODE_LOWER

static const char *const mg_name[] = {
    [CMG_MG_POTRF] = "cusolverMgPotrf",
    [CMG_MG_POTRS] = "cusolverMgPotrs",
    [CMG_MG_POTRI] = "cusolverMgPotri",
    [CMG_MG_SYEVD] = "cusolverMgSyevd",
    [CMG_MG_GETRF] = "cusolverMgGetrf",
    [CMG_MG_GETRS] = "cusolverMgGetrs",
};

static const char *const mg_size_name[] = {
    [CMG_MG_POTRF] = "cusolverMgPotrf_bufferSize",
    [CMG_MG_POTRS] = "cusolverMgPotrs_bufferSize",
    [CMG_MG_POTRI] = "cusolverMgPotri_bufferSize",
    [CMG_MG_SYEVD] = "cusolverMgSyevd_bufferSize",
    [CMG_MG_GETRF] = "cusolverMgGetrf_bufferSize",
    [CMG_MG_GETRS] = "cusolverMgGetrs_bufferSize",
};

static cusolverStatus_t buffer_size(cmg_solve_t *j, const cmg_mg_call_t *m, int64_t *lwork) {
  cusolverMgHandle_t h = j->set->handle;
  int n = (int)j->a->n;
  cudaDataType t = cuc_cuda_type(j->a->dtype);
  switch (m->op) {
  case CMG_MG_POTRF: return cusolverMgPotrf_bufferSize(h, LOWER, n, j->mats, 1, 1, j->descA, t, lwork);
  case CMG_MG_POTRS:
    return cusolverMgPotrs_bufferSize(h, LOWER, n, m->nrhs, j->mats, 1, 1, j->descA, m->b, 1, 1, m->descB, t,
                                      lwork);
  case CMG_MG_POTRI: return cusolverMgPotri_bufferSize(h, LOWER, n, j->mats, 1, 1, j->descA, t, lwork);
  case CMG_MG_SYEVD:
    return cusolverMgSyevd_bufferSize(h, m->jobz, LOWER, n, j->mats, 1, 1, j->descA, m->w,
                                      cuc_real_type(j->a->dtype), t, lwork);
  case CMG_MG_GETRF: return cusolverMgGetrf_bufferSize(h, n, n, j->mats, 1, 1, j->descA, m->ipiv, t, lwork);
  case CMG_MG_GETRS:
    return cusolverMgGetrs_bufferSize(h, CUBLAS_OP_N, n, m->nrhs, j->mats, 1, 1, j->descA, m->ipiv, m->b, 1, 1,
                                      m->descB, t, lwork);
  }
  return CUSOLVER_STATUS_INVALID_VALUE;
}

static cusolverStatus_t compute(cmg_solve_t *j, const cmg_mg_call_t *m, void **ws, int64_t lwork, int *info) {
  cusolverMgHandle_t h = j->set->handle;
  int n = (int)j->a->n;
  cudaDataType t = cuc_cuda_type(j->a->dtype);
  switch (m->op) {
  case CMG_MG_POTRF: return cusolverMgPotrf(h, LOWER, n, j->mats, 1, 1, j->descA, t, ws, lwork, info);
  case CMG_MG_POTRS:
    return cusolverMgPotrs(h, LOWER, n, m->nrhs, j->mats, 1, 1, j->descA, m->b, 1, 1, m->descB, t, ws, lwork,
                           info);
  case CMG_MG_POTRI: return cusolverMgPotri(h, LOWER, n, j->mats, 1, 1, j->descA, t, ws, lwork, info);
  case CMG_MG_SYEVD:
    return cusolverMgSyevd(h, m->jobz, LOWER, n, j->mats, 1, 1, j->descA, m->w, cuc_real_type(j->a->dtype), t,
                           ws, lwork, info);
  case CMG_MG_GETRF: return cusolverMgGetrf(h, n, n, j->mats, 1, 1, j->descA, m->ipiv, t, ws, lwork, info);
  case CMG_MG_GETRS:
    return cusolverMgGetrs(h, CUBLAS_OP_N, n, m->nrhs, j->mats, 1, 1, j->descA, m->ipiv, m->b, 1, 1, m->descB, t,
                           ws, lwork, info);
  }
  return CUSOLVER_STATUS_INVALID_VALUE;
}

int cmg_mg_lwork(cmg_solve_t *j, const cmg_mg_call_t *m, int64_t *lwork) {
  *lwork = 0;
  cusolverStatus_t st = buffer_size(j, m, lwork);
  return st == CUSOLVER_STATUS_SUCCESS ? 0 : cuc_solver(j->E, j->ids[0], mg_size_name[m->op], st);
}

int cmg_mg_reserve(cmg_solve_t *j, int64_t lwork) {
  int rc = 0;
  for (int r = 0; r < j->R; r++) {
    cmg_dev_t *d = &j->c->dev[j->ids[r]];
    CUC_CHECK(cuc_grow(j->ids[r], &d->ws, &d->ws_bytes, (size_t)lwork * j->esz, j->E));
  }
out:
  return rc;
}

int cmg_mg_run(cmg_solve_t *j, const cmg_mg_call_t *m) {
  int rc = 0, info = 0, dev0 = j->ids[0];
  int64_t lwork = 0;
  cuc_err_t *E = j->E;
  void *ws[CMG_MAX_DEV];
  CUC_CHECK(cmg_mg_lwork(j, m, &lwork));
  CUC_CHECK(cmg_mg_reserve(j, lwork));
  for (int r = 0; r < j->R; r++) ws[r] = j->c->dev[j->ids[r]].ws;
  CUC_CU(dev0, cudaSetDevice(dev0));
  cusolverStatus_t st = compute(j, m, ws, lwork, &info);
  if (st != CUSOLVER_STATUS_SUCCESS && !m->on_failure) return cuc_solver(E, dev0, mg_name[m->op], st);
  if (st != CUSOLVER_STATUS_SUCCESS && info <= 0) return m->on_failure(j, st, info);
  rc = cmg_solve_info(j, mg_name[m->op], info);
out:
  return rc;
}
