/*
 * providers/cusolverdn/factors.c - geqrf, gesvd and polar on the target
 * (factors.h): A gathered (job.c) and refused when it holds a NaN/Inf
 * (naming the element and the rank whose shard has it), the factor
 * buffer, the Householder scalars and the singular values grown under the
 * memory rule (factplan.h, model.c), the routine (qr.c, svd.c, polar.c),
 * then every factor scanned for NaN/Inf and only then written where
 * muster_routine_outputs puts it: A's factor over every rank's columns (the
 * caller's layout), B's factors packed into every rank's b, the singular
 * values into every w.  So a failure leaves the ranks' A, B and W as they
 * were.  Also the cuBLAS steps the routines share (geam, gemm).
 */
#include <inttypes.h>

#include "factors.h"

/* ---- cuBLAS ------------------------------------------------------------------------ */

static int blas_failed(dn_job_t *j, const char *call, cublasStatus_t st) {
  if (st == CUBLAS_STATUS_SUCCESS) return 0;
  return cuc_fail(j->E, MUSTER_ECUDA, "device %d: %s: %s (status %d)", j->dev, call, cublasGetStatusName(st), (int)st);
}

int dn_launched(dn_job_t *j, const char *kernel, cudaError_t st) {
  return st == cudaSuccess ? 0 : cuc_cuda(j->E, j->dev, kernel, st);
}

/* The conjugate transpose as cuBLAS spells it for the dtype: C, or T for
 * the real ones. */
static cublasOperation_t herm_op(const dn_job_t *j) {
  return muster_dtype_is_complex(j->a->dtype) ? CUBLAS_OP_C : CUBLAS_OP_T;
}

#define GEAM_ARGS(T)                                                                                        \
  j->d->blas, herm_op(j), CUBLAS_OP_N, cols, rows, &one, (const T *)src, lds, &zero, (const T *)dst, ldd, \
      (T *)dst, ldd
int dn_conj_transpose(dn_job_t *j, const void *src, int64_t lds, int64_t rows, int64_t cols, void *dst,
                      int64_t ldd) {
  cublasStatus_t st;
  /* beta = 0: B (here dst itself, as geam's in-place form allows) is not read */
  switch (j->a->dtype) {
  case MUSTER_F32: {
    const float one = 1, zero = 0;
    st = cublasSgeam_64(GEAM_ARGS(float));
    break;
  }
  case MUSTER_F64: {
    const double one = 1, zero = 0;
    st = cublasDgeam_64(GEAM_ARGS(double));
    break;
  }
  case MUSTER_C64: {
    const cuComplex one = {1, 0}, zero = {0, 0};
    st = cublasCgeam_64(GEAM_ARGS(cuComplex));
    break;
  }
  default: {
    const cuDoubleComplex one = {1, 0}, zero = {0, 0};
    st = cublasZgeam_64(GEAM_ARGS(cuDoubleComplex));
    break;
  }
  }
  return blas_failed(j, "cublas<t>geam (conjugate transpose)", st);
}
#undef GEAM_ARGS

#define GEMM_ARGS(T) \
  j->d->blas, op_a, op_b, rows, cols, inner, &one, (const T *)a, lda, (const T *)b, ldb, &zero, (T *)c, ldc
int dn_gemm(dn_job_t *j, cublasOperation_t op_a, cublasOperation_t op_b, int64_t rows, int64_t cols, int64_t inner,
            const void *a, int64_t lda, const void *b, int64_t ldb, void *c, int64_t ldc) {
  cublasStatus_t st;
  op_a = op_a == CUBLAS_OP_N ? op_a : herm_op(j);
  op_b = op_b == CUBLAS_OP_N ? op_b : herm_op(j);
  switch (j->a->dtype) {
  case MUSTER_F32: {
    const float one = 1, zero = 0;
    st = cublasSgemm_v2_64(GEMM_ARGS(float));
    break;
  }
  case MUSTER_F64: {
    const double one = 1, zero = 0;
    st = cublasDgemm_v2_64(GEMM_ARGS(double));
    break;
  }
  case MUSTER_C64: {
    const cuComplex one = {1, 0}, zero = {0, 0};
    st = cublasCgemm_v2_64(GEMM_ARGS(cuComplex));
    break;
  }
  default: {
    const cuDoubleComplex one = {1, 0}, zero = {0, 0};
    st = cublasZgemm_v2_64(GEMM_ARGS(cuDoubleComplex));
    break;
  }
  }
  return blas_failed(j, "cublas<t>gemm", st);
}
#undef GEMM_ARGS

/* ---- input, buffers, output -------------------------------------------------------------- */

/* NaN/Inf in the gathered A: MUSTER_ENONFINITE naming the element and the
 * rank whose shard holds its column. */
