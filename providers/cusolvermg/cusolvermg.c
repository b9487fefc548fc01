/*
 * providers/cusolvermg/cusolvermg.c - the GPU provider: potrs, potri, syevd
 * for f32, f64, c64, c128 through cuSolverMg on 1..16 GPUs of one node.
 *
 * solve() runs on the leader with every rank's shard (device pointers: the
 * ranks' own in threads mode, CUDA IPC mappings in process mode):
 *   1. validate (distinct devices, one lda, block/cyclic geometry);
 *   2. fetch the cached handle/grid of the device set, enable peer access;
 *   3. block layout: move A into cuSolverMg's 1-D block-cyclic layout on the
 *      GPUs (plan.h: nothing when the layouts coincide, an in-place
 *      permutation when every rank's cyclic part fits its own buffer, else a
 *      copy into cached work buffers);
 *   4. run the routine (lower triangle):
 *        potrs  potrf, then potrs on rank 0's B (chunks of at most
 *               min(tile, CMG_RHS_PANEL) columns, all on rank 0's device),
 *               then X copied to every rank's b;
 *        potri  one GPU: potrf + potri, then the lower triangle mirrored
 *               into the upper (kernels.cu); 2+ GPUs: potrf, then the
 *               inverse solved for in panels of identity columns
 *               (inverse_by_solves: cuSolverMg's own potri is wrong there);
 *               A gets the full Hermitian inverse either way;
 *        syevd  syevd (vectors unless MUSTER_NO_VECTORS); eigenvalues (host,
 *               pinned) copied to every rank's w;
 *   5. move A back to the block layout (also after a failure, so the
 *      caller's buffers are never left permuted); synchronize every device.
 * A's shards receive what the lapack provider gives: potrs the factor L
 * (lower; the strictly upper part unchanged), potri the inverse, syevd the
 * eigenvectors (with MUSTER_NO_VECTORS their content is unspecified).
 *
 * Every CUDA/cuSOLVER status is checked and reported as MUSTER_ECUDA naming
 * the device, the call and the status; potrf info k > 0 is MUSTER_ENOTPD
 * with *info = k.  The calling thread's current device is restored.
 */
#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmgInt.h"
#include "muster/layout.h"

#define ALL_DTYPES \
  ((1u << MUSTER_F32) | (1u << MUSTER_F64) | (1u << MUSTER_C64) | (1u << MUSTER_C128))
#define ALL_ROUTINES ((1u << MUSTER_POTRS) | (1u << MUSTER_POTRI) | (1u << MUSTER_SYEVD))
#define SYEVD_MAX_TILE 1024 /* cuSolverMg's syevd refuses larger tiles */

/* Most right-hand-side columns one cusolverMgPotrs call may take.  On 2 or
 * more GPUs cuSolverMg (CUDA 13.0; measured 2026-11-21 on 2 x H200 with
 * tests/gpu/mg-rhs-probe, which repeats the measurement) solves the first
 * 2048 columns of B right and every later column wrong (relative errors
 * 1e-7 .. 1e-4, whatever the tile), and cusolverMgPotri, which shares the
 * defect, returns a wrong trailing block of the inverse for n > 2048.
 * Calls of at most 2048 columns are exact.  On one GPU both are right. */
#define CMG_RHS_PANEL 2048

static cudaDataType cuda_type(muster_dtype_t t) {
  switch (t) {
  case MUSTER_F32: return CUDA_R_32F;
  case MUSTER_F64: return CUDA_R_64F;
  case MUSTER_C64: return CUDA_C_32F;
  default: return CUDA_C_64F;
  }
}

static cudaDataType real_type(muster_dtype_t t) {
  return muster_dtype_real_bytes(t) == 4 ? CUDA_R_32F : CUDA_R_64F;
}

/* Fork-safe: never initializes CUDA in a process that may fork ranks later
 * (cudacommon's cuc_probe). */
static int probe(char *why, size_t whylen) { return cuc_probe(NULL, why, whylen); }

/* ---- context ------------------------------------------------------------------ */

static int init(void **out, char *err, size_t errlen) {
  cmg_ctx_t *c = calloc(1, sizeof *c);
  if (!c) {
    cuc_err_t e = CMG_ERR(err, errlen);
    return cuc_fail(&e, MUSTER_ENOMEM, "out of host memory");
  }
  pthread_mutex_init(&c->mu, NULL);
  *out = c;
  return 0;
}

static void fini(void *vc) {
  cmg_ctx_t *c = vc;
  if (!c) return;
  int saved = cuc_device_save();
  pthread_mutex_lock(&c->mu);
  cuc_ipc_free(&c->ipc);
  cmg_cache_free(c);
  pthread_mutex_unlock(&c->mu);
  pthread_mutex_destroy(&c->mu);
  cuc_device_restore(saved);
  (void)cudaGetLastError();
  free(c);
}

/* ---- tile choice ---------------------------------------------------------------- */

static int64_t gcd64(int64_t a, int64_t b) {
  while (b) {
    int64_t t = a % b;
    a = b;
    b = t;
  }
  return a;
}

