/*
 * providers/lapack/general.c - the routines on a general (non-Hermitian,
 * possibly non-square) A: getrs (LU with partial pivoting) and gels (least
 * squares through QR), on the gathered matrix `full` (m x n, ld m).
 *
 * Neither writes A's shards: the factors are of no use to the caller
 * without the pivots / Householder scalars, which do not travel back
 * (muster.h).  X goes to every shard's B.
 *
 * gels does geqrf + ormqr/unmqr + trtrs itself instead of calling xGELS so
 * that it can look at R's diagonal between the factorization and the solve:
 * xGELS only stops at an exact zero and returns a huge, wrong X for a
 * numerically rank-deficient A.  Here |R(k,k)| <= m * eps * max|R(i,i)|
 * (the threshold numpy.linalg.lstsq and xGELSD use for the rank) refuses the
 * call with MUSTER_ESINGULAR and info = k.
 *
 * getrs likewise looks at U's diagonal after xGETRF, which stops only at an
 * exact zero: |U(k,k)| <= 2 n eps max_{i<=k} |U(i,k)| (providers/common/
 * singular.h: two equal columns leave a pivot at rounding level) refuses
 * the call with MUSTER_ESINGULAR and info = k, B untouched.
 */
#include <inttypes.h>
#include <lapacke.h>
#include <math.h>
#include <stdlib.h>

#include "lapackInt.h"
#include "../common/rank.h"     /* muster__rank_deficient */
#include "../common/singular.h" /* muster__lu_singular */

#define LAYOUT LAPACK_COL_MAJOR

/* ---- typed LAPACKE calls ----------------------------------------------------- */

static lapack_int do_getrf(muster_dtype_t t, lapack_int n, void *a, lapack_int *ipiv) {
  switch (t) {
  case MUSTER_F32: return LAPACKE_sgetrf_work(LAYOUT, n, n, a, n, ipiv);
  case MUSTER_F64: return LAPACKE_dgetrf_work(LAYOUT, n, n, a, n, ipiv);
  case MUSTER_C64: return LAPACKE_cgetrf_work(LAYOUT, n, n, a, n, ipiv);
  default: return LAPACKE_zgetrf_work(LAYOUT, n, n, a, n, ipiv);
  }
}

static lapack_int do_getrs(muster_dtype_t t, lapack_int n, lapack_int nrhs, const void *a,
                           const lapack_int *ipiv, void *b) {
  switch (t) {
  case MUSTER_F32: return LAPACKE_sgetrs_work(LAYOUT, 'N', n, nrhs, a, n, ipiv, b, n);
  case MUSTER_F64: return LAPACKE_dgetrs_work(LAYOUT, 'N', n, nrhs, a, n, ipiv, b, n);
  case MUSTER_C64: return LAPACKE_cgetrs_work(LAYOUT, 'N', n, nrhs, a, n, ipiv, b, n);
  default: return LAPACKE_zgetrs_work(LAYOUT, 'N', n, nrhs, a, n, ipiv, b, n);
  }
}

/* The plain (not _work) calls below (and lp_geqrf, factors.c) do their own
 * workspace queries; their NaN scan of A and B repeats the gather's, O(m n)
 * next to O(m n^2). */

/* b (m x nrhs) <- Q^H b */
static lapack_int do_qhb(muster_dtype_t t, lapack_int m, lapack_int n, lapack_int nrhs,
                         const void *a, const void *tau, void *b) {
  switch (t) {
  case MUSTER_F32: return LAPACKE_sormqr(LAYOUT, 'L', 'T', m, nrhs, n, a, m, tau, b, m);
  case MUSTER_F64: return LAPACKE_dormqr(LAYOUT, 'L', 'T', m, nrhs, n, a, m, tau, b, m);
  case MUSTER_C64: return LAPACKE_cunmqr(LAYOUT, 'L', 'C', m, nrhs, n, a, m, tau, b, m);
  default: return LAPACKE_zunmqr(LAYOUT, 'L', 'C', m, nrhs, n, a, m, tau, b, m);
  }
}

/* b (first n rows, ld m) <- R^-1 b */
static lapack_int do_trtrs(muster_dtype_t t, lapack_int m, lapack_int n, lapack_int nrhs,
                           const void *a, void *b) {
  switch (t) {
  case MUSTER_F32: return LAPACKE_strtrs_work(LAYOUT, 'U', 'N', 'N', n, nrhs, a, m, b, m);
  case MUSTER_F64: return LAPACKE_dtrtrs_work(LAYOUT, 'U', 'N', 'N', n, nrhs, a, m, b, m);
  case MUSTER_C64: return LAPACKE_ctrtrs_work(LAYOUT, 'U', 'N', 'N', n, nrhs, a, m, b, m);
  default: return LAPACKE_ztrtrs_work(LAYOUT, 'U', 'N', 'N', n, nrhs, a, m, b, m);
  }
}

