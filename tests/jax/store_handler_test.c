/*
 * tests/jax/store_handler_test.c - muster_jax.distributed's FFI handler
 * (adapters/jax/store_ffi.c, set_table.c) driven without XLA: a kind
 * "store" comm of one rank (its allgather a copy) named by the set table,
 * solves through the test engine colllapack (test_handler_c.py puts it on
 * the provider path): potrs and syevd residuals with the results aliased
 * to the operands and not, a not positive definite A, gesvd of a tall A
 * (its three results by the outputs rule), attribute and operand errors,
 * and a forgotten set refused; and two ranks (threads, an allgather in
 * memory that gives up after 10 s) where rank 1's operands are wrong: rank
 * 0 fails within 3 s naming it (store_ffi.c fail_call), and the next call
 * of both solves.
 */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "handler_fake.h"
#include "muster/clock.h"
#include "muster/comm.h"

int64_t muster_jax_set_register(void *comm);
int muster_jax_set_forget(int64_t id);
int muster_jax_set_enter(int64_t id);
void muster_jax_set_leave(int64_t id);
XLA_FFI_Error *muster_jax_store_cpu(XLA_FFI_CallFrame *cf);

enum { N = 7, NRHS = 2, M = 11, BC = (N * N + M - 1) / M }; /* BC: gesvd's B columns, V^H packed */

static int copy_all(void *ctx, const void *mine, void *all, size_t len, char *err, size_t errlen) {
  (void)ctx, (void)err, (void)errlen;
  memcpy(all, mine, len); /* one rank */
  return 0;
}

/* A buffer of the frame: its data and dims (d1 < 0: 1-D). */
typedef struct sbuf {
  double *data;
  int64_t d0, d1;
} sbuf_t;

/* The frame of one call of `routine` on an m x (in[0]'s columns) A with
 * `flags`: operands in[0..nin), results out[0..nout), float64. */
static void frame_of(frame_t *f, int64_t set, int routine, int64_t m, int64_t flags, int nin, const sbuf_t *in,
                     int nout, const sbuf_t *out) {
  memset(f, 0, sizeof *f);
  f->cf.struct_size = XLA_FFI_CallFrame_STRUCT_SIZE;
  f->cf.api = &new_api;
  f->cf.ctx = (void *)&f->ctx;
  f->cf.stage = XLA_FFI_ExecutionStage_EXECUTE;
  for (int i = 0; i < nin; i++) {
    frame_buf(f, i, XLA_FFI_DataType_F64, in[i].data, in[i].d0, in[i].d1);
    f->argp[i] = &f->bufs[i], f->at[i] = XLA_FFI_ArgType_BUFFER;
  }
  for (int i = 0; i < nout; i++) {
    frame_buf(f, 4 + i, XLA_FFI_DataType_F64, out[i].data, out[i].d0, out[i].d1);
    f->retp[i] = &f->bufs[4 + i], f->rt[i] = XLA_FFI_RetType_BUFFER;
  }
  f->cf.args = (XLA_FFI_Args){XLA_FFI_Args_STRUCT_SIZE, NULL, nin, f->at, f->argp};
  f->cf.rets = (XLA_FFI_Rets){XLA_FFI_Rets_STRUCT_SIZE, NULL, nout, f->rt, f->retp};
  const char *names[] = {"set", "routine", "n", "m", "col0", "flags", "nprow", "npcol", "myrow", "mycol", "mb", "nb"};
  int64_t vals[] = {set, routine, in[0].d1, m, 0, flags, 0, 0, 0, 0, 0, 0};
  for (int i = 0; i < 12; i++) attr_int(f, names[i], vals[i]);
  attr_str(f, "provider", "colllapack");
  f->cf.attrs = (XLA_FFI_Attrs){XLA_FFI_Attrs_STRUCT_SIZE, NULL, 0, f->atype, f->namep, f->attrp};
}

/* The frame of one potrs (b != NULL) or syevd call on a (N x N), results
 * into out_a / out_bw (== the operands: aliased). */
