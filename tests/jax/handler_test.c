/*
 * tests/jax/handler_test.c - the FFI handler driven without XLA.
 *
 * A fake XLA_FFI_Api (errors, run id, device ordinal) and hand-built call
 * frames exercise what XLA would: the metadata call (no api), attribute
 * decoding and its errors, a collective potri / potrs / syevd / getrs / gels / gesvd
 * from R threads (one "device" each), singular and rank-deficient getrs /
 * gels, an older XLA whose api lacks RunId_Get and
 * DeviceOrdinal_Get, return_status with a matrix that is not positive
 * definite, concurrent launches, and a missing peer; a rank that fails
 * before it joins (prejoin_test.c); and the store handler of
 * muster_jax.distributed (store_handler_test.c).  Built by
 * adapters/jax/SConscript as <build>/tests/jax-handler-test; run by
 * tests/python/jax/test_handler_c.py (also under san=address / thread).
 * Exit 0 when every check holds; prints what failed otherwise.  The fake
 * XLA, the frames and the launches: handler_fake.c.
 */
#include <dlfcn.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "handler_fake.h"
#include "muster.h"

int failures;

/* ---- the checks --------------------------------------------------------------- */

static void test_metadata(void) {
  XLA_FFI_Metadata md;
  memset(&md, 0, sizeof md);
  md.struct_size = XLA_FFI_Metadata_STRUCT_SIZE;
  md.api_version.struct_size = XLA_FFI_Api_Version_STRUCT_SIZE;
  XLA_FFI_Metadata_Extension ext;
  memset(&ext, 0, sizeof ext);
  ext.extension_base.struct_size = XLA_FFI_Metadata_Extension_STRUCT_SIZE;
  ext.extension_base.type = XLA_FFI_Extension_Metadata;
  ext.metadata = &md;
  XLA_FFI_CallFrame cf;
  memset(&cf, 0, sizeof cf);
  cf.struct_size = XLA_FFI_CallFrame_STRUCT_SIZE;
  cf.extension_start = (void *)&ext;
  cf.api = NULL; /* XLA passes none with the metadata call */
  CHECK(muster_jax_cpu(&cf) == NULL, "metadata call failed");
  CHECK(md.api_version.major_version == 0 && md.api_version.minor_version == 1, "version %d.%d",
        md.api_version.major_version, md.api_version.minor_version);
  CHECK(md.traits == 0, "traits %u", md.traits);
}

static void test_collective(int routine, int R, int64_t n, const XLA_FFI_Api *api, int64_t run_id) {
  double *a = spd(n);
  double *b = malloc((size_t)n * 2 * sizeof(double));
  for (int64_t i = 0; i < 2 * n; i++) b[i] = urand();
  launch_t L;
  run_launch(&L, routine, R, n, n, a, b, 2, run_id, 11, api, 0);
  for (int r = 0; r < R; r++) {
    CHECK(L.err[r] == NULL, "routine %d rank %d: %s", routine, r, L.err[r]);
    CHECK(L.p[r].status == 0, "status %d", L.p[r].status);
  }
  if (routine == MUSTER_POTRI) {
    double e = inv_error(&L, R, n, a);
    CHECK(e < 1e-10, "potri error %g", e);
  } else if (routine == MUSTER_POTRS) {
    for (int r = 0; r < R; r++) {
      double e = 0;
      for (int64_t c = 0; c < 2; c++)
        for (int64_t i = 0; i < n; i++) {
          double s = 0;
          for (int64_t k = 0; k < n; k++) s += a[i + k * n] * L.p[r].b[k + c * n];
          if (fabs(s - b[i + c * n]) > e) e = fabs(s - b[i + c * n]);
        }
      CHECK(e < 1e-10, "potrs rank %d residual %g", r, e);
    }
  } else {
    /* eigenvalues ascending, the same on every rank, trace preserved */
    double tr = 0, sw = 0;
    for (int64_t i = 0; i < n; i++) tr += a[i + i * n];
    for (int64_t i = 0; i < n; i++) {
      sw += L.p[0].wv[i];
      if (i) CHECK(L.p[0].wv[i] >= L.p[0].wv[i - 1], "not ascending at %lld", (long long)i);
      for (int r = 1; r < R; r++) CHECK(L.p[r].wv[i] == L.p[0].wv[i], "rank %d w differs", r);
    }
    CHECK(fabs(tr - sw) < 1e-9 * fabs(tr), "trace %g vs sum %g", tr, sw);
  }
  free_launch(&L, R);
  free(a);
  free(b);
}