/* The preferred tile by routine, n and GPU count, from the measurements in
 * docs/tiles.md (2 x H200, CUDA 13.0). */
static int64_t table_tile(muster_routine_t routine, int64_t n, int nshards) {
  int64_t S = (n + nshards - 1) / nshards;
  /* syevd: 256 beats 512 by 1.5-2.5% and 1024 by 6% (n = 8192, 16384) */
  if (routine == MUSTER_SYEVD) return 256;
  /* one GPU: one tile (cuSolverMg then runs like cusolverDn) was fastest
   * at n = 16384 (4096: +6%, 2048: +14%); no relayout on one GPU anyway */
  if (nshards == 1) return n;
  /* potrs (potrf + potrs): 2048 is best from n = 8192 to 65536 (256 is 2-4x
   * slower); while S <= 8192, T = S costs at most 11% in cuSolverMg and
   * needs no relayout, which costs more than that */
  if (routine == MUSTER_POTRS) return S <= 8192 ? S : 2048;
  /* potri: its solve part gains more from smaller tiles (n = 16384: 4096
   * 0.290 s, 2048 0.291 s, 8192 0.323 s) */
  if (S <= 4096) return S;
  return S <= 8192 ? 4096 : 2048;
}

/* The table's tile, moved to one that is valid for the block layout and that
 * divides the block width S (whole tiles move as single copies); T == S
 * (no relayout at all) when the table asks for that much. */
CMG_HIDDEN int64_t cmg_fit_tile(muster_routine_t routine, int64_t want, int64_t n, int nshards) {
  int64_t S = muster_ceil_div(n, nshards);
  int64_t cap = routine == MUSTER_SYEVD ? SYEVD_MAX_TILE : S;
  if (cap > S) cap = S;
  if (want > cap) want = cap;
  if (want < 1) want = 1;
  if (want == S) return S;
  int64_t best = 0, best_g = 0, best_d = 0;
  for (int64_t t = want / 2 > 0 ? want / 2 : 1; t <= 2 * want && t <= cap; t++) {
    if (!muster_layout_tile_valid(n, t, nshards)) continue;
    /* prefer tiles dividing S (whole tiles move as single copies), then
     * the largest common unit with S, then closeness to the wanted tile */
    int64_t g = S % t == 0 ? S : gcd64(t, S), d = t > want ? t - want : want - t;
    if (!best || g > best_g || (g == best_g && d < best_d)) {
      best = t;
      best_g = g;
      best_d = d;
    }
  }
  if (best) return best;
  for (int64_t t = cap; t >= 1; t--)
    if (muster_layout_tile_valid(n, t, nshards)) return t;
  return S;
}

static int64_t choose_tile(void *ctx, muster_routine_t routine, muster_dtype_t dtype, int64_t n,
                           int nshards) {
  (void)ctx;
  (void)dtype;
  if (n < 1 || nshards < 1) return 0;
  const char *env = getenv("MUSTER_CMG_TILE"); /* measurement runs override the table */
  int64_t want = env && *env ? strtoll(env, NULL, 10) : table_tile(routine, n, nshards);
  return cmg_fit_tile(routine, want, n, nshards);
}

/* ---- solve ------------------------------------------------------------------------ */

typedef struct job {
  cmg_ctx_t *c;
  const muster_provider_call_t *call;
  const muster_solve_args_t *a;
  cuc_err_t *E;
  int R;
  int ids[CMG_MAX_DEV];
  size_t esz;
  int64_t lda;
  muster_layout_geom_t L;
  cmg_devset_t *set;
  cmg_plan_t to_cyc, to_blk;
  void *user[CMG_MAX_DEV];   /* the ranks' A                        */
  void *work[CMG_MAX_DEV];   /* copy plans: the work buffers         */
  void *mats[CMG_MAX_DEV];   /* what cuSolverMg works on             */
  cudaLibMgMatrixDesc_t descA;
} job_t;