static void store_frame(frame_t *f, int64_t set, double *a, double *b, double *out_a, double *out_bw) {
  sbuf_t in[] = {{a, N, N}, {b, N, NRHS}}, out[] = {{out_a, N, N}, {out_bw, N, b ? NRHS : -1}};
  frame_of(f, set, b ? MUSTER_POTRS : MUSTER_SYEVD, N, 0, b ? 2 : 1, in, 2, out);
}

/* max |A x - b| over the right-hand sides, relative to |A| |x| */
static double residual(const double *a, const double *x, const double *b) {
  double worst = 0;
  for (int k = 0; k < NRHS; k++)
    for (int i = 0; i < N; i++) {
      double r = -b[k * N + i];
      for (int j = 0; j < N; j++) r += a[j * N + i] * x[k * N + j];
      worst = fmax(worst, fabs(r));
    }
  return worst / N;
}

static void solves(int64_t set, frame_t *f) {
  double *a = spd(N), a_in[N * N], b[N * NRHS], x[N * NRHS], v[N * N], w[N];
  for (int i = 0; i < N * NRHS; i++) b[i] = x[i] = urand();
  for (int alias = 0; alias < 2; alias++) { /* XLA aliased the operands, or not */
    memcpy(a_in, a, sizeof a_in);
    memcpy(x, b, sizeof x);
    double out_a[N * N], out_x[N * NRHS];
    store_frame(f, set, a_in, x, alias ? a_in : out_a, alias ? x : out_x);
    char *m = call(f);
    CHECK(m == NULL, "potrs failed: %s", m);
    double r = residual(a, alias ? x : out_x, b);
    CHECK(r < 1e-13, "potrs residual %g (aliased %d)", r, alias);
    free(m);
  }
  memcpy(v, a, sizeof v);
  store_frame(f, set, v, NULL, v, w);
  char *m = call(f);
  CHECK(m == NULL, "syevd failed: %s", m);
  free(m);
  double worst = 0; /* A V = V diag(w) */
  for (int k = 0; k < N; k++)
    for (int i = 0; i < N; i++) {
      double r = -v[k * N + i] * w[k];
      for (int j = 0; j < N; j++) r += a[j * N + i] * v[k * N + j];
      worst = fmax(worst, fabs(r));
    }
  CHECK(worst < 1e-12 * N, "syevd residual %g", worst);
  for (int i = 0; i < N * N; i++) a_in[i] = i % (N + 1) == 0 ? -1 : 0; /* -I */
  store_frame(f, set, a_in, x, a_in, x);
  expect_error(f, "not positive definite (leading minor 1)");
  free(a);
}

/* The frame of gesvd, thin, of a (M x N): U into out_a, V^H packed into
 * b (M x BC), S into w. */
static void svd_frame(frame_t *f, int64_t set, double *a, double *out_a, double *b, double *w) {
  sbuf_t in[] = {{a, M, N}}, out[] = {{out_a, M, N}, {b, M, BC}, {w, N, -1}};
  frame_of(f, set, MUSTER_GESVD, M, 0, 1, in, 3, out);
}

/* gesvd of a tall A (the outputs rule's three results: U where A was,
 * V^H in B, S in W): max |A - U S V^H| relative to S's largest. */
static void factors(int64_t set, frame_t *f) {
  double a[M * N], u[M * N], b[M * BC], s[N];
  for (int i = 0; i < M * N; i++) a[i] = urand() - 0.5;
  svd_frame(f, set, a, u, b, s);
  char *m = call(f);
  CHECK(m == NULL, "gesvd failed: %s", m);
  free(m);
  double worst = 0;
  for (int j = 0; j < N; j++)
    for (int i = 0; i < M; i++) {
      double r = -a[j * M + i];
      for (int k = 0; k < N; k++) r += u[k * M + i] * s[k] * b[j * N + k]; /* V^H: N x N, ld N */
      worst = fmax(worst, fabs(r));
    }
  CHECK(s[0] > 0 && worst < 1e-13 * s[0] * M, "gesvd: |A - U S V^H| %g, S[0] %g", worst, s[0]);
  svd_frame(f, set, a, u, b, s);
  f->cf.rets.size = 2;
  expect_error(f, "takes 1 operands and 3 results");
  svd_frame(f, set, a, u, b, s);
  f->dims[6][0] = N - 1;
  expect_error(f, "W must be 7 reals");
  svd_frame(f, set, a, u, b, s);
  attr_drop(f, "flags");
  attr_int(f, "flags", 0x100);
  expect_error(f, "no outputs (muster_routine_outputs)");
}

