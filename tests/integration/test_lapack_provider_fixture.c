/* Fixture of the lapack provider tests (see test_lapack_provider.h). */
#include <dlfcn.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <strings.h>

#include "test_lapack_provider.h"

const muster_provider_v2_t *lfx_provider(void **ctx) {
#ifdef __SANITIZE_THREAD__
  /* OpenBLAS is not instrumented: the hand-offs of its own thread pool look
   * like races to TSan.  Keep it in the calling thread (read when the .so
   * loads, which is here: each test is a fresh process); our concurrent
   * calls from several threads are still checked. */
  setenv("OPENBLAS_NUM_THREADS", "1", 0);
#endif
  void *so = test_provider_dlopen("lapack"); /* never dlclose'd: OpenBLAS threads outlive it badly */
  ASSERT(so != NULL);
  const muster_provider_v2_t *p = dlsym(so, MUSTER_PROVIDER_SYMBOL_V2);
  ASSERT(p != NULL);
  ASSERT_EQ(p->abi_version, MUSTER_PROVIDER_V2_ABI);
  ASSERT_EQ(p->struct_size, sizeof(muster_provider_v2_t));
  char err[256] = "";
  ASSERT_EQ(p->init(ctx, err, sizeof err), 0);
  return p;
}

/* OpenBLAS picks its kernels and thread count when it loads (lfx_provider:
 * each test is a fresh process), from OPENBLAS_CORETYPE where its build is
 * DYNAMIC_ARCH (Debian's): then the core must be the one asked for. */
const muster_provider_v2_t *lfx_provider_on_core(const char *core, void **ctx) {
  setenv("OPENBLAS_CORETYPE", core, 1);
  setenv("OPENBLAS_NUM_THREADS", "1", 1);
  const muster_provider_v2_t *p = lfx_provider(ctx);
  void *ob = dlopen("libopenblas.so.0", RTLD_NOW | RTLD_NOLOAD);
  char *(*config)(void) = ob ? (char *(*)(void))dlsym(ob, "openblas_get_config") : NULL;
  char *(*corename)(void) = ob ? (char *(*)(void))dlsym(ob, "openblas_get_corename") : NULL;
  if (config && corename && strstr(config(), "DYNAMIC_ARCH")) {
    if (strcasecmp(corename(), core) != 0) fprintf(stderr, "OpenBLAS runs %s, not %s\n", corename(), core);
    ASSERT(strcasecmp(corename(), core) == 0);
  } else {
    fprintf(stderr, "  (OpenBLAS without DYNAMIC_ARCH here: its own kernels, not %s)\n", core);
  }
  if (ob) dlclose(ob); /* the NOLOAD reference only */
  return p;
}

static __thread uint64_t rng = 0x9E3779B97F4A7C15ull; /* per thread: concurrent tests */
void lfx_seed(uint64_t seed) { rng = seed * 0x9E3779B97F4A7C15ull + 1; }
static double urand(void) { /* uniform in [-1, 1) */
  rng ^= rng >> 12;
  rng ^= rng << 25;
  rng ^= rng >> 27;
  return (double)((rng * 2685821657736338717ull) >> 11) / 4503599627370496.0 - 1.0;
}

double lfx_eps(muster_dtype_t t) {
  return (t == MUSTER_F32 || t == MUSTER_C64) ? FLT_EPSILON : DBL_EPSILON;
}
int lfx_is_complex(muster_dtype_t t) { return t == MUSTER_C64 || t == MUSTER_C128; }

zd lfx_get(const lfx_t *fx, const void *base, int64_t ld, int64_t i, int64_t j) {
  size_t k = (size_t)(j * ld + i);
  switch (fx->t) {
  case MUSTER_F32: return ((const float *)base)[k];
  case MUSTER_F64: return ((const double *)base)[k];
  case MUSTER_C64: return ((const float complex *)base)[k];
  default: return ((const double complex *)base)[k];
  }
}