void expect_error(frame_t *f, const char *want) {
  char *m = call(f);
  CHECK(m && strstr(m, want), "want error containing \"%s\", got \"%s\"", want, m ? m : "(none)");
  free(m);
}

static void test_attribute_errors(void) {
  double a[36] = {0}, b[6] = {0};
  for (int i = 0; i < 6; i++) a[i * 7] = 2;
  problem_t p;
  memset(&p, 0, sizeof p);
  p.routine = MUSTER_POTRI;
  p.nranks = 1;
  p.n = p.ld = p.w = 6;
  p.a = a;
  p.b = b;
  p.api = &new_api;
  p.run_id = 77;
  frame_t *f = malloc(sizeof *f);
  build(f, &p);
  attr_drop(f, "nranks");
  expect_error(f, "missing attribute nranks");
  build(f, &p);
  attr_int(f, "bogus", 1);
  expect_error(f, "unknown attribute bogus");
  build(f, &p);
  attr_drop(f, "provider");
  attr_int(f, "provider", 3);
  expect_error(f, "attribute provider must be a string");
  build(f, &p);
  attr_drop(f, "n");
  attr_str(f, "n", "six");
  expect_error(f, "attribute n must be an integer");
  build(f, &p);
  attr_drop(f, "routine");
  attr_int(f, "routine", 9);
  expect_error(f, "routine 9 unknown");
  build(f, &p);
  f->cf.stage = XLA_FFI_ExecutionStage_PREPARE;
  expect_error(f, "stage other than execute");
  build(f, &p);
  f->bufs[1].dtype = XLA_FFI_DataType_S32;
  expect_error(f, "float32, float64, complex64, complex128");
  build(f, &p);
  f->cf.args.size = 1;
  expect_error(f, "potri takes 2 operands");
  build(f, &p);
  p.rankop[0] = 5; /* the rank operand says 5, of 1 rank */
  expect_error(f, "rank 5 out of 0..0");
  build(f, &p);
  char *m = call(f);
  CHECK(m == NULL, "a good call failed: %s", m);
  free(m);
  CHECK(fabs(a[0] - 0.5) < 1e-15, "potri of 2I gave %g", a[0]);
  free(f);
}

static void test_status_not_pd(void) {
  int64_t n = 8;
  double *a = spd(n);
  a[5 + 5 * n] = -1.0;
  launch_t L;
  run_launch(&L, MUSTER_POTRI, 2, n, n, a, NULL, 0, 4242, 12, &new_api, 1);
  for (int r = 0; r < 2; r++) {
    CHECK(L.err[r] == NULL, "return_status should not raise: %s", L.err[r]);
    CHECK(L.p[r].status > 0 && L.p[r].status <= 6, "status %d", L.p[r].status);
    CHECK(isnan(L.p[r].a[0]), "outputs not NaN");
  }
  free_launch(&L, 2);
  run_launch(&L, MUSTER_POTRI, 2, n, n, a, NULL, 0, 4243, 12, &new_api, 0);
  for (int r = 0; r < 2; r++)
    CHECK(L.err[r] && strstr(L.err[r], "not positive definite"), "rank %d: %s", r, L.err[r] ? L.err[r] : "none");
  free_launch(&L, 2);
  free(a);
}

/* max |G^T (A X - B)| (gels: the normal equations; G = A) or max |A X - B|
 * (getrs: G = NULL) for rank r's X, A m x n, B m x nrhs (ld m). */
