/* tests/jax/handler_fake.c - the FFI handler test's harness: a fake XLA,
 * call frames, matrices, launches (handler_fake.h). */
#include <math.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "handler_fake.h"

/* ---- a fake XLA ---------------------------------------------------------- */

static XLA_FFI_Error *fake_error_create(XLA_FFI_Error_Create_Args *a) {
  XLA_FFI_Error *e = malloc(sizeof *e);
  e->msg = strdup(a->message);
  e->code = a->errc;
  return e;
}

void fake_error_destroy(XLA_FFI_Error_Destroy_Args *a) {
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

void *fake_stream = (void *)(uintptr_t)0x5;
static XLA_FFI_Error *fake_stream_get(XLA_FFI_Stream_Get_Args *a) {
  a->stream = fake_stream;
  return NULL;
}

XLA_FFI_Api new_api, old_api;

void make_apis(void) {
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

void frame_buf(frame_t *f, int i, XLA_FFI_DataType t, void *data, int64_t d0, int64_t d1) {
  f->bufs[i].struct_size = XLA_FFI_Buffer_STRUCT_SIZE;
  f->bufs[i].dtype = t;
  f->bufs[i].data = data;
  f->bufs[i].rank = d1 < 0 ? 1 : 2;
  f->dims[i][0] = d0;
  f->dims[i][1] = d1;
  f->bufs[i].dims = f->dims[i];
}

void attr_int(frame_t *f, const char *name, int64_t v) {
  int i = f->nattr++;
  f->names[i] = (XLA_FFI_ByteSpan){name, strlen(name)};
  f->namep[i] = &f->names[i];
  f->atype[i] = XLA_FFI_AttrType_SCALAR;
  f->ival[i] = v;
  f->scal[i] = (XLA_FFI_Scalar){XLA_FFI_DataType_S64, &f->ival[i]};
  f->attrp[i] = &f->scal[i];
}

void attr_str(frame_t *f, const char *name, const char *v) {
  int i = f->nattr++;
  f->names[i] = (XLA_FFI_ByteSpan){name, strlen(name)};
  f->namep[i] = &f->names[i];
  f->atype[i] = XLA_FFI_AttrType_STRING;
  f->strs[i] = (XLA_FFI_ByteSpan){v, strlen(v)};
  f->attrp[i] = &f->strs[i];
}

void attr_drop(frame_t *f, const char *name) {
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

/* The frame XLA would build for one device's instance of `p`. */
static int takes_b(int routine) { return (muster_routine_takes(routine) & MUSTER_TAKES_B) != 0; }

void build(frame_t *f, problem_t *p) {
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
  frame_buf(f, 0, XLA_FFI_DataType_S32, p->rankop, 2, -1);
  f->argp[na++] = &f->bufs[0];
  frame_buf(f, 1, XLA_FFI_DataType_F64, p->a, p->ld, p->w);
  f->argp[na++] = &f->bufs[1];
  frame_buf(f, 2, XLA_FFI_DataType_F64, p->a, p->ld, p->w); /* aliased output */
  f->retp[nr++] = &f->bufs[2];
  if (takes_b(p->routine)) {
    frame_buf(f, 3, XLA_FFI_DataType_F64, p->b, p->ld, p->nrhs);
    f->argp[na++] = &f->bufs[3];
    frame_buf(f, 4, XLA_FFI_DataType_F64, p->b, p->ld, p->nrhs);
    f->retp[nr++] = &f->bufs[4];
    if (p->routine == MUSTER_GESVD) { /* the min(m, n) singular values */
      frame_buf(f, 5, XLA_FFI_DataType_F64, p->wv, p->ld < p->n ? p->ld : p->n, -1);
      f->retp[nr++] = &f->bufs[5];
    }
  } else if (p->routine == MUSTER_SYEVD) {
    frame_buf(f, 5, XLA_FFI_DataType_F64, p->wv, p->ld, -1);
    f->retp[nr++] = &f->bufs[5];
  }
  frame_buf(f, 6, XLA_FFI_DataType_S32, &p->status, 1, -1);
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

XLA_FFI_Error *(*handler)(XLA_FFI_CallFrame *) = muster_jax_cpu;

char *call(frame_t *f) {
  f->cf.attrs.size = f->nattr;
  XLA_FFI_Error *e = handler(&f->cf);
  if (!e) return NULL;
  char *m = strdup(e->msg);
  XLA_FFI_Error_Destroy_Args d = {XLA_FFI_Error_Destroy_Args_STRUCT_SIZE, NULL, e};
  fake_error_destroy(&d);
  return m;
}

/* ---- matrices --------------------------------------------------------------- */

__thread uint64_t rng_state;
double urand(void) {
  rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
  return (double)(rng_state >> 11) / (double)(1ULL << 53) - 0.5;
}

/* n x n SPD column-major, ld = n (diagonally dominant). */
double *spd(int64_t n) {
  double *a = calloc((size_t)(n * n), sizeof *a);
  for (int64_t j = 0; j < n; j++)
    for (int64_t i = 0; i <= j; i++) {
      double v = i == j ? (double)n : urand();
      a[i + j * n] = a[j + i * n] = v;
    }
  return a;
}

/* ---- running one launch from R threads ----------------------------------------- */

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
void run_launch(launch_t *L, int routine, int R, int64_t m, int64_t n, const double *a, double *b,
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

void free_launch(launch_t *L, int R) {
  for (int r = 0; r < R; r++) {
    free(L->p[r].a);
    free(L->p[r].b);
    free(L->p[r].wv);
    free(L->err[r]);
  }
}

/* ||A * Ainv - I||_max from the shards of Ainv */
double inv_error(const launch_t *L, int R, int64_t n, const double *a) {
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