void lfx_set(const lfx_t *fx, void *base, int64_t ld, int64_t i, int64_t j, zd v) {
  size_t k = (size_t)(j * ld + i);
  switch (fx->t) {
  case MUSTER_F32: ((float *)base)[k] = (float)creal(v); break;
  case MUSTER_F64: ((double *)base)[k] = creal(v); break;
  case MUSTER_C64: ((float complex *)base)[k] = (float complex)v; break;
  default: ((double complex *)base)[k] = v; break;
  }
}

/* Random element: real, or complex for complex dtypes. */
static zd rand_elem(muster_dtype_t t) {
  return lfx_is_complex(t) ? urand() + I * urand() : urand();
}

/* SPD/HPD: M M^H + n I (eigenvalues in [n, ~3n]: well conditioned).
 * Hermitian: (M + M^H) / 2. Then rounded to the dtype, so the reference
 * is exactly what the provider sees. */
static void make_input(lfx_t *fx) {
  int64_t n = fx->n;
  zd *M = malloc(sizeof(zd) * (size_t)(n * n));
  ASSERT(M);
  for (int64_t k = 0; k < n * n; k++) M[k] = rand_elem(fx->t);
  for (int64_t j = 0; j < n; j++) {
    for (int64_t i = 0; i < n; i++) {
      zd v = 0;
      if (fx->routine == MUSTER_SYEVD) {
        v = (M[j * n + i] + conj(M[i * n + j])) / 2;
      } else {
        for (int64_t k = 0; k < n; k++) v += M[k * n + i] * conj(M[k * n + j]);
        if (i == j) v = creal(v) + n;
      }
      fx->A[j * n + i] = v;
    }
  }
  for (int64_t j = 0; j < n; j++) fx->A[j * n + j] = creal(fx->A[j * n + j]);
  /* round through the dtype */
  for (int64_t k = 0; k < n * n; k++) {
    char tmp[16];
    lfx_set(fx, tmp, 1, 0, 0, fx->A[k]);
    fx->A[k] = lfx_get(fx, tmp, 1, 0, 0);
  }
  for (int64_t k = 0; k < n * fx->nrhs; k++) {
    char tmp[16];
    lfx_set(fx, tmp, 1, 0, 0, rand_elem(fx->t));
    fx->B[k] = lfx_get(fx, tmp, 1, 0, 0);
  }
  free(M);
}

void lfx_reshard(lfx_t *fx) {
  int64_t n = fx->n, S = (n + fx->R - 1) / fx->R;
  for (int r = 0; r < fx->R; r++) {
    int64_t c0 = r * S < n ? r * S : n, nc = n - c0 < S ? n - c0 : S;
    for (int64_t c = 0; c < nc; c++)
      for (int64_t i = 0; i < n; i++) lfx_set(fx, fx->blk[r], fx->lda, i, c, fx->A[(c0 + c) * n + i]);
    muster_shard_t *s = &fx->shards[r];
    free(s->b);
    free(s->w);
    *s = (muster_shard_t){.mem = MUSTER_MEM_HOST, .device = -1, .a = fx->blk[r], .lda = fx->lda,
                          .col0 = c0, .ncols = nc};
    if (fx->routine == MUSTER_POTRS) {
      s->ldb = fx->ldb;
      s->b = calloc((size_t)(fx->ldb * fx->nrhs), fx->esz);
      ASSERT(s->b);
      for (int64_t c = 0; c < fx->nrhs; c++)
        for (int64_t i = 0; i < n; i++) lfx_set(fx, s->b, fx->ldb, i, c, fx->B[c * n + i]);
    }
    if (fx->routine == MUSTER_SYEVD) {
      s->w = calloc((size_t)n, sizeof(double));
      ASSERT(s->w);
    }
  }
  if (fx->layout == MUSTER_LAYOUT_CYCLIC) {
    int64_t lc = muster_layout_local_cols(n, fx->tile, fx->R);
    ASSERT_GT(lc, 0);
    for (int r = 0; r < fx->R; r++) {
      free(fx->cyc[r]);
      fx->cyc[r] = malloc((size_t)(lc * fx->lda) * fx->esz);
      ASSERT(fx->cyc[r]);
      fx->shards[r].a = fx->cyc[r];
      fx->shards[r].col0 = 0;
      fx->shards[r].ncols = lc;
    }
    ASSERT_OK(muster_layout_block_to_cyclic(fx->t, n, fx->lda, fx->tile, fx->R, fx->blk, fx->cyc));
  }
}

