/*
 * tests/jax/handler_fake.h - the harness of the FFI handler's test
 * (handler_test.c): a fake XLA_FFI_Api (errors, run id, device ordinal,
 * stream; an older XLA's without RunId_Get and DeviceOrdinal_Get), call
 * frames built by hand as XLA would for one device's instance of a
 * problem, random matrices, and one launch run from R threads, a rank
 * each (handler_fake.c).
 */
#ifndef MUSTER_HANDLER_FAKE_H
#define MUSTER_HANDLER_FAKE_H

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>

#include "muster.h"
#include "xla/ffi/api/c_api.h"

XLA_FFI_Error *muster_jax_cpu(XLA_FFI_CallFrame *cf);
XLA_FFI_Error *muster_jax_cuda(XLA_FFI_CallFrame *cf);

struct XLA_FFI_Error {
  char *msg;
  XLA_FFI_Error_Code code;
};

/* what our fake XLA passes as the (opaque) execution context */
typedef struct fake_ctx {
  int64_t run_id;
  int32_t device;
} fake_ctx_t;

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

typedef struct problem {
  int routine, nranks, rank, return_status;
  int64_t n, ld, w, nrhs, run_id, site; /* ld: rows of A and B (gels: m) */
  int32_t rankop[2];
  double *a, *b, *wv;
  int32_t status;
  const XLA_FFI_Api *api;
  const char *provider;
} problem_t;

typedef struct launch {
  problem_t p[8];
  char *err[8];
  pthread_t th[8];
} launch_t;

/* ---- checks (handler_test.c): a failed one is printed and counted ---- */
extern int failures;
#define CHECK(cond, ...)                                                        \
  do {                                                                          \
    if (!(cond)) {                                                              \
      fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);           \
      fprintf(stderr, __VA_ARGS__);                                             \
      fputc('\n', stderr);                                                      \
      __atomic_add_fetch(&failures, 1, __ATOMIC_SEQ_CST);                       \
    }                                                                           \
  } while (0)

/* ---- the fake XLA: make_apis fills new_api and old_api ---- */
extern XLA_FFI_Api new_api, old_api;
extern void *fake_stream; /* what Stream_Get hands out */
void make_apis(void);
void fake_error_destroy(XLA_FFI_Error_Destroy_Args *a);

/* ---- call frames ---- */
void attr_int(frame_t *f, const char *name, int64_t v);
void attr_str(frame_t *f, const char *name, const char *v);
void attr_drop(frame_t *f, const char *name);
/* The frame XLA would build for one device's instance of `p`. */
void build(frame_t *f, problem_t *p);
/* the handler call() runs: muster_jax_cpu, or muster_jax_cuda */
extern XLA_FFI_Error *(*handler)(XLA_FFI_CallFrame *);
/* Run the handler on f: NULL, or its error's message (malloc'd). */
char *call(frame_t *f);
/* call(f) must fail with a message containing want (handler_test.c). */
void expect_error(frame_t *f, const char *want);
/* A 1-D (d1 < 0) or 2-D buffer i of f. */
void frame_buf(frame_t *f, int i, XLA_FFI_DataType t, void *data, int64_t d0, int64_t d1);

/* store_handler_test.c: muster_jax.distributed's handler (store_ffi.c). */
void test_store_handler(void);
/* prejoin_test.c: a rank that fails before it joins ends its peers at once. */
void test_prejoin_failures(void);

/* ---- matrices: this thread's generator, seeded through rng_state ---- */
extern __thread uint64_t rng_state;
double urand(void);
/* n x n SPD column-major, ld = n (diagonally dominant). */
double *spd(int64_t n);

/* ---- one launch from R threads ---- */
/* Column blocks of A (m x n; m = n but for gels) to R shards of S columns
 * (ld = m), run, back. */
void run_launch(launch_t *L, int routine, int R, int64_t m, int64_t n, const double *a, double *b,
                int64_t nrhs, int64_t run_id, int64_t site, const XLA_FFI_Api *api, int return_status);
void free_launch(launch_t *L, int R);
/* ||A * Ainv - I||_max from the shards of Ainv */
double inv_error(const launch_t *L, int R, int64_t n, const double *a);

#endif
