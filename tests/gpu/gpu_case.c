/* tests/gpu/gpu_case.c - running one case of the GPU test command
 * (gpu_case.h). */
#include <dlfcn.h>
#include <link.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

#include "gpu_case.h"
#include "gpu_util.h"
#include "muster/layout.h"

const char *const gc_mode_name[3] = {"threads", "processes", "all"};

double gc_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* ---- the case list -------------------------------------------------------------- */

void gc_name(tcase_t *c, const char *shape) {
  char devs[64] = "";
  for (int r = 0, k = 0; r < c->R && k < (int)sizeof devs - 4; r++)
    k += snprintf(devs + k, sizeof devs - (size_t)k, "%s%d", r ? "," : "", c->devs[r]);
  snprintf(c->name, sizeof c->name, "%s%s %s %s R=%d gpus=%s %s%sn=%lld lda=n+%lld %s=%lld%s%s",
           muster_routine_name(c->routine),
           (c->flags & MUSTER_NO_VECTORS)  ? "(values)"
           : (c->flags & MUSTER_NO_FACTOR) ? "(no factor)"
           : (c->flags & MUSTER_LOGDET)    ? "(logdet)"
                                           : "",
           muster_dtype_name(c->dtype), gc_mode_name[c->mode], c->R, devs, shape, *shape ? " " : "", (long long)c->n,
           (long long)c->lda_extra, c->layout == MUSTER_LAYOUT_CYCLIC ? "cyclic tile" : "tile", (long long)c->tile,
           c->env ? " " : "", c->env ? c->env : "");
}

tcase_t *gc_add(tcase_t *cases, int *ncases, const gprov_t *prov, muster_routine_t rt, unsigned flags,
                muster_dtype_t dt, int mode, int R, int64_t n, int64_t lda_extra, int64_t tile, const char *shape) {
  if (*ncases >= GC_MAX_CASES) {
    fprintf(stderr, "gpu-test: more than %d cases\n", GC_MAX_CASES);
    exit(2);
  }
  tcase_t *c = &cases[(*ncases)++];
  memset(c, 0, sizeof *c);
  c->prov = prov;
  c->routine = rt;
  c->flags = flags;
  c->dtype = dt;
  c->mode = mode;
  c->R = R;
  for (int r = 0; r < R; r++) c->devs[r] = r;
  c->ngpus = R;
  c->n = n;
  c->lda_extra = lda_extra;
  c->tile = tile;
  c->layout = MUSTER_LAYOUT_BLOCK;
  c->nrhs = rt == MUSTER_POTRS || rt == MUSTER_GETRS ? 3 : 1;
  c->shift = rt == MUSTER_SYEVD || rt == MUSTER_GETRS ? 0.0 : (double)n;
  c->reps = 2;
  gc_name(c, shape);
  return c;
}

void gc_add_getrs_edges(tcase_t *cases, int *nc, const gprov_t *prov, int mode, int R) {
  tcase_t *c = gc_add(cases, nc, prov, MUSTER_GETRS, 0, MUSTER_C64, mode, R, 1001, 3, 96, "");
  c->layout = MUSTER_LAYOUT_CYCLIC;
  gc_name(c, "cyclic");
  for (int d = 0; d < 2; d++) {
    c = gc_add(cases, nc, prov, MUSTER_GETRS, 0, d ? MUSTER_C64 : MUSTER_F64, mode, R, 600, 3, 0, "singular");
    c->zero_col = 600 / 2 + 2;
    c->expect = MUSTER_ESINGULAR;
  }
  static const muster_dtype_t dts[4] = {MUSTER_F32, MUSTER_F64, MUSTER_C64, MUSTER_C128};
  for (int d = 0; d < 4; d++) { /* column 302 = column 2: U(302,302) at rounding level, not 0 */
    c = gc_add(cases, nc, prov, MUSTER_GETRS, 0, dts[d], mode, R, 600, 3, 0, "equal-columns");
    c->zero_col = 600 / 2 + 2;
    c->dup_of = 2;
    c->expect = MUSTER_ESINGULAR;
  }
  for (int k = 0; k < 2 && mode != M_ALL; k++) {
    c = gc_add(cases, nc, prov, MUSTER_GETRS, 0, MUSTER_F64, mode, R, 500, 0, 0, k ? "NaN-in-B" : "NaN-in-A");
    c->nan_in = k ? 'b' : 'a';
    c->expect = MUSTER_ENONFINITE;
  }
}

/* ---- provider counters ------------------------------------------------------------- */

/* The registry may load the provider under any name (it uses
 * /proc/self/fd/N): find the loaded object that exports the counters. */
typedef struct sym_find {
  const char *stats, *want;
  void *addr;
} sym_find_t;

