/*
 * providers/lapack/lapack.c - the CPU reference provider: OpenBLAS + LAPACKE.
 *
 * solve() gathers every rank's host shard into one packed n x n matrix,
 * runs LAPACK on it (lower triangle, like cuSolverMg), and writes back:
 *   potrs  potrf + potrs: X into EVERY shard's b; A's shards get the factor
 *          (lower triangle L, A = L L^H; the strictly upper part unchanged).
 *   potri  potrf + what potri does (trtri + lauum, inverse.c: OpenBLAS's
 *          one-thread potri crashes on old cores), then the upper triangle
 *          mirrored (conjugated) from the lower: A's shards get the full
 *          Hermitian inverse.
 *          With MUSTER_LOGDET, log det A (2 sum log L(i,i)) into every w.
 *   syevd  syevd/heevd: eigenvalues ascending into EVERY shard's w;
 *          eigenvectors (columns) into A's shards, unless MUSTER_NO_VECTORS,
 *          in which case A's shards are left untouched.
 *   getrs, gels  (general.c) on all of A, gathered m x n; A's shards are
 *          never written.
 *   geqrf, gesvd, polar  (qr.c, svd.c, polar.c, factors.c) on all of A,
 *          gathered m x n; the factors go where muster_routine_outputs says.
 * On any error nothing is written to the shards.  potrs, potri and syevd
 * read only the lower triangle of A; NaN/Inf there (or in B) is refused before LAPACK runs, and a
 * NaN/Inf result is refused rather than returned as success.
 *
 * Threading: no mutable static state; the context's one cached buffer is
 * handed out under a lock (a call owns it exclusively until it gives it
 * back), so groups may call concurrently.  OpenBLAS threads inside each call.
 * The .so is built with -fvisibility=hidden: muster_provider_v2 is its only
 * exported symbol.
 */
#include <inttypes.h>
#include <lapacke.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lapackInt.h"

#define ALL_ROUTINES \
  (MUSTER_ROUTINE_BITS(POTRS, POTRI, SYEVD, GETRS, GELS, GEQRF, GESVD, POLAR) | MUSTER_CAP_LOGDET)
#define LAYOUT LAPACK_COL_MAJOR

/* ---- typed LAPACKE calls on the packed matrix (lda = n) -------------------- */
/* The _work variants skip LAPACKE's own NaN scan: the gather already checked
 * every element LAPACK reads (and Inf too, which that scan misses), so a
 * second O(n^2) pass would only cost time.  syevd keeps the plain call: its
 * workspace query is LAPACKE's job, and the scan is noise next to O(n^3). */

static lapack_int do_potrf(muster_dtype_t t, lapack_int n, void *a) {
  switch (t) {
  case MUSTER_F32: return LAPACKE_spotrf_work(LAYOUT, 'L', n, a, n);
  case MUSTER_F64: return LAPACKE_dpotrf_work(LAYOUT, 'L', n, a, n);
  case MUSTER_C64: return LAPACKE_cpotrf_work(LAYOUT, 'L', n, a, n);
  default: return LAPACKE_zpotrf_work(LAYOUT, 'L', n, a, n);
  }
}

static lapack_int do_potrs(muster_dtype_t t, lapack_int n, lapack_int nrhs, const void *a,
                           void *b) {
  switch (t) {
  case MUSTER_F32: return LAPACKE_spotrs_work(LAYOUT, 'L', n, nrhs, a, n, b, n);
  case MUSTER_F64: return LAPACKE_dpotrs_work(LAYOUT, 'L', n, nrhs, a, n, b, n);
  case MUSTER_C64: return LAPACKE_cpotrs_work(LAYOUT, 'L', n, nrhs, a, n, b, n);
  default: return LAPACKE_zpotrs_work(LAYOUT, 'L', n, nrhs, a, n, b, n);
  }
}

static lapack_int do_syevd(muster_dtype_t t, char jobz, lapack_int n, void *a, void *w) {
  switch (t) {
  case MUSTER_F32: return LAPACKE_ssyevd(LAYOUT, jobz, 'L', n, a, n, w);
  case MUSTER_F64: return LAPACKE_dsyevd(LAYOUT, jobz, 'L', n, a, n, w);
  case MUSTER_C64: return LAPACKE_cheevd(LAYOUT, jobz, 'L', n, a, n, w);
  default: return LAPACKE_zheevd(LAYOUT, jobz, 'L', n, a, n, w);
  }
}

