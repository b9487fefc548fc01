/* providers/tiled/factor.c - the tiled Cholesky on the GPUs: the schedule
 * (tsched.h) issued op by op with no host synchronization, then the checks
 * of what it found (tiled.h).  With the panel on its own stream
 * (MUSTER_TILED_PRIORITY=1) that stream first waits for the compute
 * stream (A moved in, the infos zeroed) and the compute stream waits for
 * it at the end, so whatever follows on the compute stream sees the factor.
 *
 * Every potrf writes its info into its own word (one per tile column, on
 * the owner), read only after the whole factorization: the first tile
 * column k with info i != 0 is the failing leading minor kT + i, as the
 * other providers report it (MUSTER_ENOTPD, *info).  NaN/Inf in A follows
 * the cusolverdn provider's rule: it shows on L's diagonal (before the
 * failing minor, if any) or in the failing row left of the pivot, and is
 * MUSTER_ENONFINITE rather than ENOTPD. */
#include <inttypes.h>
#include <stdlib.h>

#include "diag.h"
#include "tiled.h"

/* `to` waits for what `from` has queued so far (ev: the hand-over event). */
static int join(int dev, cudaStream_t from, cudaStream_t to, cudaEvent_t ev, cuc_err_t *E) {
  int rc = 0;
  CUC_CU(dev, cudaEventRecord(ev, from));
  CUC_CU(dev, cudaStreamWaitEvent(to, ev, 0));
out:
  return rc;
}

/* Per GPU: events, copy streams, the panel stream, panel slots, potrf
 * workspace and infos. */
static int prepare(tl_solve_t *j) {
  int rc = 0;
  cuc_err_t *E = j->E;
  const ts_sched_t *s = &j->s;
  cudaDataType type = cuc_cuda_type(j->a->dtype);
  for (int g = 0; g < j->G; g++) {
    int dev = j->ids[g];
    tl_dev_t *d = &j->c->dev[dev];
    cudaStream_t st;
    CUC_CU(dev, cudaSetDevice(dev));
    CUC_CHECK(tl_events(j->c, dev, s->ev_count[g], E));
    if (s->prio) CUC_CHECK(tl_panel_ready(j->c, dev, E));
    for (int to = 0; to < j->G; to++) /* to itself: the MOVEs' */
      if (to != g || s->move) CUC_CHECK(tl_copy_stream(j->c, dev, to, &st, E));
    if (j->G > 1 && ts_local_tiles(s, g) > 0) {
      size_t bytes = (size_t)s->slots * (size_t)j->n * (size_t)s->T * j->esz;
      CUC_CHECK(cuc_grow_checked(dev, &d->slots, &d->slots_bytes, bytes, "the panel slots", E));
    }
    CUC_CHECK(cuc_grow(dev, &d->info, &d->info_bytes, (size_t)s->nt * sizeof(int), E));
    CUC_CU(dev, cudaMemsetAsync(d->info, 0, (size_t)s->nt * sizeof(int), d->comp));
    if (s->prio) CUC_CHECK(join(dev, d->comp, d->panel, d->pev, E));
    if (ts_local_tiles(s, g) == 0) continue;
    size_t dbytes = 0, hbytes = 0;
    CUC_SO(dev, cusolverDnXpotrf_bufferSize(d->dn, d->params, CUBLAS_FILL_MODE_LOWER, s->T, type, tl_col(j, g), j->ld,
                                            type, &dbytes, &hbytes));
    CUC_CHECK(cuc_grow(dev, &d->dws, &d->dws_bytes, dbytes, E));
    if (hbytes > d->hws_bytes) {
      void *h = realloc(d->hws, hbytes);
      if (!h) return cuc_fail(E, MUSTER_ENOMEM, "device %d: out of host memory for potrf's workspace", dev);
      d->hws = h;
      d->hws_bytes = hbytes;
    }
  }
out:
  return rc;
}

static cudaEvent_t event(const tl_solve_t *j, int e) { return j->c->dev[j->ids[j->s.ev_dev[e]]].ev[j->s.ev_idx[e]]; }

/* UPDATE(k, jj) on GPU g: syrk/herk on the diagonal tile, gemm below
 * (blas: the handle of the op's stream). */