static int refuse_nonfinite_a(dn_job_t *j) {
  int rc = 0, rank;
  int64_t row, col, lcol;
  CUC_CHECK(dn_scan_finite(j, (int)j->a->dtype, j->A, j->lda, j->sh.a_rows, j->a->n, &row, &col));
  if (row < 0) return 0;
  if (j->a->layout == MUSTER_LAYOUT_CYCLIC) muster_layout_cyclic_owner(&j->L, col, &rank, &lcol);
  else muster_layout_block_owner(&j->L, col, &rank, &lcol);
  return cuc_fail(j->E, MUSTER_ENONFINITE, "NaN/Inf in A at row %" PRId64 ", column %" PRId64 " (rank %d's shard, "
                  "device %d); nothing written", row + 1, col + 1, rank, j->call->shards[rank].device);
out:
  return rc;
}

static int grow_buffers(dn_job_t *j, dn_fjob_t *f) {
  int rc = 0;
  cuc_err_t *E = j->E;
  dn_dev_t *d = j->d;
  const int64_t k = f->p.o.k;
  if (f->p.fac_elems)
    CUC_CHECK(cuc_grow_checked(j->dev, &d->fac, &d->fac_bytes, (size_t)f->p.fac_elems * j->esz, "the factors", E));
  f->fac = d->fac;
  if (j->a->routine == MUSTER_GEQRF) {
    CUC_CHECK(cuc_grow_checked(j->dev, &d->aux, &d->aux_bytes, (size_t)k * j->esz, "the Householder scalars", E));
  } else {
    CUC_CHECK(cuc_grow_checked(j->dev, &d->w, &d->w_bytes, (size_t)k * j->rsz, "the singular values", E));
    f->s = d->w;
    CUC_CHECK(dn_blas_ready(j->c, j->dev, E)); /* the transposes, polar's products */
  }
out:
  return rc;
}

/* The first NaN/Inf of a made factor: MUSTER_ENONFINITE naming it. */
static int refuse_bad(dn_job_t *j, int dtype, const char *what, const void *x, int64_t ld, int64_t rows,
                      int64_t cols) {
  int rc = 0;
  int64_t row, col;
  CUC_CHECK(dn_scan_finite(j, dtype, x, ld, rows, cols, &row, &col));
  if (row >= 0)
    return cuc_fail(j->E, MUSTER_ENONFINITE, "NaN/Inf in the computed %s at row %" PRId64 ", column %" PRId64
                    " (device %d); nothing written", what, row + 1, col + 1, j->dev);
out:
  return rc;
}

/* Every factor finite, then each to the ranks. */
static int check_and_place(dn_job_t *j, const dn_fjob_t *f) {
  int rc = 0;
  const dn_fplan_t *p = &f->p;
  const muster_outputs_t *o = &p->o;
  const int dt = (int)j->a->dtype;
  void *a_factor = p->a_in_fac ? dn_fac_at(j, f, p->a_at) : j->A;
  if (o->w_count) CUC_CHECK(refuse_bad(j, j->rsz == 4 ? MUSTER_F32 : MUSTER_F64, "singular values", f->s, o->w_count,
                                       o->w_count, 1));
  if (o->a_holds) CUC_CHECK(refuse_bad(j, dt, "factor of A's shape", a_factor, p->a_ld, o->m, o->n));
  if (o->b_elems) CUC_CHECK(refuse_bad(j, dt, "factors in B", dn_fac_at(j, f, p->b_at), o->b_elems, o->b_elems, 1));
  if (o->a_holds) CUC_CHECK(dn_move_cols(j, 1, a_factor, p->a_ld, 0, o->n));
  if (o->b_elems) CUC_CHECK(dn_replicate_b(j, dn_fac_at(j, f, p->b_at), o->b_elems));
  if (o->w_count) CUC_CHECK(dn_replicate_w(j, f->s, o->w_count));
out:
  return rc;
}

int dn_factors(dn_job_t *j) {
  int rc = 0;
  dn_fjob_t f = {0};
  if (dn_factor_plan(j->a->routine, j->a->flags, j->sh.a_rows, j->a->n, &f.p) < 0) /* validate checked it */
    return cuc_fail(j->E, MUSTER_EINVAL, "%s: no factor plan for flags 0x%x", muster_routine_str(j->a->routine),
                    j->a->flags);
  CUC_CHECK(refuse_nonfinite_a(j));
  CUC_CHECK(grow_buffers(j, &f));
  switch (j->a->routine) {
  case MUSTER_GEQRF: CUC_CHECK(dn_qr_make(j, &f)); break;
  case MUSTER_GESVD: CUC_CHECK(dn_svd_make(j, &f)); break;
  default: CUC_CHECK(dn_polar_make(j, &f)); break;
  }
  rc = check_and_place(j, &f);
out:
  return rc;
}
