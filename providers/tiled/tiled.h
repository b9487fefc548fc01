/*
 * providers/tiled/tiled.h - private to the tiled provider: our own tiled
 * Cholesky on 1..16 GPUs of one node (tsched.h says how it is scheduled).
 *
 * One context per load (init/fini); solve runs with ctx->mu held.  Cached
 * per device and reused call after call (a second call of the same shape
 * creates nothing; the counters below let tests check it): a cusolverDn
 * handle and params and a cuBLAS handle bound to the device's compute
 * stream, one copy stream per destination GPU (to itself: the moves of
 * MUSTER_TILED_OVERLAP=1), with MUSTER_TILED_PRIORITY=1
 * a high-priority panel stream with its own cusolverDn and cuBLAS handles
 * (created on the first such solve), a pool of events grown to
 * what the schedule needs, and buffers grown with cudacommon's cuc_grow:
 * the tile columns (unless the engine works in the caller's buffers), the
 * panel slots, the right-hand sides, potrf's workspace and infos.
 */
#ifndef MUSTER_TILED_INT_H
#define MUSTER_TILED_INT_H

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cusolverDn.h>
#include <pthread.h>
#include <stdint.h>

#include "cudacommon.h"
#include "muster/provider.h"
#include "tsched.h"

#define TL_MAX_DEV TS_MAX_GPUS
/* The defaults of MUSTER_TILED_LOOKAHEAD and MUSTER_TILED_PRIORITY (as
 * measured on 4 x H200 before the knobs existed: docs/performance/tiled.md). */
#define TL_LOOKAHEAD 1
#define TL_PRIORITY 0
/* MUSTER_TILED_OVERLAP's default: off until a GPU sweep measures it. */
#define TL_OVERLAP 0
/* Panel buffers per GPU at lookahead L: panels k+1 .. k+L+1 land while k is
 * read (the schedule needs L + 1; one more lets a send start early). */
static inline int tl_slots(int L) { return L + 2; }
#define TL_HIDDEN __attribute__((visibility("hidden")))
#define TL_NAME "tiled"
#define TL_ERR(buf, len) {(buf), (len), TL_NAME}

typedef struct tl_dev {
  int ready;
  cudaStream_t comp;                /* every kernel of this GPU          */
  cudaStream_t copy[TL_MAX_DEV];    /* panels to GPU g, moves (g = own) */
  cudaStream_t panel;               /* the panel's, high priority (on need) */
  cusolverDnHandle_t pdn;           /* bound to panel                    */
  cublasHandle_t pblas;             /* bound to panel                    */
  cudaEvent_t pev;                  /* compute <-> panel hand-overs      */
  cusolverDnHandle_t dn;
  cusolverDnParams_t params;
  cublasHandle_t blas;
  cudaEvent_t *ev;                  /* the schedule's events             */
  int nev;
  cudaEvent_t bev;                  /* the solve's hand-over of B        */
  void *work; size_t work_bytes;    /* tile columns (copy mode)          */
  void *slots; size_t slots_bytes;  /* tl_slots(L) panels, n x T each    */
  void *bbuf; size_t bbuf_bytes;    /* right-hand sides, n x chunk       */
  void *dws; size_t dws_bytes;      /* potrf workspace                   */
  void *info; size_t info_bytes;    /* one int per tile column           */
  void *scan; size_t scan_bytes;    /* the NaN scan's word               */
  void *hws; size_t hws_bytes;      /* potrf host workspace (malloc)     */
} tl_dev_t;

typedef struct tl_ctx {
  pthread_mutex_t mu;
  tl_dev_t dev[CUC_MAX_ORDINAL];
  cuc_peers_t peers;
  cuc_ipc_cache_t ipc;
} tl_ctx_t;

