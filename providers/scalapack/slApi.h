/*
 * providers/scalapack/slApi.h - the ScaLAPACK, PBLAS and BLACS entry points
 * the provider calls.  Debian's libscalapack-openmpi-dev (2.2.1) ships no C
 * header, so they are declared here, exactly as the library defines them:
 *
 *   - ScaLAPACK/PBLAS routines are Fortran: every argument by reference,
 *     integers are Fortran INTEGER (32 bits: Debian builds the LP64
 *     library), and every CHARACTER argument adds a hidden length (size_t
 *     with gfortran >= 8) after the visible arguments.  The lengths are
 *     passed (as 1): leaving them out works until gfortran turns a call
 *     into a sibling call that reads them.
 *   - Matrices are declared void * (float, double, float complex or double
 *     complex as the routine's letter says): one typedef per shape serves
 *     the four precisions, and the call ABI is the same.
 *   - BLACS has C entry points (Cblacs_*, C?gebs2d ...) taking C ints.
 *
 * Descriptors are the 9 integers of ScaLAPACK's DESC (DTYPE_ = 1, CTXT_, M_,
 * N_, MB_, NB_, RSRC_, CSRC_, LLD_).
 */
#ifndef MUSTER_SL_API_H
#define MUSTER_SL_API_H

#include <mpi.h>
#include <stddef.h>

typedef int sl_int; /* Fortran INTEGER and BLACS Int of the LP64 library */

enum { SL_DLEN = 9, SL_DT = 0, SL_CTXT, SL_M, SL_N, SL_MB, SL_NB, SL_RSRC, SL_CSRC, SL_LLD };

/* ---- BLACS (C interface) ----------------------------------------------------- */
sl_int Csys2blacs_handle(MPI_Comm comm);
void Cfree_blacs_system_handle(sl_int handle);
void Cblacs_gridinit(sl_int *ctxt, const char *order, sl_int nprow, sl_int npcol);
void Cblacs_gridinfo(sl_int ctxt, sl_int *nprow, sl_int *npcol, sl_int *myrow, sl_int *mycol);
void Cblacs_gridexit(sl_int ctxt);
/* Broadcast an m x n matrix from (rsrc, csrc) to every process of ctxt. */
typedef void sl_gebs2d_fn(sl_int ctxt, const char *scope, const char *top, sl_int m, sl_int n,
                          void *a, sl_int lda);
typedef void sl_gebr2d_fn(sl_int ctxt, const char *scope, const char *top, sl_int m, sl_int n,
                          void *a, sl_int lda, sl_int rsrc, sl_int csrc);
sl_gebs2d_fn Csgebs2d, Cdgebs2d, Ccgebs2d, Czgebs2d;
sl_gebr2d_fn Csgebr2d, Cdgebr2d, Ccgebr2d, Czgebr2d;
/* Element-wise sum of an m x n double matrix over scope; rdest = -1: the
 * sum on every process. */
void Cdgsum2d(sl_int ctxt, const char *scope, const char *top, sl_int m, sl_int n, double *a,
              sl_int lda, sl_int rdest, sl_int cdest);
/* Element-wise largest absolute value, likewise; ldia = -1: no locations
 * (ra, ca unused). */
void Cdgamx2d(sl_int ctxt, const char *scope, const char *top, sl_int m, sl_int n, double *a,
              sl_int lda, sl_int *ra, sl_int *ca, sl_int ldia, sl_int rdest, sl_int cdest);

/* ---- ScaLAPACK tools ----------------------------------------------------------- */
/* Global index (1-based) of local index indxloc (1-based). */
sl_int indxl2g_(const sl_int *indxloc, const sl_int *nb, const sl_int *iproc,
                const sl_int *isrcproc, const sl_int *nprocs);
/* The process coordinate holding global index indxglob (1-based), and the
 * local index (1-based) there; iproc is unused by indxg2l. */
sl_int indxg2p_(const sl_int *indxglob, const sl_int *nb, const sl_int *iproc,
                const sl_int *isrcproc, const sl_int *nprocs);
sl_int indxg2l_(const sl_int *indxglob, const sl_int *nb, const sl_int *iproc,
                const sl_int *isrcproc, const sl_int *nprocs);

/* ---- redistribution and copies --------------------------------------------------- */
/* B(ib:, jb:) = A(ia:, ja:) (m x n) between any two block-cyclic layouts;
 * ictxt spans every process of both grids (a process outside a grid passes
 * that descriptor with CTXT_ = -1). */
typedef void sl_gemr2d_fn(const sl_int *m, const sl_int *n, const void *a, const sl_int *ia,
                          const sl_int *ja, const sl_int *desca, void *b, const sl_int *ib,
                          const sl_int *jb, const sl_int *descb, const sl_int *ictxt);
