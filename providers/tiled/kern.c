/* providers/tiled/kern.c - the tile kernels by dtype: cuBLAS's trsm,
 * syrk/herk and gemm behind one switch each (tiled.h), alpha -1 / beta 1
 * as the right-looking update needs. */
#include <cuComplex.h>

#include "tiled.h"

cublasOperation_t tl_op_h(int dtype) { return muster_dtype_is_complex(dtype) ? CUBLAS_OP_C : CUBLAS_OP_T; }

int tl_blas(cuc_err_t *E, int dev, const char *call, cublasStatus_t st) {
  return cuc_fail(E, MUSTER_ECUDA, "device %d: %s failed: %s (%d)", dev, call, cublasGetStatusName(st), (int)st);
}

cublasStatus_t tl_trsm(cublasHandle_t h, int dtype, cublasSideMode_t side, cublasOperation_t op, int64_t m, int64_t n,
                       const void *L, int64_t ldl, void *B, int64_t ldb) {
  const cublasFillMode_t lo = CUBLAS_FILL_MODE_LOWER;
  const cublasDiagType_t nu = CUBLAS_DIAG_NON_UNIT;
  const float s1 = 1.0f;
  const double d1 = 1.0;
  const cuFloatComplex c1 = make_cuFloatComplex(1.0f, 0.0f);
  const cuDoubleComplex z1 = make_cuDoubleComplex(1.0, 0.0);
  switch (dtype) {
  case MUSTER_F32: return cublasStrsm_64(h, side, lo, op, nu, m, n, &s1, L, ldl, B, ldb);
  case MUSTER_F64: return cublasDtrsm_64(h, side, lo, op, nu, m, n, &d1, L, ldl, B, ldb);
  case MUSTER_C64: return cublasCtrsm_64(h, side, lo, op, nu, m, n, &c1, L, ldl, B, ldb);
  case MUSTER_C128: return cublasZtrsm_64(h, side, lo, op, nu, m, n, &z1, L, ldl, B, ldb);
  default: return CUBLAS_STATUS_INVALID_VALUE;
  }
}

cublasStatus_t tl_herk_sub(cublasHandle_t h, int dtype, int64_t n, int64_t k, const void *A, int64_t lda, void *C,
                           int64_t ldc) {
  const cublasFillMode_t lo = CUBLAS_FILL_MODE_LOWER;
  const cublasOperation_t nt = CUBLAS_OP_N;
  const float sm = -1.0f, s1 = 1.0f;
  const double dm = -1.0, d1 = 1.0;
  switch (dtype) {
  case MUSTER_F32: return cublasSsyrk_64(h, lo, nt, n, k, &sm, A, lda, &s1, C, ldc);
  case MUSTER_F64: return cublasDsyrk_64(h, lo, nt, n, k, &dm, A, lda, &d1, C, ldc);
  case MUSTER_C64: return cublasCherk_64(h, lo, nt, n, k, &sm, A, lda, &s1, C, ldc); /* real alpha, beta */
  case MUSTER_C128: return cublasZherk_64(h, lo, nt, n, k, &dm, A, lda, &d1, C, ldc);
  default: return CUBLAS_STATUS_INVALID_VALUE;
  }
}

cublasStatus_t tl_gemm_sub(cublasHandle_t h, int dtype, cublasOperation_t ta, cublasOperation_t tb, int64_t m,
                           int64_t n, int64_t k, const void *A, int64_t lda, const void *B, int64_t ldb, void *C,
                           int64_t ldc) {
  const float sm = -1.0f, s1 = 1.0f;
  const double dm = -1.0, d1 = 1.0;
  const cuFloatComplex cm = make_cuFloatComplex(-1.0f, 0.0f), c1 = make_cuFloatComplex(1.0f, 0.0f);
  const cuDoubleComplex zm = make_cuDoubleComplex(-1.0, 0.0), z1 = make_cuDoubleComplex(1.0, 0.0);
  switch (dtype) {
  case MUSTER_F32: return cublasSgemm_64(h, ta, tb, m, n, k, &sm, A, lda, B, ldb, &s1, C, ldc);
  case MUSTER_F64: return cublasDgemm_64(h, ta, tb, m, n, k, &dm, A, lda, B, ldb, &d1, C, ldc);
  case MUSTER_C64: return cublasCgemm_64(h, ta, tb, m, n, k, &cm, A, lda, B, ldb, &c1, C, ldc);
  case MUSTER_C128: return cublasZgemm_64(h, ta, tb, m, n, k, &zm, A, lda, B, ldb, &z1, C, ldc);
  default: return CUBLAS_STATUS_INVALID_VALUE;
  }
}