int lp_lapacke_failed(const muster_provider_call_t *call, const char *what, int info) {
  if (info == LAPACK_WORK_MEMORY_ERROR || info == LAPACK_TRANSPOSE_MEMORY_ERROR)
    return lp_err(call, MUSTER_ENOMEM, "LAPACKE_%c%s: out of memory for workspace",
                  lp_prefix(call->args.dtype), what);
  return lp_err(call, MUSTER_EPROVIDER, "LAPACKE_%c%s: argument %d had an illegal value (info %d)",
                lp_prefix(call->args.dtype), what, -info, info);
}

/* potrf on the packed matrix: 0, MUSTER_ENOTPD with *info = k, or a failure. */
static int factor(const muster_provider_call_t *call, void *full) {
  lapack_int info = do_potrf(call->args.dtype, (lapack_int)call->args.n, full);
  if (info > 0) {
    if (call->info) *call->info = info;
    return lp_err(call, MUSTER_ENOTPD, "LAPACKE_%cpotrf", lp_prefix(call->args.dtype)); /* detail */
  }
  return info < 0 ? lp_lapacke_failed(call, "potrf", info) : 0;
}

int lp_check_result(const muster_provider_call_t *call, muster_dtype_t t, const char *what,
                    const void *m, int64_t rows, int64_t cols) {
  int64_t i, j;
  if (!muster__find_nonfinite(t, m, rows, rows, cols, 0, &i, &j)) return 0;
  return lp_err(call, MUSTER_ENONFINITE, "NaN/Inf in the result %s at row %" PRId64
                ", column %" PRId64 " (input too ill-conditioned?)", what, i, j);
}

int lp_take_b(const muster_provider_call_t *call, int64_t rows, size_t esz, void **x) {
  int64_t nrhs = call->args.nrhs, i, j;
  const muster_shard_t *s0 = &call->shards[0];
  *x = NULL;
  if (muster__find_nonfinite(call->args.dtype, s0->b, s0->ldb, rows, nrhs, 0, &i, &j))
    return lp_err(call, MUSTER_ENONFINITE, "NaN/Inf in B at row %" PRId64 ", column %" PRId64
                  " (rank 0)", i, j);
  *x = lp_alloc((size_t)(rows * nrhs) * esz);
  if (!*x)
    return lp_err(call, MUSTER_ENOMEM, "cannot allocate %" PRId64 " x %" PRId64 " for B", rows, nrhs);
  muster_copy_cols(*x, rows, s0->b, s0->ldb, rows, nrhs, esz);
  return 0;
}

void lp_put_x(const muster_provider_call_t *call, const void *x, int64_t ldx, int64_t rows,
              size_t esz) {
  for (int r = 0; r < call->nshards; r++)
    muster_copy_cols(call->shards[r].b, call->shards[r].ldb, x, ldx, rows, call->args.nrhs, esz);
}

/* log det A = 2 sum log L(i,i) from the Cholesky factor's real diagonal,
 * summed in double, into every shard's w (one real of the dtype's real
 * type).  A finite sum is certain: potrf succeeded, so each L(i,i) > 0. */
static void put_logdet(const muster_provider_call_t *call, const void *full) {
  muster_dtype_t t = call->args.dtype;
  int64_t n = call->args.n;
  size_t parts = muster_dtype_is_complex(t) ? 2 : 1;
  int single = muster_dtype_real_bytes(t) == 4;
  double sum = 0;
  for (int64_t i = 0; i < n; i++) {
    size_t at = (size_t)(i * n + i) * parts; /* the real part of L(i,i) */
    sum += log(single ? (double)((const float *)full)[at] : ((const double *)full)[at]);
  }
  sum *= 2;
  float f = (float)sum;
  for (int r = 0; r < call->nshards; r++)
    memcpy(call->shards[r].w, single ? (const void *)&f : (const void *)&sum, single ? 4 : 8);
}