static int validate(job_t *j) {
  const muster_provider_call_t *call = j->call;
  const muster_solve_args_t *a = j->a;
  cuc_err_t *E = j->E;
  int R = call->nshards;
  if (R < 1 || R > CMG_MAX_DEV)
    return cuc_fail(E, MUSTER_EINVAL, "%d ranks: cuSolverMg takes 1 to %d GPUs", R, CMG_MAX_DEV);
  if (a->n < 1 || a->n > INT_MAX)
    return cuc_fail(E, MUSTER_EINVAL, "n=%" PRId64 " out of range 1..%d (cuSolverMg takes int)", a->n, INT_MAX);
  if (a->routine == MUSTER_POTRS && (a->nrhs < 1 || a->nrhs > INT_MAX))
    return cuc_fail(E, MUSTER_EINVAL, "potrs: nrhs=%" PRId64 " out of range", a->nrhs);
  if (a->tile < 1 || a->tile > a->n)
    return cuc_fail(E, MUSTER_ETILE, "tile %" PRId64 " out of range 1..n=%" PRId64, a->tile, a->n);
  if (a->routine == MUSTER_SYEVD && a->tile > SYEVD_MAX_TILE)
    return cuc_fail(E, MUSTER_ETILE, "syevd: tile %" PRId64 " > %d, the largest cuSolverMg's syevd takes",
                    a->tile, SYEVD_MAX_TILE);
  j->esz = muster_dtype_bytes(a->dtype);
  if (!j->esz) return cuc_fail(E, MUSTER_EINVAL, "unknown dtype %d", (int)a->dtype);
  muster_layout_geom_init(&j->L, a->n, a->tile, R);
  j->lda = call->shards[0].lda;
  for (int r = 0; r < R; r++) {
    const muster_shard_t *s = &call->shards[r];
    if (s->mem != MUSTER_MEM_CUDA)
      return cuc_fail(E, MUSTER_EUNSUPPORTED, "rank %d: shard memory kind %d is not CUDA device memory", r,
                      (int)s->mem);
    if (s->device < 0 || s->device >= CUC_MAX_ORDINAL)
      return cuc_fail(E, MUSTER_EINVAL, "rank %d: device %d out of range", r, s->device);
    for (int q = 0; q < r; q++)
      if (j->ids[q] == s->device)
        return cuc_fail(E, MUSTER_EINVAL, "ranks %d and %d both on device %d: cuSolverMg needs one GPU per rank",
                        q, r, s->device);
    j->ids[r] = s->device;
    if (!s->a) return cuc_fail(E, MUSTER_EINVAL, "rank %d (device %d): a is NULL", r, s->device);
    if (s->lda != j->lda || s->lda < a->n)
      return cuc_fail(E, MUSTER_EINVAL, "rank %d (device %d): lda=%" PRId64 "; every rank needs the same lda >= n=%"
                      PRId64 " (rank 0 has %" PRId64 ")", r, s->device, s->lda, a->n, j->lda);
    if (a->routine == MUSTER_POTRS && (!s->b || s->ldb < a->n))
      return cuc_fail(E, MUSTER_EINVAL, "rank %d (device %d): potrs needs b with ldb >= n (b=%p ldb=%" PRId64 ")",
                      r, s->device, s->b, s->ldb);
    if (a->routine == MUSTER_SYEVD && !s->w)
      return cuc_fail(E, MUSTER_EINVAL, "rank %d (device %d): syevd needs w", r, s->device);
    if (a->layout == MUSTER_LAYOUT_BLOCK) {
      int64_t c0 = muster_layout_block_col0(&j->L, r), nc = muster_layout_block_ncols(&j->L, r);
      if (s->col0 != c0 || s->ncols < nc)
        return cuc_fail(E, MUSTER_EINVAL, "rank %d (device %d): block shard holds columns [%" PRId64 ", +%" PRId64
                        "), the block layout of n=%" PRId64 " over %d ranks puts [%" PRId64 ", +%" PRId64 ") there",
                        r, s->device, s->col0, s->ncols, a->n, R, c0, nc);
    } else if (s->ncols < muster_layout_cyclic_real_cols(&j->L, r)) {
      return cuc_fail(E, MUSTER_EINVAL, "rank %d (device %d): cyclic shard of %" PRId64 " columns, tile %" PRId64
                      " needs %" PRId64, r, s->device, s->ncols, a->tile, muster_layout_cyclic_real_cols(&j->L, r));
    }
    j->user[r] = s->a;
  }
  j->R = R;
  return 0;
}

static int plan_force(void) {
  const char *s = getenv("MUSTER_CMG_RELAYOUT"); /* tests: inplace | copy */
  if (s && !strcmp(s, "copy")) return CMG_PLAN_COPY;
  if (s && !strcmp(s, "inplace")) return CMG_PLAN_INPLACE;
  return 0;
}

static int prepare_layout(job_t *j) {
  int rc = 0;
  cuc_err_t *E = j->E;
  for (int r = 0; r < j->R; r++) j->mats[r] = j->user[r];
  if (j->a->layout != MUSTER_LAYOUT_BLOCK) return 0;
  int64_t cap[CMG_MAX_DEV];
  for (int r = 0; r < j->R; r++) cap[r] = j->call->shards[r].ncols;
  cmg_plan_req_t req = {j->a->n, j->lda, j->a->tile, j->R, j->esz, cap, CMG_TO_CYCLIC, plan_force(),
                        CMG_STAGE_CAP};
  char why[160];
  if (cmg_plan_build(&j->to_cyc, &req, why, sizeof why) < 0) return cuc_fail(E, MUSTER_ENOMEM, "%s", why);
  req.direction = CMG_TO_BLOCK;
  req.force = j->to_cyc.kind == CMG_PLAN_COPY ? CMG_PLAN_COPY : req.force;
  if (cmg_plan_build(&j->to_blk, &req, why, sizeof why) < 0) return cuc_fail(E, MUSTER_ENOMEM, "%s", why);
  if (j->to_cyc.kind == CMG_PLAN_COPY)
    for (int r = 0; r < j->R; r++) {
      cmg_dev_t *d = &j->c->dev[j->ids[r]];
      CUC_CHECK(cuc_grow(j->ids[r], &d->work, &d->work_bytes, (size_t)j->to_cyc.work_bytes, E));
      j->work[r] = j->mats[r] = d->work;
    }
  CUC_CHECK(cmg_plan_run(j->c, &j->to_cyc, j->ids, j->user, j->work, E));
out:
  return rc;
}