/* Counters in the order muster_tiled_stats reports them. */
enum {
  TL_STAT_HANDLES,   /* cusolverDn/cuBLAS handles and params created       */
  TL_STAT_STREAMS,   /* streams and events created                         */
  TL_STAT_ALLOCS,    /* buffers (re)allocated (cudacommon's count)          */
  TL_STAT_PEER,      /* peer-access enables                                */
  TL_STAT_IPC_OPENS,
  TL_STAT_IPC_CLOSES,
  TL_STAT_SOLVES,
  TL_NSTATS
};
TL_HIDDEN void tl_stat_add(int which, uint64_t n);
TL_HIDDEN uint64_t tl_stat(int which);

/* Phase times of the last solve, seconds (muster_tiled_timings); with
 * MUSTER_TILED_TIMING=1 every device is synchronized at each phase's end,
 * else they are the host's issue times.  With MUSTER_TILED_OVERLAP=1 the
 * move in is inside the factor's time (the schedule's MOVEs) and the move
 * out inside the solve's. */
enum { TL_T_IN, TL_T_FACTOR, TL_T_CHECK, TL_T_SOLVE, TL_T_OUT, TL_T_TOTAL, TL_NTIMES };
TL_HIDDEN void tl_time_set(int which, double s);

/* One solve on the leader. */
typedef struct tl_solve {
  tl_ctx_t *c;
  const muster_provider_call_t *call;
  const muster_solve_args_t *a;
  cuc_err_t *E;
  int G;                     /* ranks = GPUs                          */
  int ids[TL_MAX_DEV];       /* rank g's device                       */
  size_t esz;
  int64_t n, lda;            /* the caller's lda (every rank's)        */
  int in_place;              /* engine works in the caller's buffers   */
  int timing;                /* MUSTER_TILED_TIMING=1                  */
  int lookahead;             /* MUSTER_TILED_LOOKAHEAD, 1..4           */
  int prio;                  /* MUSTER_TILED_PRIORITY=1                */
  int overlap;               /* MUSTER_TILED_OVERLAP=1 (move.c says what) */
  void *user[TL_MAX_DEV];
  void *mat[TL_MAX_DEV];     /* GPU g's tile columns                   */
  int64_t ld;                /* their leading dimension                */
  ts_sched_t s;
  int64_t info;              /* global failing minor, 0 none           */
} tl_solve_t;

/* ---- cache.c ------------------------------------------------------------------ */
TL_HIDDEN int tl_dev_ready(tl_ctx_t *c, int dev, cuc_err_t *E);
/* The panel stream, its handles and hand-over event (created once). */
TL_HIDDEN int tl_panel_ready(tl_ctx_t *c, int dev, cuc_err_t *E);
TL_HIDDEN int tl_copy_stream(tl_ctx_t *c, int dev, int to, cudaStream_t *out, cuc_err_t *E);
TL_HIDDEN int tl_events(tl_ctx_t *c, int dev, int need, cuc_err_t *E);
TL_HIDDEN void tl_cache_free(tl_ctx_t *c);
/* cudaDeviceSynchronize on every GPU of the solve. */
TL_HIDDEN int tl_sync(tl_solve_t *j);

/* ---- kern.c: one dtype switch for every tile kernel (column-major, lower) ---------- */
TL_HIDDEN cublasStatus_t tl_trsm(cublasHandle_t h, int dtype, cublasSideMode_t side, cublasOperation_t op, int64_t m,
                                 int64_t n, const void *L, int64_t ldl, void *B, int64_t ldb);
/* C -= A A^H (lower), C n x n, A n x k */
TL_HIDDEN cublasStatus_t tl_herk_sub(cublasHandle_t h, int dtype, int64_t n, int64_t k, const void *A, int64_t lda,
                                     void *C, int64_t ldc);
/* C -= op(A) op(B) */
TL_HIDDEN cublasStatus_t tl_gemm_sub(cublasHandle_t h, int dtype, cublasOperation_t ta, cublasOperation_t tb, int64_t m,
                                     int64_t n, int64_t k, const void *A, int64_t lda, const void *B, int64_t ldb,
                                     void *C, int64_t ldc);
