/* tests/gpu/gpu_rank.c - one rank's shard of a GPU test case: made,
 * filled, checked (gpu_rank.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "gpu_rank.h"
#include "muster/layout.h"

#define CK(call)                                                                                           \
  do {                                                                                                     \
    cudaError_t st_ = (call);                                                                              \
    if (st_ != cudaSuccess) {                                                                              \
      fprintf(stderr, "    %s: %s:%d %s: %s\n", c->name, __FILE__, __LINE__, #call, cudaGetErrorString(st_)); \
      return 1;                                                                                            \
    }                                                                                                      \
  } while (0)

/* The case's geometry (block: tile = block width, as muster/layout.h
 * treats it). */
static void geom(const tcase_t *c, muster_layout_geom_t *L) {
  muster_layout_geom_init(L, c->n, c->layout == MUSTER_LAYOUT_CYCLIC ? c->tile : muster_ceil_div(c->n, c->R), c->R);
}

int gc_buf_alloc(const tcase_t *c, int rank, rank_buf_t *rb) {
  muster_layout_geom_t L;
  geom(c, &L);
  memset(rb, 0, sizeof *rb);
  rb->device = c->devs[rank];
  if (c->layout == MUSTER_LAYOUT_CYCLIC) {
    rb->ncols = L.local_cols;
    rb->real = muster_layout_cyclic_real_cols(&L, rank);
    rb->cols = (gu_cols_t){1, c->R, rank, 0, c->tile};
  } else {
    rb->col0 = muster_layout_block_col0(&L, rank);
    rb->ncols = rb->real = muster_layout_block_ncols(&L, rank);
    rb->cols = (gu_cols_t){0, c->R, rank, rb->col0, 0};
  }
  rb->lda = c->n + c->lda_extra;
  size_t esz = gu_esz(c->dtype);
  CK(cudaSetDevice(rb->device));
  CK(cudaMalloc(&rb->a, (size_t)(rb->lda * (rb->ncols > 0 ? rb->ncols : 1)) * esz));
  CK(cudaMalloc(&rb->b, (size_t)(c->n * c->nrhs) * esz));
  CK(cudaMalloc(&rb->b0, (size_t)(c->n * c->nrhs) * esz));
  CK(cudaMalloc(&rb->w, (size_t)c->n * gu_rsz(c->dtype)));
  return 0;
}

void gc_buf_free(rank_buf_t *rb) {
  cudaSetDevice(rb->device);
  cudaFree(rb->a);
  cudaFree(rb->b);
  cudaFree(rb->b0);
  cudaFree(rb->w);
}

/* Fresh random matrices every run: GPU_TEST_SEED (set once by main, from the
 * clock, inherited by every child so all ranks of a case agree), mixed
 * with the case and the repetition. */
uint64_t gc_seed_of(const tcase_t *c, int rep) {
  const char *e = getenv("GPU_TEST_SEED");
  uint64_t base = e ? strtoull(e, NULL, 0) : 1;
  uint64_t s = base ^ ((uint64_t)c->n * 1000003u + (uint64_t)rep * 7919u + (uint64_t)c->dtype * 31u +
                       (uint64_t)c->routine * 131u + (uint64_t)c->R);
  return s & ~GU_GENERAL; /* the kind of matrix is matrix_seed's to say */
}

/* The seed of the case's matrix: getrs's is general (gpu_util.h); every
 * other routine's Hermitian (seed_of never sets GU_GENERAL). */
static uint64_t matrix_seed(const tcase_t *c, uint64_t seed) {
  return c->routine == MUSTER_GETRS ? seed | GU_GENERAL : seed;
}

/* Which rank holds global column g, and where (the layout of the case). */
static int owner_of(const tcase_t *c, int64_t g, int64_t *lc) {
  muster_layout_geom_t L;
  int owner;
  geom(c, &L);
  if (c->layout == MUSTER_LAYOUT_CYCLIC) muster_layout_cyclic_owner(&L, g, &owner, lc);
  else muster_layout_block_owner(&L, g, &owner, lc);
  return owner;
}

