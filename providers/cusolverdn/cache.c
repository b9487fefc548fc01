/* providers/cusolverdn/cache.c - counters and the context's per-device
 * caches: handle, params and streams made once, buffers grown under the
 * memory check (dnInt.h). */
#include <stdlib.h>
#include <string.h>

#include "dnInt.h"

static uint64_t dn_stats[DN_NSTATS];

void dn_stat_add(int which, uint64_t n) { __atomic_add_fetch(&dn_stats[which], n, __ATOMIC_RELAXED); }

void dn_stat_set(int which, uint64_t v) { __atomic_store_n(&dn_stats[which], v, __ATOMIC_RELAXED); }

uint64_t dn_stat(int which) {
  switch (which) {
  case DN_STAT_ALLOCS: return cuc_stat(CUC_STAT_ALLOCS);
  case DN_STAT_PEER: return cuc_stat(CUC_STAT_PEER);
  case DN_STAT_IPC_OPENS: return cuc_stat(CUC_STAT_IPC_OPENS);
  case DN_STAT_IPC_CLOSES: return cuc_stat(CUC_STAT_IPC_CLOSES);
  default: return __atomic_load_n(&dn_stats[which], __ATOMIC_RELAXED);
  }
}

static void dev_release(dn_dev_t *d) {
  if (d->blas) cublasDestroy(d->blas);
  if (d->handle) cusolverDnDestroy(d->handle);
  if (d->params) cusolverDnDestroyParams(d->params);
  if (d->stream) cudaStreamDestroy(d->stream);
  for (int i = 0; i < DN_COPY_STREAMS; i++)
    if (d->copy[i]) cudaStreamDestroy(d->copy[i]);
  void *dev_bufs[] = {d->mat, d->ws, d->rhs, d->w, d->aux, d->fac, d->scan};
  for (size_t i = 0; i < sizeof dev_bufs / sizeof dev_bufs[0]; i++)
    if (dev_bufs[i]) cudaFree(dev_bufs[i]);
  if (d->hws) cudaFreeHost(d->hws);
  if (d->hscan) cudaFreeHost(d->hscan);
  memset(d, 0, sizeof *d);
}

int dn_dev_ready(dn_ctx_t *c, int dev, cuc_err_t *E) {
  int rc = 0;
  if (dev < 0 || dev >= CUC_MAX_ORDINAL)
    return cuc_fail(E, MUSTER_EINVAL, "device ordinal %d out of range 0..%d", dev, CUC_MAX_ORDINAL - 1);
  dn_dev_t *d = &c->dev[dev];
  if (d->ready) return 0;
  CUC_CU(dev, cudaSetDevice(dev));
  /* non-blocking: never ordered behind the caller's legacy-stream work */
  CUC_CU(dev, cudaStreamCreateWithFlags(&d->stream, cudaStreamNonBlocking));
  for (int i = 0; i < DN_COPY_STREAMS; i++) CUC_CU(dev, cudaStreamCreateWithFlags(&d->copy[i], cudaStreamNonBlocking));
  CUC_SO(dev, cusolverDnCreate(&d->handle));
  CUC_SO(dev, cusolverDnSetStream(d->handle, d->stream));
  CUC_SO(dev, cusolverDnCreateParams(&d->params));
  d->ready = 1;
  dn_stat_add(DN_STAT_HANDLES, 1);
  return 0;
out:
  dev_release(d);
  return rc;
}

int dn_blas_ready(dn_ctx_t *c, int dev, cuc_err_t *E) {
  dn_dev_t *d = &c->dev[dev];
  if (d->blas) return 0;
  cublasStatus_t st = cublasCreate(&d->blas);
  if (st == CUBLAS_STATUS_SUCCESS) st = cublasSetStream(d->blas, d->stream);
  if (st != CUBLAS_STATUS_SUCCESS) {
    if (d->blas) cublasDestroy(d->blas);
    d->blas = NULL;
    return cuc_fail(E, MUSTER_ECUDA, "device %d: cuBLAS handle: %s (status %d)", dev, cublasGetStatusName(st), (int)st);
  }
  dn_stat_add(DN_STAT_HANDLES, 1);
  return 0;
}

uint64_t dn_dev_held(const dn_dev_t *d) {
  return (uint64_t)d->mat_bytes + d->ws_bytes + d->rhs_bytes + d->w_bytes + d->aux_bytes + d->fac_bytes + d->scan_bytes;
}

void dn_cache_free(dn_ctx_t *c) {
  for (int dev = 0; dev < CUC_MAX_ORDINAL; dev++) {
    dn_dev_t *d = &c->dev[dev];
    if (!d->ready && !d->mat && !d->ws && !d->hws && !d->rhs && !d->w && !d->aux && !d->fac && !d->scan && !d->hscan)
      continue;
    cudaSetDevice(dev);
    dev_release(d);
  }
}