static void errors(int64_t set, frame_t *f) {
  double a[N * N] = {0}, b[N * NRHS] = {0}, w[N];
  store_frame(f, set, a, b, a, b);
  attr_drop(f, "nb");
  expect_error(f, "missing attribute nb");
  store_frame(f, set, a, b, a, b);
  attr_int(f, "bogus", 1);
  expect_error(f, "unknown attribute bogus");
  store_frame(f, set, a, b, a, b);
  attr_drop(f, "routine");
  attr_int(f, "routine", MUSTER_POTRI);
  expect_error(f, "takes potrs, getrs, syevd, gels, geqrf, gesvd and polar");
  store_frame(f, set, a, b, a, b);
  attr_drop(f, "m");
  attr_int(f, "m", N + 1);
  expect_error(f, "potrs takes a square A");
  store_frame(f, set, a, b, a, b);
  f->cf.args.size = 1;
  expect_error(f, "takes 2 operands and 2 results");
  store_frame(f, set, a, NULL, a, w);
  f->bufs[5].dtype = XLA_FFI_DataType_F32;
  expect_error(f, "W must be 7 reals");
  store_frame(f, set, a, b, a, b);
  f->dims[1][0] = N - 1;
  expect_error(f, "B must be m=7 rows");
}

/* ---- two ranks: rank 1 fails before its call -------------------------------- */

enum { AGMAX = 16384 };

/* An allgather of two threads in memory; a rank left waiting 10 s fails. */
typedef struct ag2 {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int arrived;
  unsigned gen;
  size_t len;
  unsigned char in[2][AGMAX], out[2][AGMAX];
} ag2_t;

typedef struct ag_rank {
  ag2_t *s;
  int rank;
  int64_t set;
  double *a, *x;
  char *err;
  double took;
  int bad; /* B one row short */
} ag_rank_t;

static int ag2_allgather(void *ctx, const void *mine, void *all, size_t len, char *err, size_t errlen) {
  ag_rank_t *me = ctx;
  ag2_t *s = me->s;
  if (len > AGMAX) return snprintf(err, errlen, "%zu bytes", len), MUSTER_EINVAL;
  struct timespec until;
  clock_gettime(CLOCK_REALTIME, &until);
  until.tv_sec += 10;
  pthread_mutex_lock(&s->mu);
  unsigned gen = s->gen;
  memcpy(s->in[me->rank], mine, len);
  if (++s->arrived == 2) {
    memcpy(s->out, s->in, sizeof s->out);
    s->len = len, s->arrived = 0, s->gen++;
    pthread_cond_broadcast(&s->cv);
  }
  int rc = 0;
  while (s->gen == gen && rc == 0) rc = pthread_cond_timedwait(&s->cv, &s->mu, &until);
  int done = s->gen != gen;
  if (done) {
    memcpy(all, s->out[0], len);
    memcpy((char *)all + len, s->out[1], len);
  }
  pthread_mutex_unlock(&s->mu);
  if (!done) return snprintf(err, errlen, "the other rank never came (10 s)"), MUSTER_ETIMEDOUT;
  return 0;
}

/* Rank r->rank's call: its column block of A (of ceil(N/2) columns), all of B. */
static void *ag_rank_main(void *arg) {
  ag_rank_t *r = arg;
  int64_t w = (N + 1) / 2, col0 = r->rank * w, ncols = r->rank ? N - w : w;
  double *piece = r->a + col0 * N;
  sbuf_t in[] = {{piece, N, ncols}, {r->x, N, NRHS}}, out[] = {{piece, N, ncols}, {r->x, N, NRHS}};
  frame_t *f = malloc(sizeof *f);
  frame_of(f, r->set, MUSTER_POTRS, N, 0, 2, in, 2, out);
  attr_drop(f, "n");
  attr_int(f, "n", N);
  attr_drop(f, "col0");
  attr_int(f, "col0", col0);
  if (r->bad) f->dims[1][0] = N - 1; /* B one row short */
  double t0 = muster_clock_s();
  r->err = call(f);
  r->took = muster_clock_s() - t0;
  free(f);
  return NULL;
}

