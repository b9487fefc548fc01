/* providers/cusolvermg/cache.c - counters and the context's caches
 * (handles, grids, descriptors, streams, peer access); buffers grow through
 * cudacommon's cuc_grow. */
#include <stdlib.h>
#include <string.h>

#include "cmgInt.h"

static uint64_t cmg_stats[CMG_NSTATS];

void cmg_stat_add(int which, uint64_t n) { __atomic_add_fetch(&cmg_stats[which], n, __ATOMIC_RELAXED); }

uint64_t cmg_stat(int which) {
  switch (which) {
  case CMG_STAT_ALLOCS: return cuc_stat(CUC_STAT_ALLOCS);
  case CMG_STAT_PEER: return cuc_stat(CUC_STAT_PEER);
  case CMG_STAT_IPC_OPENS: return cuc_stat(CUC_STAT_IPC_OPENS);
  case CMG_STAT_IPC_CLOSES: return cuc_stat(CUC_STAT_IPC_CLOSES);
  default: return __atomic_load_n(&cmg_stats[which], __ATOMIC_RELAXED);
  }
}

/* ---- device sets: handle + grid ------------------------------------------------ */

int cmg_devset_get(cmg_ctx_t *c, int n, const int *ids, cmg_devset_t **out, cuc_err_t *E) {
  int rc = 0;
  cmg_devset_t *s;
  for (s = c->sets; s; s = s->next)
    if (s->n == n && !memcmp(s->ids, ids, (size_t)n * sizeof(int))) {
      *out = s;
      return 0;
    }
  s = calloc(1, sizeof *s);
  if (!s) return cuc_fail(E, MUSTER_ENOMEM, "out of host memory for a device set");
  s->n = n;
  memcpy(s->ids, ids, (size_t)n * sizeof(int));
  CUC_CU(ids[0], cudaSetDevice(ids[0]));
  CUC_SO(ids[0], cusolverMgCreate(&s->handle));
  CUC_SO(ids[0], cusolverMgDeviceSelect(s->handle, n, s->ids));
  CUC_SO(ids[0], cusolverMgCreateDeviceGrid(&s->grid, 1, n, s->ids, CUDALIBMG_GRID_MAPPING_COL_MAJOR));
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
                 cudaLibMgMatrixDesc_t *out, cuc_err_t *E) {
  int rc = 0;
  for (cmg_desc_t *d = s->descs; d; d = d->next)
    if (d->rows == rows && d->cols == cols && d->tile == tile && d->type == type) {
      *out = d->desc;
      return 0;
    }
  cmg_desc_t *d = calloc(1, sizeof *d);
  if (!d) return cuc_fail(E, MUSTER_ENOMEM, "out of host memory for a descriptor");
  /* 1-D column block-cyclic: one row block of all `rows` (the local leading
   * dimension), column tiles of `tile`; IA = JA = 1 picks the n x n part. */
  CUC_SO(s->ids[0], cusolverMgCreateMatrixDesc(&d->desc, rows, cols, rows, tile, type, s->grid));
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

int cmg_dev_ready(cmg_ctx_t *c, int dev, cuc_err_t *E) {
  int rc = 0;
  if (dev < 0 || dev >= CUC_MAX_ORDINAL)
    return cuc_fail(E, MUSTER_EINVAL, "device ordinal %d out of range 0..%d", dev, CUC_MAX_ORDINAL - 1);
  cmg_dev_t *d = &c->dev[dev];
  if (d->ready) return 0;
  CUC_CU(dev, cudaSetDevice(dev));
  for (int i = 0; i < CMG_STREAMS; i++)
    CUC_CU(dev, cudaStreamCreateWithFlags(&d->streams[i], cudaStreamNonBlocking));
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

int cmg_peer_enable(cmg_ctx_t *c, int n, const int *ids, cuc_err_t *E) {
  return cuc_peer_enable_all(&c->peers, n, ids, E);
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
  for (int dev = 0; dev < CUC_MAX_ORDINAL; dev++) {
    cmg_dev_t *d = &c->dev[dev];
    if (!d->ready && !d->work && !d->ws && !d->inv && !d->panel && !d->ipiv && !d->scan) continue;
    cudaSetDevice(dev);
    for (int i = 0; i < CMG_STREAMS; i++) {
      if (d->streams[i]) cudaStreamDestroy(d->streams[i]);
      if (d->stage[i]) cudaFree(d->stage[i]);
    }
    if (d->work) cudaFree(d->work);
    if (d->inv) cudaFree(d->inv);
    if (d->panel) cudaFree(d->panel);
    if (d->ws) cudaFree(d->ws);
    if (d->ipiv) cudaFree(d->ipiv);
    if (d->scan) cudaFree(d->scan);
    memset(d, 0, sizeof *d);
  }
  if (c->host_w) cudaFreeHost(c->host_w);
  c->host_w = NULL;
  c->host_w_bytes = 0;
}
