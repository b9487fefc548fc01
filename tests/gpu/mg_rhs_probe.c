/*
 * tests/gpu/mg_rhs_probe.c - does cuSolverMg still solve wrongly past 2048
 * right-hand-side columns?  (The reason for CMG_RHS_PANEL in
 * providers/cusolvermg/cusolvermg.c.)
 *
 *   mg-rhs-probe [N [NGPU [TILE]]]        defaults: 4096 2 256
 *
 * Builds a random SPD matrix on the host (f64, entries in [-1, 1], n added
 * to the diagonal), takes cusolverDn potrf + potri on GPU 0 as the
 * reference inverse, then on GPUs 0..NGPU-1 with cuSolverMg (1-D
 * column-cyclic, tile TILE, B on GPU 0 as the provider keeps it):
 *   potri        cusolverMgPotri (lower triangle)
 *   potrs-all    one cusolverMgPotrs with all N identity columns
 *   potrs-2048   cusolverMgPotrs in panels of 2048 identity columns
 * and prints, for each, the largest error in the lower triangle relative to
 * the reference's largest entry and the first wrong column.  Measured
 * 2026-11-21 (CUDA 13.0, 2 x H200): potri and potrs-all wrong from column
 * 2048 on (relative errors 1e-7 .. 1e-4), potrs-2048 exact; on 1 GPU all
 * exact.  Exit 0 when it ran (whatever it found), 1 when a call failed.
 */
#include <cuda_runtime.h>
#include <cusolverDn.h>
#include <cusolverMg.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "muster/layout.h" /* static inline arithmetic only: nothing of muster is linked */

#define PANEL 2048