static int run_potrs(const muster_provider_call_t *call, void *full, size_t esz) {
  const muster_solve_args_t *a = &call->args;
  int64_t n = a->n, nrhs = a->nrhs;
  void *x;
  int rc = lp_take_b(call, n, esz, &x);
  if (rc == 0) rc = factor(call, full);
  if (rc == 0) {
    lapack_int info = do_potrs(a->dtype, (lapack_int)n, (lapack_int)nrhs, full, x);
    rc = info ? lp_lapacke_failed(call, "potrs", info) : lp_check_result(call, a->dtype, "X", x, n, nrhs);
  }
  if (rc == 0) {
    lp_put_x(call, x, n, n, esz);
    if (a->flags & MUSTER_LOGDET) put_logdet(call, full);
    lp_scatter(call, full, esz, 1); /* the factor; the upper triangle is untouched */
  }
  free(x);
  return rc;
}

/* Upper triangle := conjugate transpose of the lower (potri fills only L). */
static void mirror_lower(muster_dtype_t t, void *full, int64_t n) {
  for (int64_t j = 0; j < n; j++) {
    for (int64_t i = 0; i < j; i++) {
      size_t up = (size_t)(j * n + i), lo = (size_t)(i * n + j);
      switch (t) {
      case MUSTER_F32: ((float *)full)[up] = ((float *)full)[lo]; break;
      case MUSTER_F64: ((double *)full)[up] = ((double *)full)[lo]; break;
      case MUSTER_C64:
        ((float *)full)[2 * up] = ((float *)full)[2 * lo];
        ((float *)full)[2 * up + 1] = -((float *)full)[2 * lo + 1];
        break;
      default:
        ((double *)full)[2 * up] = ((double *)full)[2 * lo];
        ((double *)full)[2 * up + 1] = -((double *)full)[2 * lo + 1];
        break;
      }
    }
  }
}

/* potrf, then potri's inverse from the factor (inverse.c: not ?potri). */
static int run_potri(const muster_provider_call_t *call, void *full, size_t esz) {
  int64_t n = call->args.n;
  int rc = factor(call, full);
  if (rc == 0) rc = lp_potri_from_factor(call, full);
  if (rc < 0) return rc;
  mirror_lower(call->args.dtype, full, n);
  rc = lp_check_result(call, call->args.dtype, "inverse", full, n, n);
  if (rc == 0) lp_scatter(call, full, esz, 0);
  return rc;
}

static int run_syevd(const muster_provider_call_t *call, void *full, size_t esz) {
  const muster_solve_args_t *a = &call->args;
  int64_t n = a->n;
  int vectors = !(a->flags & MUSTER_NO_VECTORS);
  /* Eigenvalues are real: float for f32/c64, double for f64/c128. */
  size_t wsz = muster_dtype_real_bytes(a->dtype);
  void *w = lp_alloc((size_t)n * wsz);
  if (!w) return lp_err(call, MUSTER_ENOMEM, "cannot allocate %" PRId64 " eigenvalues", n);
  const char *name = muster_dtype_is_complex(a->dtype) ? "heevd" : "syevd";
  lapack_int info = do_syevd(a->dtype, vectors ? 'V' : 'N', (lapack_int)n, full, w);
  int rc = 0;
  if (info > 0) {
    if (call->info) *call->info = info;
    rc = lp_err(call, MUSTER_EPROVIDER, "LAPACKE_%c%s", lp_prefix(a->dtype), name); /* detail */
  } else if (info < 0) {
    rc = lp_lapacke_failed(call, name, info);
  } else {
    /* the eigenvalues are of the real type of the same precision */
    rc = lp_check_result(call, wsz == 4 ? MUSTER_F32 : MUSTER_F64, "eigenvalues", w, n, 1);
    if (rc == 0 && vectors) rc = lp_check_result(call, a->dtype, "eigenvectors", full, n, n);
  }
  if (rc == 0) {
    for (int r = 0; r < call->nshards; r++) memcpy(call->shards[r].w, w, (size_t)n * wsz);
    if (vectors) lp_scatter(call, full, esz, 0);
  }
  free(w);
  return rc;
}

/* ---- the gathered matrix: one cached buffer ---------------------------------- */

/* Fresh memory costs a page fault per page on first touch: for n = 4096
 * f64 that was 40-380 ms on a 2-core VM, against 7 ms to fill memory that
 * is already mapped.  So the context keeps the largest buffer it has seen
 * (up to KEEP_MAX bytes) for the next call.  Concurrent calls do not wait
 * for it: whoever finds the slot empty mallocs its own. */
#define KEEP_MAX ((size_t)1 << 30)

struct lp_ctx {
  pthread_mutex_t lock; /* guards buf/cap */
  void *buf;
  size_t cap;
};

