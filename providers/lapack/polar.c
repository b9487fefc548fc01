/*
 * providers/lapack/polar.c - polar: A = U_p H (the right polar
 * decomposition) from the thin SVD A = U S V^H, as LAPACK has no polar
 * routine: U_p = U V^H (m x n, over A) and H = V S V^H (n x n, Hermitian
 * positive semidefinite, into B).  For a wide A (m < n) U_p has orthonormal
 * rows and H rank m.  A rank-deficient A is no error: U_p is then one of
 * several unitary factors, and U_p H = A still holds.
 */
#include <cblas.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "lapackInt.h"

/* c (rows x cols, ld rows) <- op(a) b, op: a (rows x inner) or, with
 * herm, a^H (a is inner x rows); b inner x cols. */
static void gemm(muster_dtype_t t, int herm, int64_t rows, int64_t cols, int64_t inner, const void *a,
                 const void *b, void *c) {
  static const float c1[2] = {1, 0}, c0[2] = {0, 0};
  static const double z1[2] = {1, 0}, z0[2] = {0, 0};
  int M = (int)rows, N = (int)cols, K = (int)inner, lda = herm ? K : M;
  enum CBLAS_TRANSPOSE op = !herm ? CblasNoTrans : muster_dtype_is_complex(t) ? CblasConjTrans : CblasTrans;
#define ARGS CblasColMajor, op, CblasNoTrans, M, N, K
  switch (t) {
  case MUSTER_F32: cblas_sgemm(ARGS, 1.0f, a, lda, b, K, 0.0f, c, M); break;
  case MUSTER_F64: cblas_dgemm(ARGS, 1.0, a, lda, b, K, 0.0, c, M); break;
  case MUSTER_C64: cblas_cgemm(ARGS, c1, a, lda, b, K, c0, c, M); break;
  default: cblas_zgemm(ARGS, z1, a, lda, b, K, z0, c, M); break;
  }
#undef ARGS
}

/* Row i of x (rows x cols, ld rows) *= s[i] (real, of the dtype's precision). */
static void scale_rows(muster_dtype_t t, void *x, int64_t rows, int64_t cols, const void *s) {
  int parts = muster_dtype_is_complex(t) ? 2 : 1;
  for (int64_t j = 0; j < cols; j++)
    for (int64_t i = 0; i < rows; i++)
      for (int p = 0; p < parts; p++) {
        size_t at = (size_t)((j * rows + i) * parts + p);
        if (muster_dtype_real_bytes(t) == 4) ((float *)x)[at] *= ((const float *)s)[i];
        else ((double *)x)[at] *= ((const double *)s)[i];
      }
}

/* h (n x n) <- (h + h^H) / 2: exactly Hermitian (a real diagonal), where
 * the gemm left it so only to rounding. */
static void hermitize(muster_dtype_t t, void *h, int64_t n) {
  int cplx = muster_dtype_is_complex(t), single = muster_dtype_real_bytes(t) == 4;
  int parts = cplx ? 2 : 1;
  for (int64_t j = 0; j < n; j++)
    for (int64_t i = j; i < n; i++) {
      size_t lo = (size_t)((j * n + i) * parts), up = (size_t)((i * n + j) * parts);
      for (int p = 0; p < parts; p++) {
        double sign = p ? -1.0 : 1.0; /* the imaginary part of the mirror is conjugated */
        if (single) {
          float *x = h, v = (float)(0.5 * ((double)x[lo + p] + sign * (double)x[up + p]));
          x[lo + p] = v;
          x[up + p] = (float)(sign * v);
        } else {
          double *x = h, v = 0.5 * (x[lo + p] + sign * x[up + p]);
          x[lo + p] = v;
          x[up + p] = sign * v;
        }
      }
    }
}

int lp_run_polar(const muster_provider_call_t *call, const muster_outputs_t *o) {
  muster_dtype_t t = call->args.dtype;
  size_t esz = muster_dtype_bytes(t);
  int64_t m = o->m, n = o->n, k = o->k;
  void *full = NULL, *s = lp_alloc((size_t)k * muster_dtype_real_bytes(t));
  void *u = lp_alloc((size_t)(m * k) * esz), *vt = lp_alloc((size_t)(k * n) * esz);
  void *sv = lp_alloc((size_t)(k * n) * esz), *h = lp_alloc((size_t)(n * n) * esz);
  int rc = s && u && vt && sv && h ? lp_factor_begin(call, o, &full)
                                   : lp_err(call, MUSTER_ENOMEM, "cannot allocate the factors");
  if (rc == 0) rc = lp_svd(call, 'S', m, n, full, s, u, vt);
  if (rc == 0) {
    gemm(t, 0, m, n, k, u, vt, full); /* U_p = U V^H, over gesvd's scratch */
    memcpy(sv, vt, (size_t)(k * n) * esz);
    scale_rows(t, sv, k, n, s);
    gemm(t, 1, n, n, k, vt, sv, h); /* H = V (S V^H) */
    hermitize(t, h, n);
  }
  lp_factors_t f = {.a = full, .b = {h}};
  rc = lp_factor_end(call, o, &f, rc);
  free(full);
  free(s);
  free(u);
  free(vt);
  free(sv);
  free(h);
  return rc;
}
