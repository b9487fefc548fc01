/*
 * adapters/jax/store_ffi.c - the XLA FFI handler of muster_jax.distributed's
 * solve inside jax.jit (muster_jax/_dist_jit.py): this process's piece of A
 * and all of B, as XLA hands them (host memory on the cpu platform, device
 * memory on cuda), through muster_solve_comm(_dist) over the kind "store"
 * communicator of a StoreSet, named by its id (set_table.c).  The eager
 * form (distributed.py) makes the same call on copies it makes itself.
 *
 * Operands / results (2-D buffers column-major: the Python side asks for
 * layout (0, 1)); m is A's rows (n but for gels, geqrf, gesvd, polar):
 *   potrs, getrs, gels  args [a (rows x cols), b (m x nrhs)]
 *                 rets [a (aliased; the engine's scratch), x (aliased to b;
 *                 gels' X is its first n rows)]
 *   syevd         args [a]  rets [v (aliased to a: this piece of V), w (n)]
 *   geqrf, gesvd, polar  args [a]  rets [a (aliased: the factor shaped like
 *                 A, or scratch), then b (m x nrhs, output only: the packed
 *                 factors) where the outputs rule puts factors there, then
 *                 w (gesvd's min(m, n) singular values)]: which ones is
 *                 muster_routine_outputs' rule (muster/layout.h) for the
 *                 routine, flags, m and n, as the eager form sizes them
 * Attributes (integers): set, routine, n, m, col0, flags, and the 2-D piece's
 * nprow, npcol, myrow, mycol, mb, nb (nprow 0: a column block of A from
 * column col0, muster_solve_comm; else muster_solve_comm_dist); the string
 * provider ("" for rank 0's choice).
 *
 * On cuda the handler first waits for XLA's stream (the operands, and the
 * copies into results XLA did not alias, are then in place) and solves on
 * the CUDA device that holds A, as the eager form does, with XLA's stream
 * as the shard's (the engine waits for it, not for the whole device, which
 * XLA may be using meanwhile); the engine returns once its results are
 * written.  Failure: an XLA error carrying the
 * runtime's message, which is the eager form's ValueError text.  A
 * failure of this process's own before the call (its operands, a copy)
 * fails the call on every process at once (fail_call).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cudrv.h"
#include "mjInt.h"

enum { S_SET, S_ROUTINE, S_N, S_M, S_COL0, S_FLAGS, S_NPROW, S_NPCOL, S_MYROW, S_MYCOL, S_MB, S_NB, S_NINT };
static const char *const s_names[S_NINT] = {"set", "routine", "n", "m", "col0", "flags", "nprow",
                                            "npcol", "myrow", "mycol", "mb", "nb"};

typedef struct store_call {
  int64_t v[S_NINT];
  char provider[32];
  XLA_FFI_Buffer *b_in;  /* potrs, getrs, gels */
  XLA_FFI_Buffer *x_out; /* those, and the factors packed into B */
  int b_in_n, b_out_n;   /* whether B is an operand, a result */
  int64_t w_len;         /* reals of W (a result when > 0)      */
} store_call_t;

static int decode(mj_call_t *c, const XLA_FFI_Attrs *attrs, store_call_t *s) {
  int seen[S_NINT] = {0};
  for (int64_t i = 0; i < attrs->size; i++) {
    const XLA_FFI_ByteSpan *name = attrs->names[i];
    int k = 0;
    while (k < S_NINT && !mj_name_is(name, s_names[k])) k++;
    if (k < S_NINT) {
      if (attrs->types[i] != XLA_FFI_AttrType_SCALAR || mj_scalar_int(attrs->attrs[i], &s->v[k]) < 0)
        return mj_set_err(c, MUSTER_EINVAL, "attribute %s must be an integer scalar", s_names[k]);
      seen[k] = 1;
    } else if (mj_name_is(name, "provider")) {
      int rc = mj_attr_string(c, name, attrs->types[i], attrs->attrs[i], s->provider, sizeof s->provider);
      if (rc < 0) return rc;
    } else {
      return mj_set_err(c, MUSTER_EINVAL, "unknown attribute %.*s", (int)name->len, name->ptr);
    }
  }
  for (int k = 0; k < S_NINT; k++)
    if (!seen[k]) return mj_set_err(c, MUSTER_EINVAL, "missing attribute %s", s_names[k]);
  int r = (int)s->v[S_ROUTINE];
  if (r == MUSTER_POTRI || !muster_routine_str(r)) /* distributed.solve's routines: every other one */
    return mj_set_err(c, MUSTER_EINVAL, "routine %d: the store handler takes potrs, getrs, syevd, gels, geqrf, "
                      "gesvd and polar", r);
  if (s->v[S_N] < 1) return mj_set_err(c, MUSTER_EINVAL, "n=%" PRId64 " must be >= 1", s->v[S_N]);
  if (s->v[S_M] != s->v[S_N] && !(muster_routine_takes(r) & MUSTER_TAKES_M))
    return mj_set_err(c, MUSTER_EINVAL, "m=%" PRId64 ": %s takes a square A (m = n=%" PRId64 ")", s->v[S_M],
                      muster_routine_str(r), s->v[S_N]);
  return 0;
}

