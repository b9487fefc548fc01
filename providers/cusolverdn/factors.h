/*
 * providers/cusolverdn/factors.h - what geqrf (qr.c), gesvd (svd.c) and
 * polar (polar.c) share (factors.c): the factor buffer's parts
 * (factplan.h) on the target, and the cuBLAS steps they take on the
 * solver stream.  Private to the provider; runs with ctx->mu held.
 */
#ifndef MUSTER_DN_FACTORS_H
#define MUSTER_DN_FACTORS_H

#include "factplan.h"
#include "job.h"

typedef struct dn_fjob {
  dn_fplan_t p;
  void *fac;               /* the factor buffer (d->fac)                  */
  void *s;                 /* k singular values (d->w), gesvd and polar   */
} dn_fjob_t;

/* Element `at` of the factor buffer. */
static inline void *dn_fac_at(const dn_job_t *j, const dn_fjob_t *f, int64_t at) {
  return (char *)f->fac + (size_t)at * j->esz;
}

/* The routines: every factor made on the target (nothing written to the
 * ranks; factors.c checks and places them). */
DN_HIDDEN int dn_qr_make(dn_job_t *j, dn_fjob_t *f);    /* qr.c    */
DN_HIDDEN int dn_svd_make(dn_job_t *j, dn_fjob_t *f);   /* svd.c: the plan's U, V^H, S */
DN_HIDDEN int dn_polar_make(dn_job_t *j, dn_fjob_t *f); /* polar.c */

/* dst (cols x rows, ld ldd) <- src^H, src rows x cols (ld lds): cuBLAS
 * geam on the solver stream (the transpose for real dtypes). */
DN_HIDDEN int dn_conj_transpose(dn_job_t *j, const void *src, int64_t lds, int64_t rows, int64_t cols, void *dst,
                                int64_t ldd);

/* c (rows x cols, ld ldc) <- op_a(a) op_b(b), inner the shared dimension:
 * cuBLAS gemm on the solver stream; op CUBLAS_OP_N or CUBLAS_OP_C (passed
 * to cuBLAS as CUBLAS_OP_T for real dtypes). */
DN_HIDDEN int dn_gemm(dn_job_t *j, cublasOperation_t op_a, cublasOperation_t op_b, int64_t rows, int64_t cols,
                      int64_t inner, const void *a, int64_t lda, const void *b, int64_t ldb, void *c, int64_t ldc);

/* A launch's status (a kernel of kernels.cu) as the provider reports it. */
DN_HIDDEN int dn_launched(dn_job_t *j, const char *kernel, cudaError_t st);

#endif
