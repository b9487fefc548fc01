/*
 * providers/cusolverdn/dnInt.h - private to the cusolverdn provider: its
 * context and caches, counters, options, and the memory rule and time
 * model behind estimate().
 *
 * One context per load (init/fini).  What costs to create is cached in it,
 * per device that has been a target, and reused call after call under
 * ctx->mu (solve runs with it held, so calls of several groups in one
 * process take turns; they would share the one GPU anyway):
 *   - the cusolverDn handle and its params, the solver stream (non-blocking)
 *     and DN_COPY_STREAMS copy streams for the gather and the scatter;
 *   - the gathered matrix, the device and host (pinned) workspaces, the
 *     right-hand side / identity panel buffer, the eigenvalue buffer and
 *     the small buffer of info and scan results (device and pinned host),
 *     each grown (cudacommon's cuc_grow_checked) when a call needs more, never shrunk;
 *   - peer access, enabled once per ordered device pair;
 *   - CUDA IPC mappings of peer processes' buffers (cudacommon's
 *     cuc_ipc_cache_t).
 * Counters (muster_cusolverdn_stats) let tests assert that a second call
 * with the same shape creates nothing.
 */
#ifndef MUSTER_DN_INT_H
#define MUSTER_DN_INT_H

#include <cuda_runtime_api.h>
#include <cublas_v2.h>
#include <cusolverDn.h>
#include <pthread.h>
#include <stdint.h>

#include "cudacommon.h"
#include "muster/provider.h"

#define DN_HIDDEN __attribute__((visibility("hidden")))
#define DN_NAME "cusolverdn"
/* cuc_err_t err = DN_ERR(buf, len): messages prefixed "cusolverdn: ". */
#define DN_ERR(buf, len) {(buf), (len), DN_NAME}

#define DN_COPY_STREAMS 4 /* gather/scatter streams on the target: copies from
                             different ranks (different links) overlap      */
#define DN_PANEL 2048     /* potri "solve" path: identity columns per potrs  */

/* What the provider keeps on one target device. */
typedef struct dn_dev {
  int ready;                              /* handle, params, streams made     */
  cusolverDnHandle_t handle;
  cusolverDnParams_t params;
  cudaStream_t stream;                    /* cusolverDn's                     */
  cudaStream_t copy[DN_COPY_STREAMS];     /* gather / scatter / replication   */
  void *mat;  size_t mat_bytes;           /* the gathered A (ld = n)          */
  void *ws;   size_t ws_bytes;            /* cusolverDn's device workspace    */
  void *hws;  size_t hws_bytes;           /* its host workspace (pinned)      */
  void *rhs;  size_t rhs_bytes;           /* B when no rank's b is here, or
                                             the potri identity panel          */
  void *w;    size_t w_bytes;             /* eigenvalues (potrs: log det) when
                                             no rank's w is here              */
  void *aux;  size_t aux_bytes;           /* getrs: the pivots (n int64);
                                             gels, geqrf: the Householder
                                             scalars                          */
  void *fac;  size_t fac_bytes;           /* geqrf, gesvd, polar: the factor
                                             buffer (factplan.h)              */
  cublasHandle_t blas;                    /* gels's trsm, polar's gemm and
                                             the wide SVD's transposes, made
                                             at the first such call here      */
  void *scan; size_t scan_bytes;          /* device: info, then scan results  */
  void *hscan; size_t hscan_bytes;        /* pinned host copy of them         */
} dn_dev_t;

typedef struct dn_ctx {
  pthread_mutex_t mu;
  dn_dev_t dev[CUC_MAX_ORDINAL];
  cuc_peers_t peers;
  cuc_ipc_cache_t ipc;                    /* process mode: peers' memory      */
} dn_ctx_t;

/* ---- counters (cache.c) ---------------------------------------------------------- */

/* Process-wide, in the order muster_cusolverdn_stats reports them (tests
 * read them by position).  ALLOCS, PEER and IPC_* are cudacommon's
 * (cuc_stat); dn_stat reads either. */
enum {
  DN_STAT_HANDLES,      /* cusolverDn handles + params + streams created      */
  DN_STAT_ALLOCS,       /* device/pinned buffers (re)allocated                */
  DN_STAT_PEER,         /* peer-access enables                                */
  DN_STAT_IPC_OPENS,    /* cudaIpcOpenMemHandle calls                         */
  DN_STAT_IPC_CLOSES,
  DN_STAT_SOLVES,       /* solve() calls                                      */
  DN_STAT_COPIES,       /* copies issued (gather, scatter, B/X, W)            */
  DN_STAT_IN_PLACE,     /* solves run on the caller's own buffer (no gather)  */
  DN_STAT_TARGET_BYTES, /* gauge: device bytes the provider holds on the last
                           solve's target (compare with estimate's peak)      */
  DN_NSTATS
};
DN_HIDDEN void dn_stat_add(int which, uint64_t n);
DN_HIDDEN void dn_stat_set(int which, uint64_t v);
DN_HIDDEN uint64_t dn_stat(int which);

/* ---- caches (cache.c); with ctx->mu held --------------------------------------------- */

/* Handle, params and streams of device dev, made once. */
DN_HIDDEN int dn_dev_ready(dn_ctx_t *c, int dev, cuc_err_t *E);

/* The cuBLAS handle of device dev (on its solver stream), made once
 * (counted in DN_STAT_HANDLES); dn_dev_ready first. */
