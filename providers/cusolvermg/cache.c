/* providers/cusolvermg/cache.c - errors, counters and the context's caches
 * (handles, grids, descriptors, streams, buffers, peer access). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmgInt.h"

uint64_t cmg_stats[CMG_NSTATS];

void cmg_stat_add(int which, uint64_t n) { __atomic_add_fetch(&cmg_stats[which], n, __ATOMIC_RELAXED); }

int cmg_fail(cmg_err_t *e, int code, const char *fmt, ...) {
  if (e && e->buf && e->len) {
    int used = snprintf(e->buf, e->len, "cusolvermg: ");
    va_list ap;
    va_start(ap, fmt);
    if (used >= 0 && (size_t)used < e->len) vsnprintf(e->buf + used, e->len - (size_t)used, fmt, ap);
    va_end(ap);
  }
  return code;
}

int cmg_cuda(cmg_err_t *e, int dev, const char *call, cudaError_t st) {
  (void)cudaGetLastError(); /* do not leave a sticky-looking error behind */
  return cmg_fail(e, MUSTER_ECUDA, "device %d: %s failed: %s (%d): %s", dev, call,
                  cudaGetErrorName(st), (int)st, cudaGetErrorString(st));
}

const char *cmg_solver_status_name(cusolverStatus_t st) {
  switch (st) {
  case CUSOLVER_STATUS_SUCCESS: return "CUSOLVER_STATUS_SUCCESS";
  case CUSOLVER_STATUS_NOT_INITIALIZED: return "CUSOLVER_STATUS_NOT_INITIALIZED";
  case CUSOLVER_STATUS_ALLOC_FAILED: return "CUSOLVER_STATUS_ALLOC_FAILED";
  case CUSOLVER_STATUS_INVALID_VALUE: return "CUSOLVER_STATUS_INVALID_VALUE";
  case CUSOLVER_STATUS_ARCH_MISMATCH: return "CUSOLVER_STATUS_ARCH_MISMATCH";
  case CUSOLVER_STATUS_MAPPING_ERROR: return "CUSOLVER_STATUS_MAPPING_ERROR";
  case CUSOLVER_STATUS_EXECUTION_FAILED: return "CUSOLVER_STATUS_EXECUTION_FAILED";
  case CUSOLVER_STATUS_INTERNAL_ERROR: return "CUSOLVER_STATUS_INTERNAL_ERROR";
  case CUSOLVER_STATUS_MATRIX_TYPE_NOT_SUPPORTED: return "CUSOLVER_STATUS_MATRIX_TYPE_NOT_SUPPORTED";
  case CUSOLVER_STATUS_NOT_SUPPORTED: return "CUSOLVER_STATUS_NOT_SUPPORTED";
  case CUSOLVER_STATUS_ZERO_PIVOT: return "CUSOLVER_STATUS_ZERO_PIVOT";
  case CUSOLVER_STATUS_INVALID_LICENSE: return "CUSOLVER_STATUS_INVALID_LICENSE";
  case CUSOLVER_STATUS_INVALID_WORKSPACE: return "CUSOLVER_STATUS_INVALID_WORKSPACE";
  default: return "CUSOLVER_STATUS_UNKNOWN";
  }
}

int cmg_solver(cmg_err_t *e, int dev, const char *call, cusolverStatus_t st) {
  (void)cudaGetLastError();
  return cmg_fail(e, MUSTER_ECUDA, "device %d: %s failed: %s (%d)", dev, call,
                  cmg_solver_status_name(st), (int)st);
}

/* ---- device sets: handle + grid ------------------------------------------------ */

int cmg_devset_get(cmg_ctx_t *c, int n, const int *ids, cmg_devset_t **out, cmg_err_t *E) {
  int rc = 0;
  cmg_devset_t *s;
  for (s = c->sets; s; s = s->next)
    if (s->n == n && !memcmp(s->ids, ids, (size_t)n * sizeof(int))) {
      *out = s;
      return 0;
    }
  s = calloc(1, sizeof *s);
  if (!s) return cmg_fail(E, MUSTER_ENOMEM, "out of host memory for a device set");
  s->n = n;
  memcpy(s->ids, ids, (size_t)n * sizeof(int));
  CMG_CU(ids[0], cudaSetDevice(ids[0]));
  CMG_SO(ids[0], cusolverMgCreate(&s->handle));
  CMG_SO(ids[0], cusolverMgDeviceSelect(s->handle, n, s->ids));
  CMG_SO(ids[0], cusolverMgCreateDeviceGrid(&s->grid, 1, n, s->ids, CUDALIBMG_GRID_MAPPING_COL_MAJOR));
  cmg_stat_add(CMG_STAT_HANDLES, 1);
  s->next = c->sets;
  c->sets = s;
  *out = s;
  return 0;
out:
  if (s->grid) cusolverMgDestroyGrid(s->grid);
  if (s->handle) cusolverMgDestroy(s->handle);
  free(s);
  return rc;
}

