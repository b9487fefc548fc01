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
 *     WORK buffer (copy plans only), the cuSolverMg workspace, the potri
 *     result and panel buffers (potri on 2+ GPUs), a pinned host buffer
 *     for eigenvalues; each grown when a call needs more;
 *   - peer access, enabled once per ordered device pair;
 *   - CUDA IPC mappings of peer processes' buffers (ipc.c).
 * Counters (cmg_stats) let tests assert that a second call with the same
 * shape creates nothing.
 */
#ifndef MUSTER_CMG_INT_H
#define MUSTER_CMG_INT_H

#include <cuda_runtime_api.h>
#include <cusolverMg.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>

#include "muster/provider.h"
#include "kernels.h"
#include "plan.h"

#define CMG_MAX_ORDINAL 64  /* device ordinals we track per process    */
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
  void *inv;                        /* potri on 2+ GPUs: the inverse's
                                       columns, until L is no longer read */
  size_t inv_bytes;
  void *panel;                      /* potri on 2+ GPUs, first GPU only:
                                       identity panel, then its solution */
  size_t panel_bytes;
} cmg_dev_t;

typedef struct cmg_ipc_entry {
  int64_t pid;
  uint64_t start_time;
  cudaIpcMemHandle_t handle;
  uint64_t peer_base;              /* the exporter's base address        */
  int device;                      /* leader's ordinal of the memory     */
  void *base;                      /* mapped base in this process        */
  uint64_t last_use;               /* call counter when last used        */
  struct cmg_ipc_entry *next;
} cmg_ipc_entry_t;

typedef struct cmg_ctx {
  pthread_mutex_t mu;
  cmg_devset_t *sets;
  cmg_dev_t dev[CMG_MAX_ORDINAL];
  unsigned char peer[CMG_MAX_ORDINAL][CMG_MAX_ORDINAL]; /* enabled i -> j */
  void *host_w;                    /* pinned eigenvalues                 */
  size_t host_w_bytes;
  cmg_ipc_entry_t *ipc;
  uint64_t calls;
} cmg_ctx_t;

/* Process-wide counters (tests read them through muster_cusolvermg_stats). */
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
CMG_HIDDEN extern uint64_t cmg_stats[CMG_NSTATS];
CMG_HIDDEN void cmg_stat_add(int which, uint64_t n);

/* ---- errors ------------------------------------------------------------------ */
typedef struct cmg_err {
  char *buf;
  size_t len;
} cmg_err_t;

CMG_HIDDEN int cmg_fail(cmg_err_t *e, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* A failed CUDA runtime call: MUSTER_ECUDA, "device D: CALL failed: NAME (N): text". */
CMG_HIDDEN int cmg_cuda(cmg_err_t *e, int dev, const char *call, cudaError_t st);
CMG_HIDDEN int cmg_solver(cmg_err_t *e, int dev, const char *call, cusolverStatus_t st);
CMG_HIDDEN const char *cmg_solver_status_name(cusolverStatus_t st);

#define CMG_CU(dev, call)                                      \
  do {                                                         \
    cudaError_t st_ = (call);                                  \
    if (st_ != cudaSuccess) {                                  \
      rc = cmg_cuda(E, (dev), #call, st_);                     \
      goto out;                                                \
    }                                                          \
  } while (0)
#define CMG_SO(dev, call)                                      \
  do {                                                         \
    cusolverStatus_t st_ = (call);                             \
    if (st_ != CUSOLVER_STATUS_SUCCESS) {                      \
      rc = cmg_solver(E, (dev), #call, st_);                   \
      goto out;                                                \
    }                                                          \
  } while (0)
#define CMG_CHECK(call)                                        \
  do {                                                         \
    rc = (call);                                               \
    if (rc < 0) goto out;                                      \
  } while (0)

/* ---- caches (cache.c); all with ctx->mu held ----------------------------------- */
CMG_HIDDEN int cmg_devset_get(cmg_ctx_t *c, int n, const int *ids, cmg_devset_t **out,
                              cmg_err_t *E);
CMG_HIDDEN int cmg_desc_get(cmg_devset_t *s, int64_t rows, int64_t cols, int64_t tile,
                            cudaDataType type, cudaLibMgMatrixDesc_t *out, cmg_err_t *E);
CMG_HIDDEN int cmg_dev_ready(cmg_ctx_t *c, int dev, cmg_err_t *E);
/* Grow *buf (device `dev`, or pinned host when dev < 0) to at least bytes. */
CMG_HIDDEN int cmg_grow(int dev, void **buf, size_t *have, size_t bytes, cmg_err_t *E);
CMG_HIDDEN int cmg_peer_enable(cmg_ctx_t *c, int n, const int *ids, cmg_err_t *E);
CMG_HIDDEN void cmg_cache_free(cmg_ctx_t *c);

/* ---- relayout on the GPUs (relayout.c) ------------------------------------------ */
/* Run plan p: user[r] / work[r] are rank r's buffers (device pointers usable
 * in this process), ids[r] its device. */
CMG_HIDDEN int cmg_plan_run(cmg_ctx_t *c, const cmg_plan_t *p, const int *ids, void *const *user,
                            void *const *work, cmg_err_t *E);

/* ---- IPC (ipc.c) ------------------------------------------------------------------ */
CMG_HIDDEN int cmg_ipc_export(const muster_shard_t *mine, void *blob, size_t cap, size_t *len,
                              cmg_err_t *E);
CMG_HIDDEN int cmg_ipc_import(cmg_ctx_t *c, int rank, int64_t peer_pid, const void *blob,
                              size_t len, muster_shard_t *shard, cmg_err_t *E);
CMG_HIDDEN void cmg_ipc_forget(cmg_ctx_t *c, int64_t pid);
CMG_HIDDEN void cmg_ipc_free(cmg_ctx_t *c);

#endif
