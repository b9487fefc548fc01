/*
 * adapters/jax/attrs.c - the attributes of a handler call (what
 * muster_jax/_call.py passes to jax.ffi.ffi_call), decoded into mj_attrs_t.
 *
 * jax hands Python ints over as whatever scalar type numpy gave them, so
 * every integer type is accepted; strings are bounded by their field.  An
 * unknown or missing attribute is an error: it means the Python side and
 * this library disagree on the call.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "mjInt.h"

/* The integer attributes, by index into one decoding table.  All are
 * required except the last, local_ranks. */
enum {
  A_ROUTINE, A_N, A_NRHS, A_TILE, A_SITE, A_LAYOUT, A_FLAGS, A_NRANKS,
  A_RETURN_STATUS, A_PROCESS_MODE, A_LOCAL_RANKS, A_NINT
};
static const char *const int_names[A_NINT] = {
    [A_ROUTINE] = "routine",   [A_N] = "n",
    [A_NRHS] = "nrhs",         [A_TILE] = "tile",
    [A_SITE] = "site",         [A_LAYOUT] = "layout",
    [A_FLAGS] = "flags",       [A_NRANKS] = "nranks",
    [A_RETURN_STATUS] = "return_status", [A_PROCESS_MODE] = "process_mode",
    [A_LOCAL_RANKS] = "local_ranks",
};

/* What the table decodes into, before it goes to mj_attrs_t. */
typedef struct int_values {
  int64_t v[A_NINT];
  int seen[A_NINT];
} int_values_t;

int mj_scalar_int(const XLA_FFI_Scalar *s, int64_t *out) {
  switch (s->dtype) {
    case XLA_FFI_DataType_S8: *out = *(const int8_t *)s->value; return 0;
    case XLA_FFI_DataType_S16: *out = *(const int16_t *)s->value; return 0;
    case XLA_FFI_DataType_S32: *out = *(const int32_t *)s->value; return 0;
    case XLA_FFI_DataType_S64: *out = *(const int64_t *)s->value; return 0;
    case XLA_FFI_DataType_U8: *out = *(const uint8_t *)s->value; return 0;
    case XLA_FFI_DataType_U16: *out = *(const uint16_t *)s->value; return 0;
    case XLA_FFI_DataType_U32: *out = *(const uint32_t *)s->value; return 0;
    case XLA_FFI_DataType_U64: *out = (int64_t) * (const uint64_t *)s->value; return 0;
    case XLA_FFI_DataType_PRED: *out = *(const uint8_t *)s->value != 0; return 0;
    default: return -1;
  }
}

int mj_name_is(const XLA_FFI_ByteSpan *name, const char *s) {
  size_t len = strlen(s);
  return name->len == len && memcmp(name->ptr, s, len) == 0;
}

int mj_attr_string(mj_call_t *c, const XLA_FFI_ByteSpan *name, XLA_FFI_AttrType type,
                   const void *value, char *dst, size_t cap) {
  if (type != XLA_FFI_AttrType_STRING)
    return mj_set_err(c, MUSTER_EINVAL, "attribute %.*s must be a string", (int)name->len, name->ptr);
  const XLA_FFI_ByteSpan *s = value;
  if (s->len >= cap)
    return mj_set_err(c, MUSTER_EINVAL, "attribute %.*s is %zu bytes (at most %zu)", (int)name->len,
                      name->ptr, s->len, cap - 1);
  memcpy(dst, s->ptr, s->len);
  dst[s->len] = '\0';
  return 0;
}

/* Integer attribute `name` into its place in iv; 1 when name is none of
 * the integer attributes. */