static int update(tl_solve_t *j, const ts_op_t *op, tl_dev_t *d, cublasHandle_t blas, int dev) {
  int rc = 0;
  cuc_err_t *E = j->E;
  const ts_sched_t *s = &j->s;
  int dt = (int)j->a->dtype;
  int64_t T = s->T, wk = ts_width(s, op->k), j0 = (int64_t)op->j * T, wj = ts_width(s, op->j), below = j->n - j0 - wj;
  size_t esz = j->esz;
  const char *P; /* panel row (k+1)T */
  int64_t ldp;
  if (op->slot < 0) {
    P = tl_col(j, op->k) + (size_t)((op->k + 1) * T) * esz;
    ldp = j->ld;
  } else {
    P = (const char *)d->slots + (size_t)op->slot * (size_t)j->n * (size_t)T * esz;
    ldp = j->n;
  }
  const char *Pj = P + (size_t)(j0 - (op->k + 1) * T) * esz; /* L_jk */
  char *C = tl_col(j, op->j) + (size_t)j0 * esz;
  TL_BL(dev, tl_herk_sub(blas, dt, wj, wk, Pj, ldp, C, j->ld));
  if (below > 0)
    TL_BL(dev, tl_gemm_sub(blas, dt, CUBLAS_OP_N, tl_op_h(dt), below, wj, wk, Pj + (size_t)wj * esz, ldp, Pj, ldp,
                           C + (size_t)wj * esz, j->ld));
out:
  return rc;
}

static int run_op(tl_solve_t *j, const ts_op_t *op) {
  int rc = 0;
  cuc_err_t *E = j->E;
  const ts_sched_t *s = &j->s;
  int dev = j->ids[op->dev], dt = (int)j->a->dtype;
  tl_dev_t *d = &j->c->dev[dev];
  int pan = op->stream == TS_PANEL;
  cudaStream_t st = op->stream == TS_COMPUTE ? d->comp : pan ? d->panel : d->copy[op->stream - TS_COPY];
  cublasHandle_t blas = pan ? d->pblas : d->blas;
  int64_t T = s->T, k0 = (int64_t)op->k * T, wk = ts_width(s, op->k);
  size_t esz = j->esz;
  char *K = tl_col(j, op->k);
  cudaDataType type = cuc_cuda_type(dt);
  CUC_CU(dev, cudaSetDevice(dev));
  for (int w = 0; w < op->nwait; w++) CUC_CU(dev, cudaStreamWaitEvent(st, event(j, op->wait[w]), 0));
  switch (op->kind) {
  case TS_POTRF:
    CUC_SO(dev, cusolverDnXpotrf(pan ? d->pdn : d->dn, d->params, CUBLAS_FILL_MODE_LOWER, wk, type, K + (size_t)k0 * esz,
                                 j->ld, type, d->dws, d->dws_bytes, d->hws, d->hws_bytes, (int *)d->info + op->k));
    break;
  case TS_TRSM: /* rows below: L_ik = A_ik L_kk^-H */
    TL_BL(dev, tl_trsm(blas, dt, CUBLAS_SIDE_RIGHT, tl_op_h(dt), j->n - k0 - wk, wk, K + (size_t)k0 * esz, j->ld,
                       K + (size_t)(k0 + wk) * esz, j->ld));
    break;
  case TS_SEND: {
    tl_dev_t *to = &j->c->dev[j->ids[op->j]];
    char *dst = (char *)to->slots + (size_t)op->slot * (size_t)j->n * (size_t)T * esz;
    CUC_CU(dev, cudaMemcpy2DAsync(dst, (size_t)j->n * esz, K + (size_t)(k0 + T) * esz, (size_t)j->ld * esz,
                                  (size_t)(j->n - k0 - T) * esz, (size_t)wk, cudaMemcpyDefault, st));
    break;
  }
  case TS_UPDATE: CUC_CHECK(update(j, op, d, blas, dev)); break;
  case TS_MOVE: CUC_CHECK(tl_move_col(j, op->k, 0, st)); break;
  }
  if (op->rec >= 0) CUC_CU(dev, cudaEventRecord(event(j, op->rec), st));
out:
  return rc;
}

int tl_factor(tl_solve_t *j) {
  int rc = 0;
  cuc_err_t *E = j->E;
  CUC_CHECK(prepare(j));
  for (int i = 0; i < j->s.nops; i++) CUC_CHECK(run_op(j, &j->s.ops[i]));
  for (int g = 0; g < j->G && j->s.prio; g++) {
    int dev = j->ids[g];
    tl_dev_t *d = &j->c->dev[dev];
    CUC_CU(dev, cudaSetDevice(dev));
    CUC_CHECK(join(dev, d->panel, d->comp, d->pev, E));
  }
out:
  return rc;
}

