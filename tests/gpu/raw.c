/* tests/gpu/raw.c - raw cuSolverMg / cusolverDn baselines (see raw.h). */
#include <cuda_runtime_api.h>
#include <cusolverDn.h>
#include <cusolverMg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gpu_util.h"
#include "muster.h"
#include "raw.h"

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

double raw_median(double *v, int n) {
  if (n <= 0) return 0;
  qsort(v, (size_t)n, sizeof *v, cmp_d);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static cudaDataType ctype(int dt) {
  return dt == 1 ? CUDA_R_32F : dt == 2 ? CUDA_R_64F : dt == 3 ? CUDA_C_32F : CUDA_C_64F;
}
static cudaDataType rtype(int dt) { return (dt == 1 || dt == 3) ? CUDA_R_32F : CUDA_R_64F; }

#define CU(x)                                                                                  \
  do {                                                                                         \
    cudaError_t s_ = (x);                                                                      \
    if (s_ != cudaSuccess) {                                                                   \
      snprintf(r->err, sizeof r->err, "%s:%d %s: %s", __FILE__, __LINE__, #x, cudaGetErrorName(s_)); \
      rc = -1;                                                                                 \
      goto out;                                                                                \
    }                                                                                          \
  } while (0)
#define SO(x)                                                                                  \
  do {                                                                                         \
    cusolverStatus_t s_ = (x);                                                                 \
    if (s_ != CUSOLVER_STATUS_SUCCESS) {                                                       \
      snprintf(r->err, sizeof r->err, "%s:%d %s: status %d", __FILE__, __LINE__, #x, (int)s_);    \
      rc = -1;                                                                                 \
      goto out;                                                                                \
    }                                                                                          \
  } while (0)

static int sync_all(int ngpu) {
  for (int d = 0; d < ngpu; d++) {
    if (cudaSetDevice(d) != cudaSuccess || cudaDeviceSynchronize() != cudaSuccess) return -1;
  }
  return 0;
}

int raw_mg(raw_run_t *r) {
  int rc = 0, G = r->ngpu, ids[16], info = 0;
  int64_t n = r->n, T = r->tile, lwork = 0, lw2 = 0;
  size_t esz = gu_esz(r->dtype);
  int64_t ntiles = (n + T - 1) / T, local_cols = ((ntiles + G - 1) / G) * T;
  void *A[16] = {0}, *B[16] = {0}, *W[16] = {0}, *b0 = NULL, *hw = NULL;
  double *times = calloc((size_t)r->reps, sizeof(double)), *ftimes = calloc((size_t)r->reps, sizeof(double));
  cusolverMgHandle_t h = NULL;
  cudaLibMgGrid_t grid = NULL;
  cudaLibMgMatrixDesc_t dA = NULL, dB = NULL;
  cudaDataType t = ctype(r->dtype);
  double shift = r->routine == 3 ? 0.0 : (double)n;
  r->err[0] = '\0';
  for (int d = 0; d < G; d++) ids[d] = d;
  for (int d = 0; d < G; d++)
    for (int e = 0; e < G; e++)
      if (d != e) {
        int can = 0;
        cudaDeviceCanAccessPeer(&can, d, e);
        if (can) {
          cudaSetDevice(d);
          if (cudaDeviceEnablePeerAccess(e, 0) != cudaSuccess) cudaGetLastError();
        }
      }
  CU(cudaSetDevice(0));
  SO(cusolverMgCreate(&h));
  SO(cusolverMgDeviceSelect(h, G, ids));
  SO(cusolverMgCreateDeviceGrid(&grid, 1, G, ids, CUDALIBMG_GRID_MAPPING_COL_MAJOR));
  SO(cusolverMgCreateMatrixDesc(&dA, n, n, n, T, t, grid));
  SO(cusolverMgCreateMatrixDesc(&dB, n, r->nrhs, n, T, t, grid));
  for (int d = 0; d < G; d++) {
    CU(cudaSetDevice(d));
    CU(cudaMalloc(&A[d], (size_t)(n * local_cols) * esz));
    CU(cudaMalloc(&B[d], (size_t)(n * (r->nrhs > T ? r->nrhs : T)) * esz));
  }
  CU(cudaSetDevice(0));
  CU(cudaMalloc(&b0, (size_t)(n * r->nrhs) * esz));
  CU(cudaMallocHost(&hw, (size_t)n * 8));
  /* workspace: the largest the routine's calls ask for */
  if (r->routine == 3) {
    SO(cusolverMgSyevd_bufferSize(h, CUSOLVER_EIG_MODE_VECTOR, CUBLAS_FILL_MODE_LOWER, (int)n, A, 1, 1, dA, hw,
                                  rtype(r->dtype), t, &lwork));
  } else {
    SO(cusolverMgPotrf_bufferSize(h, CUBLAS_FILL_MODE_LOWER, (int)n, A, 1, 1, dA, t, &lwork));
    if (r->routine == 1)
      SO(cusolverMgPotrs_bufferSize(h, CUBLAS_FILL_MODE_LOWER, (int)n, (int)r->nrhs, A, 1, 1, dA, B, 1, 1, dB, t, &lw2));
    else
      SO(cusolverMgPotri_bufferSize(h, CUBLAS_FILL_MODE_LOWER, (int)n, A, 1, 1, dA, t, &lw2));
    if (lw2 > lwork) lwork = lw2;
  }
  for (int d = 0; d < G; d++) {
    CU(cudaSetDevice(d));
    CU(cudaMalloc(&W[d], (size_t)(lwork > 0 ? lwork : 1) * esz));
  }
  for (int rep = 0; rep < r->reps; rep++) {
    uint64_t seed = r->seed + (uint64_t)rep;
    for (int d = 0; d < G; d++) {
      gu_cols_t cols = {1, G, d, 0, T};
      CU(cudaSetDevice(d));
      CU(gu_fill_matrix(r->dtype, A[d], n, n, local_cols, cols, seed, shift, 0));
    }
    CU(cudaSetDevice(0));
    CU(gu_fill_vectors(r->dtype, B[0], n, n, r->nrhs, seed + 1, 0));
    CU(gu_fill_vectors(r->dtype, b0, n, n, r->nrhs, seed + 1, 0));
    if (sync_all(G)) CU(cudaErrorUnknown);
    CU(cudaSetDevice(0));
    double t0 = now_s(), t1 = t0;
    if (r->routine == 3) {
      SO(cusolverMgSyevd(h, CUSOLVER_EIG_MODE_VECTOR, CUBLAS_FILL_MODE_LOWER, (int)n, A, 1, 1, dA, hw,
                         rtype(r->dtype), t, W, lwork, &info));
    } else {
      SO(cusolverMgPotrf(h, CUBLAS_FILL_MODE_LOWER, (int)n, A, 1, 1, dA, t, W, lwork, &info));
      if (sync_all(G)) CU(cudaErrorUnknown);
      t1 = now_s();
      CU(cudaSetDevice(0));
      if (info == 0 && r->routine == 1)
        SO(cusolverMgPotrs(h, CUBLAS_FILL_MODE_LOWER, (int)n, (int)r->nrhs, A, 1, 1, dA, B, 1, 1, dB, t, W, lwork,
                           &info));
      else if (info == 0)
        SO(cusolverMgPotri(h, CUBLAS_FILL_MODE_LOWER, (int)n, A, 1, 1, dA, t, W, lwork, &info));
    }
    if (sync_all(G)) CU(cudaErrorUnknown);
    times[rep] = now_s() - t0;
    ftimes[rep] = t1 - t0;
    r->info = info;
    if (info != 0) break;
    if ((r->routine == 1 || r->routine == MUSTER_GETRS) && rep == r->reps - 1) { /* same A: AX - B */
      double o[3];
      CU(cudaSetDevice(0));
      CU(gu_check_potrs(r->dtype, n, r->nrhs, B[0], n, b0, n, seed, shift, o));
      r->resid = o[0] / (o[2] * o[1] * (double)n * gu_eps(r->dtype));
    }
  }
  r->t_min = times[0];
  for (int k = 1; k < r->reps; k++)
    if (times[k] < r->t_min) r->t_min = times[k];
  r->t_med = raw_median(times, r->reps);
  r->t_fact_med = raw_median(ftimes, r->reps);
out:
  for (int d = 0; d < G; d++) {
    cudaSetDevice(d);
    cudaFree(A[d]);
    cudaFree(B[d]);
    cudaFree(W[d]);
  }
  cudaSetDevice(0);
  cudaFree(b0);
  if (hw) cudaFreeHost(hw);
  if (dA) cusolverMgDestroyMatrixDesc(dA);
  if (dB) cusolverMgDestroyMatrixDesc(dB);
  if (grid) cusolverMgDestroyGrid(grid);
  if (h) cusolverMgDestroy(h);
  free(times);
  free(ftimes);
  return rc;
}

static cusolverStatus_t dn_potri(cusolverDnHandle_t h, int dt, int n, void *A, void *work, int lwork, int *dinfo) {
  switch (dt) {
  case 1: return cusolverDnSpotri(h, CUBLAS_FILL_MODE_LOWER, n, A, n, work, lwork, dinfo);
  case 2: return cusolverDnDpotri(h, CUBLAS_FILL_MODE_LOWER, n, A, n, work, lwork, dinfo);
  case 3: return cusolverDnCpotri(h, CUBLAS_FILL_MODE_LOWER, n, A, n, work, lwork, dinfo);
  default: return cusolverDnZpotri(h, CUBLAS_FILL_MODE_LOWER, n, A, n, work, lwork, dinfo);
  }
}

static cusolverStatus_t dn_potri_size(cusolverDnHandle_t h, int dt, int n, void *A, int *lwork) {
  switch (dt) {
  case 1: return cusolverDnSpotri_bufferSize(h, CUBLAS_FILL_MODE_LOWER, n, A, n, lwork);
  case 2: return cusolverDnDpotri_bufferSize(h, CUBLAS_FILL_MODE_LOWER, n, A, n, lwork);
  case 3: return cusolverDnCpotri_bufferSize(h, CUBLAS_FILL_MODE_LOWER, n, A, n, lwork);
  default: return cusolverDnZpotri_bufferSize(h, CUBLAS_FILL_MODE_LOWER, n, A, n, lwork);
  }
}

int raw_dn(raw_run_t *r) {
  int rc = 0, info = 0;
  int64_t n = r->n;
  size_t esz = gu_esz(r->dtype), dws = 0, hws = 0, dws2 = 0, hws2 = 0;
  void *A = NULL, *B = NULL, *b0 = NULL, *W = NULL, *dwork = NULL, *hwork = NULL;
  int *dinfo = NULL;
  int64_t *ipiv = NULL;
  double *times = calloc((size_t)r->reps, sizeof(double)), *ftimes = calloc((size_t)r->reps, sizeof(double));
  cusolverDnHandle_t h = NULL;
  cusolverDnParams_t p = NULL;
  cudaDataType t = ctype(r->dtype);
  double shift = r->routine == 3 ? 0.0 : (double)n;
  gu_cols_t cols = {0, 1, 0, 0, 0};
  r->err[0] = '\0';
  CU(cudaSetDevice(0));
  SO(cusolverDnCreate(&h));
  SO(cusolverDnCreateParams(&p));
  CU(cudaMalloc(&A, (size_t)(n * n) * esz));
  CU(cudaMalloc(&B, (size_t)(n * r->nrhs) * esz));
  CU(cudaMalloc(&b0, (size_t)(n * r->nrhs) * esz));
  CU(cudaMalloc(&W, (size_t)n * 8));
  CU(cudaMalloc((void **)&dinfo, sizeof(int)));
  if (r->routine == 3) {
    SO(cusolverDnXsyevd_bufferSize(h, p, CUSOLVER_EIG_MODE_VECTOR, CUBLAS_FILL_MODE_LOWER, n, t, A, n, rtype(r->dtype),
                                   W, t, &dws, &hws));
  } else if (r->routine == MUSTER_GETRS) {
    CU(cudaMalloc((void **)&ipiv, (size_t)n * sizeof *ipiv));
    SO(cusolverDnXgetrf_bufferSize(h, p, n, n, t, A, n, t, &dws, &hws));
  } else {
    SO(cusolverDnXpotrf_bufferSize(h, p, CUBLAS_FILL_MODE_LOWER, n, t, A, n, t, &dws, &hws));
    if (r->routine == 2) {
      int lw = 0;
      SO(dn_potri_size(h, r->dtype, (int)n, A, &lw));
      dws2 = (size_t)lw * esz;
      if (dws2 > dws) dws = dws2;
    }
  }
  (void)hws2;
  CU(cudaMalloc(&dwork, dws ? dws : 1));
  hwork = malloc(hws ? hws : 1);
  for (int rep = 0; rep < r->reps; rep++) {
    uint64_t seed = r->seed + (uint64_t)rep;
    CU(gu_fill_matrix(r->dtype, A, n, n, n, cols, seed, shift, 0));
    CU(gu_fill_vectors(r->dtype, B, n, n, r->nrhs, seed + 1, 0));
    CU(gu_fill_vectors(r->dtype, b0, n, n, r->nrhs, seed + 1, 0));
    CU(cudaDeviceSynchronize());
    double t0 = now_s(), t1 = t0;
    if (r->routine == 3) {
      SO(cusolverDnXsyevd(h, p, CUSOLVER_EIG_MODE_VECTOR, CUBLAS_FILL_MODE_LOWER, n, t, A, n, rtype(r->dtype), W, t,
                          dwork, dws, hwork, hws, dinfo));
    } else if (r->routine == MUSTER_GETRS) {
      SO(cusolverDnXgetrf(h, p, n, n, t, A, n, ipiv, t, dwork, dws, hwork, hws, dinfo));
      CU(cudaDeviceSynchronize());
      t1 = now_s();
      SO(cusolverDnXgetrs(h, p, CUBLAS_OP_N, n, r->nrhs, t, A, n, ipiv, t, B, n, dinfo));
    } else {
      SO(cusolverDnXpotrf(h, p, CUBLAS_FILL_MODE_LOWER, n, t, A, n, t, dwork, dws, hwork, hws, dinfo));
      CU(cudaDeviceSynchronize());
      t1 = now_s();
      if (r->routine == 1)
        SO(cusolverDnXpotrs(h, p, CUBLAS_FILL_MODE_LOWER, n, r->nrhs, t, A, n, t, B, n, dinfo));
      else
        SO(dn_potri(h, r->dtype, (int)n, A, dwork, (int)(dws / esz), dinfo));
    }
    CU(cudaDeviceSynchronize());
    times[rep] = now_s() - t0;
    ftimes[rep] = t1 - t0;
    CU(cudaMemcpy(&info, dinfo, sizeof info, cudaMemcpyDeviceToHost));
    r->info = info;
    if (info != 0) break;
    if ((r->routine == 1 || r->routine == MUSTER_GETRS) && rep == r->reps - 1) { /* same A: AX - B */
      double o[3];
      CU(gu_check_potrs(r->dtype, n, r->nrhs, B, n, b0, n, seed, shift, o));
      r->resid = o[0] / (o[2] * o[1] * (double)n * gu_eps(r->dtype));
    }
  }
  r->t_min = times[0];
  for (int k = 1; k < r->reps; k++)
    if (times[k] < r->t_min) r->t_min = times[k];
  r->t_med = raw_median(times, r->reps);
  r->t_fact_med = raw_median(ftimes, r->reps);
out:
  cudaFree(A);
  cudaFree(B);
  cudaFree(b0);
  cudaFree(W);
  cudaFree(dinfo);
  cudaFree(ipiv);
  cudaFree(dwork);
  free(hwork);
  if (p) cusolverDnDestroyParams(p);
  if (h) cusolverDnDestroy(h);
  free(times);
  free(ftimes);
  return rc;
}

int raw_parse_names(const char *routine, const char *dtype, raw_run_t *r) {
  muster_routine_t rt;
  muster_dtype_t dt;
  if (muster_routine_from_name(routine, &rt) < 0 || muster_dtype_from_name(dtype, &dt) < 0) return -1;
  r->routine = (int)rt;
  r->dtype = (int)dt;
  return 0;
}
