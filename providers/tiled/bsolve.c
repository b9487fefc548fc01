/* providers/tiled/bsolve.c - after the factorization: X = A^-1 B with the
 * distributed tile columns, and log det A (tiled.h).
 *
 * B is small next to A (nrhs << n), so one copy of it walks over the GPUs:
 * rank 0's B (a chunk of its columns at a time) goes to the owner of tile
 * column 0; the forward solve L Y = B runs tile column by tile column on
 * each owner (trsm on the diagonal tile, gemm on the rows below), B's rows
 * [kT, n) handed to the next owner; the backward solve L^H X = Y runs the
 * other way, handing over the finished rows [(k+1)T, n) of X (the owner of
 * column k still holds its own Y_k from the forward pass).  It ends on the
 * owner of column 0 (rank 0's GPU), whence X goes to every rank's b.  Each
 * hand-over is an event on the giver's compute stream and a peer copy on
 * the taker's; the host waits only for the NaN/Inf check of X. */
#include <inttypes.h>
#include <stdlib.h>

#include "diag.h"
#include "tiled.h"

#define TL_B_CHUNK_BYTES (1ll << 30) /* B's work copy per GPU */

/* Rows [r0, n) of the walking B from GPU `from` to GPU `to`. */
static int hand_over(tl_solve_t *j, int from, int to, int64_t r0, int64_t cols) {
  int rc = 0;
  cuc_err_t *E = j->E;
  if (from == to || r0 >= j->n) return 0;
  tl_dev_t *a = &j->c->dev[j->ids[from]], *b = &j->c->dev[j->ids[to]];
  size_t esz = j->esz, pitch = (size_t)j->n * esz;
  CUC_CU(j->ids[from], cudaSetDevice(j->ids[from]));
  CUC_CU(j->ids[from], cudaEventRecord(a->bev, a->comp));
  CUC_CU(j->ids[to], cudaSetDevice(j->ids[to]));
  CUC_CU(j->ids[to], cudaStreamWaitEvent(b->comp, a->bev, 0));
  CUC_CU(j->ids[to], cudaMemcpy2DAsync((char *)b->bbuf + (size_t)r0 * esz, pitch, (char *)a->bbuf + (size_t)r0 * esz,
                                       pitch, (size_t)(j->n - r0) * esz, (size_t)cols, cudaMemcpyDefault, b->comp));
out:
  return rc;
}

/* Forward and backward solves on the walking B (cols columns); ends on GPU 0. */
static int walk(tl_solve_t *j, int64_t cols) {
  int rc = 0;
  cuc_err_t *E = j->E;
  const ts_sched_t *s = &j->s;
  int dt = (int)j->a->dtype, cur = 0;
  size_t esz = j->esz;
  for (int k = 0; k < s->nt; k++) { /* L Y = B */
    int o = ts_owner(s, k), dev = j->ids[o];
    int64_t k0 = (int64_t)k * s->T, w = ts_width(s, k), below = j->n - k0 - w;
    CUC_CHECK(hand_over(j, cur, o, k0, cols));
    cur = o;
    tl_dev_t *d = &j->c->dev[dev];
    char *L = tl_col(j, k) + (size_t)k0 * esz, *B = (char *)d->bbuf + (size_t)k0 * esz;
    CUC_CU(dev, cudaSetDevice(dev));
    TL_BL(dev, tl_trsm(d->blas, dt, CUBLAS_SIDE_LEFT, CUBLAS_OP_N, w, cols, L, j->ld, B, j->n));
    if (below > 0)
      TL_BL(dev, tl_gemm_sub(d->blas, dt, CUBLAS_OP_N, CUBLAS_OP_N, below, cols, w, L + (size_t)w * esz, j->ld, B, j->n,
                             B + (size_t)w * esz, j->n));
  }
  for (int k = s->nt - 1; k >= 0; k--) { /* L^H X = Y */
    int o = ts_owner(s, k), dev = j->ids[o];
    int64_t k0 = (int64_t)k * s->T, w = ts_width(s, k), below = j->n - k0 - w;
    CUC_CHECK(hand_over(j, cur, o, k0 + w, cols));
    cur = o;
    tl_dev_t *d = &j->c->dev[dev];
    char *L = tl_col(j, k) + (size_t)k0 * esz, *B = (char *)d->bbuf + (size_t)k0 * esz;
    CUC_CU(dev, cudaSetDevice(dev));
    if (below > 0)
      TL_BL(dev, tl_gemm_sub(d->blas, dt, tl_op_h(dt), CUBLAS_OP_N, w, cols, below, L + (size_t)w * esz, j->ld,
                             B + (size_t)w * esz, j->n, B, j->n));
    TL_BL(dev, tl_trsm(d->blas, dt, CUBLAS_SIDE_LEFT, tl_op_h(dt), w, cols, L, j->ld, B, j->n));
  }
out:
  return rc;
}