#define CK(x)                                                                   \
  do {                                                                          \
    int e_ = (int)(x);                                                          \
    if (e_) {                                                                   \
      fprintf(stderr, "mg-rhs-probe: %s failed (%d) at line %d\n", #x, e_, __LINE__); \
      exit(1);                                                                  \
    }                                                                           \
  } while (0)

typedef struct probe {
  int n, G, T;
  muster_layout_geom_t L;
  cusolverMgHandle_t h;
  cudaLibMgGrid_t grid;
  cudaLibMgMatrixDesc_t desc;
  void *mats[16], *ws[16];
  int64_t lwork;
} probe_t;

/* GPU and local column of global column j in cuSolverMg's layout. */
static int owner(const probe_t *p, int j, int *lc) {
  int g;
  int64_t l;
  muster_layout_cyclic_owner(&p->L, j, &g, &l);
  *lc = (int)l;
  return g;
}

/* A (host, column-major n x n) into cuSolverMg's layout, freshly. */
static void upload(probe_t *p, const double *A) {
  double *h = malloc((size_t)p->n * p->L.local_cols * 8);
  for (int g = 0; g < p->G; g++) {
    memset(h, 0, (size_t)p->n * p->L.local_cols * 8);
    for (int j = 0, lc; j < p->n; j++)
      if (owner(p, j, &lc) == g) memcpy(h + (size_t)lc * p->n, A + (size_t)j * p->n, (size_t)p->n * 8);
    CK(cudaSetDevice(g));
    CK(cudaMemcpy(p->mats[g], h, (size_t)p->n * p->L.local_cols * 8, cudaMemcpyHostToDevice));
  }
  free(h);
}

static void sync_all(const probe_t *p) {
  for (int g = 0; g < p->G; g++) {
    CK(cudaSetDevice(g));
    CK(cudaDeviceSynchronize());
  }
  CK(cudaSetDevice(0));
}

static void factor(probe_t *p, const double *A) {
  int info = 0;
  upload(p, A);
  CK(cudaSetDevice(0));
  CK(cusolverMgPotrf(p->h, CUBLAS_FILL_MODE_LOWER, p->n, p->mats, 1, 1, p->desc, CUDA_R_64F, p->ws, p->lwork, &info));
  sync_all(p);
  CK(info);
}

/* Lower triangle of X against R: largest error / largest |R|, first bad column. */
static void report(const char *what, int n, const double *X, const double *R) {
  double emax = 0, rmax = 0;
  int first = -1;
  for (int j = 0; j < n; j++)
    for (int i = j; i < n; i++) {
      double r = R[(size_t)j * n + i], e = fabs(X[(size_t)j * n + i] - r);
      if (fabs(r) > rmax) rmax = fabs(r);
      if (e > emax) emax = e;
      if (first < 0 && e > 1e-12 * fabs(R[(size_t)j * n + j])) first = j;
    }
  printf("  %-11s relative error %.2e  %s", what, emax / rmax, first < 0 ? "exact" : "WRONG");
  if (first >= 0) printf(" from column %d", first);
  printf("\n");
}

/* X = A^-1 by cusolverMgPotrs on identity panels of width W (B on GPU 0). */
static void solve_panels(probe_t *p, int W, double *X) {
  int n = p->n, info = 0;
  double *panel = NULL, *ones = malloc((size_t)W * 8);
  void *bp[16];
  int64_t lw = 0;
  for (int k = 0; k < W; k++) ones[k] = 1.0;
  CK(cudaSetDevice(0));
  CK(cudaMalloc((void **)&panel, (size_t)n * W * 8));
  for (int g = 0; g < p->G; g++) bp[g] = panel;
  for (int c0 = 0; c0 < n; c0 += W) {
    int w = n - c0 < W ? n - c0 : W;
    cudaLibMgMatrixDesc_t dB;
    CK(cusolverMgCreateMatrixDesc(&dB, n, w, n, w, CUDA_R_64F, p->grid));
    CK(cusolverMgPotrs_bufferSize(p->h, CUBLAS_FILL_MODE_LOWER, n, w, p->mats, 1, 1, p->desc, bp, 1, 1, dB,
                                  CUDA_R_64F, &lw));
    if (lw > p->lwork) {
      fprintf(stderr, "mg-rhs-probe: potrs wants %lld workspace elements, have %lld\n", (long long)lw,
              (long long)p->lwork);
      exit(1);
    }
    CK(cudaMemset(panel, 0, (size_t)n * w * 8));
    CK(cudaMemcpy2D(panel + c0, (size_t)(n + 1) * 8, ones, 8, 8, w, cudaMemcpyHostToDevice));
    CK(cusolverMgPotrs(p->h, CUBLAS_FILL_MODE_LOWER, n, w, p->mats, 1, 1, p->desc, bp, 1, 1, dB, CUDA_R_64F, p->ws,
                       p->lwork, &info));
    sync_all(p);
    CK(info);
    CK(cudaMemcpy(X + (size_t)c0 * n, panel, (size_t)n * w * 8, cudaMemcpyDeviceToHost));
    CK(cusolverMgDestroyMatrixDesc(dB));
  }
  CK(cudaFree(panel));
  free(ones);
}

int main(int argc, char **argv) {
  probe_t p;
  memset(&p, 0, sizeof p);
  p.n = argc > 1 ? atoi(argv[1]) : 4096;
  p.G = argc > 2 ? atoi(argv[2]) : 2;
  p.T = argc > 3 ? atoi(argv[3]) : 256;
  int n = p.n, ndev = 0, info = 0, ids[16];
  CK(cudaGetDeviceCount(&ndev));
  if (n < 1 || p.T < 1 || p.G < 1 || p.G > 16 || p.G > ndev || muster_layout_geom_init(&p.L, n, p.T, p.G) != 0) {
    fprintf(stderr, "usage: mg-rhs-probe [N [NGPU (<= %d here) [TILE]]]\n", ndev);
    return 2;
  }
  size_t nn = (size_t)n * n;
  double *A = malloc(nn * 8), *R = malloc(nn * 8), *X = malloc(nn * 8);
  srand(7);
  for (int j = 0; j < n; j++)
    for (int i = j; i < n; i++) {
      double v = 2.0 * rand() / RAND_MAX - 1.0 + (i == j ? n : 0);
      A[(size_t)j * n + i] = A[(size_t)i * n + j] = v;
    }

  /* reference: cusolverDn on GPU 0 */
  cusolverDnHandle_t dn;
  double *dA = NULL, *dw = NULL;
  int *dinfo = NULL, l1 = 0, l2 = 0;
  CK(cudaSetDevice(0));
  CK(cusolverDnCreate(&dn));
  CK(cudaMalloc((void **)&dA, nn * 8));
  CK(cudaMalloc((void **)&dinfo, sizeof(int)));
  CK(cudaMemcpy(dA, A, nn * 8, cudaMemcpyHostToDevice));
  CK(cusolverDnDpotrf_bufferSize(dn, CUBLAS_FILL_MODE_LOWER, n, dA, n, &l1));
  CK(cusolverDnDpotri_bufferSize(dn, CUBLAS_FILL_MODE_LOWER, n, dA, n, &l2));
  CK(cudaMalloc((void **)&dw, (size_t)(l1 > l2 ? l1 : l2) * 8));
  CK(cusolverDnDpotrf(dn, CUBLAS_FILL_MODE_LOWER, n, dA, n, dw, l1 > l2 ? l1 : l2, dinfo));
  CK(cusolverDnDpotri(dn, CUBLAS_FILL_MODE_LOWER, n, dA, n, dw, l1 > l2 ? l1 : l2, dinfo));
  CK(cudaMemcpy(&info, dinfo, sizeof info, cudaMemcpyDeviceToHost));
  CK(info);
  CK(cudaMemcpy(R, dA, nn * 8, cudaMemcpyDeviceToHost));
  CK(cudaFree(dA));
  CK(cudaFree(dw));
  CK(cudaFree(dinfo));
  CK(cusolverDnDestroy(dn));

  /* cuSolverMg set-up: one workspace large enough for every call below */
  for (int g = 0; g < p.G; g++) ids[g] = g;
  CK(cusolverMgCreate(&p.h));
  CK(cusolverMgDeviceSelect(p.h, p.G, ids));
  CK(cusolverMgCreateDeviceGrid(&p.grid, 1, p.G, ids, CUDALIBMG_GRID_MAPPING_COL_MAJOR));
  CK(cusolverMgCreateMatrixDesc(&p.desc, n, n, n, p.T, CUDA_R_64F, p.grid));
  for (int g = 0; g < p.G; g++) {
    CK(cudaSetDevice(g));
    CK(cudaMalloc(&p.mats[g], (size_t)n * p.L.local_cols * 8));
  }
  int64_t lf = 0, li = 0, ls = 0;
  void *bp[16];
  cudaLibMgMatrixDesc_t dAll;
  CK(cusolverMgCreateMatrixDesc(&dAll, n, n, n, n, CUDA_R_64F, p.grid));
  for (int g = 0; g < p.G; g++) bp[g] = p.mats[0]; /* only for the size query */
  CK(cusolverMgPotrf_bufferSize(p.h, CUBLAS_FILL_MODE_LOWER, n, p.mats, 1, 1, p.desc, CUDA_R_64F, &lf));
  CK(cusolverMgPotri_bufferSize(p.h, CUBLAS_FILL_MODE_LOWER, n, p.mats, 1, 1, p.desc, CUDA_R_64F, &li));
  CK(cusolverMgPotrs_bufferSize(p.h, CUBLAS_FILL_MODE_LOWER, n, n, p.mats, 1, 1, p.desc, bp, 1, 1, dAll, CUDA_R_64F,
                                &ls));
  CK(cusolverMgDestroyMatrixDesc(dAll));
  p.lwork = lf > li ? lf : li;
  if (ls > p.lwork) p.lwork = ls;
  for (int g = 0; g < p.G; g++) {
    CK(cudaSetDevice(g));
    CK(cudaMalloc(&p.ws[g], (size_t)p.lwork * 8));
  }
  printf("mg-rhs-probe: n=%d, %d GPU(s), tile %d, f64, against cusolverDn potrf+potri on GPU 0\n", n, p.G, p.T);

  factor(&p, A); /* potri, lower triangle, read back in column order */
  CK(cusolverMgPotri(p.h, CUBLAS_FILL_MODE_LOWER, n, p.mats, 1, 1, p.desc, CUDA_R_64F, p.ws, p.lwork, &info));
  sync_all(&p);
  CK(info);
  for (int j = 0, lc; j < n; j++) {
    int g = owner(&p, j, &lc);
    CK(cudaMemcpy(X + (size_t)j * n, (double *)p.mats[g] + (size_t)lc * n, (size_t)n * 8, cudaMemcpyDeviceToHost));
  }
  report("potri", n, X, R);

  factor(&p, A);
  solve_panels(&p, n, X);
  report("potrs-all", n, X, R);

  factor(&p, A);
  solve_panels(&p, PANEL, X);
  report("potrs-2048", n, X, R);
  return 0;
}