static int grow_ws(job_t *j, int64_t lwork) {
  int rc = 0;
  for (int r = 0; r < j->R; r++) {
    cmg_dev_t *d = &j->c->dev[j->ids[r]];
    CUC_CHECK(cuc_grow(j->ids[r], &d->ws, &d->ws_bytes, (size_t)lwork * j->esz, j->E));
  }
out:
  return rc;
}

static void ws_ptrs(job_t *j, void **ws) {
  for (int r = 0; r < j->R; r++) ws[r] = j->c->dev[j->ids[r]].ws;
}

static int check_info(job_t *j, const char *what, int info) {
  *j->call->info = info;
  if (info == 0) return 0;
  if (info > 0 && strstr(what, "Potrf"))
    return cuc_fail(j->E, MUSTER_ENOTPD, "%s on devices %d..: not positive definite (leading minor %d)", what,
                    j->ids[0], info);
  if (info > 0)
    return cuc_fail(j->E, MUSTER_EPROVIDER, "%s: did not converge (info=%d)", what, info);
  return cuc_fail(j->E, MUSTER_EPROVIDER, "%s: parameter %d was refused (info=%d)", what, -info, info);
}

/* First diagonal entry (0-based) whose real part is not positive (or NaN),
 * or -1: read tile by tile with strided copies (one per tile). */
static int diag_scan(job_t *j, int64_t *first) {
  int64_t n = j->a->n, T = j->a->tile, lda = j->lda;
  size_t esz = j->esz;
  char *h = malloc((size_t)n * esz);
  *first = -1;
  if (!h) return -1;
  for (int64_t C = 0; C * T < n; C++) {
    int r = (int)(C % j->R);
    int64_t w = n - C * T < T ? n - C * T : T;
    const char *src = (const char *)j->mats[r] + (size_t)(((C / j->R) * T) * lda + C * T) * esz;
    if (cudaSetDevice(j->ids[r]) != cudaSuccess ||
        cudaMemcpy2D(h + (size_t)(C * T) * esz, esz, src, (size_t)(lda + 1) * esz, esz, (size_t)w,
                     cudaMemcpyDefault) != cudaSuccess) {
      (void)cudaGetLastError();
      free(h);
      return -1;
    }
  }
  for (int64_t k = 0; k < n && *first < 0; k++) {
    double re = muster_dtype_real_bytes(j->a->dtype) == 4 ? (double)*(float *)(h + (size_t)k * esz)
                                                                          : *(double *)(h + (size_t)k * esz);
    if (!(re > 0.0)) *first = k;
  }
  free(h);
  return 0;
}

static int do_potrf(job_t *j) {
  int rc = 0, info = 0, n = (int)j->a->n;
  int64_t lwork = 0;
  cuc_err_t *E = j->E;
  void *ws[CMG_MAX_DEV];
  cudaDataType t = cuda_type(j->a->dtype);
  CUC_SO(j->ids[0], cusolverMgPotrf_bufferSize(j->set->handle, CUBLAS_FILL_MODE_LOWER, n, j->mats, 1, 1, j->descA,
                                               t, &lwork));
  CUC_CHECK(grow_ws(j, lwork));
  ws_ptrs(j, ws);
  CUC_CU(j->ids[0], cudaSetDevice(j->ids[0]));
  cusolverStatus_t st = cusolverMgPotrf(j->set->handle, CUBLAS_FILL_MODE_LOWER, n, j->mats, 1, 1, j->descA, t, ws,
                                        lwork, &info);
  if (st != CUSOLVER_STATUS_SUCCESS && info <= 0) {
    /* On several GPUs cuSolverMg reports a matrix that is not positive
     * definite as CUSOLVER_STATUS_INTERNAL_ERROR without setting info; the
     * factorization stops with the failing pivot on the diagonal (earlier
     * pivots are L's, positive), so find it there. */
    int64_t k = -1;
    for (int r = 0; r < j->R; r++)
      if (cudaSetDevice(j->ids[r]) != cudaSuccess || cudaDeviceSynchronize() != cudaSuccess) (void)cudaGetLastError();
    if (st == CUSOLVER_STATUS_INTERNAL_ERROR && diag_scan(j, &k) == 0 && k >= 0) {
      *j->call->info = k + 1;
      return cuc_fail(E, MUSTER_ENOTPD, "cusolverMgPotrf on devices %d..: %s with pivot %lld not positive: "
                      "not positive definite (leading minor %lld)", j->ids[0], cuc_solver_status_name(st),
                      (long long)(k + 1), (long long)(k + 1));
    }
    return cuc_fail(E, MUSTER_ECUDA, "device %d: cusolverMgPotrf failed: %s (%d), info=%d", j->ids[0],
                    cuc_solver_status_name(st), (int)st, info);
  }
  rc = check_info(j, "cusolverMgPotrf", info);
out:
  return rc;
}

