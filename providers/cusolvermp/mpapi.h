/*
 * providers/cusolvermp/mpapi.h - the few NCCL and cuSOLVERMp declarations
 * the provider uses, written here (no NVIDIA header is needed to build, and
 * none is in the repository).  Everything is reached through dlopen()
 * (libs.c) into the function table mp_api_t; nothing links against NCCL
 * or cuSOLVERMp.
 *
 * Checked against:
 *   cuSOLVERMp 0.8.0 (wheel nvidia-cusolvermp-cu13 0.8.0.3126): the
 *     prototypes below, the grid mapping values, 1-based IA/JA, device info;
 *     0.9.1's prototypes of these functions are the same (version.h);
 *   cuSOLVERMp 0.9.1 (wheel nvidia-cusolvermp-cu13 0.9.1.9318.post1): the
 *     functions 0.8 lacks that gesvd and polar use (svd.c), their
 *     descriptor handles, the SHAPE attribute and its THIN / FULL values,
 *     CUBLAS_FILL_MODE_FULL for a general A (Polar), jobu / jobvt as
 *     cusolverEigMode_t.  These are resolved apart (MP_SOLVER091_SYMBOLS):
 *     optional on 0.8, required on 0.9 (libs.c);
 *   NCCL 2.28 (the nvidia-nccl-cu13 2.28.9 wheel): result codes, data
 *     types, reduction ops, the 128-byte unique id, and the versioned
 *     ncclConfig_t: NCCL copies the first `size` bytes of the caller's
 *     config and defaults every field newer than `version`, so the prefix
 *     declared here (the fields of NCCL 2.17) is a valid config on every
 *     NCCL since.
 * CUDA's own types (cudaStream_t, cudaDataType, cusolverStatus_t) come from
 * the CUDA toolkit's headers, which the build has.
 */
#ifndef MUSTER_MP_API_H
#define MUSTER_MP_API_H

#include <cuda_runtime_api.h>
#include <cusolver_common.h>
#include <library_types.h>
#include <stddef.h>
#include <stdint.h>

/* ---- NCCL ---------------------------------------------------------------------- */

typedef struct mp_nccl_comm *mp_ncclComm_t;
typedef struct {
  char internal[128];
} mp_ncclUniqueId;

enum {
  MP_NCCL_SUCCESS = 0,
  MP_NCCL_IN_PROGRESS = 7,
};
/* ncclDataType_t values used here */
enum { MP_NCCL_INT8 = 0, MP_NCCL_FLOAT32 = 7, MP_NCCL_FLOAT64 = 8 };
enum { MP_NCCL_SUM = 0, MP_NCCL_MAX = 2 }; /* ncclRedOp_t */

#define MP_NCCL_CONFIG_MAGIC 0xcafebeefu
#define MP_NCCL_CONFIG_UNDEF_INT (-2147483647 - 1)
#define MP_NCCL_CONFIG_VERSION 21700 /* the fields below are NCCL 2.17's */
typedef struct mp_ncclConfig {
  size_t size;
  unsigned int magic;
  unsigned int version;
  int blocking;
  int cgaClusterSize;
  int minCTAs;
  int maxCTAs;
  const char *netName;
  int splitShare;
} mp_ncclConfig_t;

/* ---- cuSOLVERMp ------------------------------------------------------------------ */