int tl_solve_b(tl_solve_t *j) {
  int rc = 0;
  cuc_err_t *E = j->E;
  const muster_shard_t *sh = j->call->shards;
  size_t esz = j->esz, pitch = (size_t)j->n * esz;
  int64_t nrhs = j->a->nrhs, chunk = TL_B_CHUNK_BYTES / (int64_t)pitch;
  if (chunk < 1) chunk = 1;
  if (chunk > nrhs) chunk = nrhs;
  for (int g = 0; g < j->G && g < j->s.nt; g++) {
    tl_dev_t *d = &j->c->dev[j->ids[g]];
    CUC_CHECK(cuc_grow_checked(j->ids[g], &d->bbuf, &d->bbuf_bytes, pitch * (size_t)chunk, "the right-hand sides", E));
  }
  tl_dev_t *d0 = &j->c->dev[j->ids[0]];
  for (int64_t c0 = 0; c0 < nrhs; c0 += chunk) {
    int64_t cols = nrhs - c0 < chunk ? nrhs - c0 : chunk, row, col;
    CUC_CU(j->ids[0], cudaSetDevice(j->ids[0]));
    CUC_CU(j->ids[0], cudaMemcpy2DAsync(d0->bbuf, pitch, (char *)sh[0].b + (size_t)(c0 * sh[0].ldb) * esz,
                                        (size_t)sh[0].ldb * esz, pitch, (size_t)cols, cudaMemcpyDefault, d0->comp));
    CUC_CHECK(walk(j, cols));
    CUC_CU(j->ids[0], cudaSetDevice(j->ids[0]));
    CUC_CHECK(cuc_first_nonfinite(j->ids[0], (int)j->a->dtype, d0->bbuf, j->n, j->n, cols, &d0->scan, &d0->scan_bytes,
                                  d0->comp, &row, &col, E));
    if (row >= 0)
      return cuc_fail(E, MUSTER_ENONFINITE, "NaN/Inf in the solution X at row %" PRId64 ", column %" PRId64
                      " (NaN/Inf in B?)", row + 1, c0 + col + 1);
    for (int r = 0; r < j->G; r++) /* X to every rank, rank 0's own b included */
      CUC_CU(j->ids[0], cudaMemcpy2DAsync((char *)sh[r].b + (size_t)(c0 * sh[r].ldb) * esz, (size_t)sh[r].ldb * esz,
                                          d0->bbuf, pitch, pitch, (size_t)cols, cudaMemcpyDefault, d0->comp));
    CUC_CU(j->ids[0], cudaStreamSynchronize(d0->comp)); /* the walking copy is reused by the next chunk */
  }
out:
  return rc;
}

int tl_logdet(tl_solve_t *j) {
  int rc = 0;
  cuc_err_t *E = j->E;
  void *h = malloc((size_t)j->n * j->esz);
  if (!h) return cuc_fail(E, MUSTER_ENOMEM, "out of host memory for the factor's diagonal");
  CUC_CHECK(tl_sync(j));
  CUC_CHECK(tl_diag(j, h));
  double ld = cuc_diag_chol_logdet(j->a->dtype, h, j->n);
  float f = (float)ld;
  size_t rsz = muster_dtype_real_bytes(j->a->dtype);
  const void *val = rsz == 4 ? (const void *)&f : (const void *)&ld;
  for (int r = 0; r < j->G; r++) {
    CUC_CU(j->ids[r], cudaSetDevice(j->ids[r]));
    CUC_CU(j->ids[r], cudaMemcpy(j->call->shards[r].w, val, rsz, cudaMemcpyDefault));
  }
out:
  free(h);
  return rc;
}