int cmg_desc_get(cmg_devset_t *s, int64_t rows, int64_t cols, int64_t tile, cudaDataType type,
                 cudaLibMgMatrixDesc_t *out, cmg_err_t *E) {
  int rc = 0;
  for (cmg_desc_t *d = s->descs; d; d = d->next)
    if (d->rows == rows && d->cols == cols && d->tile == tile && d->type == type) {
      *out = d->desc;
      return 0;
    }
  cmg_desc_t *d = calloc(1, sizeof *d);
  if (!d) return cmg_fail(E, MUSTER_ENOMEM, "out of host memory for a descriptor");
  /* 1-D column block-cyclic: one row block of all `rows` (the local leading
   * dimension), column tiles of `tile`; IA = JA = 1 picks the n x n part. */
  CMG_SO(s->ids[0], cusolverMgCreateMatrixDesc(&d->desc, rows, cols, rows, tile, type, s->grid));
  d->rows = rows;
  d->cols = cols;
  d->tile = tile;
  d->type = type;
  d->next = s->descs;
  s->descs = d;
  cmg_stat_add(CMG_STAT_DESCS, 1);
  *out = d->desc;
  return 0;
out:
  free(d);
  return rc;
}

int cmg_dev_ready(cmg_ctx_t *c, int dev, cmg_err_t *E) {
  int rc = 0;
  if (dev < 0 || dev >= CMG_MAX_ORDINAL)
    return cmg_fail(E, MUSTER_EINVAL, "device ordinal %d out of range 0..%d", dev, CMG_MAX_ORDINAL - 1);
  cmg_dev_t *d = &c->dev[dev];
  if (d->ready) return 0;
  CMG_CU(dev, cudaSetDevice(dev));
  for (int i = 0; i < CMG_STREAMS; i++)
    CMG_CU(dev, cudaStreamCreateWithFlags(&d->streams[i], cudaStreamNonBlocking));
  d->ready = 1;
  return 0;
out:
  for (int i = 0; i < CMG_STREAMS; i++)
    if (d->streams[i]) {
      cudaStreamDestroy(d->streams[i]);
      d->streams[i] = NULL;
    }
  return rc;
}

int cmg_grow(int dev, void **buf, size_t *have, size_t bytes, cmg_err_t *E) {
  int rc = 0;
  if (bytes <= *have && *buf) return 0;
  if (bytes == 0) bytes = 1;
  if (dev >= 0) {
    CMG_CU(dev, cudaSetDevice(dev));
    if (*buf) CMG_CU(dev, cudaFree(*buf));
    *buf = NULL;
    *have = 0;
    CMG_CU(dev, cudaMalloc(buf, bytes));
  } else {
    if (*buf) cudaFreeHost(*buf);
    *buf = NULL;
    *have = 0;
    CMG_CU(dev, cudaMallocHost(buf, bytes));
  }
  *have = bytes;
  cmg_stat_add(CMG_STAT_ALLOCS, 1);
  return 0;
out:
  if (rc == MUSTER_ECUDA && E && E->buf) {
    size_t used = strlen(E->buf);
    snprintf(E->buf + used, E->len > used ? E->len - used : 0, " (asked for %zu bytes)", bytes);
  }
  return rc;
}

int cmg_peer_enable(cmg_ctx_t *c, int n, const int *ids, cmg_err_t *E) {
  int rc = 0;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      int a = ids[i], b = ids[j], can = 0;
      if (a == b || c->peer[a][b]) continue;
      CMG_CU(a, cudaDeviceCanAccessPeer(&can, a, b));
      if (!can) { /* copies still work (staged by the driver); potri's mirror does not */
        c->peer[a][b] = 2;
        continue;
      }
      CMG_CU(a, cudaSetDevice(a));
      cudaError_t st = cudaDeviceEnablePeerAccess(b, 0);
      if (st == cudaErrorPeerAccessAlreadyEnabled) {
        (void)cudaGetLastError();
      } else if (st != cudaSuccess) {
        rc = cmg_cuda(E, a, "cudaDeviceEnablePeerAccess", st);
        goto out;
      }
      c->peer[a][b] = 1;
      cmg_stat_add(CMG_STAT_PEER, 1);
    }
out:
  return rc;
}

void cmg_cache_free(cmg_ctx_t *c) {
  while (c->sets) {
    cmg_devset_t *s = c->sets;
    c->sets = s->next;
    while (s->descs) {
      cmg_desc_t *d = s->descs;
      s->descs = d->next;
      cusolverMgDestroyMatrixDesc(d->desc);
      free(d);
    }
    cusolverMgDestroyGrid(s->grid);
    cusolverMgDestroy(s->handle);
    free(s);
  }
  for (int dev = 0; dev < CMG_MAX_ORDINAL; dev++) {
    cmg_dev_t *d = &c->dev[dev];
    if (!d->ready && !d->work && !d->ws && !d->inv && !d->panel) continue;
    cudaSetDevice(dev);
    for (int i = 0; i < CMG_STREAMS; i++) {
      if (d->streams[i]) cudaStreamDestroy(d->streams[i]);
      if (d->stage[i]) cudaFree(d->stage[i]);
    }
    if (d->work) cudaFree(d->work);
    if (d->inv) cudaFree(d->inv);
    if (d->panel) cudaFree(d->panel);
    if (d->ws) cudaFree(d->ws);
    memset(d, 0, sizeof *d);
  }
  if (c->host_w) cudaFreeHost(c->host_w);
  c->host_w = NULL;
  c->host_w_bytes = 0;
}