sl_gemr2d_fn psgemr2d_, pdgemr2d_, pcgemr2d_, pzgemr2d_;

/* C := beta C + alpha op(A), C's triangle uplo only; op 'T' or 'C'. */
typedef void sl_tradd_fn(const char *uplo, const char *trans, const sl_int *m, const sl_int *n,
                         const void *alpha, const void *a, const sl_int *ia, const sl_int *ja,
                         const sl_int *desca, const void *beta, void *c, const sl_int *ic,
                         const sl_int *jc, const sl_int *descc, size_t uplo_len, size_t trans_len);
sl_tradd_fn pstradd_, pdtradd_, pctradd_, pztradd_;

/* ---- Cholesky ------------------------------------------------------------------------ */
typedef void sl_potrf_fn(const char *uplo, const sl_int *n, void *a, const sl_int *ia,
                         const sl_int *ja, const sl_int *desca, sl_int *info, size_t uplo_len);
sl_potrf_fn pspotrf_, pdpotrf_, pcpotrf_, pzpotrf_;
/* same shape: the inverse from the factor */
sl_potrf_fn pspotri_, pdpotri_, pcpotri_, pzpotri_;

typedef void sl_potrs_fn(const char *uplo, const sl_int *n, const sl_int *nrhs, const void *a,
                         const sl_int *ia, const sl_int *ja, const sl_int *desca, void *b,
                         const sl_int *ib, const sl_int *jb, const sl_int *descb, sl_int *info,
                         size_t uplo_len);
sl_potrs_fn pspotrs_, pdpotrs_, pcpotrs_, pzpotrs_;

/* ---- symmetric / Hermitian eigensolvers (divide and conquer; jobz 'V' only) ---------- */
typedef void sl_syevd_fn(const char *jobz, const char *uplo, const sl_int *n, void *a,
                         const sl_int *ia, const sl_int *ja, const sl_int *desca, void *w, void *z,
                         const sl_int *iz, const sl_int *jz, const sl_int *descz, void *work,
                         const sl_int *lwork, sl_int *iwork, const sl_int *liwork, sl_int *info,
                         size_t jobz_len, size_t uplo_len);
sl_syevd_fn pssyevd_, pdsyevd_;

typedef void sl_heevd_fn(const char *jobz, const char *uplo, const sl_int *n, void *a,
                         const sl_int *ia, const sl_int *ja, const sl_int *desca, void *w, void *z,
                         const sl_int *iz, const sl_int *jz, const sl_int *descz, void *work,
                         const sl_int *lwork, void *rwork, const sl_int *lrwork, sl_int *iwork,
                         const sl_int *liwork, sl_int *info, size_t jobz_len, size_t uplo_len);
sl_heevd_fn pcheevd_, pzheevd_;

/* C := Q C with Q from pXsytrd / pXhetrd (what pXsyevd / pXheevd apply to
 * the eigenvectors last: its workspace is asked for separately, see
 * routines.c). */
typedef void sl_ormtr_fn(const char *side, const char *uplo, const char *trans, const sl_int *m,
                         const sl_int *n, const void *a, const sl_int *ia, const sl_int *ja,
                         const sl_int *desca, const void *tau, void *c, const sl_int *ic,
                         const sl_int *jc, const sl_int *descc, void *work, const sl_int *lwork,
                         sl_int *info, size_t side_len, size_t uplo_len, size_t trans_len);
sl_ormtr_fn psormtr_, pdormtr_, pcunmtr_, pzunmtr_;

/* ---- general matrices: LU, QR ------------------------------------------------------ */
/* LU with partial pivoting; ipiv: LOCr(m) + mb local entries. */
typedef void sl_getrf_fn(const sl_int *m, const sl_int *n, void *a, const sl_int *ia,
                         const sl_int *ja, const sl_int *desca, sl_int *ipiv, sl_int *info);
sl_getrf_fn psgetrf_, pdgetrf_, pcgetrf_, pzgetrf_;

typedef void sl_getrs_fn(const char *trans, const sl_int *n, const sl_int *nrhs, const void *a,
                         const sl_int *ia, const sl_int *ja, const sl_int *desca,
                         const sl_int *ipiv, void *b, const sl_int *ib, const sl_int *jb,
                         const sl_int *descb, sl_int *info, size_t trans_len);
sl_getrs_fn psgetrs_, pdgetrs_, pcgetrs_, pzgetrs_;

/* QR; tau: LOCc(min(m, n)) local entries; lwork -1 asks for the size. */
typedef void sl_geqrf_fn(const sl_int *m, const sl_int *n, void *a, const sl_int *ia,
                         const sl_int *ja, const sl_int *desca, void *tau, void *work,
                         const sl_int *lwork, sl_int *info);
sl_geqrf_fn psgeqrf_, pdgeqrf_, pcgeqrf_, pzgeqrf_;

