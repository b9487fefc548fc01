/*
 * providers/lapack/qr.c - geqrf: A = Q R with Q explicit, thin or full
 * (MUSTER_FULL_MATRICES), for a tall or wide A gathered m x n (ld m).
 * xGEQRF leaves R in the upper triangle and the Householder reflectors
 * below it; xORGQR / xUNGQR turns the reflectors into Q.  Where Q and R go:
 * muster_routine_outputs (thin and m >= n: Q over A, R in B; else R over
 * A, Q in B).  A rank-deficient A is no error: Q R = A holds all the same.
 */
#include <inttypes.h>
#include <lapacke.h>
#include <stdlib.h>
#include <string.h>

#include "lapackInt.h"

#define LAYOUT LAPACK_COL_MAJOR

/* q (m x cols, ld m, its first k columns the reflectors) <- the first cols
 * columns of Q. */
static lapack_int do_orgqr(muster_dtype_t t, lapack_int m, lapack_int cols, lapack_int k, void *q,
                           const void *tau) {
  switch (t) {
  case MUSTER_F32: return LAPACKE_sorgqr(LAYOUT, m, cols, k, q, m, tau);
  case MUSTER_F64: return LAPACKE_dorgqr(LAYOUT, m, cols, k, q, m, tau);
  case MUSTER_C64: return LAPACKE_cungqr(LAYOUT, m, cols, k, q, m, tau);
  default: return LAPACKE_zungqr(LAYOUT, m, cols, k, q, m, tau);
  }
}

/* r (rows x n, ld rows) <- the upper trapezoid of the factored full (ld
 * m), zeros below the diagonal. */
static void take_r(const void *full, int64_t m, int64_t n, void *r, int64_t rows, size_t esz) {
  memset(r, 0, (size_t)(rows * n) * esz);
  for (int64_t j = 0; j < n; j++) {
    int64_t len = j + 1 < rows ? j + 1 : rows;
    memcpy((char *)r + (size_t)(j * rows) * esz, (const char *)full + (size_t)(j * m) * esz,
           (size_t)len * esz);
  }
}

/* Q and R from the factored full, in place of full (A's factor) and into
 * other (B's): thin Q (m x n) over full and R (n x n) into other, or R
 * (m x n, zero below the diagonal) over full and Q (m x m) into other. */
static int form(const muster_provider_call_t *call, const muster_outputs_t *o, void *full,
                const void *tau, void *other) {
  muster_dtype_t t = call->args.dtype;
  size_t esz = muster_dtype_bytes(t);
  int64_t m = o->m, n = o->n, k = o->k;
  const char *name = muster_dtype_is_complex(t) ? "ungqr" : "orgqr";
  lapack_int info;
  if (o->a_holds == MUSTER_FACTOR_Q) { /* other: R, n x n */
    take_r(full, m, n, other, n, esz);
    info = do_orgqr(t, (lapack_int)m, (lapack_int)n, (lapack_int)n, full, tau);
  } else { /* other: Q, m x m, from the reflectors in full's first k columns */
    memset(other, 0, (size_t)(m * m) * esz);
    memcpy(other, full, (size_t)(m * k) * esz);
    info = do_orgqr(t, (lapack_int)m, (lapack_int)m, (lapack_int)k, other, tau);
    void *r = full; /* R over the reflectors, in place: column j keeps rows <= j */
    for (int64_t j = 0; j < n; j++)
      if (j + 1 < m) memset((char *)r + (size_t)(j * m + j + 1) * esz, 0, (size_t)(m - j - 1) * esz);
  }
  return info ? lp_lapacke_failed(call, name, info) : 0;
}

int lp_run_geqrf(const muster_provider_call_t *call, const muster_outputs_t *o) {
  muster_dtype_t t = call->args.dtype;
  size_t esz = muster_dtype_bytes(t);
  void *full = NULL, *tau = lp_alloc((size_t)o->k * esz), *other = lp_alloc((size_t)o->b_elems * esz);
  int rc = tau && other ? lp_factor_begin(call, o, &full)
                        : lp_err(call, MUSTER_ENOMEM, "cannot allocate the factors");
  if (rc == 0) {
    lapack_int info = lp_geqrf(t, (lapack_int)o->m, (lapack_int)o->n, full, tau);
    rc = info ? lp_lapacke_failed(call, "geqrf", info) : form(call, o, full, tau, other);
  }
  lp_factors_t f = {.a = full, .b = {other}};
  rc = lp_factor_end(call, o, &f, rc);
  free(full);
  free(tau);
  free(other);
  return rc;
}
