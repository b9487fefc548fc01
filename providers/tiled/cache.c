/* providers/tiled/cache.c - counters, phase times and the per-device
 * caches (handles, streams, events, peer access; buffers grow through
 * cudacommon's cuc_grow) of the tiled provider (tiled.h). */
#include <stdlib.h>
#include <string.h>

#include "tiled.h"

static uint64_t stats[TL_NSTATS];
static double times[TL_NTIMES];

void tl_stat_add(int which, uint64_t n) { __atomic_add_fetch(&stats[which], n, __ATOMIC_RELAXED); }

uint64_t tl_stat(int which) {
  switch (which) {
  case TL_STAT_ALLOCS: return cuc_stat(CUC_STAT_ALLOCS);
  case TL_STAT_PEER: return cuc_stat(CUC_STAT_PEER);
  case TL_STAT_IPC_OPENS: return cuc_stat(CUC_STAT_IPC_OPENS);
  case TL_STAT_IPC_CLOSES: return cuc_stat(CUC_STAT_IPC_CLOSES);
  default: return __atomic_load_n(&stats[which], __ATOMIC_RELAXED);
  }
}

void tl_time_set(int which, double s) { times[which] = s; }

/* Phase times of the last solve (TL_T_* order: move in, factor, checks,
 * solve with B, move out, total), seconds; returns how many exist. */
__attribute__((visibility("default"))) int muster_tiled_timings(double *out, int cap) {
  for (int i = 0; i < cap && i < TL_NTIMES; i++) out[i] = times[i];
  return TL_NTIMES;
}

/* Counters for tests (TL_STAT_* order: handles, streams+events, buffer
 * allocations, peer enables, IPC opens, IPC closes, solves); returns how
 * many exist. */
__attribute__((visibility("default"))) int muster_tiled_stats(uint64_t *out, int cap) {
  for (int i = 0; i < cap && i < TL_NSTATS; i++) out[i] = tl_stat(i);
  return TL_NSTATS;
}

int tl_dev_ready(tl_ctx_t *c, int dev, cuc_err_t *E) {
  int rc = 0;
  if (dev < 0 || dev >= CUC_MAX_ORDINAL)
    return cuc_fail(E, MUSTER_EINVAL, "device ordinal %d out of range 0..%d", dev, CUC_MAX_ORDINAL - 1);
  tl_dev_t *d = &c->dev[dev];
  if (d->ready) return 0;
  CUC_CU(dev, cudaSetDevice(dev));
  if (!d->comp) {
    CUC_CU(dev, cudaStreamCreateWithFlags(&d->comp, cudaStreamNonBlocking));
    CUC_CU(dev, cudaEventCreateWithFlags(&d->bev, cudaEventDisableTiming));
    tl_stat_add(TL_STAT_STREAMS, 2);
  }
  if (!d->dn) {
    CUC_SO(dev, cusolverDnCreate(&d->dn));
    CUC_SO(dev, cusolverDnSetStream(d->dn, d->comp));
    CUC_SO(dev, cusolverDnCreateParams(&d->params));
    tl_stat_add(TL_STAT_HANDLES, 2);
  }
  if (!d->blas) {
    TL_BL(dev, cublasCreate(&d->blas));
    TL_BL(dev, cublasSetStream(d->blas, d->comp));
    tl_stat_add(TL_STAT_HANDLES, 1);
  }
  d->ready = 1;
out:
  return rc; 
}

int tl_panel_ready(tl_ctx_t *c, int dev, cuc_err_t *E) {
  int rc = 0;
  tl_dev_t *d = &c->dev[dev];
  if (d->pblas) return 0;
  CUC_CU(dev, cudaSetDevice(dev));
  if (!d->panel) { /* the greatest priority: the panel is the critical path */
    int lo, hi;
    CUC_CU(dev, cudaDeviceGetStreamPriorityRange(&lo, &hi));
    CUC_CU(dev, cudaStreamCreateWithPriority(&d->panel, cudaStreamNonBlocking, hi));
    CUC_CU(dev, cudaEventCreateWithFlags(&d->pev, cudaEventDisableTiming));
    tl_stat_add(TL_STAT_STREAMS, 2);
  }
  if (!d->pdn) {
    CUC_SO(dev, cusolverDnCreate(&d->pdn));
    CUC_SO(dev, cusolverDnSetStream(d->pdn, d->panel));
    tl_stat_add(TL_STAT_HANDLES, 1);
  }
  TL_BL(dev, cublasCreate(&d->pblas));
  TL_BL(dev, cublasSetStream(d->pblas, d->panel));
  tl_stat_add(TL_STAT_HANDLES, 1);
out:
  return rc;
}

int tl_copy_stream(tl_ctx_t *c, int dev, int to, cudaStream_t *out, cuc_err_t *E) {
  int rc = 0;
  tl_dev_t *d = &c->dev[dev];
  if (!d->copy[to]) {
    CUC_CU(dev, cudaSetDevice(dev));
    CUC_CU(dev, cudaStreamCreateWithFlags(&d->copy[to], cudaStreamNonBlocking));
    tl_stat_add(TL_STAT_STREAMS, 1);
  }
  *out = d->copy[to];
out:
  return rc;
}

int tl_events(tl_ctx_t *c, int dev, int need, cuc_err_t *E) {
  int rc = 0;
  tl_dev_t *d = &c->dev[dev];
  if (need <= d->nev) return 0;
  cudaEvent_t *ev = realloc(d->ev, (size_t)need * sizeof *ev);
  if (!ev) return cuc_fail(E, MUSTER_ENOMEM, "device %d: out of host memory for %d events", dev, need);
  d->ev = ev;
  CUC_CU(dev, cudaSetDevice(dev));
  for (; d->nev < need; d->nev++) {
    CUC_CU(dev, cudaEventCreateWithFlags(&d->ev[d->nev], cudaEventDisableTiming));
    tl_stat_add(TL_STAT_STREAMS, 1);
  }
out:
  return rc;
}

int tl_sync(tl_solve_t *j) { return cuc_sync_devices(j->G, j->ids, j->E); }

static void dev_free(int dev, tl_dev_t *d) {
  cudaSetDevice(dev);
  for (int i = 0; i < d->nev; i++) cudaEventDestroy(d->ev[i]);
  free(d->ev);
  if (d->bev) cudaEventDestroy(d->bev);
  if (d->pev) cudaEventDestroy(d->pev);
  if (d->pblas) cublasDestroy(d->pblas);
  if (d->pdn) cusolverDnDestroy(d->pdn);
  if (d->panel) cudaStreamDestroy(d->panel);
  if (d->blas) cublasDestroy(d->blas);
  if (d->params) cusolverDnDestroyParams(d->params);
  if (d->dn) cusolverDnDestroy(d->dn);
  for (int g = 0; g < TL_MAX_DEV; g++)
    if (d->copy[g]) cudaStreamDestroy(d->copy[g]);
  if (d->comp) cudaStreamDestroy(d->comp);
  void *bufs[] = {d->work, d->slots, d->bbuf, d->dws, d->info, d->scan};
  for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
    if (bufs[i]) cudaFree(bufs[i]);
  free(d->hws);
  memset(d, 0, sizeof *d);
}

void tl_cache_free(tl_ctx_t *c) {
  for (int dev = 0; dev < CUC_MAX_ORDINAL; dev++) {
    tl_dev_t *d = &c->dev[dev];
    if (d->comp || d->panel || d->dn || d->blas || d->work || d->slots || d->bbuf || d->dws || d->info || d->scan || d->ev)
      dev_free(dev, d);
  }
}