static int find_cb(struct dl_phdr_info *info, size_t size, void *data) {
  sym_find_t *f = data;
  (void)size;
  if (!info->dlpi_name || !info->dlpi_name[0]) return 0;
  void *h = dlopen(info->dlpi_name, RTLD_NOW | RTLD_NOLOAD);
  if (!h) return 0;
  if (dlsym(h, f->stats)) f->addr = dlsym(h, f->want);
  dlclose(h); /* NOLOAD took a reference of its own: give it back */
  return f->addr != NULL;
}

void *gc_provider_symbol(const gprov_t *p, const char *symbol) {
  sym_find_t f = {p->stats_symbol, symbol, NULL};
  dl_iterate_phdr(find_cb, &f);
  return f.addr;
}

int gc_stats(const gprov_t *p, uint64_t out[GC_MAX_STATS]) {
  memset(out, 0, GC_MAX_STATS * sizeof out[0]);
  int (*fn)(uint64_t *, int) = (int (*)(uint64_t *, int))gc_provider_symbol(p, p->stats_symbol);
  if (!fn) return -1;
  fn(out, GC_MAX_STATS);
  return 0;
}

/* Around the second solve: nothing may be created, one solve counted. */
static int check_no_creation(const tcase_t *c, const uint64_t before[], const uint64_t after[]) {
  const gprov_t *p = c->prov;
  int bad = 0;
  if (p->nstats == 0) return 0; /* a provider without counters */
  for (int k = 0; k < p->nstats; k++)
    if ((p->created & (1u << k)) && after[k] != before[k]) {
      fprintf(stderr, "    %s: second solve created %s (%llu -> %llu)\n", c->name, p->stat_names[k],
              (unsigned long long)before[k], (unsigned long long)after[k]);
      bad = 1;
    }
  if (after[p->solves] != before[p->solves] + 1) {
    fprintf(stderr, "    %s: provider solves %llu -> %llu, expected +1\n", c->name,
            (unsigned long long)before[p->solves], (unsigned long long)after[p->solves]);
    bad = 1;
  }
  return bad;
}

/* ---- one rank's shard ------------------------------------------------------------ */

typedef struct rank_buf {
  int device;
  int64_t col0, ncols, real, lda; /* real: columns that hold A (cyclic: a prefix) */
  gu_cols_t cols;
  void *a, *b, *b0, *w;
} rank_buf_t;

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

