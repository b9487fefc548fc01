/*
 * adapters/jax/buffers.c - the operands and results of a handler call:
 * which buffer is which (ffi.c lists them per routine), their shapes and
 * dtypes against the attributes, and the rank operand.
 */
#include <inttypes.h>
#include <string.h>

#include "mjInt.h"

int mj_dtype_of(XLA_FFI_DataType t, muster_dtype_t *out) {
  switch (t) {
    case XLA_FFI_DataType_F32: *out = MUSTER_F32; return 0;
    case XLA_FFI_DataType_F64: *out = MUSTER_F64; return 0;
    case XLA_FFI_DataType_C64: *out = MUSTER_C64; return 0;
    case XLA_FFI_DataType_C128: *out = MUSTER_C128; return 0;
    default: return -1;
  }
}

static int64_t elems(const XLA_FFI_Buffer *b) {
  int64_t n = 1;
  for (int64_t i = 0; i < b->rank; i++) n *= b->dims[i];
  return n;
}

size_t mj_bytes_of(const mj_call_t *c, const XLA_FFI_Buffer *b) {
  size_t es = b == c->w_out                             ? muster_dtype_real_size(c->dtype)
            : b == c->status_out || b == c->rank_in ? sizeof(int32_t)
                                                    : muster_dtype_size(c->dtype);
  return (size_t)elems(b) * es;
}

static int want_args(mj_call_t *c, const XLA_FFI_CallFrame *cf, int nargs, int nrets) {
  if (cf->args.size != nargs || cf->rets.size != nrets)
    return mj_set_err(c, MUSTER_EINVAL, "%s takes %d operands and %d results, got %" PRId64 " and %" PRId64,
                      muster_routine_name((muster_routine_t)c->at.routine), nargs, nrets, cf->args.size,
                      cf->rets.size);
  for (int i = 0; i < nargs; i++)
    if (cf->args.types[i] != XLA_FFI_ArgType_BUFFER)
      return mj_set_err(c, MUSTER_EINVAL, "operand %d is not a buffer", i);
  for (int i = 0; i < nrets; i++)
    if (cf->rets.types[i] != XLA_FFI_RetType_BUFFER)
      return mj_set_err(c, MUSTER_EINVAL, "result %d is not a buffer", i);
  return 0;
}

int mj_bind_buffers(mj_call_t *c, const XLA_FFI_CallFrame *cf) {
  int r = c->at.routine;
  unsigned takes = muster_routine_takes(r);
  int takes_b = (takes & MUSTER_TAKES_B) != 0;
  /* gesvd returns B (its packed factors) and W (the singular values) */
  int b_and_w = takes_b && (takes & MUSTER_TAKES_W);
  int nrets = r == MUSTER_POTRI ? 2 : b_and_w ? 4 : 3;
  int rc = want_args(c, cf, takes_b ? 3 : 2, nrets);
  if (rc < 0) return rc;
  XLA_FFI_Buffer **in = (XLA_FFI_Buffer **)cf->args.args;
  XLA_FFI_Buffer **out = (XLA_FFI_Buffer **)cf->rets.rets;
  c->rank_in = in[0];
  c->a_in = in[1];
  c->a_out = out[0];
  if (takes_b) {
    c->b_in = in[2];
    c->b_out = out[1];
    if (b_and_w) c->w_out = out[2];
  } else if (r == MUSTER_SYEVD) {
    c->w_out = out[1];
  }
  c->status_out = out[nrets - 1];
  return 0;
}

/* The shard's width must be the layout's (muster/layout.h): the block
 * width S = ceil(n/R), every rank's buffer, even where its last columns are
 * past n; or the cyclic layout's padded local width.  Another width would
 * put columns on the wrong rank.  Fills c->geom. */
static int check_width(mj_call_t *c) {
  const mj_attrs_t *at = &c->at;
  int cyclic = at->layout == MUSTER_LAYOUT_CYCLIC;
  if (cyclic && at->tile < 1) return mj_set_err(c, MUSTER_EINVAL, "a cyclic input needs its tile (T_A)");
  if (muster_layout_geom_init(&c->geom, at->n, cyclic ? at->tile : 1, at->nranks) < 0)
    return mj_set_err(c, cyclic ? MUSTER_ETILE : MUSTER_EINVAL,
                      "n=%" PRId64 " or tile %" PRId64 " out of range (1..2^40)", at->n, at->tile);
  int64_t w = c->a_in->dims[1], want = cyclic ? c->geom.local_cols : c->geom.block_cols;
  if (w != want)
    return mj_set_err(c, MUSTER_EINVAL, "A shard has %" PRId64 " columns; n=%" PRId64 " on %d ranks (%s layout) "
                      "needs %" PRId64 " per rank", w, at->n, at->nranks, cyclic ? "cyclic" : "block", want);
  return 0;
}