typedef struct mp_solver_handle *mp_solverHandle_t;
typedef struct mp_solver_grid *mp_solverGrid_t;
typedef struct mp_solver_desc *mp_solverDesc_t;
enum { MP_GRID_COL_MAJOR = 0 }; /* cusolverMpGridMapping_t: the only one it runs */
enum { MP_FILL_LOWER = 0 };     /* cublasFillMode_t */
enum { MP_OP_N = 0, MP_OP_T = 1, MP_OP_C = 2 }; /* cublasOperation_t */
enum { MP_SIDE_LEFT = 0 };                      /* cublasSideMode_t  */
/* 0.9: Gesvd's and Polar's optional descriptors (NULL: the defaults) */
typedef struct mp_gesvd_desc *mp_gesvdDesc_t;
typedef struct mp_polar_desc *mp_polarDesc_t;
enum { MP_GESVD_ATTR_SHAPE = 1 };                 /* cusolverMpGesvdDescriptorAttribute_t */
enum { MP_GESVD_THIN = 0, MP_GESVD_FULL = 1 };    /* cusolverMpGesvdOutputShape_t         */
enum { MP_FILL_FULL = 2 };                        /* cublasFillMode_t: Polar's general A  */

/* ---- the table libs.c fills -------------------------------------------------------- */

typedef int mp_nres_t; /* ncclResult_t */