static int buf_alloc(const tcase_t *c, int rank, rank_buf_t *rb) {
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

static void buf_free(rank_buf_t *rb) {
  cudaSetDevice(rb->device);
  cudaFree(rb->a);
  cudaFree(rb->b);
  cudaFree(rb->b0);
  cudaFree(rb->w);
}

/* Fresh random matrices every run: GPU_TEST_SEED (set once by main, from the
 * clock, inherited by every child so all ranks of a case agree), mixed
 * with the case and the repetition. */
static uint64_t seed_of(const tcase_t *c, int rep) {
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

static int buf_fill(const tcase_t *c, int rank, rank_buf_t *rb, uint64_t seed) {
  CK(cudaSetDevice(rb->device));
  CK(gu_fill_matrix(c->dtype, rb->a, rb->lda, c->n, rb->ncols, rb->cols, matrix_seed(c, seed), c->shift, 0));
  CK(gu_fill_vectors(c->dtype, rb->b, c->n, c->n, c->nrhs, seed + 1, 0));
  CK(gu_fill_vectors(c->dtype, rb->b0, c->n, c->n, c->nrhs, seed + 1, 0));
  CK(cudaMemset(rb->w, 0xff, (size_t)c->n * gu_rsz(c->dtype))); /* NaN until written */
  if (c->nan_in == 'a') { /* A(5, 2), in the lower triangle every provider reads */
    muster_layout_geom_t L;
    int owner;
    int64_t lc;
    geom(c, &L);
    muster_layout_cyclic_owner(&L, 2, &owner, &lc);
    if (owner == rank) CK(put_nan(c->dtype, rb->a, lc * rb->lda + 5));
  }
  if (c->nan_in == 'b') CK(put_nan(c->dtype, rb->b, 3));
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
  CK(cudaDeviceSynchronize());
  return 0;
}

static muster_shard_t shard_of(const tcase_t *c, const rank_buf_t *rb) {
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

static muster_solve_args_t args_of(const tcase_t *c) {
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

/* getrs without MUSTER_NO_FACTOR: this rank's A must be exactly what was
 * generated (the provider factors a private copy). */
static int check_a_kept(const tcase_t *c, int rank, const rank_buf_t *rb, uint64_t seed) {
  if (rb->real < 1) return 0;
  size_t esz = gu_esz(c->dtype), col = (size_t)c->n * esz, pitch = (size_t)rb->lda * esz;
  void *fresh = NULL;
  char *h0 = malloc(col * (size_t)rb->real), *h1 = malloc(col * (size_t)rb->real);
  int ok = h0 && h1 && cudaMalloc(&fresh, pitch * (size_t)rb->real) == cudaSuccess &&
           gu_fill_matrix(c->dtype, fresh, rb->lda, c->n, rb->real, rb->cols, matrix_seed(c, seed), c->shift, 0) ==
               cudaSuccess &&
           cudaMemcpy2D(h0, col, fresh, pitch, col, (size_t)rb->real, cudaMemcpyDefault) == cudaSuccess &&
           cudaMemcpy2D(h1, col, rb->a, pitch, col, (size_t)rb->real, cudaMemcpyDefault) == cudaSuccess;
  int same = ok && !memcmp(h0, h1, col * (size_t)rb->real);
  if (!ok) fprintf(stderr, "    %s rank %d: could not compare A\n", c->name, rank);
  else if (!same)
    fprintf(stderr, "    %s rank %d: getrs changed A (it must factor a copy without MUSTER_NO_FACTOR)\n", c->name,
            rank);
  cudaFree(fresh);
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
static int buf_check(const tcase_t *c, int rank, rank_buf_t *rb, uint64_t seed) {
  double o[4] = {0, 0, 0, 0}, ratio = 0, ratio2 = 0;
  CK(cudaSetDevice(rb->device));
  if (c->routine == MUSTER_POTRS || c->routine == MUSTER_GETRS) {
    CK(gu_check_potrs(c->dtype, c->n, c->nrhs, rb->b, c->n, rb->b0, c->n, matrix_seed(c, seed), c->shift, o));
    ratio = one_ratio(c, o);
    if (c->routine == MUSTER_GETRS && !(c->flags & MUSTER_NO_FACTOR) && check_a_kept(c, rank, rb, seed)) return 1;
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

static int check_rc(const tcase_t *c, int rank, int rc, const muster_solve_result_t *res) {
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
static int check_b_kept(const tcase_t *c, int rank, const rank_buf_t *rb) {
  size_t bytes = (size_t)(c->n * c->nrhs) * gu_esz(c->dtype);
  char *h0 = malloc(bytes), *h1 = malloc(bytes);
  int same = h0 && h1 && cudaMemcpy(h0, rb->b0, bytes, cudaMemcpyDefault) == cudaSuccess &&
             cudaMemcpy(h1, rb->b, bytes, cudaMemcpyDefault) == cudaSuccess && !memcmp(h0, h1, bytes);
  if (!same) fprintf(stderr, "    %s rank %d: B was written (or could not be read) after a refusal\n", c->name, rank);
  free(h0);
  free(h1);
  return !same;
}

/* ---- one rank in a group (threads and processes) ------------------------------------ */

typedef struct rank_ctx {
  const tcase_t *c;
  char group[64];
  int notify_fd; /* processes: written just before the solve (kill tests) */
} rank_ctx_t;

static int rank_main(int rank, int device, void *arg) {
  rank_ctx_t *rc_ = arg;
  const tcase_t *c = rc_->c;
  rank_buf_t rb;
  muster_group_t *g = NULL;
  muster_group_opts_t opts = {NULL, 0, device};
  int fail = 0;
  if (buf_alloc(c, rank, &rb)) return 1;
  if (muster_group_join(rc_->group, rank, c->R, &opts, &g) != 0) {
    fprintf(stderr, "    %s rank %d: join: %s\n", c->name, rank, muster_last_error());
    buf_free(&rb);
    return 1;
  }
  muster_solve_args_t a = args_of(c);
  for (int rep = 0; rep < c->reps && !fail; rep++) {
    uint64_t seed = seed_of(c, rep), st0[GC_MAX_STATS], st1[GC_MAX_STATS];
    if (buf_fill(c, rank, &rb, seed)) {
      fail = 1;
      break;
    }
    muster_shard_t s = shard_of(c, &rb);
    muster_solve_result_t res;
    gc_stats(c->prov, st0);
    /* kill tests: the solves before the last warm up (a communicator made) */
    int killed_here = rc_->notify_fd >= 0 && rep == c->reps - 1;
    if (killed_here) {
      char x = 'x';
      if (write(rc_->notify_fd, &x, 1) != 1) return 1;
    }
    double t0 = gc_now();
    int rc = muster_solve(g, &a, &s, &res);
    double dt = gc_now() - t0;
    gc_stats(c->prov, st1);
    if (killed_here) { /* report, check a success, leave */
      printf("    rank %d: muster_solve returned %d (%s) after %.2f s: %s\n", rank, rc, muster_strerror(rc), dt,
             muster_last_error());
      fflush(stdout);
      int bad = rc == 0 ? buf_check(c, rank, &rb, seed) : 0;
      if (rc == 0) printf("    rank %d: its results %s\n", rank, bad ? "are WRONG" : "check out");
      t0 = gc_now();
      muster_group_leave(g);
      printf("    rank %d: left its group in %.2f s\n", rank, gc_now() - t0);
      fflush(stdout);
      /* After a failed collective call the engine may still be running on
       * its own thread, its GPU work with it (docs/bootstrap.md, "An engine
       * deaf to cancel"): cudaFree would wait for that work.  The process
       * ends now, as the error message asks; the driver frees the memory. */
      if (rc == 0) buf_free(&rb);
      return rc == 0 ? (bad ? 99 : 0) : 100 + (-rc);
    }
    fail |= check_rc(c, rank, rc, &res);
    if (!fail && rc == MUSTER_ESINGULAR && c->routine == MUSTER_GETRS) fail |= check_b_kept(c, rank, &rb);
    if (!fail && rc == 0) fail |= buf_check(c, rank, &rb, seed);
    if (!fail && rc == 0 && rank == 0 && c->prov->check) fail |= c->prov->check(c, st0, st1);
    if (!fail && rep > 0 && rank == 0 && c->expect == 0) fail |= check_no_creation(c, st0, st1);
  }
  muster_group_leave(g);
  buf_free(&rb);
  return fail;
}

static int group_seq; /* one group name per case run in this process */

static int run_threads(const tcase_t *c) {
  rank_ctx_t rc_ = {c, "", -1};
  snprintf(rc_.group, sizeof rc_.group, "gputest.%d.%d", (int)getpid(), ++group_seq);
  int rc = muster_run_on_devices(c->R, c->devs, rank_main, &rc_);
  if (rc != 0) fprintf(stderr, "    %s: %d %s\n", c->name, rc, muster_last_error());
  return rc != 0;
}

void gc_fork_ranks(const tcase_t *c, const char *group, int notify_fd, int close_fd, pid_t *pids) {
  rank_ctx_t rc_ = {c, "", notify_fd};
  snprintf(rc_.group, sizeof rc_.group, "%s", group);
  for (int r = 0; r < c->R; r++) {
    pids[r] = fork();
    if (pids[r] == 0) {
      if (close_fd >= 0) close(close_fd);
      int rc = cudaSetDevice(c->devs[r]) == cudaSuccess ? rank_main(r, c->devs[r], &rc_) : 1;
      fflush(stdout);
      _exit(rc);
    }
  }
}

static int run_procs(const tcase_t *c) {
  pid_t pids[GC_MAX_RANKS];
  char group[64];
  snprintf(group, sizeof group, "gputest.%d.%d", (int)getpid(), ++group_seq);
  gc_fork_ranks(c, group, -1, -1, pids);
  int fail = 0;
  for (int r = 0; r < c->R; r++) {
    int st = 0;
    waitpid(pids[r], &st, 0);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) fail = 1;
  }
  return fail;
}

static int run_all(const tcase_t *c) {
  rank_buf_t rb[GC_MAX_RANKS];
  muster_shard_t sh[GC_MAX_RANKS];
  int fail = 0;
  muster_solve_args_t a = args_of(c);
  for (int r = 0; r < c->R; r++)
    if (buf_alloc(c, r, &rb[r])) return 1;
  for (int rep = 0; rep < c->reps && !fail; rep++) {
    uint64_t seed = seed_of(c, rep), st0[GC_MAX_STATS], st1[GC_MAX_STATS];
    for (int r = 0; r < c->R; r++) {
      if (buf_fill(c, r, &rb[r], seed)) return 1;
      sh[r] = shard_of(c, &rb[r]);
    }
    muster_solve_result_t res;
    gc_stats(c->prov, st0);
    int rc = muster_solve_all(&a, c->R, sh, &res);
    gc_stats(c->prov, st1);
    fail |= check_rc(c, 0, rc, &res);
    for (int r = 0; r < c->R && !fail && rc == MUSTER_ESINGULAR && c->routine == MUSTER_GETRS; r++)
      fail |= check_b_kept(c, r, &rb[r]);
    for (int r = 0; r < c->R && !fail && rc == 0; r++) fail |= buf_check(c, r, &rb[r], seed);
    if (!fail && rc == 0 && c->prov->check) fail |= c->prov->check(c, st0, st1);
    if (!fail && rep > 0 && c->expect == 0) fail |= check_no_creation(c, st0, st1);
  }
  for (int r = 0; r < c->R; r++) buf_free(&rb[r]);
  return fail;
}

int gc_run(const tcase_t *c, int ndev) {
  (void)ndev;
  if (c->special) return c->special(c, ndev);
  if (c->mode == M_THREADS) return run_threads(c);
  if (c->mode == M_PROCS) return run_procs(c);
  return run_all(c);
}

