/* providers/cusolvermg/syevd.c - the eigensolver: cusolverMgSyevd
 * (vectors into A unless MUSTER_NO_VECTORS), the eigenvalues, in pinned
 * host memory, copied to every rank's w (leader_solve.h). */
#include "leader_solve.h"

int cmg_syevd(cmg_solve_t *j) {
  int rc = 0;
  cuc_err_t *E = j->E;
  size_t wbytes = (size_t)j->a->n * muster_dtype_real_bytes(j->a->dtype);
  cmg_mg_call_t m = {.op = CMG_MG_SYEVD};
  m.jobz = (j->a->flags & MUSTER_NO_VECTORS) ? CUSOLVER_EIG_MODE_NOVECTOR : CUSOLVER_EIG_MODE_VECTOR;
  CUC_CHECK(cuc_grow(-1, &j->c->host_w, &j->c->host_w_bytes, wbytes, E));
  m.w = j->c->host_w;
  CUC_CHECK(cmg_mg_run(j, &m));
  CUC_CHECK(cmg_solve_sync(j));
  for (int r = 0; r < j->R; r++) {
    CUC_CU(j->ids[r], cudaSetDevice(j->ids[r]));
    CUC_CU(j->ids[r], cudaMemcpyAsync(j->call->shards[r].w, j->c->host_w, wbytes, cudaMemcpyDefault,
                                      j->c->dev[j->ids[r]].streams[0]));
  }
out:
  return rc;
}
