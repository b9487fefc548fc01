/*
 * tests/jax/handler_test.c - the FFI handler driven without XLA.
 *
 * A fake XLA_FFI_Api (errors, run id, device ordinal) and hand-built call
 * frames exercise what XLA would: the metadata call (no api), attribute
 * decoding and its errors, a collective potri / potrs / syevd / getrs / gels / gesvd
 * from R threads (one "device" each), singular and rank-deficient getrs /
 * gels, an older XLA whose api lacks RunId_Get and
 * DeviceOrdinal_Get, return_status with a matrix that is not positive
 * definite, concurrent launches, and a missing peer.  Built by
 * adapters/jax/SConscript as <build>/tests/jax-handler-test; run by
 * tests/python/jax/test_handler_c.py (also under san=address / thread).
 * Exit 0 when every check holds; prints what failed otherwise.
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

#include "muster.h"
#include "xla/ffi/api/c_api.h"

XLA_FFI_Error *muster_jax_cpu(XLA_FFI_CallFrame *cf);
XLA_FFI_Error *muster_jax_cuda(XLA_FFI_CallFrame *cf);

static int failures;
#define CHECK(cond, ...)                                                        \
  do {                                                                          \
    if (!(cond)) {                                                              \
      fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);           \
      fprintf(stderr, __VA_ARGS__);                                             \
      fputc('\n', stderr);                                                      \
      __atomic_add_fetch(&failures, 1, __ATOMIC_SEQ_CST);                       \
    }                                                                           \
  } while (0)

/* ---- a fake XLA ---------------------------------------------------------- */

struct XLA_FFI_Error {
  char *msg;
  XLA_FFI_Error_Code code;
};

/* what our fake XLA passes as the (opaque) execution context */
typedef struct fake_ctx {
  int64_t run_id;
  int32_t device;
} fake_ctx_t;

static XLA_FFI_Error *fake_error_create(XLA_FFI_Error_Create_Args *a) {
  XLA_FFI_Error *e = malloc(sizeof *e);
  e->msg = strdup(a->message);
  e->code = a->errc;
  return e;
}

static void fake_error_destroy(XLA_FFI_Error_Destroy_Args *a) {
  free(a->error->msg);
  free(a->error);
}

static XLA_FFI_Error *fake_run_id(XLA_FFI_RunId_Get_Args *a) {
  a->run_id = ((const fake_ctx_t *)(const void *)a->ctx)->run_id;
  return NULL;
}

static XLA_FFI_Error *fake_ordinal(XLA_FFI_DeviceOrdinal_Get_Args *a) {
  a->device_ordinal = ((const fake_ctx_t *)(const void *)a->ctx)->device;
  return NULL;
}

static void *fake_stream = (void *)(uintptr_t)0x5;
static XLA_FFI_Error *fake_stream_get(XLA_FFI_Stream_Get_Args *a) {
  a->stream = fake_stream;
  return NULL;
}

static XLA_FFI_Api new_api, old_api;

static void make_apis(void) {
  memset(&new_api, 0, sizeof new_api);
  new_api.struct_size = XLA_FFI_Api_STRUCT_SIZE;
  new_api.XLA_FFI_Error_Create = fake_error_create;
  new_api.XLA_FFI_Error_Destroy = fake_error_destroy;
  new_api.XLA_FFI_RunId_Get = fake_run_id;
  new_api.XLA_FFI_DeviceOrdinal_Get = fake_ordinal;
  new_api.XLA_FFI_Stream_Get = fake_stream_get;
  /* an XLA from before RunId_Get: the api ends at ThreadPool/Future entries */
  old_api = new_api;
  old_api.struct_size = offsetof(XLA_FFI_Api, XLA_FFI_RunId_Get);
  old_api.XLA_FFI_RunId_Get = NULL;
  old_api.XLA_FFI_DeviceOrdinal_Get = NULL;
}

/* ---- building call frames ---------------------------------------------------- */

enum { MAXA = 16 };

typedef struct frame {
  XLA_FFI_CallFrame cf;
  fake_ctx_t ctx;
  XLA_FFI_Buffer bufs[8];
  int64_t dims[8][2];
  void *argp[4], *retp[4];
  XLA_FFI_ArgType at[4];
  XLA_FFI_RetType rt[4];
  /* attributes */
  XLA_FFI_AttrType atype[MAXA];
  XLA_FFI_ByteSpan names[MAXA], *namep[MAXA], strs[MAXA];
  XLA_FFI_Scalar scal[MAXA];
  int64_t ival[MAXA];
  void *attrp[MAXA];
  int nattr;
} frame_t;

static void buf(frame_t *f, int i, XLA_FFI_DataType t, void *data, int64_t d0, int64_t d1) {
  f->bufs[i].struct_size = XLA_FFI_Buffer_STRUCT_SIZE;
  f->bufs[i].dtype = t;
  f->bufs[i].data = data;
  f->bufs[i].rank = d1 < 0 ? 1 : 2;
  f->dims[i][0] = d0;
  f->dims[i][1] = d1;
  f->bufs[i].dims = f->dims[i];
}

