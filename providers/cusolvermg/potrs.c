/* providers/cusolvermg/potrs.c - the Cholesky drivers: potrf (also the
 * first half of potri), and potrs on rank 0's B with X copied to every
 * rank (leader_solve.h). */
#include <stdlib.h>

#include "leader_solve.h"

/* First diagonal entry (0-based) whose real part is not positive (or NaN),
 * or -1: read tile by tile with strided copies (one per tile). */
static int diag_scan(cmg_solve_t *j, int64_t *first) {
  int64_t n = j->a->n, T = j->a->tile, lda = j->lda;
  size_t esz = j->esz;
  char *h = malloc((size_t)n * esz);
  *first = -1;
  if (!h) return -1;
  for (int64_t C = 0; C * T < n; C++) {
    int r;
    int64_t lc, w = n - C * T < T ? n - C * T : T;
    muster_layout_cyclic_owner(&j->L, C * T, &r, &lc);
    const char *src = (const char *)j->mats[r] + (size_t)(lc * lda + C * T) * esz;
    if (cudaSetDevice(j->ids[r]) != cudaSuccess ||
        cudaMemcpy2D(h + (size_t)(C * T) * esz, esz, src, (size_t)(lda + 1) * esz, esz, (size_t)w,
                     cudaMemcpyDefault) != cudaSuccess) {
      (void)cudaGetLastError();
      free(h);
      return -1;
    }
  }
  for (int64_t k = 0; k < n && *first < 0; k++) {
    double re = muster_dtype_real_bytes(j->a->dtype) == 4 ? (double)*(float *)(h + (size_t)k * esz)
                                                                          : *(double *)(h + (size_t)k * esz);
    if (!(re > 0.0)) *first = k;
  }
  free(h);
  return 0;
}

/* A failed cusolverMgPotrf status with info <= 0.  On several GPUs
 * cuSolverMg reports a matrix that is not positive definite as
 * CUSOLVER_STATUS_INTERNAL_ERROR without setting info; the factorization
 * stops with the failing pivot on the diagonal (earlier pivots are L's,
 * positive), so find it there. */
static int potrf_failed(cmg_solve_t *j, cusolverStatus_t st, int info) {
  int64_t k = -1;
  for (int r = 0; r < j->R; r++)
    if (cudaSetDevice(j->ids[r]) != cudaSuccess || cudaDeviceSynchronize() != cudaSuccess) (void)cudaGetLastError();
  if (st == CUSOLVER_STATUS_INTERNAL_ERROR && diag_scan(j, &k) == 0 && k >= 0) {
    *j->call->info = k + 1;
    return cuc_fail(j->E, MUSTER_ENOTPD, "cusolverMgPotrf on devices %d..: %s with pivot %lld not positive: "
                    "not positive definite (leading minor %lld)", j->ids[0], cuc_solver_status_name(st),
                    (long long)(k + 1), (long long)(k + 1));
  }
  return cuc_fail(j->E, MUSTER_ECUDA, "device %d: cusolverMgPotrf failed: %s (%d), info=%d", j->ids[0],
                  cuc_solver_status_name(st), (int)st, info);
}

int cmg_potrf(cmg_solve_t *j) {
  cmg_mg_call_t m = {.op = CMG_MG_POTRF, .on_failure = potrf_failed};
  return cmg_mg_run(j, &m);
}

int cmg_potrs(cmg_solve_t *j) {
  int rc = 0;
  cuc_err_t *E = j->E;
  const muster_shard_t *sh = j->call->shards;
  void *bp[CMG_MAX_DEV];
  cmg_mg_call_t m = {.op = CMG_MG_POTRS, .b = bp};
  CUC_CHECK(cmg_potrf(j));
  /* B lives on rank 0's device: chunks of at most one tile of columns keep
   * every chunk in grid column 0; the other entries are never touched.  No
   * chunk is wider than CMG_RHS_PANEL (cuSolverMg's defect, leader_solve.h). */
  int64_t ldb = sh[0].ldb, chunk = j->a->tile < CMG_RHS_PANEL ? j->a->tile : CMG_RHS_PANEL;
  for (int64_t c0 = 0; c0 < j->a->nrhs; c0 += chunk) {
    int64_t cols = j->a->nrhs - c0 < chunk ? j->a->nrhs - c0 : chunk;
    CUC_CHECK(cmg_desc_get(j->set, ldb, cols, j->a->tile, cuc_cuda_type(j->a->dtype), &m.descB, E));
    m.nrhs = (int)cols;
    bp[0] = (char *)sh[0].b + (size_t)(c0 * ldb) * j->esz;
    for (int r = 1; r < j->R; r++) bp[r] = sh[r].b;
    CUC_CHECK(cmg_mg_run(j, &m));
  }
  CUC_CHECK(cmg_solve_sync(j));
  for (int r = 1; r < j->R; r++) { /* X to every rank */
    cudaStream_t s = j->c->dev[j->ids[r]].streams[0];
    CUC_CU(j->ids[r], cudaSetDevice(j->ids[r]));
    CUC_CU(j->ids[r], cudaMemcpy2DAsync(sh[r].b, (size_t)sh[r].ldb * j->esz, sh[0].b, (size_t)ldb * j->esz,
                                        (size_t)j->a->n * j->esz, (size_t)j->a->nrhs, cudaMemcpyDefault, s));
  }
out:
  return rc;
}