static int sync_all(job_t *j) {
  int rc = 0;
  cuc_err_t *E = j->E;
  for (int r = 0; r < j->R; r++) {
    CUC_CU(j->ids[r], cudaSetDevice(j->ids[r]));
    CUC_CU(j->ids[r], cudaDeviceSynchronize());
  }
out:
  return rc;
}

static int do_potrs(job_t *j) {
  int rc = 0, info = 0, n = (int)j->a->n;
  cuc_err_t *E = j->E;
  const muster_shard_t *sh = j->call->shards;
  cudaDataType t = cuda_type(j->a->dtype);
  void *ws[CMG_MAX_DEV], *bp[CMG_MAX_DEV];
  CUC_CHECK(do_potrf(j));
  /* B lives on rank 0's device: chunks of at most one tile of columns keep
   * every chunk in grid column 0; the other entries are never touched.  No
   * chunk is wider than CMG_RHS_PANEL (cuSolverMg's defect above). */
  int64_t ldb = sh[0].ldb, chunk = j->a->tile < CMG_RHS_PANEL ? j->a->tile : CMG_RHS_PANEL;
  for (int64_t c0 = 0; c0 < j->a->nrhs; c0 += chunk) {
    int64_t cols = j->a->nrhs - c0 < chunk ? j->a->nrhs - c0 : chunk;
    cudaLibMgMatrixDesc_t descB;
    int64_t lwork = 0;
    CUC_CHECK(cmg_desc_get(j->set, ldb, cols, j->a->tile, t, &descB, E));
    bp[0] = (char *)sh[0].b + (size_t)(c0 * ldb) * j->esz;
    for (int r = 1; r < j->R; r++) bp[r] = sh[r].b;
    CUC_SO(j->ids[0], cusolverMgPotrs_bufferSize(j->set->handle, CUBLAS_FILL_MODE_LOWER, n, (int)cols, j->mats, 1,
                                                 1, j->descA, bp, 1, 1, descB, t, &lwork));
    CUC_CHECK(grow_ws(j, lwork));
    ws_ptrs(j, ws);
    CUC_CU(j->ids[0], cudaSetDevice(j->ids[0]));
    CUC_SO(j->ids[0], cusolverMgPotrs(j->set->handle, CUBLAS_FILL_MODE_LOWER, n, (int)cols, j->mats, 1, 1,
                                      j->descA, bp, 1, 1, descB, t, ws, lwork, &info));
    CUC_CHECK(check_info(j, "cusolverMgPotrs", info));
  }
  CUC_CHECK(sync_all(j));
  for (int r = 1; r < j->R; r++) { /* X to every rank */
    cudaStream_t s = j->c->dev[j->ids[r]].streams[0];
    CUC_CU(j->ids[r], cudaSetDevice(j->ids[r]));
    CUC_CU(j->ids[r], cudaMemcpy2DAsync(sh[r].b, (size_t)sh[r].ldb * j->esz, sh[0].b, (size_t)ldb * j->esz,
                                        (size_t)j->a->n * j->esz, (size_t)j->a->nrhs, cudaMemcpyDefault, s));
  }
out:
  return rc;
}

/* The full inverse: for every column tile C (cyclic layout, on GPU C % R),
 * gather rows [C*T, C*T+wC) of every column left of the tile's end (the
 * lower triangle, from every GPU) into the GPU's staging buffer with 2-D
 * copies, then mirror them into the tile's upper triangle with a local
 * kernel.  Tiles of one GPU run in turn on its stream 0 (one staging
 * buffer), GPUs in parallel; nobody writes the lower triangle. */
static int mirror_inverse(job_t *j) {
  int rc = 0;
  cuc_err_t *E = j->E;
  int64_t n = j->a->n, T = j->a->tile, lda = j->lda, ntiles = (n + T - 1) / T;
  size_t esz = j->esz;
  for (int r = 0; r < j->R; r++) {
    int dev = j->ids[r];
    cmg_dev_t *d = &j->c->dev[dev];
    CUC_CHECK(cuc_grow(dev, &d->stage[0], &d->stage_bytes[0], (size_t)(T * n) * esz, E));
  }
  for (int64_t C = 0; C < ntiles; C++) {
    int r = (int)(C % j->R), dev = j->ids[r];
    cmg_dev_t *d = &j->c->dev[dev];
    cudaStream_t s = d->streams[0];
    int64_t row0 = C * T, wc = n - row0 < T ? n - row0 : T;
    CUC_CU(dev, cudaSetDevice(dev));
    for (int64_t I = 0; I <= C; I++) { /* stage(c, i) = A(row0 + c, i) for columns i of tile I */
      int64_t wi = n - I * T < T ? n - I * T : T;
      const char *src = (const char *)j->mats[I % j->R] + (size_t)(((I / j->R) * T) * lda + row0) * esz;
      char *dst = (char *)d->stage[0] + (size_t)(I * T * wc) * esz;
      CUC_CU(dev, cudaMemcpy2DAsync(dst, (size_t)wc * esz, src, (size_t)lda * esz, (size_t)wc * esz, (size_t)wi,
                                    cudaMemcpyDefault, s));
    }
    char *tile0 = (char *)j->mats[r] + (size_t)((C / j->R) * T * lda) * esz;
    CUC_CU(dev, cmg_mirror_tile((int)j->a->dtype, d->stage[0], wc, row0, tile0, lda, s));
  }
  CUC_CHECK(sync_all(j));
out:
  return rc;
}