/* A NaN in the real part of element k of buffer p. */
static cudaError_t put_nan(int dtype, void *p, int64_t k) {
  size_t esz = gu_esz(dtype);
  float f = NAN;
  double d = NAN;
  return cudaMemcpy((char *)p + (size_t)k * esz, gu_rsz(dtype) == 4 ? (void *)&f : (void *)&d, gu_rsz(dtype),
                    cudaMemcpyHostToDevice);
}

/* rb->a (on the current device): the case's A with its planted NaN or
 * singular column. */
static int fill_a(const tcase_t *c, int rank, const rank_buf_t *rb, uint64_t seed) {
  CK(gu_fill_matrix(c->dtype, rb->a, rb->lda, c->n, rb->ncols, rb->cols, matrix_seed(c, seed), c->shift, 0));
  if (c->nan_in == 'a') { /* A(5, 2), in the lower triangle every provider reads */
    muster_layout_geom_t L;
    int owner;
    int64_t lc;
    geom(c, &L);
    muster_layout_cyclic_owner(&L, 2, &owner, &lc);
    if (owner == rank) CK(put_nan(c->dtype, rb->a, lc * rb->lda + 5));
  }
  int64_t zc;
  if (c->zero_col > 0 && owner_of(c, c->zero_col - 1, &zc) == rank) {
    char *zcol = (char *)rb->a + (size_t)(zc * rb->lda) * gu_esz(c->dtype);
    if (c->dup_of > 0) { /* column dup_of's entries: numerically singular */
      gu_cols_t one = {.cyclic = 0, .nranks = 1, .rank = 0, .col0 = c->dup_of - 1, .width = 0};
      CK(gu_fill_matrix(c->dtype, zcol, rb->lda, c->n, 1, one, matrix_seed(c, seed), c->shift, 0));
    } else {
      CK(cudaMemset(zcol, 0, (size_t)c->n * gu_esz(c->dtype)));
    }
  }
  return 0;
}

int gc_buf_fill(const tcase_t *c, int rank, rank_buf_t *rb, uint64_t seed) {
  CK(cudaSetDevice(rb->device));
  if (fill_a(c, rank, rb, seed)) return 1;
  CK(gu_fill_vectors(c->dtype, rb->b, c->n, c->n, c->nrhs, seed + 1, 0));
  CK(gu_fill_vectors(c->dtype, rb->b0, c->n, c->n, c->nrhs, seed + 1, 0));
  CK(cudaMemset(rb->w, 0xff, (size_t)c->n * gu_rsz(c->dtype))); /* NaN until written */
  if (c->nan_in == 'b') CK(put_nan(c->dtype, rb->b, 3));
  CK(cudaDeviceSynchronize());
  return 0;
}

muster_shard_t gc_shard_of(const tcase_t *c, const rank_buf_t *rb) {
  muster_shard_t s;
  memset(&s, 0, sizeof s);
  s.mem = MUSTER_MEM_CUDA;
  s.device = rb->device;
  s.a = rb->a;
  s.lda = rb->lda;
  s.col0 = rb->col0;
  s.ncols = rb->ncols;
  s.b = c->routine == MUSTER_POTRS || c->routine == MUSTER_GETRS ? rb->b : NULL;
  s.ldb = c->n;
  s.w = c->routine == MUSTER_SYEVD || (c->flags & MUSTER_LOGDET) ? rb->w : NULL;
  s.stream = NULL;
  return s;
}

muster_solve_args_t gc_args_of(const tcase_t *c) {
  muster_solve_args_t a;
  memset(&a, 0, sizeof a);
  a.routine = c->routine;
  a.dtype = c->dtype;
  a.n = c->n;
  a.nrhs = c->nrhs;
  a.tile = c->tile;
  a.layout = c->layout;
  a.flags = c->flags;
  a.provider = c->prov->name;
  return a;
}

