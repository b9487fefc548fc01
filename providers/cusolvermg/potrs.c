/* providers/cusolvermg/potrs.c - the Cholesky drivers: potrf (also the
 * first half of potri), and potrs on rank 0's B with X copied to every
 * rank, and log det A from L's diagonal (leader_solve.h).  The solve on B
 * (cmg_solve_b) and X's way to every rank (cmg_x_to_ranks) serve getrs too. */
#include <stdlib.h>

#include "diag.h"
#include "leader_solve.h"

/* The factor's diagonal, fetched into a host buffer *h of n elements
 * (freed by the caller). */
static int fetch_diag(cmg_solve_t *j, void **h) {
  *h = malloc((size_t)j->a->n * j->esz);
  if (!*h) return cuc_fail(j->E, MUSTER_ENOMEM, "cannot allocate the %lld diagonal entries of the factor",
                           (long long)j->a->n);
  return cmg_solve_diag(j, *h);
}

int cmg_solve_diag_first(cmg_solve_t *j, int what, int64_t *first) {
  void *h = NULL;
  int rc = cmg_solve_sync(j);
  if (rc == 0) rc = fetch_diag(j, &h);
  *first = rc == 0 ? cuc_diag_first(j->a->dtype, h, j->a->n, what) : -1;
  free(h);
  return rc;
}

/* A failed cusolverMgPotrf status with info <= 0.  On several GPUs
 * cuSolverMg reports a matrix that is not positive definite as
 * CUSOLVER_STATUS_INTERNAL_ERROR without setting info; the factorization
 * stops with the failing pivot on the diagonal (earlier pivots are L's,
 * positive), so find it there. */
static int potrf_failed(cmg_solve_t *j, cusolverStatus_t st, int info) {
  int64_t k = -1;
  char keep[16];
  cuc_err_t quiet = {keep, sizeof keep, CMG_NAME}, *E = j->E;
  j->E = &quiet; /* a failing look at the diagonal leaves the cuSolverMg message */
  if (st == CUSOLVER_STATUS_INTERNAL_ERROR) (void)cmg_solve_diag_first(j, CUC_DIAG_NOT_POSITIVE, &k);
  j->E = E;
  if (k >= 0) {
    *j->call->info = k + 1;
    return cuc_fail(j->E, MUSTER_ENOTPD, "cusolverMgPotrf on devices %d..: %s with pivot %lld not positive",
                    j->ids[0], cuc_solver_status_name(st), (long long)(k + 1)); /* detail */
  }
  return cuc_fail(j->E, MUSTER_ECUDA, "device %d: cusolverMgPotrf failed: %s (%d), info=%d", j->ids[0],
                  cuc_solver_status_name(st), (int)st, info);
}

int cmg_potrf(cmg_solve_t *j) {
  cmg_mg_call_t m = {.op = CMG_MG_POTRF, .on_failure = potrf_failed};
  return cmg_mg_run(j, &m);
}

int cmg_solve_b(cmg_solve_t *j, cmg_mg_call_t *m) {
  int rc = 0;
  cuc_err_t *E = j->E;
  const muster_shard_t *sh = j->call->shards;
  void *bp[CMG_MAX_DEV];
  m->b = bp;
  /* B lives on rank 0's device: chunks of at most one tile of columns keep
   * every chunk in grid column 0; the other entries are never touched.  No
   * chunk is wider than CMG_RHS_PANEL (cuSolverMg's defect, leader_solve.h). */
  int64_t ldb = sh[0].ldb, chunk = j->a->tile < CMG_RHS_PANEL ? j->a->tile : CMG_RHS_PANEL;
  for (int64_t c0 = 0; c0 < j->a->nrhs; c0 += chunk) {
    int64_t cols = j->a->nrhs - c0 < chunk ? j->a->nrhs - c0 : chunk;
    CUC_CHECK(cmg_desc_get(j->set, ldb, cols, j->a->tile, cuc_cuda_type(j->a->dtype), &m->descB, E));
    m->nrhs = (int)cols;
    bp[0] = (char *)sh[0].b + (size_t)(c0 * ldb) * j->esz;
    for (int r = 1; r < j->R; r++) bp[r] = sh[r].b;
    CUC_CHECK(cmg_mg_run(j, m));
  }
  CUC_CHECK(cmg_solve_sync(j));
out:
  m->b = NULL;
  return rc;
}

int cmg_x_to_ranks(cmg_solve_t *j) {
  int rc = 0;
  cuc_err_t *E = j->E;
  const muster_shard_t *sh = j->call->shards;
  for (int r = 1; r < j->R; r++) {
    cudaStream_t s = j->c->dev[j->ids[r]].streams[0];
    CUC_CU(j->ids[r], cudaSetDevice(j->ids[r]));
    CUC_CU(j->ids[r], cudaMemcpy2DAsync(sh[r].b, (size_t)sh[r].ldb * j->esz, sh[0].b, (size_t)sh[0].ldb * j->esz,
                                        (size_t)j->a->n * j->esz, (size_t)j->a->nrhs, cudaMemcpyDefault, s));
  }
out:
  return rc;
}

/* MUSTER_LOGDET: log det A = 2 sum log L(k,k), from the n diagonal entries
 * of the factor (one strided copy per tile, not a pass over A), into every
 * rank's w as one real of the dtype's real type. */
static int logdet_to_ranks(cmg_solve_t *j) {
  int rc = 0;
  cuc_err_t *E = j->E;
  void *h = NULL;
  CUC_CHECK(cmg_solve_sync(j));
  CUC_CHECK(fetch_diag(j, &h));
  double ld = cuc_diag_chol_logdet(j->a->dtype, h, j->a->n);
  float f = (float)ld;
  const void *val = muster_dtype_real_bytes(j->a->dtype) == 4 ? (const void *)&f : (const void *)&ld;
  for (int r = 0; r < j->R; r++) {
    CUC_CU(j->ids[r], cudaSetDevice(j->ids[r]));
    CUC_CU(j->ids[r], cudaMemcpy(j->call->shards[r].w, val, muster_dtype_real_bytes(j->a->dtype), cudaMemcpyDefault));
  }
out:
  free(h);
  return rc;
}

int cmg_potrs(cmg_solve_t *j) {
  int rc = 0;
  cmg_mg_call_t m = {.op = CMG_MG_POTRS};
  CUC_CHECK(cmg_potrf(j));
  if (j->a->flags & MUSTER_LOGDET) CUC_CHECK(logdet_to_ranks(j));
  CUC_CHECK(cmg_solve_b(j, &m));
  CUC_CHECK(cmg_x_to_ranks(j));
out:
  return rc;
}