/* One GPU: cusolverMgPotri (right there) leaves the lower triangle of the
 * inverse; mirror_inverse completes it. */
static int potri_one_gpu(job_t *j) {
  int rc = 0, info = 0, n = (int)j->a->n;
  int64_t lwork = 0;
  cuc_err_t *E = j->E;
  void *ws[CMG_MAX_DEV];
  cudaDataType t = cuda_type(j->a->dtype);
  CUC_SO(j->ids[0], cusolverMgPotri_bufferSize(j->set->handle, CUBLAS_FILL_MODE_LOWER, n, j->mats, 1, 1, j->descA,
                                               t, &lwork));
  CUC_CHECK(grow_ws(j, lwork));
  ws_ptrs(j, ws);
  CUC_CU(j->ids[0], cudaSetDevice(j->ids[0]));
  CUC_SO(j->ids[0], cusolverMgPotri(j->set->handle, CUBLAS_FILL_MODE_LOWER, n, j->mats, 1, 1, j->descA, t, ws,
                                    lwork, &info));
  CUC_CHECK(check_info(j, "cusolverMgPotri", info));
  CUC_CHECK(sync_all(j));
  CUC_CHECK(mirror_inverse(j));
out:
  return rc;
}

/* Copy the solved panel (matrix columns c0 .. c0 + w - 1, leading
 * dimension lda) into the result buffers in cuSolverMg's cyclic layout,
 * one copy per tile piece (a tile's columns are contiguous on its rank).
 * Ordered on the first GPU's stream s. */
static int scatter_panel(job_t *j, void *const *res, const void *panel, int64_t c0, int64_t w, cudaStream_t s) {
  int rc = 0;
  cuc_err_t *E = j->E;
  int64_t T = j->a->tile, lda = j->lda;
  size_t esz = j->esz;
  for (int64_t c = c0; c < c0 + w;) {
    int64_t end = (c / T + 1) * T < c0 + w ? (c / T + 1) * T : c0 + w, lc;
    int r;
    muster_layout_cyclic_owner(&j->L, c, &r, &lc);
    CUC_CU(j->ids[0], cudaMemcpyAsync((char *)res[r] + (size_t)(lc * lda) * esz,
                                      (const char *)panel + (size_t)((c - c0) * lda) * esz,
                                      (size_t)((end - c) * lda) * esz, cudaMemcpyDefault, s));
    c = end;
  }
out:
  return rc;
}

/* 2+ GPUs: A^-1 = potrs(L, I), in panels of at most CMG_RHS_PANEL identity
 * columns (cuSolverMg's defect above rules out cusolverMgPotri and wider
 * calls).  Each panel lives on the first GPU (so it sits in grid column
 * 0, as in do_potrs), is solved in place, and its columns are copied into
 * per-GPU result buffers in cuSolverMg's cyclic layout; L stays in A until
 * the last panel, then every GPU copies its result into A.  The result is
 * the full inverse (no mirror).  Extra memory: one more shard per GPU and
 * an lda x 2048 panel on the first. */