/* syevd: eigenvalues ascending; values only: sum w = trace A and sum w^2 =
 * ||A||_F^2; with vectors: the residual of this rank's columns. */
static int check_syevd(const tcase_t *c, int rank, rank_buf_t *rb, uint64_t seed, double *ratio, double *ratio2,
                       double o[4]) {
  double eps = gu_eps(c->dtype);
  size_t rsz = gu_rsz(c->dtype);
  double *w = malloc((size_t)c->n * sizeof(double));
  char *raw = malloc((size_t)c->n * rsz);
  int bad = !w || !raw;
  if (!bad && cudaMemcpy(raw, rb->w, (size_t)c->n * rsz, cudaMemcpyDeviceToHost) != cudaSuccess) bad = 1;
  for (int64_t k = 0; !bad && k < c->n; k++) w[k] = rsz == 4 ? ((float *)raw)[k] : ((double *)raw)[k];
  for (int64_t k = 1; !bad && k < c->n; k++)
    if (!(w[k - 1] <= w[k])) {
      fprintf(stderr, "    rank %d: eigenvalues not ascending (or NaN) at %lld\n", rank, (long long)k);
      bad = 1;
    }
  if (!bad && (c->flags & MUSTER_NO_VECTORS)) {
    double tf[2], sw = 0, sw2 = 0;
    if (gu_trace_frob(c->dtype, c->n, seed, c->shift, tf) != cudaSuccess) bad = 1;
    for (int64_t k = 0; k < c->n; k++) {
      sw += w[k];
      sw2 += w[k] * w[k];
    }
    *ratio = fabs(sw - tf[0]) / (sqrt(tf[1]) * (double)c->n * eps);
    *ratio2 = fabs(sw2 - tf[1]) / (tf[1] * (double)c->n * eps);
  } else if (!bad && rb->real > 0) {
    if (gu_check_syevd(c->dtype, c->n, rb->a, rb->lda, rb->real, rb->cols, rb->w, seed, c->shift, o) != cudaSuccess)
      bad = 1;
    double r[2];
    gu_resid_ratios(MUSTER_SYEVD, c->dtype, c->n, o, r);
    *ratio = r[0];
    *ratio2 = r[1];
  }
  free(w);
  free(raw);
  return bad;
}

int gc_check_a_kept(const tcase_t *c, int rank, const rank_buf_t *rb, uint64_t seed) {
  if (rb->real < 1) return 0;
  size_t esz = gu_esz(c->dtype), col = (size_t)c->n * esz, pitch = (size_t)rb->lda * esz;
  rank_buf_t fresh = *rb;
  fresh.a = NULL;
  char *h0 = malloc(col * (size_t)rb->real), *h1 = malloc(col * (size_t)rb->real);
  int ok = h0 && h1 && cudaSetDevice(rb->device) == cudaSuccess &&
           cudaMalloc(&fresh.a, pitch * (size_t)rb->ncols) == cudaSuccess && !fill_a(c, rank, &fresh, seed) &&
           cudaMemcpy2D(h0, col, fresh.a, pitch, col, (size_t)rb->real, cudaMemcpyDefault) == cudaSuccess &&
           cudaMemcpy2D(h1, col, rb->a, pitch, col, (size_t)rb->real, cudaMemcpyDefault) == cudaSuccess;
  int same = ok && !memcmp(h0, h1, col * (size_t)rb->real);
  if (!ok) fprintf(stderr, "    %s rank %d: could not compare A\n", c->name, rank);
  else if (!same) fprintf(stderr, "    %s rank %d: A was changed (it must be as it was)\n", c->name, rank);
  cudaFree(fresh.a);
  free(h0);
  free(h1);
  return !same;
}

/* potrs with MUSTER_LOGDET: this rank's w[0] against log det A from the
 * lapack provider on the same matrix (gathered on the host).  Both sum the
 * logs of L's diagonal in double: the difference comes from L's rounding
 * (n eps of the dtype at most), the output's rounding to the dtype (eps
 * |ld|) and the sum's rounding of different inputs (DBL_EPSILON sqrt(n)
 * |ld|), each within GC_TOL. */