DN_HIDDEN int dn_blas_ready(dn_ctx_t *c, int dev, cuc_err_t *E);

/* Device bytes d holds (what estimate() counts as reusable). */
DN_HIDDEN uint64_t dn_dev_held(const dn_dev_t *d);

DN_HIDDEN void dn_cache_free(dn_ctx_t *c);

/* ---- options (options.c): environment read at each call ---------------------------- */

/* The GPU a call runs on: MUSTER_DN_DEVICE (an ordinal of the leader's
 * process) when set, else the leader's device.  0, or MUSTER_EINVAL with
 * the reason in why when the variable is not an ordinal 0..63. */
DN_HIDDEN int dn_target_device(int leader_dev, int *dev, char *why, size_t whylen);

/* potri's path for order n (MUSTER_DN_POTRI): "potri": potrf, the legacy
 * cusolverDn<t>potri (the 64-bit API has none) and the lower triangle
 * mirrored into the upper; "solve": potrf, then potrs against identity
 * panels of DN_PANEL columns, each written straight into the ranks'
 * buffers; "auto" (default): solve up to DN_POTRI_SOLVE_MAX_N for real
 * dtypes, potri above and for complex ones.  Measured on one H100
 * (2026-11-23, f64, 1 rank, median of 3): n = 4096 potri 0.0150 s, solve
 * 0.0116 s; 8192 0.0594 / 0.0539 s; 16384 0.2613 / 0.2934 s
 * (run-dn-tests.sh --measure repeats it); on one H200 (muster-gpu-bench,
 * same day) f32 8192 0.0596 / 0.0535 s, but c128 8192 0.1074 / 0.1358 s:
 * the panels' complex potrs loses to the legacy potri.  0, or
 * MUSTER_EINVAL for another value. */
enum { DN_POTRI_LEGACY = 0, DN_POTRI_SOLVE = 1 };
#define DN_POTRI_SOLVE_MAX_N 8192
DN_HIDDEN int dn_potri_path(int64_t n, muster_dtype_t dtype, int *path, char *why, size_t whylen);

/* The solve runs on the caller's own buffer (no gather, no scatter): one
 * rank, on the target, and a routine that does not need A and its result
 * apart (potri's solve path does).  getrs and gels leave A as it was
 * (muster.h): they factor the caller's buffer only under MUSTER_NO_FACTOR,
 * else a copy on the target. */
static inline int dn_in_place(muster_routine_t routine, unsigned flags, int nranks, int rank0_on_target,
                              int potri_path) {
  /* geqrf, gesvd, polar write nothing before every factor is made and
   * checked (docs/factorizations.md): always on a copy */
  if (muster_routine_takes(routine) & MUSTER_TAKES_O) return 0;
  if ((routine == MUSTER_GETRS || routine == MUSTER_GELS) && !(flags & MUSTER_NO_FACTOR)) return 0;
  return nranks == 1 && rank0_on_target && !(routine == MUSTER_POTRI && potri_path == DN_POTRI_SOLVE);
}

/* ---- the memory rule and the time model (model.c, pure host arithmetic) --------------- */

/* One call's shape as both estimate() and solve() see it. */
typedef struct dn_shape {
  muster_routine_t routine;
  muster_dtype_t dtype;
  int64_t n, nrhs;
  int64_t m;            /* rows of A and B: gels's, geqrf's, gesvd's and
                           polar's m (ldb), else n; 0 = n                 */
  unsigned flags;
  int nranks;
  int on_target;        /* ranks whose shard is on the target GPU          */
  int in_place;         /* dn_in_place                                     */
  int potri_path;
} dn_shape_t;

/* Device bytes a call needs on the target, the one memory rule: the
 * gathered matrix (m*n elements unless in place), cusolverDn's workspace
 * (dn_workspace_bound), the rhs / panel and eigenvalue (or log det)
 * buffers when no rank's b / w lies on the target, getrs's pivots and
 * gels's Householder scalars, the factor routines' factor buffer
 * (factplan.h), Householder scalars and singular values, and
 * DN_FIXED_BYTES. */
typedef struct dn_need {
  uint64_t matrix, workspace, extra, total;
} dn_need_t;
DN_HIDDEN void dn_need(const dn_shape_t *s, dn_need_t *need);

/* Upper bound of cusolverDn's device workspace for the routine on an
 * m x n A (m = n but for gels and the factor routines; checked against its _bufferSize on a GPU by
 * gpu-test --provider cusolverdn). */
DN_HIDDEN uint64_t dn_workspace_bound(muster_routine_t routine, muster_dtype_t dtype, int64_t m, int64_t n);

/* The legacy ormqr's workspace for gels, in elements (model.c says where
 * the rule comes from): its lwork is an int, so a gels whose count passes
 * INT_MAX (n around 32700 for a square A) cannot run through cusolverDn. */
DN_HIDDEN uint64_t dn_gels_ormqr_elements(int64_t m, int64_t n);
#define DN_FIXED_BYTES (64ull << 20) /* cuSOLVER's own allocations, scan buffers */

/* Expected wall seconds (time model, see model.c) and the part spent
 * moving data; bytes_moved gets the bytes crossing between GPUs. */
DN_HIDDEN double dn_model_seconds(const dn_shape_t *s, double *moves, uint64_t *bytes_moved);

/* The estimate hook (estimate.c). */
DN_HIDDEN int dn_estimate(void *ctx, const muster_provider_query_t *q, muster_provider_estimate_t *est);

#endif
