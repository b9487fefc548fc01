/* providers/cusolvermg/potri.c - the inverse: potrf, then on one GPU
 * cusolverMgPotri and the lower triangle mirrored into the upper, on 2+
 * GPUs the inverse solved for in panels of identity columns (leader_solve.h). */
#include "leader_solve.h"

/* The full inverse: for every column tile C (cyclic layout, on GPU C % R),
 * gather rows [C*T, C*T+wC) of every column left of the tile's end (the
 * lower triangle, from every GPU) into the GPU's staging buffer with 2-D
 * copies, then mirror them into the tile's upper triangle with a local
 * kernel.  Tiles of one GPU run in turn on its stream 0 (one staging
 * buffer), GPUs in parallel; nobody writes the lower triangle. */
static int mirror_inverse(cmg_solve_t *j) {
  int rc = 0;
  cuc_err_t *E = j->E;
  int64_t n = j->a->n, T = j->a->tile, lda = j->lda, lc;
  size_t esz = j->esz;
  for (int r = 0; r < j->R; r++) {
    int dev = j->ids[r];
    cmg_dev_t *d = &j->c->dev[dev];
    CUC_CHECK(cuc_grow(dev, &d->stage[0], &d->stage_bytes[0], (size_t)(T * n) * esz, E));
  }
  for (int64_t C = 0; C < j->L.ntiles; C++) {
    int r, q;
    muster_layout_cyclic_owner(&j->L, C * T, &r, &lc);
    int dev = j->ids[r];
    cmg_dev_t *d = &j->c->dev[dev];
    cudaStream_t s = d->streams[0];
    int64_t row0 = C * T, wc = n - row0 < T ? n - row0 : T;
    CUC_CU(dev, cudaSetDevice(dev));
    for (int64_t I = 0; I <= C; I++) { /* stage(c, i) = A(row0 + c, i) for columns i of tile I */
      int64_t wi = n - I * T < T ? n - I * T : T, li;
      muster_layout_cyclic_owner(&j->L, I * T, &q, &li);
      const char *src = (const char *)j->mats[q] + (size_t)(li * lda + row0) * esz;
      char *dst = (char *)d->stage[0] + (size_t)(I * T * wc) * esz;
      CUC_CU(dev, cudaMemcpy2DAsync(dst, (size_t)wc * esz, src, (size_t)lda * esz, (size_t)wc * esz, (size_t)wi,
                                    cudaMemcpyDefault, s));
    }
    char *tile0 = (char *)j->mats[r] + (size_t)(lc * lda) * esz;
    CUC_CU(dev, cuc_mirror_lower((int)j->a->dtype, d->stage[0], wc, wc, row0, tile0, lda, s));
  }
  CUC_CHECK(cmg_solve_sync(j));
out:
  return rc;
}

/* One GPU: cusolverMgPotri (right there) leaves the lower triangle of the
 * inverse; mirror_inverse completes it. */
static int potri_one_gpu(cmg_solve_t *j) {
  int rc = 0;
  cmg_mg_call_t m = {.op = CMG_MG_POTRI};
  CUC_CHECK(cmg_mg_run(j, &m));
  CUC_CHECK(cmg_solve_sync(j));
  CUC_CHECK(mirror_inverse(j));
out:
  return rc;
}

/* Copy the solved panel (matrix columns c0 .. c0 + w - 1, leading
 * dimension lda) into the result buffers in cuSolverMg's cyclic layout,
 * one copy per tile piece (a tile's columns are contiguous on its rank).
 * Ordered on the first GPU's stream s. */
static int scatter_panel(cmg_solve_t *j, void *const *res, const void *panel, int64_t c0, int64_t w, cudaStream_t s) {
  int rc = 0;
  cuc_err_t *E = j->E;
  int64_t T = j->a->tile, lda = j->lda;
  size_t esz = j->esz;
  for (int64_t c = c0; c < c0 + w;) {
    int64_t end = (c / T + 1) * T < c0 + w ? (c / T + 1) * T : c0 + w, lc;
    int r;
    muster_layout_cyclic_owner(&j->L, c, &r, &lc);
    CUC_CU(j->ids[0], cudaMemcpyAsync((char *)res[r] + (size_t)(lc * lda) * esz,
                                      (const char *)panel + (size_t)((c - c0) * lda) * esz,
                                      (size_t)((end - c) * lda) * esz, cudaMemcpyDefault, s));
    c = end;
  }
out:
  return rc;
}

