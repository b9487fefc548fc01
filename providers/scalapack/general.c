/*
 * providers/scalapack/general.c - the routines on a general (possibly
 * non-square) A, on the provider's P x Q copy of it (the caller's A is
 * never written: the factors are of no use without their pivots or
 * Householder scalars, which do not travel back; muster.h):
 *
 *   getrs  pXgetrf, the singularity test, pXgetrs: X in B.  pXgetrf stops
 *          only at an exact zero pivot; |U(k,k)| <= 2 n eps max_{i<=k}
 *          |U(i,k)| (providers/common/singular.h, the lapack provider's
 *          rule: an exact zero, or the rounding-level pivot two equal
 *          columns leave) is MUSTER_ESINGULAR with info = k, worded as
 *          the lapack provider words it.  U's diagonal and column scales
 *          reach every rank exactly (sl_diag_abs, sl_upper_col_max), so
 *          every rank takes the same decision alone.
 *   gels   pXgeqrf, the rank test, pXormqr / pXunmqr (B := Q^H B), pXtrtrs
 *          (X := R^-1 B(1:n)), like providers/lapack/general.c and for the
 *          same reason: pXgels only stops at an exact zero of R's diagonal
 *          and returns a huge, wrong X for a numerically rank-deficient A.
 *          |R(k,k)| <= m * eps * max|R(i,i)| refuses the call with
 *          MUSTER_ESINGULAR and info = k, the lapack provider's test and
 *          threshold.  R's diagonal reaches every rank exactly
 *          (sl_diag_abs), so every rank takes the same decision alone.
 * Workspace sizes are asked for first (lwork = -1) and the allocation
 * agreed, as pXsyevd's in routines.c.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "../common/singular.h" /* muster__lu_pivot_small; rank.h: muster__rank_floor */
#include "slInt.h"

static const sl_int ONE = 1, QUERY = -1;

/* ---- getrs ------------------------------------------------------------------------ */

/* 0 when the factored s->A passes the rule of providers/common/singular.h,
 * else MUSTER_ESINGULAR naming the first column k (1-based) that fails it;
 * the same on every rank (d and scale are). */
static int check_pivots(sl_call_t *s, double *d, double *scale) {
  int64_t n = s->args->n;
  double floor = 0;
  sl_diag_abs(s, &s->A, n, d);
  sl_upper_col_max(s, &s->A, n, scale);
  for (int64_t k = 0; k < n; k++) {
    if (!muster__lu_pivot_small(s->t, n, d[k], scale[k], &floor)) continue;
    char what[160];
    muster__lu_singular_text(what, sizeof what, k, d[k], floor);
    *s->info = k + 1;
    return sl_err(s, MUSTER_ESINGULAR, "%s; p%cgetrf, A is %" PRId64 " x %" PRId64, what, s->k->letter, n,
                  n); /* the detail: the runtime words "singular" */
  }
  return 0;
}

int sl_run_getrs(sl_call_t *s) {
  sl_int n = (sl_int)s->args->n, nrhs = (sl_int)s->args->nrhs, info = 0;
  /* pXgetrf's IPIV: LOCr(M_A) + MB_A entries; U's diagonal and column
   * scales: n each, replicated */
  size_t npiv = (size_t)(s->A.rows + s->tile);
  sl_int *ipiv = malloc(npiv * sizeof *ipiv);
  double *d = malloc(2 * (size_t)n * sizeof *d);
  sl_verdict_t v = {.code = 0, .order = SL_ORDER_ARGS};
  if (!ipiv || !d) {
    v.code = MUSTER_ENOMEM;
    snprintf(v.what, sizeof v.what, "cannot allocate %zu pivots and 2 x %d diagonal entries", npiv, (int)n);
  }
  int rc = sl_agree(s, &v, 0);
  if (rc == 0) {
    /* info = k > 0 (an exact zero pivot, global on the grid; the
     * factorization is complete) is the rule's too: it names the first
     * pivot that fails it */
    s->k->getrf(&n, &n, s->A.a, &ONE, &ONE, s->A.desc, ipiv, &info);
    rc = info < 0 ? sl_illegal(s, "getrf", info) : check_pivots(s, d, d + n);
  }
  if (rc == 0) {
    s->k->getrs("N", &n, &nrhs, s->A.a, &ONE, &ONE, s->A.desc, ipiv, s->B.a, &ONE, &ONE, s->B.desc,
                &info, 1);
    if (info) rc = sl_illegal(s, "getrs", info);
  }
  free(ipiv);
  free(d);
  return rc;
}

/* ---- gels ------------------------------------------------------------------------- */

/* A workspace size ScaLAPACK returned in WORK(1) (real part for complex
 * dtypes), with a margin: a float holds integers exactly only up to 2^24. */