/* Which of B (operand, result) and W the routine has: its own B for
 * potrs, getrs and gels; for geqrf, gesvd and polar what the outputs rule
 * says for the flags, m and n (B packed with factors, gesvd's S in W). */
static int expect(mj_call_t *c, store_call_t *s) {
  int r = (int)s->v[S_ROUTINE];
  if (!(muster_routine_takes(r) & MUSTER_TAKES_O)) {
    s->b_in_n = s->b_out_n = r != MUSTER_SYEVD;
    s->w_len = r == MUSTER_SYEVD ? s->v[S_N] : 0;
    return 0;
  }
  muster_outputs_t o;
  if (muster_routine_outputs(r, (unsigned)s->v[S_FLAGS], s->v[S_M], s->v[S_N], &o) < 0)
    return mj_set_err(c, MUSTER_EINVAL, "%s of an A of %" PRId64 " x %" PRId64 " with flags 0x%" PRIx64
                      ": no outputs (muster_routine_outputs)", muster_routine_str(r), s->v[S_M], s->v[S_N],
                      s->v[S_FLAGS]);
  s->b_out_n = o.b_cols > 0;
  s->w_len = o.w_count;
  return 0;
}

/* Whether b (NULL: absent) is m rows of element type t. */
static int b_shaped(const XLA_FFI_Buffer *b, int64_t m, XLA_FFI_DataType t) {
  return !b || (b->rank == 2 && b->dims[0] == m && b->dtype == t);
}

/* Operands and results for the routine (expect()); shapes and dtypes
 * checked (the runtime checks the geometry against every rank's, and B's
 * columns against the factors it must hold). */
static int bind(mj_call_t *c, const XLA_FFI_CallFrame *cf, store_call_t *s) {
  int nargs = 1 + s->b_in_n, nrets = 1 + s->b_out_n + (s->w_len > 0);
  if (cf->args.size != nargs || cf->rets.size != nrets)
    return mj_set_err(c, MUSTER_EINVAL, "takes %d operands and %d results, got %" PRId64 " and %" PRId64,
                      nargs, nrets, cf->args.size, cf->rets.size);
  XLA_FFI_Buffer **in = (XLA_FFI_Buffer **)cf->args.args, **out = (XLA_FFI_Buffer **)cf->rets.rets;
  c->a_in = in[0];
  c->a_out = out[0];
  s->b_in = s->b_in_n ? in[1] : NULL;
  s->x_out = s->b_out_n ? out[1] : NULL;
  c->w_out = s->w_len > 0 ? out[nrets - 1] : NULL;
  if (mj_dtype_of(c->a_in->dtype, &c->dtype) < 0)
    return mj_set_err(c, MUSTER_EUNSUPPORTED, "A has XLA dtype %d; muster takes float32, float64, complex64, "
                      "complex128", (int)c->a_in->dtype);
  int64_t m = s->v[S_M];
  if (c->a_in->rank != 2 || c->a_out->dtype != c->a_in->dtype || c->a_out->rank != 2 ||
      c->a_out->dims[0] != c->a_in->dims[0] || c->a_out->dims[1] != c->a_in->dims[1])
    return mj_set_err(c, MUSTER_EINVAL, "A's piece must be 2-D, its result of its shape and dtype");
  if (!b_shaped(s->b_in, m, c->a_in->dtype) || !b_shaped(s->x_out, m, c->a_in->dtype) ||
      (s->b_in && s->x_out->dims[1] != s->b_in->dims[1]))
    return mj_set_err(c, MUSTER_EINVAL, "B must be m=%" PRId64 " rows of A's dtype, X as many columns", m);
  XLA_FFI_DataType wt = muster_dtype_real_size(c->dtype) == 4 ? XLA_FFI_DataType_F32 : XLA_FFI_DataType_F64;
  if (c->w_out && (c->w_out->dtype != wt || c->w_out->rank != 1 || c->w_out->dims[0] != s->w_len))
    return mj_set_err(c, MUSTER_EINVAL, "W must be %" PRId64 " reals of A's precision", s->w_len);
  return 0;
}

/* in into out where XLA did not alias them (ordered on XLA's stream). */
static int copy_in(mj_call_t *c, const XLA_FFI_Buffer *in, XLA_FFI_Buffer *out) {
  if (!in || in->data == out->data) return 0;
  size_t bytes = muster_dtype_size(c->dtype);
  for (int64_t i = 0; i < in->rank; i++) bytes *= (size_t)in->dims[i];
  return mj_mem_copy(c, out->data, in->data, bytes);
}

