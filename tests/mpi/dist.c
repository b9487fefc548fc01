/*
 * tests/mpi/dist.c - "dist": 2-D block-cyclic pieces through
 * muster_solve_comm_dist into the scalapack provider (which redistributes
 * from the caller's dist to its own grid with pXgemr2d): every P x Q grid
 * of this job's ranks, with one block per process (a framework's 2-D mesh:
 * mb = ceil(n/P), nb = ceil(n/Q)) and with small blocks (7 x 5, several
 * per process), n = 37 and 100, f64.  potrs: the residual of X on every
 * rank; syevd: W ascending and the same everywhere, V assembled from every
 * rank's piece (MPI_Allreduce of the pieces at their global places) with
 * |A V - V diag(W)| and |V^T V - I| under DRV_TOL * n * eps.
 */
#include <float.h>
#include <math.h>
#include "mpi/driver.h"

/* The same SPD A (n x n, column-major) and B (n x 2) on every rank. */
static void make_input(uint64_t seed, int64_t n, double *A, double *B) {
  unsigned short xs[3] = {(unsigned short)seed, (unsigned short)(seed >> 16), (unsigned short)(seed >> 32)};
  double *M = malloc(sizeof *M * (size_t)(n * n));
  ASSERT(M);
  for (int64_t i = 0; i < n * n; i++) M[i] = erand48(xs) - 0.5;
  for (int64_t j = 0; j < n; j++)
    for (int64_t i = 0; i < n; i++) {
      double s = i == j ? (double)n : 0;
      for (int64_t k = 0; k < n; k++) s += M[k * n + i] * M[k * n + j];
      A[j * n + i] = s;
    }
  for (int64_t i = 0; i < 2 * n; i++) B[i] = erand48(xs) - 0.5;
  free(M);
}

/* Global index of local index l of grid line p of np lines, blocks of b. */
static int64_t global_of(int64_t l, int64_t b, int p, int np) { return (l / b * np + p) * b + l % b; }

/* This rank's piece of A (lld = its rows), or with `back` the piece added
 * into the n x n G at its global places. */
static void piece(const muster_dist_t *g, double *A, double *p, int back) {
  int64_t rows = muster_layout_numroc(g->m, g->mb, g->myrow, g->nprow);
  int64_t cols = muster_layout_numroc(g->n, g->nb, g->mycol, g->npcol);
  for (int64_t lj = 0; lj < cols; lj++)
    for (int64_t li = 0; li < rows; li++) {
      int64_t gi = global_of(li, g->mb, g->myrow, g->nprow), gj = global_of(lj, g->nb, g->mycol, g->npcol);
      if (back) A[gj * g->n + gi] += p[lj * g->lld + li];
      else p[lj * g->lld + li] = A[gj * g->n + gi];
    }
}

static double frob(const double *x, int64_t k) {
  double s = 0;
  for (int64_t i = 0; i < k; i++) s += x[i] * x[i];
  return sqrt(s);
}

/* max over columns c of |A x_c - b_c| / (|A| |x_c| n eps), B in b0 */
static double solve_residual(const double *A, const double *X, const double *B, int64_t n) {
  double worst = 0, na = frob(A, n * n);
  for (int64_t c = 0; c < 2; c++) {
    double r = 0;
    for (int64_t i = 0; i < n; i++) {
      double s = -B[c * n + i];
      for (int64_t k = 0; k < n; k++) s += A[k * n + i] * X[c * n + k];
      r += s * s;
    }
    worst = fmax(worst, sqrt(r) / (na * frob(X + c * n, n) * n * DBL_EPSILON));
  }
  return worst;
}

/* |A V - V W| / (|A| n eps) and |V^T V - I| / (n eps), the larger. */
static double eig_residual(const double *A, const double *V, const double *W, int64_t n) {
  double r = 0, o = 0;
  for (int64_t j = 0; j < n; j++)
    for (int64_t i = 0; i < n; i++) {
      double s = -V[j * n + i] * W[j], t = i == j ? -1.0 : 0.0;
      for (int64_t k = 0; k < n; k++) s += A[k * n + i] * V[j * n + k], t += V[i * n + k] * V[j * n + k];
      r += s * s;
      o += t * t;
    }
  return fmax(sqrt(r) / (frob(A, n * n) * n * DBL_EPSILON), sqrt(o) / (n * DBL_EPSILON));
}