static sl_int work_size(const sl_call_t *s, const void *q) {
  double v = muster_dtype_real_bytes(s->t) == 4 ? (double)*(const float *)q : *(const double *)q;
  return (sl_int)(v * (1.0 + 1e-6)) + 1;
}

static void call_geqrf(sl_call_t *s, void *tau, void *work, sl_int lwork, sl_int *info) {
  sl_int m = (sl_int)s->m, n = (sl_int)s->args->n;
  s->k->geqrf(&m, &n, s->A.a, &ONE, &ONE, s->A.desc, tau, work, &lwork, info);
}

/* B (m x nrhs) := Q^H B */
static void call_qhb(sl_call_t *s, const void *tau, void *work, sl_int lwork, sl_int *info) {
  sl_int m = (sl_int)s->m, n = (sl_int)s->args->n, nrhs = (sl_int)s->args->nrhs;
  const char *trans = muster_dtype_is_complex(s->t) ? "C" : "T";
  s->k->ormqr("L", trans, &m, &nrhs, &n, s->A.a, &ONE, &ONE, s->A.desc, tau, s->B.a, &ONE, &ONE,
              s->B.desc, work, &lwork, info, 1, 1);
}

/* 0 when R has full numerical rank, else MUSTER_ESINGULAR naming the first
 * column k (1-based) with |R(k,k)| <= m * eps * max|R(i,i)|; the same on
 * every rank (d is). */
static int check_rank(sl_call_t *s, const double *d) {
  int64_t n = s->args->n;
  double big = 0;
  for (int64_t i = 0; i < n; i++) big = d[i] > big ? d[i] : big;
  double floor = muster__rank_floor(s->t, s->m, big);
  for (int64_t k = 0; k < n; k++) {
    if (!muster__rank_fails(d[k], floor)) continue;
    char what[160];
    muster__rank_text(what, sizeof what, k, d[k], floor, s->m, n);
    *s->info = k + 1;
    return sl_err(s, MUSTER_ESINGULAR, "%s; p%cgeqrf", what, s->k->letter); /* detail */
  }
  return 0;
}

/* The sizes both workspace users ask for; the larger one serves both. */
static int query_work(sl_call_t *s, sl_int *lwork) {
  double q[2] = {0, 0}, tau[2] = {0, 0};
  sl_int info = 0;
  call_geqrf(s, tau, q, QUERY, &info);
  if (info) return sl_illegal(s, "geqrf", info);
  *lwork = work_size(s, q);
  call_qhb(s, tau, q, QUERY, &info);
  if (info) return sl_illegal(s, muster_dtype_is_complex(s->t) ? "unmqr" : "ormqr", info);
  sl_int more = work_size(s, q);
  if (more > *lwork) *lwork = more;
  return 0;
}

static int factor_and_solve(sl_call_t *s, void *tau, void *work, sl_int lwork, double *d) {
  sl_int n = (sl_int)s->args->n, nrhs = (sl_int)s->args->nrhs, info = 0;
  call_geqrf(s, tau, work, lwork, &info);
  if (info) return sl_illegal(s, "geqrf", info);
  sl_diag_abs(s, &s->A, n, d);
  int rc = check_rank(s, d);
  if (rc < 0) return rc;
  call_qhb(s, tau, work, lwork, &info);
  if (info) return sl_illegal(s, muster_dtype_is_complex(s->t) ? "unmqr" : "ormqr", info);
  s->k->trtrs("U", "N", "N", &n, &nrhs, s->A.a, &ONE, &ONE, s->A.desc, s->B.a, &ONE, &ONE,
              s->B.desc, &info, 1, 1, 1);
  return info ? sl_illegal(s, "trtrs", info) : 0;
}

int sl_run_gels(sl_call_t *s) {
  sl_int lwork = 0;
  int rc = query_work(s, &lwork);
  if (rc < 0) return rc; /* ScaLAPACK's argument checks are global: every rank is here */
  /* tau: LOCc(n) entries; d: R's diagonal, replicated */
  size_t ntau = (size_t)(s->A.cols > 1 ? s->A.cols : 1), nd = (size_t)s->args->n;
  void *tau = malloc(ntau * s->esz), *work = malloc((size_t)lwork * s->esz);
  double *d = malloc(nd * sizeof *d);
  sl_verdict_t v = {.code = 0, .order = SL_ORDER_ARGS};
  if (!tau || !work || !d) {
    v.code = MUSTER_ENOMEM;
    snprintf(v.what, sizeof v.what, "cannot allocate the QR's workspace (%d + %zu + %zu)",
             (int)lwork, ntau, nd);
  }
  rc = sl_agree(s, &v, 0);
  if (rc == 0) rc = factor_and_solve(s, tau, work, lwork, d);
  free(tau);
  free(work);
  free(d);
  return rc;
}
