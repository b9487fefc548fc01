/*
 * providers/cudacommon/cudacommon.h - what every GPU provider of muster
 * shares (cusolvermg now, cusolverdn next): "cuc" = CUDA common.
 *
 *   errors    cuc_err_t and cuc_fail/cuc_cuda/cuc_solver: one format for a
 *             failed CUDA or cuSOLVER status ("<provider>: device D: CALL
 *             failed: NAME (N): text", MUSTER_ECUDA); CUC_CU/CUC_SO/
 *             CUC_CHECK for check-and-goto (err.c)
 *   probe     cuc_probe: are there CUDA devices?  Never initializes CUDA in
 *             a process that has not already (it may fork ranks later);
 *             asks a short-lived child instead (probe.c)
 *   devices   the caller's current device saved and restored, buffers grown
 *             on demand, peer access enabled once per ordered pair, and the
 *             every-rank half of a call: cuc_local_export synchronizes the
 *             shard's stream and, in process mode, exports it (device.c)
 *   IPC       process mode: a rank exports CUDA IPC handles of its shard
 *             (cuc_ipc_export), the leader opens them once and keeps the
 *             mappings per peer process in a cuc_ipc_cache_t (ipc.c)
 *   kernels   identity panels and the lower-to-upper mirror of a Hermitian
 *             result (kernels.cu)
 *   pivots    the column scales of getrs's singularity rule
 *             (providers/common/singular.h) from an LU factor on GPUs
 *             (kernels.cu, pivots.c)
 *   leader hooks  fini's order, leader_import and forget_peer under the
 *             provider context's mutex, peer access among a call's GPUs,
 *             waiting for them (leader.c)
 *   shards    a rank's shard against the call: b, w, its columns in the
 *             layout (shard.c); muster's dtypes as CUDA data types
 *
 * Built as a static, -fPIC library (libcudacommon.a) linked into each GPU
 * provider; every symbol is hidden, so a provider still exports only its
 * struct, and two providers loaded in one process each have their own copy
 * (their own probe cache and counters).  It links libcudart, never libcuda
 * (driver entry points are fetched at run time), and nothing of libmuster:
 * the core never needs CUDA, and a provider loads where no driver exists.
 *
 * Apart from cuc_probe's own, nothing here takes a lock: each provider
 * serializes its calls into one cuc_ipc_cache_t (and its buffers) under its
 * own context mutex.
 */
#ifndef MUSTER_CUDACOMMON_H
#define MUSTER_CUDACOMMON_H

#include <cuda_runtime_api.h>
#include <cusolver_common.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "muster.h"
#include "muster/layout.h"