/* C := op(Q) C with Q from pXgeqrf (pXormqr; pXunmqr for complex). */
typedef void sl_ormqr_fn(const char *side, const char *trans, const sl_int *m, const sl_int *n,
                         const sl_int *k, const void *a, const sl_int *ia, const sl_int *ja,
                         const sl_int *desca, const void *tau, void *c, const sl_int *ic,
                         const sl_int *jc, const sl_int *descc, void *work, const sl_int *lwork,
                         sl_int *info, size_t side_len, size_t trans_len);
sl_ormqr_fn psormqr_, pdormqr_, pcunmqr_, pzunmqr_;

/* The first n columns of Q from pXgeqrf's k reflectors, in place
 * (pXorgqr; pXungqr for complex); tau as pXgeqrf left it. */
typedef void sl_orgqr_fn(const sl_int *m, const sl_int *n, const sl_int *k, void *a, const sl_int *ia,
                         const sl_int *ja, const sl_int *desca, const void *tau, void *work,
                         const sl_int *lwork, sl_int *info);
sl_orgqr_fn psorgqr_, pdorgqr_, pcungqr_, pzungqr_;

/* B := A (m x n): uplo "U" or "L" the triangle only, else all (pXlacpy). */
typedef void sl_lacpy_fn(const char *uplo, const sl_int *m, const sl_int *n, const void *a,
                         const sl_int *ia, const sl_int *ja, const sl_int *desca, void *b,
                         const sl_int *ib, const sl_int *jb, const sl_int *descb, size_t uplo_len);
sl_lacpy_fn pslacpy_, pdlacpy_, pclacpy_, pzlacpy_;

/* A's strictly uplo triangle := alpha, its diagonal := beta (pXlaset). */
typedef void sl_laset_fn(const char *uplo, const sl_int *m, const sl_int *n, const void *alpha,
                         const void *beta, void *a, const sl_int *ia, const sl_int *ja,
                         const sl_int *desca, size_t uplo_len);
sl_laset_fn pslaset_, pdlaset_, pclaset_, pzlaset_;

/* The SVD A = U S V^H: S (min(m,n), every process), the first min(m,n)
 * columns of U and rows of V^H with job "V", none with "N" (pXgesvd; the
 * complex ones take rwork).  A is destroyed. */
typedef void sl_gesvd_fn(const char *jobu, const char *jobvt, const sl_int *m, const sl_int *n,
                         void *a, const sl_int *ia, const sl_int *ja, const sl_int *desca, void *s,
                         void *u, const sl_int *iu, const sl_int *ju, const sl_int *descu, void *vt,
                         const sl_int *ivt, const sl_int *jvt, const sl_int *descvt, void *work,
                         const sl_int *lwork, sl_int *info, size_t jobu_len, size_t jobvt_len);
sl_gesvd_fn psgesvd_, pdgesvd_;
typedef void sl_cgesvd_fn(const char *jobu, const char *jobvt, const sl_int *m, const sl_int *n,
                          void *a, const sl_int *ia, const sl_int *ja, const sl_int *desca, void *s,
                          void *u, const sl_int *iu, const sl_int *ju, const sl_int *descu, void *vt,
                          const sl_int *ivt, const sl_int *jvt, const sl_int *descvt, void *work,
                          const sl_int *lwork, void *rwork, sl_int *info, size_t jobu_len,
                          size_t jobvt_len);
sl_cgesvd_fn pcgesvd_, pzgesvd_;

/* C := alpha op(A) op(B) + beta C (PBLAS pXgemm; op "N", "T" or "C"). */
typedef void sl_gemm_fn(const char *transa, const char *transb, const sl_int *m, const sl_int *n,
                        const sl_int *k, const void *alpha, const void *a, const sl_int *ia,
                        const sl_int *ja, const sl_int *desca, const void *b, const sl_int *ib,
                        const sl_int *jb, const sl_int *descb, const void *beta, void *c,
                        const sl_int *ic, const sl_int *jc, const sl_int *descc, size_t ta_len,
                        size_t tb_len);
sl_gemm_fn psgemm_, pdgemm_, pcgemm_, pzgemm_;

/* B := op(A)^-1 B, A triangular (info > 0: A(info, info) is exactly zero). */
typedef void sl_trtrs_fn(const char *uplo, const char *trans, const char *diag, const sl_int *n,
                         const sl_int *nrhs, const void *a, const sl_int *ia, const sl_int *ja,
                         const sl_int *desca, void *b, const sl_int *ib, const sl_int *jb,
                         const sl_int *descb, sl_int *info, size_t uplo_len, size_t trans_len,
                         size_t diag_len);
sl_trtrs_fn pstrtrs_, pdtrtrs_, pctrtrs_, pztrtrs_;

#endif