static void *work_take(struct lp_ctx *c, size_t bytes, size_t *cap) {
  void *p = NULL;
  if (c) {
    pthread_mutex_lock(&c->lock);
    if (c->buf && c->cap >= bytes) {
      p = c->buf;
      *cap = c->cap;
      c->buf = NULL;
      c->cap = 0;
    }
    pthread_mutex_unlock(&c->lock);
  }
  if (!p) {
    p = lp_alloc(bytes);
    *cap = bytes;
  }
  return p;
}

static void work_give(struct lp_ctx *c, void *p, size_t cap) {
  if (c && cap <= KEEP_MAX) {
    pthread_mutex_lock(&c->lock);
    if (!c->buf || c->cap < cap) { /* keep the larger one */
      void *old = c->buf;
      c->buf = p;
      c->cap = cap;
      p = old;
    }
    pthread_mutex_unlock(&c->lock);
  }
  free(p);
}

/* ---- hooks ----------------------------------------------------------------- */

static int check_args(const muster_provider_call_t *call, muster_shape_t *sh) {
  const muster_solve_args_t *a = &call->args;
  if (a->routine < MUSTER_POTRS || a->routine > MUSTER_POLAR)
    return lp_err(call, MUSTER_EUNSUPPORTED, "routine %d not implemented", (int)a->routine);
  if (a->flags & ~MUSTER_FLAGS_KNOWN)
    return lp_err(call, MUSTER_EUNSUPPORTED, "flags 0x%x not implemented", a->flags);
  if ((a->flags & MUSTER_LOGDET) && a->routine != MUSTER_POTRS)
    return lp_err(call, MUSTER_EINVAL, "MUSTER_LOGDET is for potrs only");
  if (a->dtype < MUSTER_F32 || a->dtype > MUSTER_C128)
    return lp_err(call, MUSTER_EUNSUPPORTED, "dtype %d not implemented", (int)a->dtype);
  if (call->nshards < 1 || call->nshards > MUSTER_MAX_RANKS || !call->shards)
    return lp_err(call, MUSTER_EINVAL, "%d shards (1..%d)", call->nshards, MUSTER_MAX_RANKS);
  /* LAPACKE here takes 32-bit sizes, and the packed copy needs m*n elements. */
  if (a->n < 1 || a->n > INT_MAX)
    return lp_err(call, MUSTER_EINVAL, "n=%" PRId64 " out of range", a->n);
  if (muster_routine_shape(a->routine, a->n, a->nrhs, call->shards[0].ldb, sh) < 0 ||
      sh->a_rows > INT_MAX || (uint64_t)sh->a_rows * (uint64_t)a->n > SIZE_MAX / 16)
    return lp_err(call, MUSTER_EINVAL, "rows of A %" PRId64 " (m = rank 0's ldb for gels) out of "
                  "range for n=%" PRId64, sh->a_rows, a->n);
  if (sh->b_rows && (a->nrhs < 1 || a->nrhs > INT_MAX ||
                     (uint64_t)sh->b_rows * (uint64_t)a->nrhs > SIZE_MAX / 16))
    return lp_err(call, MUSTER_EINVAL, "nrhs=%" PRId64 " out of range", a->nrhs);
  if (a->layout == MUSTER_LAYOUT_CYCLIC && (a->tile < 1 || a->tile > a->n))
    return lp_err(call, MUSTER_ETILE, "tile %" PRId64 " out of range", a->tile);
  return lp_check_shards(call, sh);
}

/* geqrf, gesvd, polar: the factors' places, and a B wide enough for them. */
static int run_factors(const muster_provider_call_t *call) {
  const muster_solve_args_t *a = &call->args;
  muster_outputs_t o;
  if (muster_routine_outputs(a->routine, a->flags, call->shards[0].ldb, a->n, &o) < 0)
    return lp_err(call, MUSTER_EINVAL, "flags 0x%x not taken by %s", a->flags, muster_routine_str(a->routine));
  if (a->nrhs < o.b_cols)
    return lp_err(call, MUSTER_EINVAL, "nrhs=%" PRId64 ": B needs %" PRId64 " columns of m=%" PRId64
                  " rows for its factors", a->nrhs, o.b_cols, o.m);
  if (a->routine == MUSTER_GEQRF) return lp_run_geqrf(call, &o);
  if (a->routine == MUSTER_GESVD) return lp_run_gesvd(call, &o);
  return lp_run_polar(call, &o);
}