static void attr_int(frame_t *f, const char *name, int64_t v) {
  int i = f->nattr++;
  f->names[i] = (XLA_FFI_ByteSpan){name, strlen(name)};
  f->namep[i] = &f->names[i];
  f->atype[i] = XLA_FFI_AttrType_SCALAR;
  f->ival[i] = v;
  f->scal[i] = (XLA_FFI_Scalar){XLA_FFI_DataType_S64, &f->ival[i]};
  f->attrp[i] = &f->scal[i];
}

static void attr_str(frame_t *f, const char *name, const char *v) {
  int i = f->nattr++;
  f->names[i] = (XLA_FFI_ByteSpan){name, strlen(name)};
  f->namep[i] = &f->names[i];
  f->atype[i] = XLA_FFI_AttrType_STRING;
  f->strs[i] = (XLA_FFI_ByteSpan){v, strlen(v)};
  f->attrp[i] = &f->strs[i];
}

static void attr_drop(frame_t *f, const char *name) {
  for (int i = 0; i < f->nattr; i++)
    if (f->names[i].len == strlen(name) && !memcmp(f->names[i].ptr, name, f->names[i].len)) {
      for (int j = i; j + 1 < f->nattr; j++) {
        f->atype[j] = f->atype[j + 1];
        f->names[j] = f->names[j + 1];
        f->strs[j] = f->strs[j + 1];
        f->scal[j] = f->scal[j + 1];
        f->ival[j] = f->ival[j + 1];
      }
      f->nattr--;
      for (int j = 0; j < f->nattr; j++) {
        f->namep[j] = &f->names[j];
        f->scal[j].value = &f->ival[j];
        f->attrp[j] = f->atype[j] == XLA_FFI_AttrType_STRING ? (void *)&f->strs[j] : (void *)&f->scal[j];
      }
      return;
    }
}

typedef struct problem {
  int routine, nranks, rank, return_status;
  int64_t n, ld, w, nrhs, run_id, site; /* ld: rows of A and B (gels: m) */
  int32_t rankop[2];
  double *a, *b, *wv;
  int32_t status;
  const XLA_FFI_Api *api;
  const char *provider;
} problem_t;

/* The frame XLA would build for one device's instance of `p`. */
static int takes_b(int routine) { return (muster_routine_takes(routine) & MUSTER_TAKES_B) != 0; }

static void build(frame_t *f, problem_t *p) {
  memset(f, 0, sizeof *f);
  f->cf.struct_size = XLA_FFI_CallFrame_STRUCT_SIZE;
  f->cf.api = p->api;
  f->ctx.run_id = p->run_id;
  f->ctx.device = p->rank;
  f->cf.ctx = (void *)&f->ctx;
  f->cf.stage = XLA_FFI_ExecutionStage_EXECUTE;
  p->rankop[0] = p->rank;
  p->rankop[1] = 0;
  int na = 0, nr = 0;
  buf(f, 0, XLA_FFI_DataType_S32, p->rankop, 2, -1);
  f->argp[na++] = &f->bufs[0];
  buf(f, 1, XLA_FFI_DataType_F64, p->a, p->ld, p->w);
  f->argp[na++] = &f->bufs[1];
  buf(f, 2, XLA_FFI_DataType_F64, p->a, p->ld, p->w); /* aliased output */
  f->retp[nr++] = &f->bufs[2];
  if (takes_b(p->routine)) {
    buf(f, 3, XLA_FFI_DataType_F64, p->b, p->ld, p->nrhs);
    f->argp[na++] = &f->bufs[3];
    buf(f, 4, XLA_FFI_DataType_F64, p->b, p->ld, p->nrhs);
    f->retp[nr++] = &f->bufs[4];
    if (p->routine == MUSTER_GESVD) { /* the min(m, n) singular values */
      buf(f, 5, XLA_FFI_DataType_F64, p->wv, p->ld < p->n ? p->ld : p->n, -1);
      f->retp[nr++] = &f->bufs[5];
    }
  } else if (p->routine == MUSTER_SYEVD) {
    buf(f, 5, XLA_FFI_DataType_F64, p->wv, p->ld, -1);
    f->retp[nr++] = &f->bufs[5];
  }
  buf(f, 6, XLA_FFI_DataType_S32, &p->status, 1, -1);
  f->retp[nr++] = &f->bufs[6];
  for (int i = 0; i < 4; i++) {
    f->at[i] = XLA_FFI_ArgType_BUFFER;
    f->rt[i] = XLA_FFI_RetType_BUFFER;
  }
  f->cf.args = (XLA_FFI_Args){XLA_FFI_Args_STRUCT_SIZE, NULL, na, f->at, f->argp};
  f->cf.rets = (XLA_FFI_Rets){XLA_FFI_Rets_STRUCT_SIZE, NULL, nr, f->rt, f->retp};
  attr_int(f, "routine", p->routine);
  attr_int(f, "n", p->n);
  attr_int(f, "nrhs", takes_b(p->routine) ? p->nrhs : 0);
  attr_int(f, "tile", 0);
  attr_int(f, "site", p->site);
  attr_int(f, "layout", MUSTER_LAYOUT_BLOCK);
  attr_int(f, "flags", 0);
  attr_int(f, "nranks", p->nranks);
  attr_int(f, "return_status", p->return_status);
  attr_int(f, "process_mode", 0);
  attr_str(f, "provider", p->provider ? p->provider : "lapack");
  attr_str(f, "group_key", "");
  f->cf.attrs = (XLA_FFI_Attrs){XLA_FFI_Attrs_STRUCT_SIZE, NULL, 0, f->atype, f->namep, f->attrp};
}