static void two_ranks(void) {
  static ag2_t s = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};
  ag_rank_t r[2];
  muster_comm_t *comm[2];
  double *a = spd(N), b[N * NRHS];
  for (int i = 0; i < N * NRHS; i++) b[i] = urand();
  for (int q = 0; q < 2; q++) {
    r[q] = (ag_rank_t){.s = &s, .rank = q};
    muster_comm_opts_t o = {.kind = "store", .rank = q, .size = 2, .name = "prejoin", .allgather = ag2_allgather,
                            .ctx = &r[q]};
    CHECK(muster_comm_open(&o, &comm[q]) == 0, "comm: %s", muster_last_error());
    r[q].set = muster_jax_set_register(comm[q]);
  }
  for (int call_no = 0; call_no < 2; call_no++) { /* rank 1's B short, then both right */
    double ac[2][N * N], xc[2][N * NRHS];
    pthread_t th[2];
    for (int q = 0; q < 2; q++) {
      memcpy(ac[q], a, sizeof ac[q]);
      memcpy(xc[q], b, sizeof xc[q]);
      r[q].a = ac[q], r[q].x = xc[q], r[q].bad = call_no == 0 && q == 1, r[q].err = NULL;
      pthread_create(&th[q], NULL, ag_rank_main, &r[q]);
    }
    for (int q = 0; q < 2; q++) pthread_join(th[q], NULL);
    for (int q = 0; q < 2; q++) {
      const char *m = r[q].err ? r[q].err : "(none)";
      if (call_no == 0) {
        CHECK(r[q].err && strstr(m, "B must be m=7 rows"), "rank %d: %s", q, m);
        CHECK(q == 1 || strstr(m, "rank 1 (pid"), "rank 0 does not name rank 1: %s", m);
        CHECK(r[q].took < 3.0, "rank %d took %.1f s: %s", q, r[q].took, m);
      } else {
        CHECK(!r[q].err, "rank %d after rank 1's failure: %s", q, m);
        CHECK(!r[q].err && residual(a, xc[q], b) < 1e-13, "rank %d: residual", q);
      }
      free(r[q].err);
    }
  }
  for (int q = 0; q < 2; q++) {
    muster_jax_set_forget(r[q].set);
    muster_comm_close(comm[q]);
  }
  free(a);
}

void test_store_handler(void) {
  handler = muster_jax_store_cpu;
  muster_comm_opts_t o = {.kind = "store", .rank = 0, .size = 1, .name = "storehandler", .allgather = copy_all};
  muster_comm_t *comm = NULL;
  CHECK(muster_comm_open(&o, &comm) == 0, "comm: %s", muster_last_error());
  CHECK(muster_jax_set_register(NULL) == MUSTER_EINVAL, "a NULL comm was given an id");
  int64_t set = muster_jax_set_register(comm);
  CHECK(set > 0, "register: %lld", (long long)set);
  frame_t *f = malloc(sizeof *f);
  solves(set, f);
  factors(set, f);
  errors(set, f);
  CHECK(muster_jax_set_enter(set) == 0, "an eager solve could not hold the set");
  muster_jax_set_leave(set);
  CHECK(muster_jax_set_forget(set) == 0, "forget");
  CHECK(muster_jax_set_forget(set) == MUSTER_ENOENT, "forgot twice");
  CHECK(muster_jax_set_enter(set) == MUSTER_ENOENT, "a forgotten set held");
  double a[N * N] = {0}, b[N * NRHS] = {0};
  store_frame(f, set, a, b, a, b);
  expect_error(f, "is closed");
  free(f);
  muster_comm_close(comm);
  two_ranks();
  handler = muster_jax_cpu;
}
