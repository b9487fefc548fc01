/*
 * tests/gpu/gpu_util.h - GPU helpers shared by the GPU test program, the raw
 * baselines and the benchmark (gpu_util.cu).
 *
 * Test matrices are never stored twice: entry (i, j) of the n x n test
 * matrix is a hash of (seed, min(i,j), max(i,j)) in [-1, 1) (imaginary part
 * from a second hash, conjugated above the diagonal, real diagonal) plus
 * `shift` on the diagonal.  shift = n makes it Hermitian positive definite
 * (strict diagonal dominance); shift = 0 gives a Hermitian matrix with a
 * spread spectrum for syevd.  Checks regenerate A on the fly in double
 * precision, so they work at any n that fits the solve itself.
 *
 * A seed with GU_GENERAL set gives a general (non-Hermitian) matrix
 * instead, for getrs: entry (i, j) hashes (seed, i, j), complex parts
 * included on the diagonal, plus `shift` on the diagonal (0: a random
 * general matrix, so LU's row pivoting is exercised).  Every function below
 * takes such a seed; gu_check_potrs then gives getrs's residual.
 */
#ifndef MUSTER_GPU_UTIL_H
#define MUSTER_GPU_UTIL_H

#include <cuda_runtime_api.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GU_GENERAL (1ull << 63) /* seed bit: a general matrix (above) */

/* Which global column local column lc of a buffer holds. */
typedef struct gu_cols {
  int cyclic;     /* 0: block (global = col0 + lc); 1: cyclic tiles of `width` */
  int nranks, rank;
  int64_t col0;   /* block */
  int64_t width;  /* cyclic tile */
} gu_cols_t;

/* dtype: 1 f32, 2 f64, 3 c64, 4 c128 (muster's values). */
cudaError_t gu_fill_matrix(int dtype, void *a, int64_t lda, int64_t n, int64_t ncols, gu_cols_t cols,
                           uint64_t seed, double shift, cudaStream_t s);
cudaError_t gu_fill_vectors(int dtype, void *b, int64_t ldb, int64_t n, int64_t nrhs, uint64_t seed,
                            cudaStream_t s);

/* max_i |(A X - B)_ik| over every rhs k (out[0]), max |X| (out[1]), ||A||_inf (out[2]). */
cudaError_t gu_check_potrs(int dtype, int64_t n, int64_t nrhs, const void *x, int64_t ldx, const void *b,
                           int64_t ldb, uint64_t seed, double shift, double out[3]);
/* For the local columns c of `inv`: max |(A inv)(:,c) - e_c| (out[0]), max |inv| (out[1]), ||A||_inf (out[2]). */
cudaError_t gu_check_potri(int dtype, int64_t n, const void *inv, int64_t lda, int64_t ncols, gu_cols_t cols,
                           uint64_t seed, double shift, double out[3]);
/* For the local eigenvector columns: max |A v - w v| (out[0]), max | ||v|| - 1 | (out[1]),
 * max |v_c^H v_c+1| over neighbouring local columns (out[2]), ||A||_inf (out[3]);
 * w: device or host array of n reals (float for f32/c64). */
cudaError_t gu_check_syevd(int dtype, int64_t n, const void *v, int64_t lda, int64_t ncols, gu_cols_t cols,
                           const void *w, uint64_t seed, double shift, double out[4]);
/* trace(A) and ||A||_F^2 of the generated matrix. */
cudaError_t gu_trace_frob(int dtype, int64_t n, uint64_t seed, double shift, double out[2]);

/* Residual ratios (LAPACK style: scaled by norms, n and eps; a correct
 * result gives ratios well below GU_TOL) of a check's out[]:
 *   potrs, potri (routine 1, 2): ratio[0] = out[0] / (out[2] out[1] n eps), ratio[1] = 0;
 *   syevd (3): ratio[0] = out[0] / (out[3] n eps) (A v - w v),
 *              ratio[1] = max(out[1], out[2]) / (n eps) (norms, orthogonality). */
#define GU_TOL 30.0
void gu_resid_ratios(int routine, int dtype, int64_t n, const double out[4], double ratio[2]);

size_t gu_esz(int dtype);
size_t gu_rsz(int dtype);
double gu_eps(int dtype);

#ifdef __cplusplus
}
#endif
#endif