/* B (potrs, getrs, gels; geqrf, gesvd, polar: their packed factors, an
 * output only): all of it on every rank, A's rows and dtype.  gels's m is
 * B's rows (muster.h: m travels in ldb), so A's rows are m there;
 * muster_routine_shape refuses m < n for gels.  The runtime checks that
 * nrhs holds the factors (muster_routine_outputs' b_cols). */
static int check_b(mj_call_t *c) {
  if (c->b_in->dtype != c->a_in->dtype || c->b_in->rank != 2 || c->b_in->dims[0] != c->a_in->dims[0] ||
      c->b_in->dims[1] != c->at.nrhs || elems(c->b_out) != elems(c->b_in))
    return mj_set_err(c, MUSTER_EINVAL, "B must be %" PRId64 " x %" PRId64 " of A's dtype",
                      c->a_in->dims[0], c->at.nrhs);
  muster_shape_t shape;
  if (c->at.nrhs < 1 || muster_routine_shape(c->at.routine, c->at.n, c->at.nrhs, c->b_in->dims[0], &shape) < 0)
    return mj_set_err(c, MUSTER_EINVAL, "%s: B of %" PRId64 " x %" PRId64 " makes no shape with n=%" PRId64,
                      muster_routine_name((muster_routine_t)c->at.routine), c->b_in->dims[0], c->at.nrhs,
                      c->at.n);
  return 0;
}

/* W: at least n eigenvalues of A's real type (syevd), or min(m, n)
 * singular values (gesvd, m = A's rows). */
static int check_w(mj_call_t *c) {
  XLA_FFI_DataType wt = muster_dtype_real_size(c->dtype) == 4 ? XLA_FFI_DataType_F32 : XLA_FFI_DataType_F64;
  int64_t want = c->at.n, m = c->a_in->dims[0];
  if ((muster_routine_takes(c->at.routine) & MUSTER_TAKES_O) && m < want) want = m;
  if (c->w_out->dtype != wt || elems(c->w_out) < want)
    return mj_set_err(c, MUSTER_EINVAL, "W must hold %" PRId64 " reals of A's precision", want);
  return 0;
}

static int check_rank_operand(mj_call_t *c) {
  if (c->rank_in->dtype != XLA_FFI_DataType_S32 || elems(c->rank_in) != 2)
    return mj_set_err(c, MUSTER_EINVAL, "operand 0 must be int32[2] (rank, replica)");
  return 0;
}

int mj_check_buffers(mj_call_t *c) {
  const mj_attrs_t *at = &c->at;
  if (check_rank_operand(c) < 0) return MUSTER_EINVAL;
  if (c->status_out->dtype != XLA_FFI_DataType_S32 || elems(c->status_out) != 1)
    return mj_set_err(c, MUSTER_EINVAL, "the status result must be one int32");
  if (mj_dtype_of(c->a_in->dtype, &c->dtype) < 0)
    return mj_set_err(c, MUSTER_EUNSUPPORTED,
                      "A has XLA dtype %d; muster takes float32, float64, complex64, complex128",
                      (int)c->a_in->dtype);
  /* geqrf, gesvd, polar take a wide A too: its rows are m, B's (check_b) */
  int wide_ok = (muster_routine_takes(at->routine) & MUSTER_TAKES_O) != 0;
  int64_t min_rows = wide_ok ? 1 : at->n;
  if (c->a_in->rank != 2 || c->a_in->dims[0] < min_rows || c->a_out->dtype != c->a_in->dtype ||
      elems(c->a_out) != elems(c->a_in))
    return mj_set_err(c, MUSTER_EINVAL, "A shard must be 2-D with at least %s%" PRId64 " rows",
                      wide_ok ? "" : "n=", min_rows);
  int rc = check_width(c);
  if (rc == 0 && c->b_in) rc = check_b(c);
  if (rc == 0 && c->w_out) rc = check_w(c);
  return rc;
}

int mj_read_rank(mj_call_t *c) {
  int32_t rr[2] = {-1, -1};
  int rc = check_rank_operand(c);
  if (rc == 0) rc = mj_mem_read(c, c->rank_in->data, rr, sizeof rr);
  if (rc < 0) return mj_set_err(c, rc, "muster_jax: reading the rank operand: %s", c->err);
  if (rr[0] < 0 || rr[0] >= c->at.nranks || rr[1] < 0)
    return mj_set_err(c, MUSTER_EINVAL, "muster_jax: rank %d out of 0..%d (replica %d)", (int)rr[0],
                      c->at.nranks - 1, (int)rr[1]);
  c->rank = rr[0];
  c->replica = rr[1];
  c->rank_known = 1;
  return 0;
}

int mj_copy_alias(mj_call_t *c, XLA_FFI_Buffer *in, XLA_FFI_Buffer *out) {
  if (!in || in->data == out->data) return 0;
  /* XLA honours input_output_aliases; a copy keeps us correct if not */
  if (!c->cuda) {
    memcpy(out->data, in->data, mj_bytes_of(c, in));
    return 0;
  }
  return mj_set_err(c, MUSTER_EINVAL, "XLA did not alias the in-place operand (declare input_output_aliases)");
}
