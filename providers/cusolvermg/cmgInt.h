/*
 * providers/cusolvermg/cmgInt.h - private to the cusolvermg provider.
 *
 * One context per load (init/fini).  Everything costly is cached in it and
 * reused call after call, under ctx->mu (solve runs with it held, so calls of
 * several groups in one process are serialized; cuSolverMg would serialize
 * them on the GPUs anyway):
 *   - a cuSolverMg handle + device grid per device set (ordered list of
 *     ordinals);
 *   - matrix descriptors per (rows=lda, cols, tile, dtype) of a device set;
 *   - per device: relayout streams, their staging buffers, the relayout
 *     WORK buffer (copy plans, and getrs's private copy of A), the
 *     cuSolverMg workspace, getrs's row pivots, the potri
 *     result and panel buffers (potri on 2+ GPUs); one pinned host buffer
 *     for eigenvalues; each grown (cuc_grow) when a call needs more;
 *   - peer access, enabled once per ordered device pair;
 *   - CUDA IPC mappings of peer processes' buffers (a cuc_ipc_cache_t of
 *     providers/cudacommon, which also holds the probe, buffer growth and
 *     error formatting every GPU provider shares).
 * Counters (muster_cusolvermg_stats) let tests assert that a second call
 * with the same shape creates nothing.
 */
#ifndef MUSTER_CMG_INT_H
#define MUSTER_CMG_INT_H

#include <cuda_runtime_api.h>
#include <cusolverMg.h>
#include <pthread.h>
#include <stdint.h>

#include "cudacommon.h"
#include "muster/provider.h"
#include "plan.h"

#define CMG_MAX_DEV 16     /* cuSolverMg's limit                   */
#define CMG_STREAMS 4       /* relayout streams per device             */
#define CMG_STAGE_CAP (64ll << 20)

#define CMG_HIDDEN __attribute__((visibility("hidden")))

typedef struct cmg_desc {
  int64_t rows, cols, tile;
  cudaDataType type;
  cudaLibMgMatrixDesc_t desc;
  struct cmg_desc *next;
} cmg_desc_t;

typedef struct cmg_devset {
  int n;
  int ids[CMG_MAX_DEV];
  cusolverMgHandle_t handle;
  cudaLibMgGrid_t grid;
  cmg_desc_t *descs;
  struct cmg_devset *next;
} cmg_devset_t;

typedef struct cmg_dev {
  int ready;                        /* streams created                  */
  cudaStream_t streams[CMG_STREAMS];
  void *stage[CMG_STREAMS];
  size_t stage_bytes[CMG_STREAMS];
  void *work;                       /* relayout WORK (copy plans)       */
  size_t work_bytes;
  void *ws;                         /* cuSolverMg workspace             */
  size_t ws_bytes;
  void *ipiv;                       /* getrs: this GPU's row pivots     */
  size_t ipiv_bytes;
  void *scan;                       /* getrs: the NaN/Inf scan's word   */
  size_t scan_bytes;
  void *inv;                        /* potri on 2+ GPUs: the inverse's
                                       columns, until L is no longer read */
  size_t inv_bytes;
  void *panel;                      /* potri on 2+ GPUs, first GPU only:
                                       identity panel, then its solution */
  size_t panel_bytes;
} cmg_dev_t;

typedef struct cmg_ctx {
  pthread_mutex_t mu;
  cmg_devset_t *sets;
  cmg_dev_t dev[CUC_MAX_ORDINAL];
  cuc_peers_t peers;
  void *host_w;                    /* pinned eigenvalues                 */
  size_t host_w_bytes;
  cuc_ipc_cache_t ipc;             /* process mode: peers' memory        */
} cmg_ctx_t;

/* Process-wide counters, in the order muster_cusolvermg_stats reports
 * them (tests read them by position).  ALLOCS, PEER and IPC_* are counted
 * by cudacommon (cuc_stat), the others here (cache.c); cmg_stat reads
 * either. */
enum {
  CMG_STAT_HANDLES,   /* cuSolverMg handles + grids created       */
  CMG_STAT_DESCS,     /* matrix descriptors created               */
  CMG_STAT_ALLOCS,    /* device/pinned buffers (re)allocated      */
  CMG_STAT_PEER,      /* peer-access enables                      */
  CMG_STAT_IPC_OPENS, /* cudaIpcOpenMemHandle calls               */
  CMG_STAT_IPC_CLOSES,
  CMG_STAT_SOLVES,
  CMG_STAT_PLAN_OPS,  /* relayout ops issued                      */
  CMG_NSTATS
};
CMG_HIDDEN void cmg_stat_add(int which, uint64_t n); /* not for cudacommon's */
CMG_HIDDEN uint64_t cmg_stat(int which);

/* Errors go through cudacommon.h (cuc_fail, CUC_CU, ...), prefixed by the
 * provider's name: cuc_err_t err = CMG_ERR(buf, len). */
#define CMG_NAME "cusolvermg"
#define CMG_ERR(buf, len) {(buf), (len), CMG_NAME}

/* ---- caches (cache.c); all with ctx->mu held ----------------------------------- */
CMG_HIDDEN int cmg_devset_get(cmg_ctx_t *c, int n, const int *ids, cmg_devset_t **out,
                              cuc_err_t *E);
CMG_HIDDEN int cmg_desc_get(cmg_devset_t *s, int64_t rows, int64_t cols, int64_t tile,
                            cudaDataType type, cudaLibMgMatrixDesc_t *out, cuc_err_t *E);
CMG_HIDDEN int cmg_dev_ready(cmg_ctx_t *c, int dev, cuc_err_t *E);
/* Peer access between every ordered pair of ids. */
CMG_HIDDEN int cmg_peer_enable(cmg_ctx_t *c, int n, const int *ids, cuc_err_t *E);
CMG_HIDDEN void cmg_cache_free(cmg_ctx_t *c);

/* ---- relayout on the GPUs (relayout.c) ------------------------------------------ */
/* Run plan p: user[r] / work[r] are rank r's buffers (device pointers usable
 * in this process), ids[r] its device. */
CMG_HIDDEN int cmg_plan_run(cmg_ctx_t *c, const cmg_plan_t *p, const int *ids, void *const *user,
                            void *const *work, cuc_err_t *E);

#endif