static int check_logdet(const tcase_t *c, int rank, const rank_buf_t *rb, uint64_t seed) {
  size_t esz = gu_esz(c->dtype), rsz = gu_rsz(c->dtype);
  int64_t n = c->n;
  void *dev = NULL;
  char *a = malloc((size_t)(n * n) * esz), *b = calloc((size_t)n, esz), wgot[8], wref[8];
  int bad = !a || !b;
  gu_cols_t all = {0, 1, 0, 0, 0};
  if (!bad) bad = cudaMalloc(&dev, (size_t)(n * n) * esz) != cudaSuccess;
  if (!bad) bad = gu_fill_matrix(c->dtype, dev, n, n, n, all, matrix_seed(c, seed), c->shift, 0) != cudaSuccess;
  if (!bad) bad = cudaMemcpy(a, dev, (size_t)(n * n) * esz, cudaMemcpyDefault) != cudaSuccess;
  if (!bad) bad = cudaMemcpy(wgot, rb->w, rsz, cudaMemcpyDefault) != cudaSuccess;
  if (bad) fprintf(stderr, "    %s rank %d: could not read log det or make the reference's matrix\n", c->name, rank);
  cudaFree(dev);
  if (!bad) {
    muster_solve_args_t args = {MUSTER_POTRS, c->dtype, n, 1, 0, MUSTER_LAYOUT_BLOCK, MUSTER_LOGDET, "lapack"};
    muster_shard_t s = {MUSTER_MEM_HOST, -1, a, n, 0, n, b, n, wref, NULL};
    muster_solve_result_t res;
    int rc = muster_solve_all(&args, 1, &s, &res);
    if (rc != 0) fprintf(stderr, "    %s rank %d: the lapack reference failed: %s\n", c->name, rank, muster_last_error());
    bad = rc != 0;
  }
  if (!bad) {
    float gf, rf;
    double got, ref;
    memcpy(&gf, wgot, sizeof gf);
    memcpy(&rf, wref, sizeof rf);
    memcpy(&got, wgot, sizeof got);
    memcpy(&ref, wref, sizeof ref);
    if (rsz == 4) {
      got = gf;
      ref = rf;
    }
    double tol = GC_TOL * (gu_eps(c->dtype) * ((double)n + fabs(ref)) + 2.220446049250313e-16 * sqrt((double)n) * fabs(ref));
    if (!(fabs(got - ref) <= tol)) {
      fprintf(stderr, "    %s rank %d: log det %.17g, the lapack provider's %.17g (difference %.3g > %.3g)\n", c->name,
              rank, got, ref, fabs(got - ref), tol);
      bad = 1;
    } else if (getenv("GPU_TEST_VERBOSE")) {
      fprintf(stderr, "    %s rank %d: log det %.17g vs lapack %.17g\n", c->name, rank, got, ref);
    }
  }
  free(a);
  free(b);
  return bad;
}

static double one_ratio(const tcase_t *c, const double o[4]) {
  double r[2];
  gu_resid_ratios(c->routine, c->dtype, c->n, o, r);
  return r[0];
}