/* 2+ GPUs: A^-1 = potrs(L, I), in panels of at most CMG_RHS_PANEL identity
 * columns (cuSolverMg's defect, leader_solve.h, rules out cusolverMgPotri and wider
 * calls).  Each panel lives on the first GPU (so it sits in grid column
 * 0, as in cmg_potrs), is solved in place, and its columns are copied into
 * per-GPU result buffers in cuSolverMg's cyclic layout; L stays in A until
 * the last panel, then every GPU copies its result into A.  The result is
 * the full inverse (no mirror).  Extra memory: one more shard per GPU and
 * an lda x 2048 panel on the first. */
static int inverse_by_solves(cmg_solve_t *j) {
  int rc = 0;
  cuc_err_t *E = j->E;
  cudaDataType t = cuc_cuda_type(j->a->dtype);
  int64_t n = j->a->n, lda = j->lda, W = n < CMG_RHS_PANEL ? n : CMG_RHS_PANEL, lwork = 0, lw = 0;
  int64_t last = n % W ? n % W : W; /* width of the last panel */
  size_t esz = j->esz;
  int dev0 = j->ids[0];
  cmg_dev_t *d0 = &j->c->dev[dev0];
  cudaStream_t s0 = d0->streams[0];
  void *bp[CMG_MAX_DEV], *res[CMG_MAX_DEV];
  cmg_mg_call_t full = {.op = CMG_MG_POTRS, .nrhs = (int)W, .b = bp};
  cmg_mg_call_t tail = {.op = CMG_MG_POTRS, .nrhs = (int)last, .b = bp};
  for (int r = 0; r < j->R; r++) {
    cmg_dev_t *d = &j->c->dev[j->ids[r]];
    CUC_CHECK(cuc_grow(j->ids[r], &d->inv, &d->inv_bytes, (size_t)(lda * muster_layout_cyclic_real_cols(&j->L, r)) * esz, E));
    res[r] = d->inv;
  }
  CUC_CHECK(cuc_grow(dev0, &d0->panel, &d0->panel_bytes, (size_t)(lda * W) * esz, E));
  for (int r = 0; r < j->R; r++) bp[r] = d0->panel; /* only grid column 0 is read */
  CUC_CHECK(cmg_desc_get(j->set, lda, W, W, t, &full.descB, E));
  CUC_CHECK(cmg_desc_get(j->set, lda, last, last, t, &tail.descB, E));
  /* one workspace for both widths, grown once before the first panel */
  CUC_CHECK(cmg_mg_lwork(j, &full, &lwork));
  CUC_CHECK(cmg_mg_lwork(j, &tail, &lw));
  CUC_CHECK(cmg_mg_reserve(j, lwork > lw ? lwork : lw));
  for (int64_t c0 = 0; c0 < n; c0 += W) {
    int64_t w = n - c0 < W ? n - c0 : W;
    CUC_CU(dev0, cudaSetDevice(dev0));
    CUC_CU(dev0, cuc_identity_panel((int)j->a->dtype, d0->panel, lda, c0, w, s0));
    /* the panel (and the previous panel's copies out of it) must be done
     * before cuSolverMg, which runs on its own streams, touches it */
    CUC_CU(dev0, cudaStreamSynchronize(s0));
    CUC_CHECK(cmg_mg_run(j, w == W ? &full : &tail));
    CUC_CHECK(cmg_solve_sync(j));
    CUC_CHECK(scatter_panel(j, res, d0->panel, c0, w, s0));
  }
  CUC_CU(dev0, cudaStreamSynchronize(s0));
  for (int r = 0; r < j->R; r++) { /* L is no longer needed: the inverse into A */
    CUC_CU(j->ids[r], cudaSetDevice(j->ids[r]));
    CUC_CU(j->ids[r], cudaMemcpyAsync(j->mats[r], res[r], (size_t)(lda * muster_layout_cyclic_real_cols(&j->L, r)) * esz,
                                      cudaMemcpyDefault, j->c->dev[j->ids[r]].streams[0]));
  }
  CUC_CHECK(cmg_solve_sync(j));
out:
  return rc;
}

int cmg_potri(cmg_solve_t *j) {
  int rc = 0;
  CUC_CHECK(cmg_potrf(j));
  rc = j->R == 1 ? potri_one_gpu(j) : inverse_by_solves(j);
out:
  return rc;
}