int tl_diag(tl_solve_t *j, void *host) {
  int rc = 0;
  cuc_err_t *E = j->E;
  for (int k = 0; k < j->s.nt; k++) {
    int dev = j->ids[ts_owner(&j->s, k)];
    int64_t k0 = (int64_t)k * j->s.T;
    CUC_CU(dev, cudaSetDevice(dev));
    CUC_CU(dev, cudaMemcpy2D((char *)host + (size_t)k0 * j->esz, j->esz, tl_col(j, k) + (size_t)k0 * j->esz,
                             (size_t)(j->ld + 1) * j->esz, j->esz, (size_t)ts_width(&j->s, k), cudaMemcpyDefault));
  }
out:
  return rc;
}

/* Row r of L, columns 0 .. r-1, into host (one strided copy per tile). */
static int fetch_row(tl_solve_t *j, int64_t r, void *host) {
  int rc = 0;
  cuc_err_t *E = j->E;
  for (int k = 0; k < j->s.nt && (int64_t)k * j->s.T < r; k++) {
    int dev = j->ids[ts_owner(&j->s, k)];
    int64_t k0 = (int64_t)k * j->s.T, w = ts_width(&j->s, k) < r - k0 ? ts_width(&j->s, k) : r - k0;
    CUC_CU(dev, cudaSetDevice(dev));
    CUC_CU(dev, cudaMemcpy2D((char *)host + (size_t)k0 * j->esz, j->esz, tl_col(j, k) + (size_t)r * j->esz,
                             (size_t)j->ld * j->esz, j->esz, (size_t)w, cudaMemcpyDefault));
  }
out:
  return rc;
}

/* The first failing tile's info as a global minor into j->info (0 none). */
static int read_infos(tl_solve_t *j) {
  int rc = 0;
  cuc_err_t *E = j->E;
  int nt = j->s.nt, *h = malloc((size_t)nt * sizeof(int)), *all = malloc((size_t)nt * sizeof(int));
  if (!h || !all) {
    rc = cuc_fail(E, MUSTER_ENOMEM, "out of host memory for %d infos", nt);
    goto out;
  }
  for (int g = 0; g < j->G && g < nt; g++) {
    int dev = j->ids[g];
    CUC_CU(dev, cudaSetDevice(dev));
    CUC_CU(dev, cudaMemcpy(h, j->c->dev[dev].info, (size_t)nt * sizeof(int), cudaMemcpyDeviceToHost));
    for (int k = g; k < nt; k += j->G) all[k] = h[k];
  }
  j->info = 0;
  for (int k = 0; k < nt && !j->info; k++) {
    if (all[k] < 0) {
      rc = cuc_fail(E, MUSTER_EPROVIDER, "cusolverDnXpotrf of tile column %d on device %d: parameter %d was refused",
                    k, j->ids[ts_owner(&j->s, k)], -all[k]);
      goto out;
    }
    if (all[k] > 0) j->info = (int64_t)k * j->s.T + all[k];
  }
out:
  free(h);
  free(all);
  return rc;
}

int tl_check_factor(tl_solve_t *j) {
  int rc = 0;
  cuc_err_t *E = j->E;
  muster_dtype_t t = j->a->dtype;
  void *h = malloc((size_t)j->n * j->esz);
  if (!h) return cuc_fail(E, MUSTER_ENOMEM, "out of host memory for the factor's diagonal");
  CUC_CHECK(tl_sync(j));
  CUC_CHECK(read_infos(j));
  CUC_CHECK(tl_diag(j, h));
  int64_t upto = j->info > 0 ? j->info - 1 : j->n, bad = cuc_diag_first(t, h, upto, CUC_DIAG_NONFINITE) + 1;
  if (!bad && j->info > 1) { /* the failing row left of its pivot */
    CUC_CHECK(fetch_row(j, j->info - 1, h));
    if (cuc_diag_first(t, h, j->info - 1, CUC_DIAG_NONFINITE) >= 0) bad = j->info;
  }
  if (bad) {
    rc = cuc_fail(E, MUSTER_ENONFINITE, "NaN/Inf in A: the tiled potrf on devices %d.. found it in row %" PRId64
                  " of the factor (info %" PRId64 ")", j->ids[0], bad, j->info);
    goto out;
  }
  if (j->info > 0) {
    *j->call->info = j->info;
    rc = cuc_fail(E, MUSTER_ENOTPD, "tiled potrf on devices %d..: leading minor %" PRId64 " (tile column %" PRId64 ")",
                  j->ids[0], j->info, (j->info - 1) / j->s.T);
  }
out:
  free(h);
  return rc;
}