static int lp_solve(void *ctx, const muster_provider_call_t *call) {
  if (!call) return MUSTER_EINVAL;
  if (call->info) *call->info = 0;
  muster_shape_t sh;
  int rc = check_args(call, &sh);
  if (rc < 0) return rc;
  if (muster_routine_takes(call->args.routine) & MUSTER_TAKES_O) return run_factors(call);
  const muster_solve_args_t *a = &call->args;
  size_t esz = muster_dtype_bytes(a->dtype);
  int64_t n = a->n, m = sh.a_rows, i, j;
  int general = a->routine == MUSTER_GETRS || a->routine == MUSTER_GELS;
  size_t cap = 0;
  void *full = work_take(ctx, (size_t)(m * n) * esz, &cap);
  if (!full)
    return lp_err(call, MUSTER_ENOMEM, "cannot allocate the %" PRId64 " x %" PRId64 " matrix", m, n);
  if (general ? lp_gather_full(call, full, m, esz, &i, &j) : lp_gather_lower(call, full, esz, &i, &j)) {
    rc = lp_err(call, MUSTER_ENONFINITE, "NaN/Inf in A at row %" PRId64 ", column %" PRId64
                " (rank %d's shard)", i, j, lp_owner(call, j));
  } else if (a->routine == MUSTER_POTRS) {
    rc = run_potrs(call, full, esz);
  } else if (a->routine == MUSTER_POTRI) {
    rc = run_potri(call, full, esz);
  } else if (a->routine == MUSTER_SYEVD) {
    rc = run_syevd(call, full, esz);
  } else if (a->routine == MUSTER_GETRS) {
    rc = lp_run_getrs(call, full, esz);
  } else {
    rc = lp_run_gels(call, full, m, esz);
  }
  work_give(ctx, full, cap);
  return rc;
}

static int lp_probe(char *why, size_t whylen) {
  /* OpenBLAS and LAPACKE are linked in: if this .so loaded, they did. */
  if (why && whylen) why[0] = '\0';
  return 0;
}

static int lp_init(void **ctx, char *err, size_t errlen) {
  struct lp_ctx *c = calloc(1, sizeof *c);
  if (!c) {
    if (err && errlen) snprintf(err, errlen, "lapack: cannot allocate context");
    return MUSTER_ENOMEM;
  }
  int rc = pthread_mutex_init(&c->lock, NULL);
  if (rc) {
    free(c);
    if (err && errlen) snprintf(err, errlen, "lapack: pthread_mutex_init: %s", strerror(rc));
    return MUSTER_ESYS;
  }
  *ctx = c;
  return 0;
}

static void lp_fini(void *ctx) {
  struct lp_ctx *c = ctx;
  if (!c) return;
  free(c->buf);
  pthread_mutex_destroy(&c->lock);
  free(c);
}

/* LAPACK ignores the tile, but a caller that goes cyclic needs a valid one:
 * the default (muster/layout.h). */
static int64_t lp_choose_tile(void *ctx, muster_routine_t routine, muster_dtype_t dtype, int64_t n,
                              int nshards) {
  return muster_layout_default_tile(n, nshards);
}

/* ABI v2, leader kind: the leader gathers every rank's host shard, so the
 * ranks must share its memory (threads, or processes of one node). */
__attribute__((visibility("default"))) const muster_provider_v2_t muster_provider_v2 = {
    .abi_version = MUSTER_PROVIDER_V2_ABI,
    .struct_size = sizeof(muster_provider_v2_t),
    .layout_rules = MUSTER_LAYOUT_RULES_VERSION,
    .kind = MUSTER_PROVIDER_LEADER,
    .name = "lapack",
    .description = "CPU reference: OpenBLAS + LAPACKE on host shards (gathered on the leader)",
    .priority = 10,
    .routines = ALL_ROUTINES,
    .dtypes = MUSTER_ALL_DTYPES,
    .mem_kinds = 1u << MUSTER_MEM_HOST,
    .spans = MUSTER_SPAN_THREADS | MUSTER_SPAN_PROCESSES,
    .max_shards = MUSTER_MAX_RANKS,
    .probe = lp_probe,
    .init = lp_init,
    .fini = lp_fini,
    .choose_tile = lp_choose_tile,
    .solve = lp_solve,
    .local_export = NULL,
    .leader_import = NULL,
    .forget_peer = NULL,
};