/* CUBLAS_OP_C, or CUBLAS_OP_T for a real dtype */
TL_HIDDEN cublasOperation_t tl_op_h(int dtype);
TL_HIDDEN int tl_blas(cuc_err_t *E, int dev, const char *call, cublasStatus_t st);
#define TL_BL(dev, call)                                              \
  do {                                                                \
    cublasStatus_t bst_ = (call);                                     \
    if (bst_ != CUBLAS_STATUS_SUCCESS) {                              \
      rc = tl_blas(E, (dev), #call, bst_);                            \
      goto out;                                                       \
    }                                                                 \
  } while (0)

/* ---- move.c: checks and the caller's layout <-> the engine's tile columns -------- */
TL_HIDDEN int tl_validate(tl_solve_t *j);
/* The provider's variables, read at each solve (providers/common/env.h):
 * MUSTER_TILED_TILE (a tile replacing the rule, for measurements),
 * MUSTER_TILED_TIMING (0|1: phase times of GPU work),
 * MUSTER_TILED_LOOKAHEAD (1..4), MUSTER_TILED_PRIORITY (0|1: the panel
 * on a high-priority stream) and MUSTER_TILED_OVERLAP (0|1: the moves
 * beside the factorization and the solve); a bad value is MUSTER_EINVAL
 * naming it. */
TL_HIDDEN int tl_options(tl_solve_t *j);
/* MUSTER_TILED_LOOKAHEAD, or the default when unset or bad (tl_options
 * fails the solve on a bad one): for the memory estimate. */
TL_HIDDEN int tl_env_lookahead(void);
/* The engine's tile for (dtype, n, G) (the one rule; MUSTER_TILED_TILE overrides). */
TL_HIDDEN int64_t tl_engine_tile(muster_dtype_t dtype, int64_t n, int G);
/* j->mat, ld: the caller's buffers when they already are the engine's
 * layout, else the cached work buffers with A copied in (on the compute
 * streams), or left to the schedule's MOVE ops when j->s.move. */
TL_HIDDEN int tl_move_in(tl_solve_t *j);
/* Tile column k, rows [kT, n), from the caller's block layout into the
 * engine's buffer (to_user 0) or back (1), queued on stream st of k's
 * owner, the current device. */
TL_HIDDEN int tl_move_col(tl_solve_t *j, int k, int to_user, cudaStream_t st);
/* L back into the caller's block layout (copy mode only): on the compute
 * streams, or with j->overlap on each GPU's copy stream to itself, so the
 * solve with B runs beside it (the factor must be checked good first). */
TL_HIDDEN int tl_move_out(tl_solve_t *j);
/* Column tile k's pointer on its owner. */
TL_HIDDEN char *tl_col(const tl_solve_t *j, int k);

/* ---- factor.c ---------------------------------------------------------------------- */
/* Issue the whole schedule (no host synchronization), then wait, read
 * every potrf info and look at the factor's diagonal: 0, MUSTER_ENOTPD
 * (*call->info = the failing minor), MUSTER_ENONFINITE. */
TL_HIDDEN int tl_factor(tl_solve_t *j);
TL_HIDDEN int tl_check_factor(tl_solve_t *j);
/* The factor's n diagonal entries into host (one strided copy per tile);
 * every device idle. */
TL_HIDDEN int tl_diag(tl_solve_t *j, void *host);

/* ---- bsolve.c ---------------------------------------------------------------------- */
/* X = A^-1 B from rank 0's b into every rank's b; NaN/Inf in X: MUSTER_ENONFINITE. */
TL_HIDDEN int tl_solve_b(tl_solve_t *j);
/* log det A into every rank's w. */
TL_HIDDEN int tl_logdet(tl_solve_t *j);

/* ---- estimate.c ---------------------------------------------------------------------- */
TL_HIDDEN int tl_estimate(void *ctx, const muster_provider_query_t *q, muster_provider_estimate_t *est);
TL_HIDDEN int64_t tl_choose_tile(void *ctx, muster_routine_t routine, muster_dtype_t dtype, int64_t n, int nshards);

#endif