static int inverse_by_solves(job_t *j) {
  int rc = 0, info = 0, n = (int)j->a->n;
  cuc_err_t *E = j->E;
  cudaDataType t = cuda_type(j->a->dtype);
  int64_t lda = j->lda, W = n < CMG_RHS_PANEL ? n : CMG_RHS_PANEL, lwork = 0, lw = 0;
  int64_t last = n % W ? n % W : W; /* width of the last panel */
  size_t esz = j->esz;
  int dev0 = j->ids[0];
  cmg_dev_t *d0 = &j->c->dev[dev0];
  cudaStream_t s0 = d0->streams[0];
  void *ws[CMG_MAX_DEV], *bp[CMG_MAX_DEV], *res[CMG_MAX_DEV];
  cudaLibMgMatrixDesc_t descW, descLast;
  for (int r = 0; r < j->R; r++) {
    cmg_dev_t *d = &j->c->dev[j->ids[r]];
    CUC_CHECK(cuc_grow(j->ids[r], &d->inv, &d->inv_bytes, (size_t)(lda * muster_layout_cyclic_real_cols(&j->L, r)) * esz, E));
    res[r] = d->inv;
  }
  CUC_CHECK(cuc_grow(dev0, &d0->panel, &d0->panel_bytes, (size_t)(lda * W) * esz, E));
  for (int r = 0; r < j->R; r++) bp[r] = d0->panel; /* only grid column 0 is read */
  CUC_CHECK(cmg_desc_get(j->set, lda, W, W, t, &descW, E));
  CUC_CHECK(cmg_desc_get(j->set, lda, last, last, t, &descLast, E));
  CUC_SO(dev0, cusolverMgPotrs_bufferSize(j->set->handle, CUBLAS_FILL_MODE_LOWER, n, (int)W, j->mats, 1, 1,
                                          j->descA, bp, 1, 1, descW, t, &lwork));
  CUC_SO(dev0, cusolverMgPotrs_bufferSize(j->set->handle, CUBLAS_FILL_MODE_LOWER, n, (int)last, j->mats, 1, 1,
                                          j->descA, bp, 1, 1, descLast, t, &lw));
  CUC_CHECK(grow_ws(j, lwork > lw ? lwork : lw));
  ws_ptrs(j, ws);
  for (int64_t c0 = 0; c0 < n; c0 += W) {
    int64_t w = n - c0 < W ? n - c0 : W;
    CUC_CU(dev0, cudaSetDevice(dev0));
    CUC_CU(dev0, cmg_identity_panel((int)j->a->dtype, d0->panel, lda, c0, w, s0));
    /* the panel (and the previous panel's copies out of it) must be done
     * before cuSolverMg, which runs on its own streams, touches it */
    CUC_CU(dev0, cudaStreamSynchronize(s0));
    CUC_SO(dev0, cusolverMgPotrs(j->set->handle, CUBLAS_FILL_MODE_LOWER, n, (int)w, j->mats, 1, 1, j->descA, bp, 1,
                                 1, w == W ? descW : descLast, t, ws, w == W ? lwork : lw, &info));
    CUC_CHECK(check_info(j, "cusolverMgPotrs", info));
    CUC_CHECK(sync_all(j));
    CUC_CHECK(scatter_panel(j, res, d0->panel, c0, w, s0));
  }
  CUC_CU(dev0, cudaStreamSynchronize(s0));
  for (int r = 0; r < j->R; r++) { /* L is no longer needed: the inverse into A */
    CUC_CU(j->ids[r], cudaSetDevice(j->ids[r]));
    CUC_CU(j->ids[r], cudaMemcpyAsync(j->mats[r], res[r], (size_t)(lda * muster_layout_cyclic_real_cols(&j->L, r)) * esz,
                                      cudaMemcpyDefault, j->c->dev[j->ids[r]].streams[0]));
  }
  CUC_CHECK(sync_all(j));
out:
  return rc;
}

static int do_potri(job_t *j) {
  int rc = 0;
  CUC_CHECK(do_potrf(j));
  rc = j->R == 1 ? potri_one_gpu(j) : inverse_by_solves(j);
out:
  return rc;
}

static int do_syevd(job_t *j) {
  int rc = 0, info = 0, n = (int)j->a->n;
  int64_t lwork = 0;
  cuc_err_t *E = j->E;
  void *ws[CMG_MAX_DEV];
  cudaDataType t = cuda_type(j->a->dtype), rt = real_type(j->a->dtype);
  cusolverEigMode_t jobz =
      (j->a->flags & MUSTER_NO_VECTORS) ? CUSOLVER_EIG_MODE_NOVECTOR : CUSOLVER_EIG_MODE_VECTOR;
  size_t wbytes = (size_t)n * muster_dtype_real_bytes(j->a->dtype);
  CUC_CHECK(cuc_grow(-1, &j->c->host_w, &j->c->host_w_bytes, wbytes, E));
  CUC_SO(j->ids[0], cusolverMgSyevd_bufferSize(j->set->handle, jobz, CUBLAS_FILL_MODE_LOWER, n, j->mats, 1, 1,
                                               j->descA, j->c->host_w, rt, t, &lwork));
  CUC_CHECK(grow_ws(j, lwork));
  ws_ptrs(j, ws);
  CUC_CU(j->ids[0], cudaSetDevice(j->ids[0]));
  CUC_SO(j->ids[0], cusolverMgSyevd(j->set->handle, jobz, CUBLAS_FILL_MODE_LOWER, n, j->mats, 1, 1, j->descA,
                                    j->c->host_w, rt, t, ws, lwork, &info));
  CUC_CHECK(check_info(j, "cusolverMgSyevd", info));
  CUC_CHECK(sync_all(j));
  for (int r = 0; r < j->R; r++) {
    CUC_CU(j->ids[r], cudaSetDevice(j->ids[r]));
    CUC_CU(j->ids[r], cudaMemcpyAsync(j->call->shards[r].w, j->c->host_w, wbytes, cudaMemcpyDefault,
                                      j->c->dev[j->ids[r]].streams[0]));
  }
out:
  return rc;
}

/* MUSTER_NO_FACTOR: after a successful potrs, leave A (the factor) in
 * cuSolverMg's cyclic layout instead of moving it back: saves the second
 * relayout when the caller only wants X (A's content is then unspecified,
 * as muster.h says).  Without the flag A receives L, as with every
 * provider. */
static int skip_factor_writeback(const job_t *j, int rc) {
  return rc == 0 && j->a->routine == MUSTER_POTRS && j->to_cyc.kind == CMG_PLAN_INPLACE &&
         (j->a->flags & MUSTER_NO_FACTOR);
}