typedef struct mp_api {
  /* NCCL */
  mp_nres_t (*ncclGetVersion)(int *version);
  mp_nres_t (*ncclGetUniqueId)(mp_ncclUniqueId *id);
  mp_nres_t (*ncclCommInitRankConfig)(mp_ncclComm_t *comm, int nranks, mp_ncclUniqueId id, int rank,
                                      mp_ncclConfig_t *config);
  mp_nres_t (*ncclCommGetAsyncError)(mp_ncclComm_t comm, mp_nres_t *async);
  mp_nres_t (*ncclCommAbort)(mp_ncclComm_t comm);
  mp_nres_t (*ncclCommDestroy)(mp_ncclComm_t comm);
  const char *(*ncclGetErrorString)(mp_nres_t result);
  mp_nres_t (*ncclGroupStart)(void);
  mp_nres_t (*ncclGroupEnd)(void);
  mp_nres_t (*ncclSend)(const void *buf, size_t count, int type, int peer, mp_ncclComm_t comm, cudaStream_t s);
  mp_nres_t (*ncclRecv)(void *buf, size_t count, int type, int peer, mp_ncclComm_t comm, cudaStream_t s);
  mp_nres_t (*ncclAllReduce)(const void *send, void *recv, size_t count, int type, int op, mp_ncclComm_t comm,
                             cudaStream_t s);
  /* cuSOLVERMp */
  cusolverStatus_t (*Create)(mp_solverHandle_t *h, int device, cudaStream_t s);
  cusolverStatus_t (*Destroy)(mp_solverHandle_t h);
  cusolverStatus_t (*GetVersion)(mp_solverHandle_t h, int *version);
  cusolverStatus_t (*CreateDeviceGrid)(mp_solverHandle_t h, mp_solverGrid_t *grid, mp_ncclComm_t comm,
                                       int32_t nprow, int32_t npcol, int mapping);
  cusolverStatus_t (*DestroyGrid)(mp_solverGrid_t grid);
  cusolverStatus_t (*CreateMatrixDesc)(mp_solverDesc_t *desc, mp_solverGrid_t grid, cudaDataType type, int64_t m,
                                       int64_t n, int64_t mb, int64_t nb, uint32_t rsrc, uint32_t csrc, int64_t lld);
  cusolverStatus_t (*DestroyMatrixDesc)(mp_solverDesc_t desc);
  cusolverStatus_t (*Potrf_bufferSize)(mp_solverHandle_t h, int uplo, int64_t n, const void *a, int64_t ia,
                                       int64_t ja, mp_solverDesc_t da, cudaDataType ct, size_t *dev, size_t *host);
  cusolverStatus_t (*Potrf)(mp_solverHandle_t h, int uplo, int64_t n, void *a, int64_t ia, int64_t ja,
                            mp_solverDesc_t da, cudaDataType ct, void *dwork, size_t dbytes, void *hwork,
                            size_t hbytes, int *dinfo);
  cusolverStatus_t (*Potrs_bufferSize)(mp_solverHandle_t h, int uplo, int64_t n, int64_t nrhs, const void *a,
                                       int64_t ia, int64_t ja, mp_solverDesc_t da, const void *b, int64_t ib,
                                       int64_t jb, mp_solverDesc_t db, cudaDataType ct, size_t *dev, size_t *host);
  cusolverStatus_t (*Potrs)(mp_solverHandle_t h, int uplo, int64_t n, int64_t nrhs, const void *a, int64_t ia,
                            int64_t ja, mp_solverDesc_t da, void *b, int64_t ib, int64_t jb, mp_solverDesc_t db,
                            cudaDataType ct, void *dwork, size_t dbytes, void *hwork, size_t hbytes, int *dinfo);
  cusolverStatus_t (*Syevd_bufferSize)(mp_solverHandle_t h, char *compz, int uplo, int64_t n, void *a, int64_t ia,
                                       int64_t ja, mp_solverDesc_t da, void *d, void *q, int64_t iq, int64_t jq,
                                       mp_solverDesc_t dq, cudaDataType ct, size_t *dev, size_t *host);
  cusolverStatus_t (*Syevd)(mp_solverHandle_t h, char *compz, int uplo, int64_t n, void *a, int64_t ia, int64_t ja,
                            mp_solverDesc_t da, void *d, void *q, int64_t iq, int64_t jq, mp_solverDesc_t dq,
                            cudaDataType ct, void *dwork, size_t dbytes, void *hwork, size_t hbytes, int *dinfo);
  /* LU: ipiv is this rank's part of the row pivots (global row indices,
   * distributed like A's rows: local rows + tile entries, ScaLAPACK's
   * rule), written by Getrf, read by Getrs */
  cusolverStatus_t (*Getrf_bufferSize)(mp_solverHandle_t h, int64_t m, int64_t n, void *a, int64_t ia, int64_t ja,
                                       mp_solverDesc_t da, int64_t *ipiv, cudaDataType ct, size_t *dev, size_t *host);
  cusolverStatus_t (*Getrf)(mp_solverHandle_t h, int64_t m, int64_t n, void *a, int64_t ia, int64_t ja,
                            mp_solverDesc_t da, int64_t *ipiv, cudaDataType ct, void *dwork, size_t dbytes,
                            void *hwork, size_t hbytes, int *dinfo);
  cusolverStatus_t (*Getrs_bufferSize)(mp_solverHandle_t h, int trans, int64_t n, int64_t nrhs, const void *a,
                                       int64_t ia, int64_t ja, mp_solverDesc_t da, const int64_t *ipiv, void *b,
                                       int64_t ib, int64_t jb, mp_solverDesc_t db, cudaDataType ct, size_t *dev,
                                       size_t *host);
  cusolverStatus_t (*Getrs)(mp_solverHandle_t h, int trans, int64_t n, int64_t nrhs, const void *a, int64_t ia,
                            int64_t ja, mp_solverDesc_t da, const int64_t *ipiv, void *b, int64_t ib, int64_t jb,
                            mp_solverDesc_t db, cudaDataType ct, void *dwork, size_t dbytes, void *hwork,
                            size_t hbytes, int *dinfo);
  /* QR (gels): Geqrf leaves R in A's upper triangle (the rank check reads
   * its diagonal) and tau distributed like A's columns; Gels solves
   * min ||A X - B|| with X in B's first n rows */
  cusolverStatus_t (*Geqrf_bufferSize)(mp_solverHandle_t h, int64_t m, int64_t n, const void *a, int64_t ia,
                                       int64_t ja, mp_solverDesc_t da, cudaDataType ct, size_t *dev, size_t *host);
  cusolverStatus_t (*Geqrf)(mp_solverHandle_t h, int64_t m, int64_t n, void *a, int64_t ia, int64_t ja,
                            mp_solverDesc_t da, void *tau, cudaDataType ct, void *dwork, size_t dbytes, void *hwork,
                            size_t hbytes, int *dinfo);
  /* Q^H C (side left, trans T or C) from Geqrf's reflectors: gels's
   * Q^H B, before R X = (Q^H B)(1:n) (gels.c) */
  cusolverStatus_t (*Ormqr_bufferSize)(mp_solverHandle_t h, int side, int trans, int64_t m, int64_t n, int64_t k,
                                       const void *a, int64_t ia, int64_t ja, mp_solverDesc_t da, const void *tau,
                                       void *c, int64_t ic, int64_t jc, mp_solverDesc_t dc, cudaDataType ct,
                                       size_t *dev, size_t *host);
  cusolverStatus_t (*Ormqr)(mp_solverHandle_t h, int side, int trans, int64_t m, int64_t n, int64_t k,
                            const void *a, int64_t ia, int64_t ja, mp_solverDesc_t da, const void *tau, void *c,
                            int64_t ic, int64_t jc, mp_solverDesc_t dc, cudaDataType ct, void *dwork, size_t dbytes,
                            void *hwork, size_t hbytes, int *dinfo);
  cusolverStatus_t (*Gels_bufferSize)(mp_solverHandle_t h, int trans, int64_t m, int64_t n, int64_t nrhs, void *a,
                                      int64_t ia, int64_t ja, mp_solverDesc_t da, void *b, int64_t ib, int64_t jb,
                                      mp_solverDesc_t db, cudaDataType ct, size_t *dev, size_t *host);
  cusolverStatus_t (*Gels)(mp_solverHandle_t h, int trans, int64_t m, int64_t n, int64_t nrhs, void *a, int64_t ia,
                           int64_t ja, mp_solverDesc_t da, void *b, int64_t ib, int64_t jb, mp_solverDesc_t db,
                           cudaDataType ct, void *dwork, size_t dbytes, void *hwork, size_t hbytes, int *dinfo);
  /* geqrf's explicit Q (qr.c): the first n columns (m >= n >= k) of the
   * product of Geqrf's k reflectors held in A's first k columns, tau
   * distributed like those columns, over A */
  cusolverStatus_t (*Orgqr_bufferSize)(mp_solverHandle_t h, int64_t m, int64_t n, int64_t k, const void *a,
                                       int64_t ia, int64_t ja, mp_solverDesc_t da, const void *tau, cudaDataType ct,
                                       size_t *dev, size_t *host);
  cusolverStatus_t (*Orgqr)(mp_solverHandle_t h, int64_t m, int64_t n, int64_t k, void *a, int64_t ia, int64_t ja,
                            mp_solverDesc_t da, const void *tau, cudaDataType ct, void *dwork, size_t dbytes,
                            void *hwork, size_t hbytes, int *dinfo);
  /* 0.9 only (NULL on 0.8): A = U S V^H (jobu / jobvt: cusolverEigMode_t;
   * S, min(m, n) reals, on every rank; U m x k or m x m, V^H k x n or
   * n x n by the descriptor's SHAPE; A destroyed) and A = U_p H (m >= n;
   * U_p over A, H n x n) */
  cusolverStatus_t (*GesvdDescriptorCreate)(mp_gesvdDesc_t *d);
  cusolverStatus_t (*GesvdDescriptorDestroy)(mp_gesvdDesc_t d);
  cusolverStatus_t (*GesvdDescriptorSetAttribute)(mp_gesvdDesc_t d, int attr, const void *buf, size_t bytes);
  cusolverStatus_t (*Gesvd_bufferSize)(mp_solverHandle_t h, mp_gesvdDesc_t gd, int jobu, int jobvt, int64_t m,
                                       int64_t n, const void *a, int64_t ia, int64_t ja, mp_solverDesc_t da,
                                       const void *s, const void *u, int64_t iu, int64_t ju, mp_solverDesc_t du,
                                       const void *vt, int64_t ivt, int64_t jvt, mp_solverDesc_t dvt,
                                       cudaDataType ct, size_t *dev, size_t *host);
  cusolverStatus_t (*Gesvd)(mp_solverHandle_t h, mp_gesvdDesc_t gd, int jobu, int jobvt, int64_t m, int64_t n,
                            void *a, int64_t ia, int64_t ja, mp_solverDesc_t da, void *s, void *u, int64_t iu,
                            int64_t ju, mp_solverDesc_t du, void *vt, int64_t ivt, int64_t jvt, mp_solverDesc_t dvt,
                            cudaDataType ct, void *dwork, size_t dbytes, void *hwork, size_t hbytes, int *dinfo);
  cusolverStatus_t (*PolarDescriptorCreate)(mp_polarDesc_t *d);
  cusolverStatus_t (*PolarDescriptorDestroy)(mp_polarDesc_t d);
  cusolverStatus_t (*Polar_bufferSize)(mp_solverHandle_t h, mp_polarDesc_t pd, int uplo, int64_t m, int64_t n,
                                       const void *a, int64_t ia, int64_t ja, mp_solverDesc_t da, const void *hm,
                                       int64_t ih, int64_t jh, mp_solverDesc_t dh, cudaDataType ct, size_t *dev,
                                       size_t *host);
  cusolverStatus_t (*Polar)(mp_solverHandle_t h, mp_polarDesc_t pd, int uplo, int64_t m, int64_t n, void *a,
                            int64_t ia, int64_t ja, mp_solverDesc_t da, void *hm, int64_t ih, int64_t jh,
                            mp_solverDesc_t dh, cudaDataType ct, void *dwork, size_t dbytes, void *hwork,
                            size_t hbytes, int *dinfo);
} mp_api_t;