static void one_case(drv_t *d, int P, int Q, int64_t mb, int64_t nb, int64_t n, uint64_t seed) {
  double *A = malloc(sizeof *A * (size_t)(n * n)), *B = malloc(sizeof *B * (size_t)(2 * n));
  double *X = malloc(sizeof *X * (size_t)(2 * n)), *V = calloc((size_t)(n * n), sizeof *V), *W = calloc((size_t)n, 8);
  ASSERT(A && B && X && V && W);
  make_input(seed, n, A, B);
  muster_dist_t g = {.m = n, .n = n, .mb = mb, .nb = nb, .nprow = P, .npcol = Q, .myrow = d->rank / Q,
                     .mycol = d->rank % Q};
  int64_t rows = muster_layout_numroc(n, mb, g.myrow, P), cols = muster_layout_numroc(n, nb, g.mycol, Q);
  g.lld = rows > 1 ? rows : 1;
  double *p = calloc((size_t)(g.lld * (cols > 0 ? cols : 1)), sizeof *p);
  ASSERT(p);
  char why[300] = "";
  muster_solve_args_t a = {.routine = MUSTER_POTRS, .dtype = MUSTER_F64, .n = n, .nrhs = 2,
                           .provider = "scalapack"};
  muster_shard_t s = {.mem = MUSTER_MEM_HOST, .device = -1, .a = p, .lda = g.lld, .b = X, .ldb = n, .w = W};
  piece(&g, A, p, 0);
  memcpy(X, B, sizeof *X * (size_t)(2 * n));
  int rc = muster_solve_comm_dist(d->mc, &a, &s, &g, &d->res);
  double res = rc ? 0 : solve_residual(A, X, B, n);
  if (rc) drv_say(why, sizeof why, "%s", muster_last_error());
  else if (!(res < DRV_TOL)) drv_say(why, sizeof why, "residual %.3g n eps", res);
  drv_case(d, !why[0], why, "dist potrs %dx%d mb %" PRId64 " nb %" PRId64 " n %" PRId64, P, Q, mb, nb, n);
  why[0] = '\0';
  a.routine = MUSTER_SYEVD;
  a.nrhs = 0;
  piece(&g, A, p, 0);
  rc = muster_solve_comm_dist(d->mc, &a, &s, &g, &d->res);
  if (rc == 0) { /* V from every rank's piece: each global place is on one rank */
    piece(&g, V, p, 1);
    MPI_Allreduce(MPI_IN_PLACE, V, (int)(n * n), MPI_DOUBLE, MPI_SUM, d->comm);
    res = eig_residual(A, V, W, n);
    for (int64_t i = 1; i < n; i++)
      if (W[i] < W[i - 1]) drv_say(why, sizeof why, "W not ascending at %" PRId64, i);
    if (!(res < DRV_TOL)) drv_say(why, sizeof why, "eigen residual %.3g n eps", res);
  } else {
    drv_say(why, sizeof why, "%s", muster_last_error());
  }
  drv_case(d, !why[0], why, "dist syevd %dx%d mb %" PRId64 " nb %" PRId64 " n %" PRId64, P, Q, mb, nb, n);
  free(A), free(B), free(X), free(V), free(W), free(p);
}

void drv_mode_dist(drv_t *d) {
  static const int64_t ns[] = {37, 100};
  uint64_t k = 0;
  for (int P = 1; P <= d->size; P++) {
    if (d->size % P) continue;
    int Q = d->size / P;
    for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++) {
      int64_t n = ns[i];
      one_case(d, P, Q, (n + P - 1) / P, (n + Q - 1) / Q, n, d->seed + k++); /* a mesh's blocks */
      one_case(d, P, Q, 7, 5, n, d->seed + k++);                             /* block-cyclic */
    }
  }
}