static int attr_int(mj_call_t *c, const XLA_FFI_ByteSpan *name, XLA_FFI_AttrType type,
                    const void *value, int_values_t *iv) {
  for (int i = 0; i < A_NINT; i++) {
    if (!mj_name_is(name, int_names[i])) continue;
    if (type != XLA_FFI_AttrType_SCALAR || mj_scalar_int(value, &iv->v[i]) < 0)
      return mj_set_err(c, MUSTER_EINVAL, "attribute %.*s must be an integer scalar", (int)name->len,
                        name->ptr);
    iv->seen[i] = 1;
    return 0;
  }
  return 1;
}

/* One attribute of the call frame into iv or c->at. */
static int decode_one(mj_call_t *c, const XLA_FFI_Attrs *attrs, int64_t i, int_values_t *iv) {
  const XLA_FFI_ByteSpan *name = attrs->names[i];
  int rc = attr_int(c, name, attrs->types[i], attrs->attrs[i], iv);
  if (rc <= 0) return rc;
  if (mj_name_is(name, "provider"))
    return mj_attr_string(c, name, attrs->types[i], attrs->attrs[i], c->at.provider, sizeof c->at.provider);
  if (mj_name_is(name, "group_key"))
    return mj_attr_string(c, name, attrs->types[i], attrs->attrs[i], c->at.group_key, sizeof c->at.group_key);
  return mj_set_err(c, MUSTER_EINVAL, "unknown attribute %.*s", (int)name->len, name->ptr);
}

/* The values the handler cannot work with, refused before anything runs. */
static int check_attrs(mj_call_t *c) {
  const mj_attrs_t *at = &c->at;
  if (muster_routine_takes(at->routine) == 0 && at->routine != MUSTER_POTRI)
    return mj_set_err(c, MUSTER_EINVAL, "routine %d unknown", at->routine);
  if (at->nranks < 1 || at->nranks > MUSTER_MAX_RANKS)
    return mj_set_err(c, MUSTER_EINVAL, "nranks %d out of 1..%d", at->nranks, MUSTER_MAX_RANKS);
  if (at->n < 1 || at->tile < 0 || (at->layout != MUSTER_LAYOUT_BLOCK && at->layout != MUSTER_LAYOUT_CYCLIC))
    return mj_set_err(c, MUSTER_EINVAL, "bad n=%" PRId64 " tile=%" PRId64 " layout=%d", at->n, at->tile,
                      at->layout);
  return 0;
}

int mj_decode_attrs(mj_call_t *c, const XLA_FFI_Attrs *attrs) {
  int_values_t iv;
  memset(&iv, 0, sizeof iv);
  memset(&c->at, 0, sizeof c->at);
  for (int64_t i = 0; i < attrs->size; i++) {
    int rc = decode_one(c, attrs, i, &iv);
    if (rc < 0) return rc;
  }
  for (int i = 0; i < A_LOCAL_RANKS; i++)
    if (!iv.seen[i]) return mj_set_err(c, MUSTER_EINVAL, "missing attribute %s", int_names[i]);
  mj_attrs_t *at = &c->at;
  at->routine = (int)iv.v[A_ROUTINE];
  at->n = iv.v[A_N];
  at->nrhs = iv.v[A_NRHS];
  at->tile = iv.v[A_TILE];
  at->site = iv.v[A_SITE];
  at->layout = (int)iv.v[A_LAYOUT];
  at->flags = (int)iv.v[A_FLAGS];
  at->nranks = (int)iv.v[A_NRANKS];
  at->return_status = iv.v[A_RETURN_STATUS] != 0;
  at->process_mode = iv.v[A_PROCESS_MODE] != 0;
  /* ranks of this group in this process; absent: all of them unless the
   * ranks are processes */
  at->local_ranks = iv.seen[A_LOCAL_RANKS] ? (int)iv.v[A_LOCAL_RANKS] : (at->process_mode ? 1 : at->nranks);
  int rc = check_attrs(c);
  if (rc < 0) return rc;
  /* one process: the pid keeps this process's groups apart from others' */
  if (at->group_key[0] == '\0') snprintf(at->group_key, sizeof at->group_key, "p%ld", (long)getpid());
  return 0;
}