void lfx_setup(lfx_t *fx) {
  int64_t n = fx->n, S = (n + fx->R - 1) / fx->R;
  fx->esz = muster_dtype_size(fx->t);
  if (fx->routine != MUSTER_POTRS) fx->nrhs = 1;
  if (!fx->lda) fx->lda = n;
  if (!fx->ldb) fx->ldb = n;
  fx->A = malloc(sizeof(zd) * (size_t)(n * n));
  fx->B = malloc(sizeof(zd) * (size_t)(n * fx->nrhs));
  ASSERT(fx->A && fx->B);
  make_input(fx);
  for (int r = 0; r < fx->R; r++) {
    fx->blk[r] = calloc((size_t)(S * fx->lda), fx->esz);
    ASSERT(fx->blk[r]);
  }
  lfx_reshard(fx);
}

int lfx_solve(const muster_provider_v2_t *p, void *ctx, lfx_t *fx) {
  fx->info = -99;
  fx->err[0] = '\0';
  muster_provider_call_t call = {
      .args = {.routine = fx->routine, .dtype = fx->t, .n = fx->n, .nrhs = fx->nrhs,
               .tile = fx->tile, .layout = fx->layout, .flags = fx->flags, .provider = "lapack"},
      .nshards = fx->R,
      .shards = fx->shards,
      .process_mode = 0,
      .info = &fx->info,
      .err = fx->err,
      .errlen = sizeof fx->err};
  return p->solve(ctx, &call);
}

zd *lfx_read_a(lfx_t *fx) {
  int64_t n = fx->n;
  if (fx->layout == MUSTER_LAYOUT_CYCLIC)
    ASSERT_OK(muster_layout_cyclic_to_block(fx->t, n, fx->lda, fx->tile, fx->R, fx->cyc, fx->blk));
  zd *out = malloc(sizeof(zd) * (size_t)(n * n));
  ASSERT(out);
  int64_t S = (n + fx->R - 1) / fx->R;
  for (int64_t j = 0; j < n; j++)
    for (int64_t i = 0; i < n; i++) out[j * n + i] = lfx_get(fx, fx->blk[j / S], fx->lda, i, j % S);
  return out;
}

void lfx_free(lfx_t *fx) {
  for (int r = 0; r < fx->R; r++) {
    free(fx->blk[r]);
    free(fx->cyc[r]);
    free(fx->shards[r].b);
    free(fx->shards[r].w);
  }
  free(fx->A);
  free(fx->B);
}

static double fnorm(const zd *m, int64_t k) {
  double s = 0;
  for (int64_t i = 0; i < k; i++) s += creal(m[i] * conj(m[i]));
  return sqrt(s);
}

double lfx_potrs_residual(const lfx_t *fx) {
  int64_t n = fx->n, m = fx->nrhs;
  double worst = 0, na = fnorm(fx->A, n * n);
  zd *X = malloc(sizeof(zd) * (size_t)(n * m)), *Rm = malloc(sizeof(zd) * (size_t)(n * m));
  ASSERT(X && Rm);
  for (int r = 0; r < fx->R; r++) {
    for (int64_t c = 0; c < m; c++)
      for (int64_t i = 0; i < n; i++) X[c * n + i] = lfx_get(fx, fx->shards[r].b, fx->ldb, i, c);
    for (int64_t c = 0; c < m; c++) {
      for (int64_t i = 0; i < n; i++) {
        zd v = -fx->B[c * n + i];
        for (int64_t k = 0; k < n; k++) v += fx->A[k * n + i] * X[c * n + k];
        Rm[c * n + i] = v;
      }
    }
    double res = fnorm(Rm, n * m) / (na * fnorm(X, n * m) * n * lfx_eps(fx->t));
    if (res > worst) worst = res;
  }
  free(X);
  free(Rm);
  return worst;
}