static XLA_FFI_Error *(*handler)(XLA_FFI_CallFrame *) = muster_jax_cpu;

static char *call(frame_t *f) {
  f->cf.attrs.size = f->nattr;
  XLA_FFI_Error *e = handler(&f->cf);
  if (!e) return NULL;
  char *m = strdup(e->msg);
  XLA_FFI_Error_Destroy_Args d = {XLA_FFI_Error_Destroy_Args_STRUCT_SIZE, NULL, e};
  fake_error_destroy(&d);
  return m;
}

/* ---- matrices --------------------------------------------------------------- */

static __thread uint64_t rng_state;
static double urand(void) {
  rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
  return (double)(rng_state >> 11) / (double)(1ULL << 53) - 0.5;
}

/* n x n SPD column-major, ld = n (diagonally dominant). */
static double *spd(int64_t n) {
  double *a = calloc((size_t)(n * n), sizeof *a);
  for (int64_t j = 0; j < n; j++)
    for (int64_t i = 0; i <= j; i++) {
      double v = i == j ? (double)n : urand();
      a[i + j * n] = a[j + i * n] = v;
    }
  return a;
}

/* ---- running one launch from R threads ----------------------------------------- */

typedef struct launch {
  problem_t p[8];
  char *err[8];
  pthread_t th[8];
} launch_t;

static void *rank_main(void *arg) {
  problem_t *p = arg;
  frame_t *f = malloc(sizeof *f);
  build(f, p);
  char *m = call(f);
  free(f);
  return m;
}

/* Column blocks of A (m x n; m = n but for gels) to R shards of S columns
 * (ld = m), run, back. */
static void run_launch(launch_t *L, int routine, int R, int64_t m, int64_t n, const double *a, double *b,
                       int64_t nrhs, int64_t run_id, int64_t site, const XLA_FFI_Api *api, int return_status) {
  int64_t S = (n + R - 1) / R;
  for (int r = 0; r < R; r++) {
    problem_t *p = &L->p[r];
    memset(p, 0, sizeof *p);
    p->routine = routine;
    p->nranks = R;
    p->rank = r;
    p->n = n;
    p->ld = m;
    p->w = S;
    p->nrhs = nrhs;
    p->run_id = run_id;
    p->site = site;
    p->api = api;
    p->return_status = return_status;
    p->a = calloc((size_t)(m * S), sizeof(double));
    for (int64_t j = 0; j < S && r * S + j < n; j++)
      memcpy(p->a + j * m, a + (r * S + j) * m, (size_t)m * sizeof(double));
    if (takes_b(routine)) {
      p->b = malloc((size_t)(m * nrhs) * sizeof(double));
      memcpy(p->b, b, (size_t)(m * nrhs) * sizeof(double));
    }
    if (routine == MUSTER_SYEVD || routine == MUSTER_GESVD) p->wv = calloc((size_t)n, sizeof(double));
    p->status = -999;
  }
  for (int r = 0; r < R; r++) pthread_create(&L->th[r], NULL, rank_main, &L->p[r]);
  for (int r = 0; r < R; r++) {
    void *why;
    pthread_join(L->th[r], &why);
    L->err[r] = why;
  }
}

static void free_launch(launch_t *L, int R) {
  for (int r = 0; r < R; r++) {
    free(L->p[r].a);
    free(L->p[r].b);
    free(L->p[r].wv);
    free(L->err[r]);
  }
}

/* ||A * Ainv - I||_max from the shards of Ainv */
static double inv_error(const launch_t *L, int R, int64_t n, const double *a) {
  int64_t S = (n + R - 1) / R;
  double err = 0;
  for (int64_t j = 0; j < n; j++) {
    const double *col = L->p[j / S].a + (j % S) * n;
    for (int64_t i = 0; i < n; i++) {
      double s = 0;
      for (int64_t k = 0; k < n; k++) s += a[i + k * n] * col[k];
      double e = fabs(s - (i == j));
      if (e > err) err = e;
    }
  }
  return err;
}

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

static void expect_error(frame_t *f, const char *want) {
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
  test_cuda_path();
  muster_group_cache_flush();
  if (failures) {
    fprintf(stderr, "jax-handler-test: %d check(s) failed\n", failures);
    return 1;
  }
  printf("jax-handler-test: all checks passed\n");
  return 0;
}