static int solve(void *vc, const muster_provider_call_t *call) {
  cmg_ctx_t *c = vc;
  cuc_err_t err = CMG_ERR(call->err, call->errlen), *E = &err;
  job_t *j = calloc(1, sizeof *j);
  int rc = 0, saved;
  if (call->err && call->errlen) call->err[0] = '\0';
  if (!j) return cuc_fail(&err, MUSTER_ENOMEM, "out of host memory");
  saved = cuc_device_save();
  *call->info = 0;
  j->c = c;
  j->call = call;
  j->a = &call->args;
  j->E = &err;
  pthread_mutex_lock(&c->mu);
  cuc_ipc_tick(&c->ipc);
  cmg_stat_add(CMG_STAT_SOLVES, 1);
  CUC_CHECK(validate(j));
  CUC_CHECK(cmg_devset_get(c, j->R, j->ids, &j->set, E));
  CUC_CHECK(cmg_peer_enable(c, j->R, j->ids, E));
  for (int r = 0; r < j->R; r++) CUC_CHECK(cmg_dev_ready(c, j->ids[r], E));
  CUC_CHECK(prepare_layout(j));
  CUC_CHECK(cmg_desc_get(j->set, j->lda, j->a->n, j->a->tile, cuda_type(j->a->dtype), &j->descA, E));
  switch (j->a->routine) {
  case MUSTER_POTRS: rc = do_potrs(j); break;
  case MUSTER_POTRI: rc = do_potri(j); break;
  case MUSTER_SYEVD: rc = do_syevd(j); break;
  default: rc = cuc_fail(E, MUSTER_EUNSUPPORTED, "routine %d", (int)j->a->routine);
  }
out:
  if (j->to_blk.nchains > 0 && !skip_factor_writeback(j, rc)) { /* never leave the caller's A permuted */
    char keep[512] = "";
    if (rc < 0 && call->err) snprintf(keep, sizeof keep, "%s", call->err);
    int rc2 = sync_all(j);
    if (rc2 == 0) rc2 = cmg_plan_run(c, &j->to_blk, j->ids, j->user, j->work, E);
    if (rc < 0 && call->err) snprintf(call->err, call->errlen, "%s", keep);
    if (rc == 0) rc = rc2;
  }
  if (j->R > 0) {
    int rc2 = sync_all(j);
    if (rc == 0) rc = rc2;
  }
  pthread_mutex_unlock(&c->mu);
  cmg_plan_free(&j->to_cyc);
  cmg_plan_free(&j->to_blk);
  free(j);
  cuc_device_restore(saved);
  return rc;
}

/* ---- every participant ---------------------------------------------------------------- */

static int local_export(void *vc, const muster_shard_t *mine, int process_mode, void *blob, size_t cap,
                        size_t *len, char *errbuf, size_t errlen) {
  cuc_err_t err = CMG_ERR(errbuf, errlen);
  return cuc_local_export(mine, process_mode, blob, cap, len, &err);
}

static int leader_import(void *vc, int rank, int64_t peer_pid, const void *blob, size_t len,
                         muster_shard_t *shard, char *errbuf, size_t errlen) {
  cmg_ctx_t *c = vc;
  cuc_err_t err = CMG_ERR(errbuf, errlen);
  pthread_mutex_lock(&c->mu);
  int rc = cuc_ipc_import(&c->ipc, rank, peer_pid, blob, len, shard, &err);
  pthread_mutex_unlock(&c->mu);
  return rc;
}

static void forget_peer(void *vc, int64_t peer_pid) {
  cmg_ctx_t *c = vc;
  pthread_mutex_lock(&c->mu);
  cuc_ipc_forget(&c->ipc, peer_pid);
  pthread_mutex_unlock(&c->mu);
}

/* Counters for tests: fills up to cap of them (CMG_STAT_* order: handles,
 * descriptors, allocations, peer enables, IPC opens, IPC closes, solves,
 * relayout ops); returns how many exist. */
__attribute__((visibility("default"))) int muster_cusolvermg_stats(uint64_t *out, int cap) {
  for (int i = 0; i < cap && i < CMG_NSTATS; i++) out[i] = cmg_stat(i);
  return CMG_NSTATS;
}

__attribute__((visibility("default"))) const muster_provider_v1_t muster_provider_v1 = {
    .abi_version = MUSTER_PROVIDER_V1_ABI,
    .struct_size = sizeof(muster_provider_v1_t),
    .name = "cusolvermg",
    .description = "cuSolverMg on 1-16 GPUs of one node (threads: device pointers; processes: CUDA IPC)",
    .priority = 100,
    .routines = ALL_ROUTINES,
    .dtypes = ALL_DTYPES,
    .mem_kinds = 1u << MUSTER_MEM_CUDA,
    .max_shards = CMG_MAX_DEV,
    .probe = probe,
    .init = init,
    .fini = fini,
    .choose_tile = choose_tile,
    .solve = solve,
    .local_export = local_export,
    .leader_import = leader_import,
    .forget_peer = forget_peer,
};