static double general_residual(const launch_t *L, int r, int64_t m, int64_t n, int64_t nrhs, const double *a,
                               const double *b, int normal) {
  const double *x = L->p[r].b; /* X in B's first n rows, ld m */
  double *res = malloc((size_t)m * sizeof *res), e = 0;
  for (int64_t c = 0; c < nrhs; c++) {
    for (int64_t i = 0; i < m; i++) {
      double s = -b[i + c * m];
      for (int64_t k = 0; k < n; k++) s += a[i + k * m] * x[k + c * m];
      res[i] = s;
    }
    for (int64_t i = 0; i < (normal ? n : m); i++) {
      double s = res[i];
      if (normal) {
        s = 0;
        for (int64_t k = 0; k < m; k++) s += a[k + i * m] * res[k];
      }
      if (fabs(s) > e) e = fabs(s);
    }
  }
  free(res);
  return e;
}

/* getrs (m = n) and gels (m > n) on R ranks: residuals on random inputs;
 * then A made singular (getrs: a zero column; gels: two equal columns):
 * the status names the column with return_status, else every rank's error
 * says what. */
static void test_general(int routine, int R, int64_t m, int64_t n, int64_t run_id) {
  double *a = malloc((size_t)(m * n) * sizeof *a), *b = malloc((size_t)(m * 2) * sizeof *b);
  for (int64_t i = 0; i < m * n; i++) a[i] = urand();
  for (int64_t j = 0; j < n; j++) a[j + j * m] += (double)n; /* well conditioned */
  for (int64_t i = 0; i < m * 2; i++) b[i] = urand();
  int gels = routine == MUSTER_GELS;
  launch_t L;
  run_launch(&L, routine, R, m, n, a, b, 2, run_id, 13, &new_api, 0);
  for (int r = 0; r < R; r++) {
    CHECK(L.err[r] == NULL && L.p[r].status == 0, "%s rank %d: %s (status %d)", muster_routine_name(routine), r,
          L.err[r] ? L.err[r] : "", L.p[r].status);
    double e = general_residual(&L, r, m, n, 2, a, b, gels);
    CHECK(e < 1e-10 * (double)(m * n), "%s rank %d residual %g", muster_routine_name(routine), r, e);
  }
  free_launch(&L, R);
  int64_t k = n / 2; /* column k (0-based) made dependent */
  for (int64_t i = 0; i < m; i++) a[i + k * m] = gels ? a[i + (k - 1) * m] : 0;
  run_launch(&L, routine, R, m, n, a, b, 2, run_id + 1, 13, &new_api, 1);
  for (int r = 0; r < R; r++) {
    CHECK(L.err[r] == NULL, "return_status should not raise: %s", L.err[r]);
    CHECK(L.p[r].status > 0 && L.p[r].status <= n, "%s singular: status %d", muster_routine_name(routine),
          L.p[r].status);
    CHECK(isnan(L.p[r].b[0]), "X not NaN");
  }
  free_launch(&L, R);
  run_launch(&L, routine, R, m, n, a, b, 2, run_id + 2, 13, &new_api, 0);
  const char *want = gels ? "rank deficient" : "singular";
  for (int r = 0; r < R; r++)
    CHECK(L.err[r] && strstr(L.err[r], want), "rank %d: %s", r, L.err[r] ? L.err[r] : "none");
  free_launch(&L, R);
  free(a);
  free(b);
}

/* gesvd of a wide A (m < n) on R ranks: the handler binds its four
 * results (A, B, W, status) and takes A's m < n rows; the thin form puts
 * U (m x m) into B (docs/factorizations.md): U^T U = I, the singular values
 * descending with sum s_i^2 = ||A||_F^2.  A B of too few columns for the
 * factors is refused, saying how many it needs. */