/* Check this rank's results; prints and returns 1 on failure. */
int gc_buf_check(const tcase_t *c, int rank, rank_buf_t *rb, uint64_t seed) {
  double o[4] = {0, 0, 0, 0}, ratio = 0, ratio2 = 0;
  CK(cudaSetDevice(rb->device));
  if (c->routine == MUSTER_POTRS || c->routine == MUSTER_GETRS) {
    CK(gu_check_potrs(c->dtype, c->n, c->nrhs, rb->b, c->n, rb->b0, c->n, matrix_seed(c, seed), c->shift, o));
    ratio = one_ratio(c, o);
    if (c->routine == MUSTER_GETRS && !(c->flags & MUSTER_NO_FACTOR) && gc_check_a_kept(c, rank, rb, seed)) return 1;
    if ((c->flags & MUSTER_LOGDET) && check_logdet(c, rank, rb, seed)) return 1;
  } else if (c->routine == MUSTER_POTRI) {
    if (rb->real == 0) return 0;
    CK(gu_check_potri(c->dtype, c->n, rb->a, rb->lda, rb->real, rb->cols, seed, c->shift, o));
    ratio = one_ratio(c, o);
  } else if (check_syevd(c, rank, rb, seed, &ratio, &ratio2, o)) {
    return 1;
  }
  if (!(ratio < GC_TOL) || !(ratio2 < GC_TOL)) {
    fprintf(stderr, "    %s rank %d: residual ratio %.3g / %.3g (limit %.0f) raw %.3g %.3g %.3g %.3g\n", c->name,
            rank, ratio, ratio2, GC_TOL, o[0], o[1], o[2], o[3]);
    return 1;
  }
  if (getenv("GPU_TEST_VERBOSE")) fprintf(stderr, "    %s rank %d: ratio %.3g %.3g\n", c->name, rank, ratio, ratio2);
  return 0;
}

int gc_check_rc(const tcase_t *c, int rank, int rc, const muster_solve_result_t *res) {
  if (rc != c->expect && !(c->expect_alt && rc == c->expect_alt)) {
    fprintf(stderr, "    %s rank %d: muster_solve returned %d (%s), expected %d: %s\n", c->name, rank, rc,
            muster_strerror(rc), c->expect, muster_last_error());
    return 1;
  }
  /* a zero column k of a positive definite A (potrs): the leading minor k fails */
  long long minor = c->zero_col > 0 ? (long long)c->zero_col : 1;
  char want[80];
  snprintf(want, sizeof want, "not positive definite (leading minor %lld)", minor);
  if (rc == MUSTER_ENOTPD && (res->info != minor || !strstr(muster_last_error(), want))) {
    fprintf(stderr, "    %s rank %d: info=%lld message \"%s\"\n", c->name, rank, (long long)res->info,
            muster_last_error());
    return 1;
  }
  char pivot[48];
  snprintf(pivot, sizeof pivot, "U(%lld,%lld)", (long long)c->zero_col, (long long)c->zero_col);
  if (rc == MUSTER_ESINGULAR && (res->info != c->zero_col || !strstr(muster_last_error(), pivot) ||
                                 !strstr(muster_last_error(), "singular"))) {
    fprintf(stderr, "    %s rank %d: info=%lld (expected %lld) message \"%s\"\n", c->name, rank, (long long)res->info,
            (long long)c->zero_col, muster_last_error());
    return 1;
  }
  if (rc == MUSTER_ENONFINITE && !strstr(muster_last_error(), "NaN/Inf")) {
    fprintf(stderr, "    %s rank %d: message \"%s\"\n", c->name, rank, muster_last_error());
    return 1;
  }
  if (rc == 0 && strcmp(res->provider, c->prov->name)) {
    fprintf(stderr, "    %s rank %d: ran on provider '%s'\n", c->name, rank, res->provider);
    return 1;
  }
  return 0;
}

/* A refused getrs (MUSTER_ESINGULAR): this rank's b still holds B. */
int gc_check_b_kept(const tcase_t *c, int rank, const rank_buf_t *rb) {
  size_t bytes = (size_t)(c->n * c->nrhs) * gu_esz(c->dtype);
  char *h0 = malloc(bytes), *h1 = malloc(bytes);
  int same = h0 && h1 && cudaMemcpy(h0, rb->b0, bytes, cudaMemcpyDefault) == cudaSuccess &&
             cudaMemcpy(h1, rb->b, bytes, cudaMemcpyDefault) == cudaSuccess && !memcmp(h0, h1, bytes);
  if (!same) fprintf(stderr, "    %s rank %d: B was written (or could not be read) after a refusal\n", c->name, rank);
  free(h0);
  free(h1);
  return !same;
}