/* Symbol names, in mp_api_t's order: NCCL's then cuSOLVERMp's. */
#define MP_NCCL_SYMBOLS                                                                                     \
  "ncclGetVersion", "ncclGetUniqueId", "ncclCommInitRankConfig", "ncclCommGetAsyncError", "ncclCommAbort", \
      "ncclCommDestroy", "ncclGetErrorString", "ncclGroupStart", "ncclGroupEnd", "ncclSend", "ncclRecv",    \
      "ncclAllReduce"
#define MP_SOLVER_SYMBOLS                                                                                  \
  "cusolverMpCreate", "cusolverMpDestroy", "cusolverMpGetVersion", "cusolverMpCreateDeviceGrid",           \
      "cusolverMpDestroyGrid", "cusolverMpCreateMatrixDesc", "cusolverMpDestroyMatrixDesc",                \
      "cusolverMpPotrf_bufferSize", "cusolverMpPotrf", "cusolverMpPotrs_bufferSize", "cusolverMpPotrs",    \
      "cusolverMpSyevd_bufferSize", "cusolverMpSyevd", "cusolverMpGetrf_bufferSize", "cusolverMpGetrf",     \
      "cusolverMpGetrs_bufferSize", "cusolverMpGetrs", "cusolverMpGeqrf_bufferSize", "cusolverMpGeqrf",      \
      "cusolverMpOrmqr_bufferSize", "cusolverMpOrmqr", "cusolverMpGels_bufferSize", "cusolverMpGels",      \
      "cusolverMpOrgqr_bufferSize", "cusolverMpOrgqr"
/* 0.9's, from GesvdDescriptorCreate on (libs.c: optional on 0.8) */
#define MP_SOLVER091_SYMBOLS                                                                                \
  "cusolverMpGesvdDescriptorCreate", "cusolverMpGesvdDescriptorDestroy",                                   \
      "cusolverMpGesvdDescriptorSetAttribute", "cusolverMpGesvd_bufferSize", "cusolverMpGesvd",            \
      "cusolverMpPolarDescriptorCreate", "cusolverMpPolarDescriptorDestroy", "cusolverMpPolar_bufferSize", \
      "cusolverMpPolar"
#define MP_N_NCCL_SYMBOLS 12
#define MP_N_SOLVER_SYMBOLS 25
#define MP_N_SOLVER091_SYMBOLS 9

#endif