double lfx_factor_residual(const lfx_t *fx) {
  int64_t n = fx->n;
  zd *F = lfx_read_a((lfx_t *)fx), *D = malloc(sizeof(zd) * (size_t)(n * n));
  ASSERT(D);
  for (int64_t j = 0; j < n; j++) {
    for (int64_t i = 0; i < n; i++) {
      zd v = 0; /* (L L^H)[i][j] = sum_k L[i][k] conj(L[j][k]), k <= min(i, j) */
      for (int64_t k = 0; k <= (i < j ? i : j); k++) v += F[k * n + i] * conj(F[k * n + j]);
      D[j * n + i] = v - fx->A[j * n + i];
    }
  }
  /* the strictly upper triangle must be untouched */
  for (int64_t j = 0; j < n; j++)
    for (int64_t i = 0; i < j; i++) ASSERT(F[j * n + i] == fx->A[j * n + i]);
  double res = fnorm(D, n * n) / (fnorm(fx->A, n * n) * n * lfx_eps(fx->t));
  free(F);
  free(D);
  return res;
}

double lfx_potri_residual(const lfx_t *fx) {
  int64_t n = fx->n;
  zd *V = lfx_read_a((lfx_t *)fx), *D = malloc(sizeof(zd) * (size_t)(n * n));
  ASSERT(D);
  for (int64_t j = 0; j < n; j++)
    for (int64_t i = 0; i < n; i++) ASSERT(V[j * n + i] == conj(V[i * n + j])); /* Hermitian */
  for (int64_t j = 0; j < n; j++) {
    for (int64_t i = 0; i < n; i++) {
      zd v = i == j ? -1 : 0;
      for (int64_t k = 0; k < n; k++) v += fx->A[k * n + i] * V[j * n + k];
      D[j * n + i] = v;
    }
  }
  double res = fnorm(D, n * n) / (fnorm(fx->A, n * n) * fnorm(V, n * n) * n * lfx_eps(fx->t));
  free(V);
  free(D);
  return res;
}

static double w_at(const lfx_t *fx, int r, int64_t i) {
  return (fx->t == MUSTER_F32 || fx->t == MUSTER_C64) ? ((float *)fx->shards[r].w)[i]
                                                      : ((double *)fx->shards[r].w)[i];
}

double lfx_syevd_residual(const lfx_t *fx, double *orth) {
  int64_t n = fx->n;
  size_t wsz = (fx->t == MUSTER_F32 || fx->t == MUSTER_C64) ? 4 : 8;
  for (int r = 1; r < fx->R; r++) ASSERT(memcmp(fx->shards[r].w, fx->shards[0].w, (size_t)n * wsz) == 0);
  for (int64_t i = 1; i < n; i++) ASSERT(w_at(fx, 0, i - 1) <= w_at(fx, 0, i)); /* ascending */
  zd *V = lfx_read_a((lfx_t *)fx), *D = malloc(sizeof(zd) * (size_t)(n * n));
  ASSERT(D);
  for (int64_t j = 0; j < n; j++) {
    for (int64_t i = 0; i < n; i++) {
      zd v = -V[j * n + i] * w_at(fx, 0, j);
      for (int64_t k = 0; k < n; k++) v += fx->A[k * n + i] * V[j * n + k];
      D[j * n + i] = v;
    }
  }
  double res = fnorm(D, n * n) / (fnorm(fx->A, n * n) * n * lfx_eps(fx->t));
  for (int64_t j = 0; j < n; j++) {
    for (int64_t i = 0; i < n; i++) {
      zd v = i == j ? -1 : 0;
      for (int64_t k = 0; k < n; k++) v += conj(V[i * n + k]) * V[j * n + k];
      D[j * n + i] = v;
    }
  }
  *orth = fnorm(D, n * n) / (n * lfx_eps(fx->t));
  free(V);
  free(D);
  return res;
}