static void test_gesvd_wide(int R, int64_t m, int64_t n, int64_t run_id) {
  double *a = malloc((size_t)(m * n) * sizeof *a), *b = calloc((size_t)(m * m), sizeof *b), fro = 0;
  for (int64_t i = 0; i < m * n; i++) {
    a[i] = urand();
    fro += a[i] * a[i];
  }
  launch_t L;
  run_launch(&L, MUSTER_GESVD, R, m, n, a, b, m, run_id, 17, &new_api, 0);
  for (int r = 0; r < R; r++) {
    CHECK(L.err[r] == NULL && L.p[r].status == 0, "gesvd rank %d: %s", r, L.err[r] ? L.err[r] : "");
    const double *s = L.p[r].wv, *u = L.p[r].b;
    double ss = 0, orth = 0;
    for (int64_t i = 0; i < m; i++) {
      ss += s[i] * s[i];
      CHECK(i == 0 || s[i] <= s[i - 1], "gesvd rank %d: s not descending at %lld", r, (long long)i);
    }
    for (int64_t i = 0; i < m; i++)
      for (int64_t j = 0; j < m; j++) {
        double d = 0;
        for (int64_t k = 0; k < m; k++) d += u[k + i * m] * u[k + j * m];
        orth = fmax(orth, fabs(d - (i == j)));
      }
    CHECK(fabs(ss - fro) < 1e-12 * fro * (double)n && orth < 1e-12 * (double)n,
          "gesvd rank %d: sum s^2 %g vs %g, U^T U - I %g", r, ss, fro, orth);
  }
  free_launch(&L, R);
  run_launch(&L, MUSTER_GESVD, R, m, n, a, b, m - 1, run_id + 1, 17, &new_api, 0);
  for (int r = 0; r < R; r++)
    CHECK(L.err[r] && strstr(L.err[r], "columns for its factors"), "rank %d: %s", r, L.err[r] ? L.err[r] : "none");
  free_launch(&L, R);
  free(a);
  free(b);
}

typedef struct conc {
  int64_t run_id;
  int ok;
} conc_t;

static void *concurrent_launch(void *arg) {
  conc_t *c = arg;
  rng_state = (uint64_t)c->run_id * 7919u;
  for (int i = 0; i < 20; i++) test_collective(MUSTER_POTRI, 3, 9, &new_api, c->run_id * 1000 + i);
  return NULL;
}

/* The cuda platform's path with a fake libcuda.so.1 (fake_cuda.c, loaded
 * first so the handler's dlopen finds it by soname): the rank read, the
 * status write and the NaN fill go through the driver with the stream's
 * context pushed and popped; the device comes from the pointer. */
static void test_cuda_path(void) {
  char exe[PATH_MAX], lib[PATH_MAX + 32];
  ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (len <= 0) {
    CHECK(0, "readlink /proc/self/exe");
    return;
  }
  exe[len] = '\0';
  *strrchr(exe, '/') = '\0';
  snprintf(lib, sizeof lib, "%s/fakecuda/libcuda.so.1", exe);
  void *h = dlopen(lib, RTLD_NOW | RTLD_GLOBAL);
  CHECK(h != NULL, "cannot load %s: %s", lib, dlerror());
  if (!h) return;
  void (*stats)(int *, int *, int *, int *) = (void (*)(int *, int *, int *, int *))dlsym(h, "fake_cuda_stats");
  double a[16];
  for (int i = 0; i < 16; i++) a[i] = i % 5 == 0 ? 2.0 : 0.0;
  problem_t p;
  memset(&p, 0, sizeof p);
  p.routine = MUSTER_POTRI;
  p.nranks = 1;
  p.n = p.ld = p.w = 4;
  p.a = a;
  p.api = &new_api;
  p.run_id = 555;
  p.return_status = 1;
  p.provider = "lapack"; /* lapack takes host memory only: the solve is refused */
  frame_t *f = malloc(sizeof *f);
  build(f, &p);
  f->cf.attrs.size = f->nattr;
  XLA_FFI_Error *e = muster_jax_cuda(&f->cf);
  CHECK(e == NULL, "return_status=1 raised: %s", e ? e->msg : "");
  CHECK(p.status < 0, "status %d (lapack must refuse device memory)", p.status);
  CHECK(isnan(a[0]) && isnan(a[15]), "outputs not NaN-filled");
  int depth = -1, copies = -1, sets = -1, open_depth = -1;
  stats(&depth, &copies, &sets, &open_depth);
  CHECK(depth == 1 && open_depth == 0, "context push depth %d, left open %d", depth, open_depth);
  CHECK(copies >= 2 && sets >= 1, "copies %d sets %d", copies, sets);
  /* the same without return_status: an error naming the device from the pointer */
  p.return_status = 0;
  p.run_id = 556;
  build(f, &p);
  char *m = NULL;
  f->cf.attrs.size = f->nattr;
  e = muster_jax_cuda(&f->cf);
  if (e) {
    m = strdup(e->msg);
    XLA_FFI_Error_Destroy_Args d = {XLA_FFI_Error_Destroy_Args_STRUCT_SIZE, NULL, e};
    fake_error_destroy(&d);
  }
  CHECK(m && strstr(m, "device 3"), "error: %s", m ? m : "(none)");
  free(m);
  /* process mode on GPUs: the shard is staged (a copy into cuMemAlloc
   * memory) and the solve reaches provider selection (only lapack here) */
  p.run_id = 557;
  build(f, &p);
  attr_drop(f, "process_mode");
  attr_int(f, "process_mode", 1);
  handler = muster_jax_cuda;
  int copies_before = -1;
  stats(&depth, &copies_before, &sets, &open_depth);
  expect_error(f, "no usable provider for potri");
  stats(&depth, &copies, &sets, &open_depth);
  CHECK(copies > copies_before, "the shard was not staged (copies %d -> %d)", copies_before, copies);
  handler = muster_jax_cpu;
  /* a stream without a context: the driver's error, not a crash */
  fake_stream = NULL;
  build(f, &p);
  handler = muster_jax_cuda;
  expect_error(f, "cuStreamGetCtx");
  handler = muster_jax_cpu;
  fake_stream = (void *)(uintptr_t)0x5;
  stats(&depth, &copies, &sets, &open_depth);
  CHECK(open_depth == 0, "context left pushed");
  free(f);
}