static int run(mj_call_t *c, const store_call_t *s, muster_comm_t *comm) {
  const int64_t *v = s->v;
  int rows = (int)c->a_in->dims[0];
  muster_solve_args_t args = {.routine = (int)v[S_ROUTINE], .dtype = c->dtype, .n = v[S_N],
                              .nrhs = s->x_out ? s->x_out->dims[1] : 0, .layout = MUSTER_LAYOUT_BLOCK,
                              .flags = (unsigned)v[S_FLAGS], .provider = s->provider[0] ? s->provider : NULL};
  muster_shard_t mine = {.mem = c->cuda ? MUSTER_MEM_CUDA : MUSTER_MEM_HOST, .device = c->cuda ? c->device : -1,
                         .a = c->a_out->data, .lda = rows > 0 ? rows : 1, .col0 = v[S_COL0],
                         .ncols = c->a_in->dims[1], .b = s->x_out ? s->x_out->data : NULL, .ldb = v[S_M],
                         .w = c->w_out ? c->w_out->data : NULL, .stream = c->stream};
  muster_solve_result_t res;
  if (v[S_NPROW] < 1) return muster_solve_comm(comm, &args, &mine, &res);
  muster_dist_t d = {.m = v[S_M], .n = v[S_N], .mb = v[S_MB], .nb = v[S_NB], .nprow = (int)v[S_NPROW],
                     .npcol = (int)v[S_NPCOL], .myrow = (int)v[S_MYROW], .mycol = (int)v[S_MYCOL],
                     .lld = mine.lda};
  return muster_solve_comm_dist(comm, &args, &mine, &d, &res);
}

/* The runtime's message of a failed solve, as the eager form words it
 * (adapters/common/runtime.py message()). */
static XLA_FFI_Error *failed(mj_call_t *c, int rc) {
  const char *why = muster_last_error();
  char msg[MJ_ERRLEN];
  if (why && why[0]) snprintf(msg, sizeof msg, "%s", why);
  else snprintf(msg, sizeof msg, "%s: %s (%s)", muster_err_name(rc), muster_strerror(rc),
                muster_err_kind_name(muster_err_kind(rc)));
  return mj_xla_error(c->api, mj_xla_code_of(rc), msg);
}

/* This process failed before its call (code, c->err): the others are,
 * or will be, in the call's first round, where a live peer is waited for
 * however long.  Take part in it with the failure (muster_solve_comm_fail):
 * they fail at once naming this rank, and the set stays in step.  Nothing
 * when the set is gone (closed: the call fails below saying so). */
static void fail_call(mj_call_t *c, int64_t set, int code) {
  muster_comm_t *comm;
  char ignored[256];
  if (mj_set_take(set, &comm, ignored, sizeof ignored) < 0) return;
  (void)muster_solve_comm_fail(comm, code, c->err);
  mj_set_give(set);
}

static XLA_FFI_Error *execute(mj_call_t *c, XLA_FFI_CallFrame *cf) {
  store_call_t s;
  memset(&s, 0, sizeof s);
  int rc = decode(c, &cf->attrs, &s);
  if (rc == 0 && ((rc = expect(c, &s)) < 0 || (rc = bind(c, cf, &s)) < 0 || (rc = mj_read_context(c, cf)) < 0))
    fail_call(c, s.v[S_SET], rc); /* without the attributes there is no set to tell */
  if (rc < 0) {
    char msg[MJ_ERRLEN + 32];
    snprintf(msg, sizeof msg, "muster_jax.distributed: %s", c->err);
    return mj_xla_error(c->api, XLA_FFI_Error_Code_INVALID_ARGUMENT, msg);
  }
  rc = copy_in(c, c->a_in, c->a_out);
  if (rc == 0) rc = copy_in(c, s.b_in, s.x_out);
  if (rc == 0 && c->cuda) rc = mj_cuda_sync(c->stream, c->err, sizeof c->err);
  if (rc < 0) {
    fail_call(c, s.v[S_SET], rc);
    return mj_xla_error(c->api, XLA_FFI_Error_Code_INTERNAL, c->err);
  }
  muster_comm_t *comm;
  if ((rc = mj_set_take(s.v[S_SET], &comm, c->err, sizeof c->err)) < 0)
    return mj_xla_error(c->api, XLA_FFI_Error_Code_FAILED_PRECONDITION, c->err);
  rc = run(c, &s, comm);
  XLA_FFI_Error *out = rc < 0 ? failed(c, rc) : NULL; /* the message before anything else runs */
  mj_set_give(s.v[S_SET]);
  return out;
}

/* The handlers registered with jax.ffi.register_ffi_target (_lib.py). */
MJ_EXPORT XLA_FFI_Error *muster_jax_store_cpu(XLA_FFI_CallFrame *cf) { return mj_handle(cf, 0, execute); }
MJ_EXPORT XLA_FFI_Error *muster_jax_store_cuda(XLA_FFI_CallFrame *cf) { return mj_handle(cf, 1, execute); }