/* ---- getrs --------------------------------------------------------------------- */

/* 0 when U (the upper triangle of the factored full, ld n) passes the rule
 * of providers/common/singular.h, else MUSTER_ESINGULAR naming the first
 * column k (1-based) that fails it. */
static int check_pivots(const muster_provider_call_t *call, const void *full) {
  const muster_solve_args_t *a = &call->args;
  int64_t n = a->n;
  double *scale = lp_alloc((size_t)n * sizeof *scale), ukk, floor;
  if (!scale) return lp_err(call, MUSTER_ENOMEM, "cannot allocate %" PRId64 " column scales", n);
  muster__lu_scales(a->dtype, full, n, n, scale);
  int64_t k = muster__lu_singular(a->dtype, full, n + 1, n, n, scale, &ukk, &floor);
  free(scale);
  if (k < 0) return 0;
  char what[160];
  muster__lu_singular_text(what, sizeof what, k, ukk, floor);
  if (call->info) *call->info = k + 1;
  return lp_err(call, MUSTER_ESINGULAR, "%s; LAPACKE_%cgetrf, A is %" PRId64 " x %" PRId64, what,
                lp_prefix(a->dtype), n, n); /* the detail: the runtime words "singular" */
}

int lp_run_getrs(const muster_provider_call_t *call, void *full, size_t esz) {
  const muster_solve_args_t *a = &call->args;
  lapack_int n = (lapack_int)a->n, nrhs = (lapack_int)a->nrhs;
  lapack_int *ipiv = lp_alloc((size_t)n * sizeof *ipiv);
  void *x = NULL;
  int rc = ipiv ? lp_take_b(call, n, esz, &x)
                : lp_err(call, MUSTER_ENOMEM, "cannot allocate %d pivots", (int)n);
  if (rc == 0) {
    /* info > 0 (an exact zero pivot; the factorization is complete) is
     * the rule's too: it names the first pivot that fails it */
    lapack_int info = do_getrf(a->dtype, n, full, ipiv);
    rc = info < 0 ? lp_lapacke_failed(call, "getrf", info) : check_pivots(call, full);
  }
  if (rc == 0) {
    lapack_int info = do_getrs(a->dtype, n, nrhs, full, ipiv, x);
    rc = info ? lp_lapacke_failed(call, "getrs", info) : lp_check_result(call, a->dtype, "X", x, n, nrhs);
  }
  if (rc == 0) lp_put_x(call, x, n, n, esz);
  free(x);
  free(ipiv);
  return rc;
}

/* ---- gels ---------------------------------------------------------------------- */

/* 0 when R (the upper triangle of the factored full, ld m) has full
 * numerical rank, else MUSTER_ESINGULAR naming the first column k
 * (1-based) that fails the rule of providers/common/rank.h. */
static int check_rank(const muster_provider_call_t *call, const void *full, int64_t m) {
  int64_t n = call->args.n;
  double r, floor;
  int64_t k = muster__rank_deficient(call->args.dtype, full, m + 1, n, m, &r, &floor);
  if (k < 0) return 0;
  char what[160];
  muster__rank_text(what, sizeof what, k, r, floor, m, n);
  if (call->info) *call->info = k + 1;
  return lp_err(call, MUSTER_ESINGULAR, "%s; LAPACKE_%cgeqrf", what, lp_prefix(call->args.dtype)); /* detail */
}

int lp_run_gels(const muster_provider_call_t *call, void *full, int64_t m, size_t esz) {
  const muster_solve_args_t *a = &call->args;
  lapack_int n = (lapack_int)a->n, nrhs = (lapack_int)a->nrhs, mm = (lapack_int)m;
  void *tau = lp_alloc((size_t)n * esz), *x = NULL;
  int rc = tau ? lp_take_b(call, m, esz, &x)
               : lp_err(call, MUSTER_ENOMEM, "cannot allocate %d Householder scalars", (int)n);
  if (rc == 0) {
    lapack_int info = lp_geqrf(a->dtype, mm, n, full, tau);
    rc = info ? lp_lapacke_failed(call, "geqrf", info) : check_rank(call, full, m);
  }
  if (rc == 0) {
    lapack_int info = do_qhb(a->dtype, mm, n, nrhs, full, tau, x);
    const char *what = muster_dtype_is_complex(a->dtype) ? "unmqr" : "ormqr";
    if (info) rc = lp_lapacke_failed(call, what, info);
  }
  if (rc == 0) {
    lapack_int info = do_trtrs(a->dtype, mm, n, nrhs, full, x);
    rc = info ? lp_lapacke_failed(call, "trtrs", info) : lp_check_result(call, a->dtype, "X", x, m, nrhs);
  }
  if (rc == 0) lp_put_x(call, x, m, n, esz);
  free(x);
  free(tau);
  return rc;
}