static void test_missing_peer(void) {
  setenv("MUSTER_TIMEOUT", "1", 1);
  double a[16] = {2, 0, 0, 0, 0, 2, 0, 0, 0, 0, 2, 0, 0, 0, 0, 2};
  problem_t p;
  memset(&p, 0, sizeof p);
  p.routine = MUSTER_POTRI;
  p.nranks = 2; /* rank 1 never comes */
  p.n = p.ld = 4;
  p.w = 2;
  p.a = a;
  p.api = &new_api;
  p.run_id = 99;
  frame_t *f = malloc(sizeof *f);
  build(f, &p);
  time_t t0 = time(NULL);
  char *m = call(f);
  CHECK(m && strstr(m, "rank 0/2"), "missing peer: %s", m ? m : "(no error)");
  CHECK(time(NULL) - t0 < 10, "took %ld s", (long)(time(NULL) - t0));
  free(m);
  free(f);
  unsetenv("MUSTER_TIMEOUT");
}

int main(void) {
  rng_state = (uint64_t)time(NULL);
  make_apis();
  test_metadata();
  test_collective(MUSTER_POTRI, 3, 10, &new_api, 1);
  test_collective(MUSTER_POTRS, 2, 12, &new_api, 2);
  test_collective(MUSTER_SYEVD, 4, 9, &new_api, 3);
  test_collective(MUSTER_POTRI, 2, 7, &old_api, 0); /* no RunId_Get: a name per launch */
  test_general(MUSTER_GETRS, 3, 11, 11, 20);
  test_general(MUSTER_GELS, 2, 17, 9, 30);
  test_general(MUSTER_GELS, 4, 12, 12, 40); /* square gels; n not divisible by R */
  test_gesvd_wide(3, 5, 8, 50);
  test_attribute_errors();
  test_status_not_pd();
  /* two launches of the same site at once from different threads */
  pthread_t t[2];
  conc_t c[2] = {{1, 0}, {2, 0}};
  for (int i = 0; i < 2; i++) pthread_create(&t[i], NULL, concurrent_launch, &c[i]);
  for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
  test_missing_peer();
  test_prejoin_failures();
  test_cuda_path();
  test_store_handler();
  muster_group_cache_flush();
  if (failures) {
    fprintf(stderr, "jax-handler-test: %d check(s) failed\n", failures);
    return 1;
  }
  printf("jax-handler-test: all checks passed\n");
  return 0;
}