#ifdef __cplusplus
extern "C" { /* kernels.cu is C++ */
#endif

#define CUC_HIDDEN __attribute__((visibility("hidden")))
#define CUC_MAX_ORDINAL 64 /* device ordinals tracked per process */

/* ---- errors (err.c) ---------------------------------------------------------------- */

/* Where a hook's message goes: buf of len bytes (NULL or 0: nowhere), every
 * message prefixed by "<who>: ", who being the provider's name. */
typedef struct cuc_err {
  char *buf;
  size_t len;
  const char *who;
} cuc_err_t;

/* Write "<who>: <fmt ...>" (truncated to fit) and return code. */
CUC_HIDDEN int cuc_fail(cuc_err_t *e, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Append to the message already there (truncated to fit; nothing when the
 * buffer is absent or full): context that only the caller knows. */
CUC_HIDDEN void cuc_err_append(cuc_err_t *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A failed CUDA runtime call: MUSTER_ECUDA, "device D: CALL failed: NAME (N):
 * text"; clears the thread's last error so no stale one is seen later. */
CUC_HIDDEN int cuc_cuda(cuc_err_t *e, int dev, const char *call, cudaError_t st);
/* A failed cuSOLVER call: MUSTER_ECUDA, "device D: CALL failed: NAME (N)". */
CUC_HIDDEN int cuc_solver(cuc_err_t *e, int dev, const char *call, cusolverStatus_t st);
/* "CUSOLVER_STATUS_..." for st ("CUSOLVER_STATUS_UNKNOWN" when not known). */
CUC_HIDDEN const char *cuc_solver_status_name(cusolverStatus_t st);

/* Check-and-goto: each expects `int rc`, `cuc_err_t *E` and a label `out`
 * in scope; on failure rc gets the negative code and control goes to out. */
#define CUC_CU(dev, call) CUC_CALL_(cudaError_t, cudaSuccess, cuc_cuda, dev, #call, call)
#define CUC_SO(dev, call) CUC_CALL_(cusolverStatus_t, CUSOLVER_STATUS_SUCCESS, cuc_solver, dev, #call, call)
/* (the call's text is taken before its macros, e.g. cudaStreamNonBlocking,
 * are expanded, so the message shows the call as written) */
#define CUC_CALL_(type, ok, report, dev, text, call)           \
  do {                                                         \
    type st_ = (call);                                         \
    if (st_ != (ok)) {                                         \
      rc = report(E, (dev), text, st_);                        \
      goto out;                                                \
    }                                                          \
  } while (0)
#define CUC_CHECK(call)                                        \
  do {                                                         \
    rc = (call);                                               \
    if (rc < 0) goto out;                                      \
  } while (0)

/* ---- shards and types (shard.c) ----------------------------------------------------- */

/* Rank r's shard against the call: b with ldb >= n for potrs, w for
 * syevd, and its columns where the layout puts them (geometry L of the
 * call's n, ranks and tile: block, exactly its block's first column and at
 * least its width; cyclic, at least its real columns).  0, or
 * MUSTER_EINVAL naming the rank and its device.  (Memory kind, a and lda
 * are each provider's own rules.) */
CUC_HIDDEN int cuc_check_shard(const muster_solve_args_t *a, const muster_layout_geom_t *L, int r,
                               const muster_shard_t *s, cuc_err_t *E);

/* The CUDA data type of a muster dtype, and of its real part (syevd's
 * eigenvalues). */
static inline cudaDataType cuc_cuda_type(int dtype) {
  switch (dtype) {
  case MUSTER_F32: return CUDA_R_32F;
  case MUSTER_F64: return CUDA_R_64F;
  case MUSTER_C64: return CUDA_C_32F;
  default: return CUDA_C_64F;
  }
}
static inline cudaDataType cuc_real_type(int dtype) {
  return muster_dtype_real_bytes(dtype) == 4 ? CUDA_R_32F : CUDA_R_64F;
}

/* ---- counters (device.c, ipc.c) ------------------------------------------------------ */

/* Process-wide counts of what this library created, for a provider's test
 * counters ("a second call creates nothing"). */
enum {
  CUC_STAT_ALLOCS,     /* device or pinned buffers (re)allocated by cuc_grow */
  CUC_STAT_PEER,       /* peer-access enables                              */
  CUC_STAT_IPC_OPENS,  /* cudaIpcOpenMemHandle calls                       */
  CUC_STAT_IPC_CLOSES, /* cudaIpcCloseMemHandle calls                      */
  CUC_NSTATS
};
CUC_HIDDEN uint64_t cuc_stat(int which);
CUC_HIDDEN void cuc_stat_add(int which, uint64_t n);

/* ---- probe (probe.c) --------------------------------------------------------------- */

/* 0 when this process can use CUDA and sees at least one device (*count,
 * when count is not NULL, gets how many); else MUSTER_ECUDA with the reason
 * in why ("no usable CUDA driver: cudaGetDeviceCount returned NAME (N):
 * text", "no CUDA device: ...").  Unless this process has already
 * initialized CUDA, the count comes from a short-lived child: CUDA must not
 * start in a process that forks rank processes afterwards (the CLI probes,
 * then forks).  The first answer is cached for the life of the process. */
CUC_HIDDEN int cuc_probe(int *count, char *why, size_t whylen);

/* ---- devices (device.c) ------------------------------------------------------------ */

/* The calling thread's current device, or -1 when it cannot be read;
 * cuc_device_restore(saved) makes it current again (nothing for -1).  Every
 * hook that switches devices restores the caller's on the way out. */
CUC_HIDDEN int cuc_device_save(void);
CUC_HIDDEN void cuc_device_restore(int saved);

/* Grow *buf to at least bytes (0 counts as 1): device memory of dev, or
 * pinned host memory when dev < 0.  The old content is not kept.  *have is
 * the current size; nothing happens when it is already enough. */
CUC_HIDDEN int cuc_grow(int dev, void **buf, size_t *have, size_t bytes, cuc_err_t *E);

/* cuc_grow, refused first when the device cannot hold it: MUSTER_ENOMEM
 * "device D: WHAT needs N bytes, F free (the provider holds H there in this
 * buffer)" when bytes exceed what cudaMemGetInfo reports free plus what *buf
 * holds now.  dev < 0: pinned host memory, no check.  Other failures get
 * " for WHAT" appended. */
CUC_HIDDEN int cuc_grow_checked(int dev, void **buf, size_t *have, size_t bytes, const char *what, cuc_err_t *E);

/* Peer access state of every ordered device pair: 0 not asked yet, 1
 * enabled, 2 not possible (copies between the two still work, staged by the
 * driver; a kernel on one cannot read the other's memory). */
typedef struct cuc_peers {
  unsigned char state[CUC_MAX_ORDINAL][CUC_MAX_ORDINAL];
} cuc_peers_t;
/* Let device `from` reach device `to`'s memory (cudaDeviceEnablePeerAccess
 * on `from`), once per ordered pair; 0 also when the pair cannot (state 2).
 * Leaves `from` current when it enabled anything. */
CUC_HIDDEN int cuc_peer_enable(cuc_peers_t *p, int from, int to, cuc_err_t *E);

/* The local_export hook's work for a rank holding CUDA memory: refuse any
 * other memory kind (MUSTER_EUNSUPPORTED), wait for the caller's work on the
 * shard (mine->stream, or the whole device when it is NULL: the legacy
 * default stream may sit behind other blocking streams) so the leader reads
 * complete data, and in process mode write the IPC blob (cuc_ipc_export).
 * *len is 0 unless a blob was written.  The current device is restored. */
CUC_HIDDEN int cuc_local_export(const muster_shard_t *mine, int process_mode, void *blob, size_t cap,
                                size_t *len, cuc_err_t *E);

/* ---- IPC (ipc.c) ------------------------------------------------------------------- */

struct cuc_ipc_entry;

/* The leader's mappings of peer processes' memory.  Zero it to start
 * (static, calloc or memset); cuc_ipc_free releases it.  A mapping is keyed
 * by (peer pid, its start time, handle bytes) and kept until cuc_ipc_forget,
 * until the peer is found dead (checked once per epoch), until the peer
 * exports a new handle for the same base address (the old allocation was
 * freed), or, beyond CUC_IPC_MAX mappings, until it is the least recently
 * used one outside the current epoch. */
typedef struct cuc_ipc_cache {
  struct cuc_ipc_entry *head;
  uint64_t epoch;    /* cuc_ipc_tick: once per solve                      */
  uint64_t swept;    /* epoch + 1 of the last sweep for dead peers; 0 none */
} cuc_ipc_cache_t;
#define CUC_IPC_MAX 256

/* A new call (the provider ticks once per solve): mappings used since the
 * previous tick are never evicted for room during the imports of the next. */
CUC_HIDDEN void cuc_ipc_tick(cuc_ipc_cache_t *c);

/* Rank side: the blob (at most cap bytes; *len its size) carrying, for each
 * of mine->a, b, w, the IPC handle of the allocation holding it and the
 * pointer's offset in it, the device's PCI bus id (ordinals differ between
 * processes under CUDA_VISIBLE_DEVICES) and this process's identity.  When a
 * pointer cannot be exported, the blob says why instead and this still
 * returns 0: the runtime may ask for exports it will not use, and the
 * leader reports the reason only if it needs that rank's memory. */
CUC_HIDDEN int cuc_ipc_export(const muster_shard_t *mine, void *blob, size_t cap, size_t *len,
                              cuc_err_t *E);

/* Leader side: turn rank's blob (published by peer_pid) into pointers in
 * *shard (a, b, w; device = the leader's ordinal of that GPU; mem = CUDA),
 * opening handles not mapped yet (about 10 ms each) on that device.
 * Errors name the rank and pid.  The current device is restored. */
CUC_HIDDEN int cuc_ipc_import(cuc_ipc_cache_t *c, int rank, int64_t peer_pid, const void *blob, size_t len,
                              muster_shard_t *shard, cuc_err_t *E);

/* Close every mapping of process pid (forget_peer), or every mapping; the
 * current device is restored. */
CUC_HIDDEN void cuc_ipc_forget(cuc_ipc_cache_t *c, int64_t pid);
CUC_HIDDEN void cuc_ipc_free(cuc_ipc_cache_t *c);

/* ---- leader hooks (leader.c) ------------------------------------------------------- */

/* A leader provider's context holds a mutex (every hook serialized under
 * it) and a cuc_ipc_cache_t; these are its hooks' shared bodies. */

/* init: a zeroed context of size bytes (calloc) whose mutex, at byte
 * mu_off, is initialized; MUSTER_ENOMEM "who: out of host memory". */
CUC_HIDDEN int cuc_leader_init(size_t size, size_t mu_off, const char *who, void **out, char *errbuf, size_t errlen);
/* fini: the IPC mappings closed, then free_cache(ctx) (the provider's
 * handles, streams, buffers), under mu; mu destroyed; the caller's
 * device restored and no stale CUDA error left; ctx freed. */
CUC_HIDDEN void cuc_leader_fini(pthread_mutex_t *mu, cuc_ipc_cache_t *ipc, void (*free_cache)(void *ctx), void *ctx);
/* leader_import and forget_peer: cuc_ipc_import / cuc_ipc_forget under mu;
 * messages prefixed by who. */
CUC_HIDDEN int cuc_leader_import(pthread_mutex_t *mu, cuc_ipc_cache_t *ipc, const char *who, int rank,
                                 int64_t peer_pid, const void *blob, size_t len, muster_shard_t *shard, char *errbuf,
                                 size_t errlen);
CUC_HIDDEN void cuc_leader_forget(pthread_mutex_t *mu, cuc_ipc_cache_t *ipc, int64_t peer_pid);
/* The six hooks every leader GPU provider (cusolvermg, cusolverdn, tiled)
 * has around the bodies above, written once: it states only what differs,
 *   CUC_LEADER_HOOKS(my_ctx_t, "name", my_cache_free)
 * and names them in its struct with CUC_LEADER_HOOK_FIELDS.  CTX: its context type, with members
 * `pthread_mutex_t mu` and `cuc_ipc_cache_t ipc`; WHO: its name, the
 * messages' prefix; FREE_CACHE: void FREE_CACHE(CTX *), what the context
 * caches (handles, streams, buffers), freed by fini under the mutex after
 * the IPC mappings.  probe is fork-safe: it never initializes CUDA in a
 * process that may fork ranks later (cuc_probe). */
#define CUC_LEADER_HOOKS(CTX, WHO, FREE_CACHE)                                                                   \
  static int probe(char *why, size_t whylen) { return cuc_probe(NULL, why, whylen); }                           \
  static int init(void **out, char *err, size_t errlen) {                                                       \
    return cuc_leader_init(sizeof(CTX), offsetof(CTX, mu), WHO, out, err, errlen);                              \
  }                                                                                                             \
  static void cuc_free_cache_hook(void *c) { FREE_CACHE((CTX *)c); }                                            \
  static void fini(void *vc) {                                                                                  \
    CTX *c = vc;                                                                                                \
    if (c) cuc_leader_fini(&c->mu, &c->ipc, cuc_free_cache_hook, c);                                            \
  }                                                                                                             \
  static int local_export(void *vc, const muster_shard_t *mine, int process_mode, void *blob, size_t cap,        \
                          size_t *len, char *errbuf, size_t errlen) {                                           \
    (void)vc;                                                                                                   \
    cuc_err_t err = {errbuf, errlen, WHO};                                                                      \
    return cuc_local_export(mine, process_mode, blob, cap, len, &err);                                          \
  }                                                                                                             \
  static int leader_import(void *vc, int rank, int64_t peer_pid, const void *blob, size_t len,                  \
                           muster_shard_t *shard, char *errbuf, size_t errlen) {                                \
    CTX *c = vc;                                                                                                \
    return cuc_leader_import(&c->mu, &c->ipc, WHO, rank, peer_pid, blob, len, shard, errbuf, errlen);          \
  }                                                                                                             \
  static void forget_peer(void *vc, int64_t peer_pid) {                                                         \
    CTX *c = vc;                                                                                                \
    cuc_leader_forget(&c->mu, &c->ipc, peer_pid);                                                               \
  }

/* The struct fields (v1 or v2) of the hooks CUC_LEADER_HOOKS defines. */
#define CUC_LEADER_HOOK_FIELDS                                                                                  \
  .probe = probe, .init = init, .fini = fini, .local_export = local_export, .leader_import = leader_import,     \
  .forget_peer = forget_peer

/* cuc_peer_enable for every ordered pair of the n devices ids. */
CUC_HIDDEN int cuc_peer_enable_all(cuc_peers_t *p, int n, const int *ids, cuc_err_t *E);
/* cudaDeviceSynchronize on each of the n devices ids. */
CUC_HIDDEN int cuc_sync_devices(int n, const int *ids, cuc_err_t *E);

/* ---- kernels (kernels.cu) ------------------------------------------------------------ */

/* dtype: a muster_dtype_t value.  Both return the launch's status
 * (cudaErrorInvalidValue for an unknown dtype or a shape out of range). */

/* Columns c0 .. c0 + w - 1 of the n x n identity as an lda x w panel:
 * panel(c0 + k, k) = 1 for k < w, every other entry of the lda x w panel
 * 0 (rows n .. lda - 1 included).  Ordered on stream. */
CUC_HIDDEN cudaError_t cuc_identity_panel(int dtype, void *panel, int64_t lda, int64_t c0, int64_t w,
                                          cudaStream_t stream);

/* The strict upper triangle of wc columns of a Hermitian matrix from the
 * lower one: dst(i, c) = conj(stage(c, i)) for 0 <= c < wc and
 * 0 <= i < row0 + c, where stage(c, i) = stage[i * lds + c] holds the
 * matrix's rows row0 .. row0 + wc - 1 (stage(c, i) = A(row0 + c, i), only
 * entries with i < row0 + c are read) and dst points at the first of the
 * wc columns (rows from 0, leading dimension lda).  Whole matrix in place:
 * stage = dst = A, lds = lda, row0 = 0, wc = n (reads only the strict lower
 * triangle, writes only the strict upper one).  rows = row0 + wc must be at
 * most 2 097 120.  Both pointers must be memory the running GPU reaches
 * directly (its own: IPC mappings of another GPU are not). */
CUC_HIDDEN cudaError_t cuc_mirror_lower(int dtype, const void *stage, int64_t lds, int64_t wc, int64_t row0,
                                        void *dst, int64_t lda, cudaStream_t stream);

/* Where the first NaN/Inf of the m x k matrix x (leading dimension ld, on
 * the running GPU) is: atomicMin of its column-major index i = c * m + r
 * into *out, which the caller set to UINT64_MAX first.  Ordered on s. */
CUC_HIDDEN cudaError_t cuc_scan_finite_launch(int dtype, const void *x, int64_t ld, int64_t m, int64_t k,
                                              unsigned long long *out, cudaStream_t s);

/* Local index -> global index (0-based) of a block-cyclic distribution of
 * one dimension: blocks of nb, over nprocs processes, this one `me`, the
 * first block on process 0.  {extent, 1, 0} is the identity. */
typedef struct cuc_cyclic {
  int64_t nb;
  int nprocs, me;
} cuc_cyclic_t;

#ifdef __CUDACC__ /* kernels.cu's kernels map with it too */
__host__ __device__
#endif
static inline int64_t cuc_cyclic_global(cuc_cyclic_t m, int64_t l) {
  return (l / m.nb) * m.nprocs * m.nb + m.me * m.nb + l % m.nb;
}

/* The column scales of getrs's singularity rule on a piece of an LU factor
 * (rows x cols, leading dimension ld, on the running GPU; rmap / cmap say
 * which global row and column each local one is): for every local column
 * c, the largest |entry| whose global row is at most its global column g
 * (U's part of the column), atomicMax'ed into out[g] as the bits of a
 * non-negative double (they order as the doubles do).  The caller zeroes
 * out (n words, n the global order) first; columns with g >= n are
 * skipped, and so are NaN entries; pieces of a column on several GPUs
 * combine there or in a max over their copies.  Ordered on s. */
CUC_HIDDEN cudaError_t cuc_upper_colmax_launch(int dtype, const void *a, int64_t ld, int64_t rows, int64_t cols,
                                               cuc_cyclic_t rmap, cuc_cyclic_t cmap, int64_t n,
                                               unsigned long long *out, cudaStream_t s);

/* The same, waited for (pivots.c): out zeroed (in *buf, a device buffer of
 * device dev grown with cuc_grow to n words), the kernel, then the n scales
 * max'ed into host[] (n doubles, which the caller zeroes first).  Ordered
 * on s, which it synchronizes. */
CUC_HIDDEN int cuc_upper_colmax(int dev, int dtype, const void *a, int64_t ld, int64_t rows, int64_t cols,
                                cuc_cyclic_t rmap, cuc_cyclic_t cmap, int64_t n, void **buf, size_t *have,
                                cudaStream_t s, double *host, cuc_err_t *E);

/* The same, waited for (scan.c): *row, *col of the first NaN/Inf of x on
 * device dev, or -1, -1.  *word / *have: a device buffer of at least 8
 * bytes, grown with cuc_grow (the caller keeps and frees it).  Ordered
 * on s, which it synchronizes. */
CUC_HIDDEN int cuc_first_nonfinite(int dev, int dtype, const void *x, int64_t ld, int64_t m, int64_t k,
                                   void **word, size_t *have, cudaStream_t s, int64_t *row, int64_t *col,
                                   cuc_err_t *E);

#ifdef __cplusplus
}
#endif
#endif /* MUSTER_CUDACOMMON_H */
