/*
 * adapters/jax/handler.c - the XLA FFI handler of muster_jax, in plain C.
 *
 * Written against xla/ffi/api/c_api.h only: every XLA service is reached
 * through call_frame->api, nothing of XLA or jaxlib is linked, and the
 * handler answers XLA's registration metadata call with FFI API 0.1, the
 * oldest version XLA still accepts (jaxlib 0.10.2 speaks 0.3 and 0.11.2
 * speaks 0.4; both accept 0.1).  The newer API entries it uses (RunId_Get,
 * DeviceOrdinal_Get) are called only when api->struct_size shows that the
 * running XLA has them, so one build serves every jaxlib that registers it.
 *
 * One instance runs per device (XLA runs them concurrently, one thread per
 * device, on the cpu and cuda platforms).  Each joins the muster group of
 * its launch, "jx.<key>.<op>.<site>.<replica>.<run id>" (or a pooled name,
 * see group_name), as the rank its shard_map axis_index gave it, calls
 * muster_solve with its shard, and leaves:
 *   key     "p<pid>" in one process, else a key shared by the processes of
 *           one jax.distributed job (set by the Python side);
 *   site    the Python call site (two solves in one program never mix);
 *   replica the index over the mesh axes the matrix is not sharded on (a
 *           2-D mesh runs one independent solve per row);
 *   run id  XLA's per-launch id (the same in every process of a
 *           jax.distributed launch), so two launches never mix.
 *
 * Operands / results (all 2-D buffers column-major: the Python side asks
 * for layout (0, 1)):
 *   potrs  args [rank s32[2] = (rank, replica), a (ld x w), b (ld x nrhs)]
 *          rets [a (aliased), b (aliased, X on return), status s32[1]]
 *   potri  args [rank, a]  rets [a (aliased, inverse), status]
 *   syevd  args [rank, a]  rets [a (aliased, vectors), w (ld), status]
 * Attributes: routine, dtype-free (the buffers say it), n, nrhs, tile,
 * layout, flags, nranks, provider, group_key, site, return_status,
 * process_mode, and optionally local_ranks (ranks in this process).
 *
 * Failure: an XLA error carrying muster_last_error() (Python sees it as an
 * exception), or, with return_status=1, the status output (0 ok, k > 0 the
 * leading minor that is not positive definite, < 0 a MUSTER_E* code) and
 * outputs filled with NaN.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "cudrv.h"
#include "muster.h"
#include "muster/layout.h"
#include "xla/ffi/api/c_api.h"

#define MJ_EXPORT __attribute__((visibility("default")))

/* The FFI API version we need: the oldest one XLA accepts. */
#define MJ_FFI_MAJOR 0
#define MJ_FFI_MINOR 1

/* api has entry `field` (struct_size tells how much of XLA_FFI_Api the
 * running XLA knows). */
#define MJ_API_HAS(api, field)                                                 \
  ((api)->struct_size >= offsetof(XLA_FFI_Api, field) + sizeof((api)->field) && \
   (api)->field != NULL)

enum { MJ_ERRLEN = 1536 };

typedef struct mj_attrs {
  int routine;
  int64_t n, nrhs, tile, site;
  int layout, flags, nranks, local_ranks, return_status, process_mode;
  char provider[32];
  char key[48];
} mj_attrs_t;

typedef struct mj_call {
  const XLA_FFI_Api *api;
  int cuda;
  mj_attrs_t at;
  muster_dtype_t dtype;
  /* The layout geometry of A's shard (check_width).  A block call's tile
   * is 1 here: block columns do not depend on it, and its T_A may be 0. */
  muster_layout_geom_t geom;
  XLA_FFI_Buffer *rank_in, *a_in, *b_in;
  XLA_FFI_Buffer *a_out, *b_out, *w_out, *status_out;
  void *stream;
  int device;      /* XLA's device ordinal, -1 if unknown */
  int64_t run_id;
  int rank;
  int replica;     /* which copy of the group, when the mesh has other axes */
  char err[MJ_ERRLEN];
} mj_call_t;

/* ---- XLA errors --------------------------------------------------------- */

static XLA_FFI_Error *xla_error(const XLA_FFI_Api *api, XLA_FFI_Error_Code code,
                                const char *msg) {
  XLA_FFI_Error_Create_Args a;
  memset(&a, 0, sizeof a);
  a.struct_size = XLA_FFI_Error_Create_Args_STRUCT_SIZE;
  a.message = msg;
  a.errc = code;
  return api->XLA_FFI_Error_Create(&a);
}

static int set_err(mj_call_t *c, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int set_err(mj_call_t *c, int code, const char *fmt, ...) {
  char msg[MJ_ERRLEN];
  va_list ap;
  va_start(ap, fmt);
  /* through a copy: the arguments may include c->err itself */
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  memcpy(c->err, msg, sizeof msg);
  return code;
}

/* ---- attributes --------------------------------------------------------- */

static int scalar_int(const XLA_FFI_Scalar *s, int64_t *out) {
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

static int name_is(const XLA_FFI_ByteSpan *name, const char *s) {
  size_t len = strlen(s);
  return name->len == len && memcmp(name->ptr, s, len) == 0;
}

static int attr_string(mj_call_t *c, const XLA_FFI_ByteSpan *name, XLA_FFI_AttrType type,
                       const void *value, char *dst, size_t cap) {
  if (type != XLA_FFI_AttrType_STRING)
    return set_err(c, MUSTER_EINVAL, "attribute %.*s must be a string", (int)name->len, name->ptr);
  const XLA_FFI_ByteSpan *s = value;
  if (s->len >= cap)
    return set_err(c, MUSTER_EINVAL, "attribute %.*s is %zu bytes (at most %zu)", (int)name->len,
                   name->ptr, s->len, cap - 1);
  memcpy(dst, s->ptr, s->len);
  dst[s->len] = '\0';
  return 0;
}

static int attr_int(mj_call_t *c, const XLA_FFI_ByteSpan *name, XLA_FFI_AttrType type,
                    const void *value, int64_t *out) {
  if (type != XLA_FFI_AttrType_SCALAR || scalar_int(value, out) < 0)
    return set_err(c, MUSTER_EINVAL, "attribute %.*s must be an integer scalar", (int)name->len,
                   name->ptr);
  return 0;
}

/* The integer attributes, by name, and where each one goes. */
static int64_t *int_slot(int64_t *v, const XLA_FFI_ByteSpan *name) {
  static const char *names[] = {"routine", "n", "nrhs", "tile", "site", "layout",
                                "flags", "nranks", "return_status", "process_mode",
                                "local_ranks"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (name_is(name, names[i])) return &v[i];
  return NULL;
}

static int decode_attrs(mj_call_t *c, const XLA_FFI_Attrs *attrs) {
  enum { NINT = 11 };
  int64_t v[NINT];
  int seen[NINT] = {0};
  mj_attrs_t *at = &c->at;
  memset(at, 0, sizeof *at);
  for (int i = 0; i < NINT; i++) v[i] = -1;
  for (int64_t i = 0; i < attrs->size; i++) {
    const XLA_FFI_ByteSpan *name = attrs->names[i];
    int64_t *slot = int_slot(v, name);
    int rc = 0;
    if (slot) {
      rc = attr_int(c, name, attrs->types[i], attrs->attrs[i], slot);
      seen[slot - v] = 1;
    } else if (name_is(name, "provider")) {
      rc = attr_string(c, name, attrs->types[i], attrs->attrs[i], at->provider, sizeof at->provider);
    } else if (name_is(name, "group_key")) {
      rc = attr_string(c, name, attrs->types[i], attrs->attrs[i], at->key, sizeof at->key);
    } else {
      rc = set_err(c, MUSTER_EINVAL, "unknown attribute %.*s", (int)name->len, name->ptr);
    }
    if (rc < 0) return rc;
  }
  static const char *required[] = {"routine", "n", "nrhs", "tile", "site", "layout",
                                   "flags", "nranks", "return_status", "process_mode"};
  for (int i = 0; i < 10; i++) /* local_ranks is optional */
    if (!seen[i]) return set_err(c, MUSTER_EINVAL, "missing attribute %s", required[i]);
  at->routine = (int)v[0];
  at->n = v[1];
  at->nrhs = v[2];
  at->tile = v[3];
  at->site = v[4];
  at->layout = (int)v[5];
  at->flags = (int)v[6];
  at->nranks = (int)v[7];
  at->return_status = v[8] != 0;
  at->process_mode = v[9] != 0;
  /* ranks of this group in this process; absent: all of them unless the
   * ranks are processes */
  at->local_ranks = seen[10] ? (int)v[10] : (at->process_mode ? 1 : at->nranks);
  if (at->routine < MUSTER_POTRS || at->routine > MUSTER_SYEVD)
    return set_err(c, MUSTER_EINVAL, "routine %d unknown", at->routine);
  if (at->nranks < 1 || at->nranks > MUSTER_MAX_RANKS)
    return set_err(c, MUSTER_EINVAL, "nranks %d out of 1..%d", at->nranks, MUSTER_MAX_RANKS);
  if (at->n < 1 || at->tile < 0 || (at->layout != MUSTER_LAYOUT_BLOCK && at->layout != MUSTER_LAYOUT_CYCLIC))
    return set_err(c, MUSTER_EINVAL, "bad n=%" PRId64 " tile=%" PRId64 " layout=%d", at->n, at->tile,
                   at->layout);
  if (at->key[0] == '\0') snprintf(at->key, sizeof at->key, "p%ld", (long)getpid());
  return 0;
}

/* ---- buffers ------------------------------------------------------------ */

static int dtype_of(XLA_FFI_DataType t, muster_dtype_t *out) {
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

static size_t bytes_of(const mj_call_t *c, const XLA_FFI_Buffer *b) {
  size_t es = b == c->w_out                             ? muster_dtype_real_size(c->dtype)
            : b == c->status_out || b == c->rank_in ? sizeof(int32_t)
                                                    : muster_dtype_size(c->dtype);
  return (size_t)elems(b) * es;
}

static int want_args(mj_call_t *c, const XLA_FFI_CallFrame *cf, int nargs, int nrets) {
  if (cf->args.size != nargs || cf->rets.size != nrets)
    return set_err(c, MUSTER_EINVAL, "%s takes %d operands and %d results, got %" PRId64 " and %" PRId64,
                   muster_routine_name((muster_routine_t)c->at.routine), nargs, nrets, cf->args.size, cf->rets.size);
  for (int i = 0; i < nargs; i++)
    if (cf->args.types[i] != XLA_FFI_ArgType_BUFFER)
      return set_err(c, MUSTER_EINVAL, "operand %d is not a buffer", i);
  for (int i = 0; i < nrets; i++)
    if (cf->rets.types[i] != XLA_FFI_RetType_BUFFER)
      return set_err(c, MUSTER_EINVAL, "result %d is not a buffer", i);
  return 0;
}

static int bind_buffers(mj_call_t *c, const XLA_FFI_CallFrame *cf) {
  int r = c->at.routine;
  int rc = want_args(c, cf, r == MUSTER_POTRS ? 3 : 2, r == MUSTER_POTRI ? 2 : 3);
  if (rc < 0) return rc;
  XLA_FFI_Buffer **in = (XLA_FFI_Buffer **)cf->args.args;
  XLA_FFI_Buffer **out = (XLA_FFI_Buffer **)cf->rets.rets;
  c->rank_in = in[0];
  c->a_in = in[1];
  c->a_out = out[0];
  if (r == MUSTER_POTRS) {
    c->b_in = in[2];
    c->b_out = out[1];
  } else if (r == MUSTER_SYEVD) {
    c->w_out = out[1];
  }
  c->status_out = out[r == MUSTER_POTRI ? 1 : 2];
  return 0;
}

/* The shard's width must be the layout's (muster/layout.h): the block
 * width S = ceil(n/R), every rank's buffer, even where its last columns are
 * past n; or the cyclic layout's padded local width.  Another width would
 * put columns on the wrong rank.  Fills c->geom. */
static int check_width(mj_call_t *c) {
  const mj_attrs_t *at = &c->at;
  int cyclic = at->layout == MUSTER_LAYOUT_CYCLIC;
  if (cyclic && at->tile < 1) return set_err(c, MUSTER_EINVAL, "a cyclic input needs its tile (T_A)");
  if (muster_layout_geom_init(&c->geom, at->n, cyclic ? at->tile : 1, at->nranks) < 0)
    return set_err(c, cyclic ? MUSTER_ETILE : MUSTER_EINVAL,
                   "n=%" PRId64 " or tile %" PRId64 " out of range (1..2^40)", at->n, at->tile);
  int64_t w = c->a_in->dims[1], want = cyclic ? c->geom.local_cols : c->geom.block_cols;
  if (w != want)
    return set_err(c, MUSTER_EINVAL, "A shard has %" PRId64 " columns; n=%" PRId64 " on %d ranks (%s layout) "
                   "needs %" PRId64 " per rank", w, at->n, at->nranks,
                   at->layout == MUSTER_LAYOUT_BLOCK ? "block" : "cyclic", want);
  return 0;
}

/* Shapes and dtypes against the attributes; fills c->dtype. */
static int check_buffers(mj_call_t *c) {
  const mj_attrs_t *at = &c->at;
  if (c->rank_in->dtype != XLA_FFI_DataType_S32 || elems(c->rank_in) != 2)
    return set_err(c, MUSTER_EINVAL, "operand 0 must be int32[2] (rank, replica)");
  if (c->status_out->dtype != XLA_FFI_DataType_S32 || elems(c->status_out) != 1)
    return set_err(c, MUSTER_EINVAL, "the status result must be one int32");
  if (dtype_of(c->a_in->dtype, &c->dtype) < 0)
    return set_err(c, MUSTER_EUNSUPPORTED, "A has XLA dtype %d; muster takes float32, float64, complex64, complex128",
                   (int)c->a_in->dtype);
  if (c->a_in->rank != 2 || c->a_in->dims[0] < at->n || c->a_out->dtype != c->a_in->dtype ||
      elems(c->a_out) != elems(c->a_in))
    return set_err(c, MUSTER_EINVAL, "A shard must be 2-D with at least n=%" PRId64 " rows", at->n);
  int rc = check_width(c);
  if (rc < 0) return rc;
  if (c->b_in) {
    if (c->b_in->dtype != c->a_in->dtype || c->b_in->rank != 2 || c->b_in->dims[0] != c->a_in->dims[0] ||
        c->b_in->dims[1] != at->nrhs || elems(c->b_out) != elems(c->b_in))
      return set_err(c, MUSTER_EINVAL, "B must be %" PRId64 " x %" PRId64 " of A's dtype",
                     c->a_in->dims[0], at->nrhs);
  }
  if (c->w_out) {
    XLA_FFI_DataType wt = muster_dtype_real_size(c->dtype) == 4 ? XLA_FFI_DataType_F32 : XLA_FFI_DataType_F64;
    if (c->w_out->dtype != wt || elems(c->w_out) < at->n)
      return set_err(c, MUSTER_EINVAL, "W must hold n=%" PRId64 " reals of A's precision", at->n);
  }
  return 0;
}

/* ---- execution context --------------------------------------------------- */

static int read_context(mj_call_t *c, XLA_FFI_CallFrame *cf) {
  const XLA_FFI_Api *api = c->api;
  XLA_FFI_Error *e;
  c->device = -1;
  c->stream = NULL;
  c->run_id = 0;
  if (MJ_API_HAS(api, XLA_FFI_DeviceOrdinal_Get)) {
    XLA_FFI_DeviceOrdinal_Get_Args d;
    memset(&d, 0, sizeof d);
    d.struct_size = XLA_FFI_DeviceOrdinal_Get_Args_STRUCT_SIZE;
    d.ctx = cf->ctx;
    if ((e = api->XLA_FFI_DeviceOrdinal_Get(&d)) == NULL)
      c->device = d.device_ordinal;
    else
      c->api->XLA_FFI_Error_Destroy(&(XLA_FFI_Error_Destroy_Args){XLA_FFI_Error_Destroy_Args_STRUCT_SIZE, NULL, e});
  }
  if (MJ_API_HAS(api, XLA_FFI_RunId_Get)) {
    XLA_FFI_RunId_Get_Args r;
    memset(&r, 0, sizeof r);
    r.struct_size = XLA_FFI_RunId_Get_Args_STRUCT_SIZE;
    r.ctx = cf->ctx;
    if ((e = api->XLA_FFI_RunId_Get(&r)) == NULL)
      c->run_id = r.run_id;
    else
      c->api->XLA_FFI_Error_Destroy(&(XLA_FFI_Error_Destroy_Args){XLA_FFI_Error_Destroy_Args_STRUCT_SIZE, NULL, e});
  }
  if (c->cuda) {
    XLA_FFI_Stream_Get_Args s;
    memset(&s, 0, sizeof s);
    s.struct_size = XLA_FFI_Stream_Get_Args_STRUCT_SIZE;
    s.ctx = cf->ctx;
    if ((e = api->XLA_FFI_Stream_Get(&s)) != NULL) {
      api->XLA_FFI_Error_Destroy(&(XLA_FFI_Error_Destroy_Args){XLA_FFI_Error_Destroy_Args_STRUCT_SIZE, NULL, e});
      return set_err(c, MUSTER_ECUDA, "XLA_FFI_Stream_Get failed");
    }
    c->stream = s.stream;
    int dev = -1;
    int rc = mj_cuda_device_of(c->a_in->data, &dev, c->err, sizeof c->err);
    if (rc < 0) return rc;
    c->device = dev;
  }
  return 0;
}

/* ---- device-or-host memory helpers ----------------------------------------- */

static int mem_read(mj_call_t *c, const void *src, void *dst, size_t n) {
  if (!c->cuda) {
    memcpy(dst, src, n);
    return 0;
  }
  return mj_cuda_read(c->stream, src, dst, n, c->err, sizeof c->err);
}

static int mem_write(mj_call_t *c, void *dst, const void *src, size_t n) {
  if (!c->cuda) {
    memcpy(dst, src, n);
    return 0;
  }
  return mj_cuda_write(c->stream, dst, src, n, c->err, sizeof c->err);
}

static void mem_fill_nan(mj_call_t *c, XLA_FFI_Buffer *b) {
  char ignored[256];
  if (!b) return;
  /* all-ones bytes are a NaN in every float format we handle */
  if (!c->cuda)
    memset(b->data, 0xff, bytes_of(c, b));
  else
    (void)mj_cuda_fill_ff(c->stream, b->data, bytes_of(c, b), ignored, sizeof ignored);
}

static int copy_alias(mj_call_t *c, XLA_FFI_Buffer *in, XLA_FFI_Buffer *out) {
  if (!in || in->data == out->data) return 0;
  /* XLA honours input_output_aliases; a copy keeps us correct if not */
  if (!c->cuda) {
    memcpy(out->data, in->data, bytes_of(c, in));
    return 0;
  }
  return set_err(c, MUSTER_EINVAL, "XLA did not alias the in-place operand (declare input_output_aliases)");
}

/* ---- process-mode staging (cpu) ------------------------------------------------ */

/* In process mode on the cpu the leader must map every rank's shard, and
 * XLA's buffers are private memory: stage them through muster_shard_alloc
 * regions, kept per process and reused (one region per concurrent call). */
typedef struct stage {
  void *p;
  size_t size;
  int busy;
  int device; /* CUDA ordinal of a device stage, -1 for host memory */
} stage_t;
static stage_t stages[16];
static pthread_mutex_t stage_lock = PTHREAD_MUTEX_INITIALIZER;

/* A free stage of at least `bytes` on `device` (-1: host), allocated or
 * grown as needed: muster_shard_alloc for host, cuMemAlloc for a GPU. */
static int stage_get(mj_call_t *c, size_t bytes, stage_t **out) {
  int rc;
  int device = c->cuda ? c->device : -1;
  stage_t *pick = NULL;
  pthread_mutex_lock(&stage_lock);
  for (int i = 0; i < 16 && !pick; i++)
    if (!stages[i].busy && stages[i].p && stages[i].device == device && stages[i].size >= bytes) pick = &stages[i];
  for (int i = 0; i < 16 && !pick; i++)
    if (!stages[i].busy && (!stages[i].p || stages[i].device == device)) pick = &stages[i];
  if (pick) pick->busy = 1;
  pthread_mutex_unlock(&stage_lock);
  if (!pick) return MUSTER_EBUSY; /* more concurrent staged calls than slots */
  if (pick->size < bytes) {
    if (pick->p) {
      if (device < 0)
        muster_shard_free(pick->p);
      else
        mj_cuda_free(c->stream, pick->p);
    }
    pick->p = NULL;
    pick->size = 0;
    if (device < 0)
      rc = muster_shard_alloc(bytes, &pick->p);
    else
      rc = mj_cuda_alloc(c->stream, bytes, &pick->p, c->err, sizeof c->err);
    if (rc < 0) {
      pthread_mutex_lock(&stage_lock);
      pick->busy = 0;
      pthread_mutex_unlock(&stage_lock);
      return rc;
    }
    pick->size = bytes;
    pick->device = device;
  }
  *out = pick;
  return 0;
}

static void stage_put(stage_t *s) {
  pthread_mutex_lock(&stage_lock);
  s->busy = 0;
  pthread_mutex_unlock(&stage_lock);
}

static size_t align64(size_t x) { return (x + 63) & ~(size_t)63; }

/* ---- the solve ------------------------------------------------------------- */

static void fill_shard(mj_call_t *c, muster_shard_t *s, char *base) {
  const mj_attrs_t *at = &c->at;
  size_t abytes = bytes_of(c, c->a_out), bbytes = c->b_out ? bytes_of(c, c->b_out) : 0;
  memset(s, 0, sizeof *s);
  s->mem = c->cuda ? MUSTER_MEM_CUDA : MUSTER_MEM_HOST;
  s->device = c->cuda ? c->device : -1;
  s->lda = c->a_out->dims[0];
  s->ncols = c->a_out->dims[1];
  if (at->layout == MUSTER_LAYOUT_BLOCK) {
    /* the last block shards may be short: their buffers keep S columns,
     * and the columns past n are not touched */
    s->col0 = muster_layout_block_col0(&c->geom, c->rank);
    s->ncols = muster_layout_block_ncols(&c->geom, c->rank);
  }
  s->a = base ? base : c->a_out->data;
  if (c->b_out) {
    s->b = base ? base + align64(abytes) : c->b_out->data;
    s->ldb = c->b_out->dims[0];
  }
  if (c->w_out) s->w = base ? base + align64(abytes) + align64(bbytes) : c->w_out->data;
  s->stream = c->stream;
}

/* ---- group names -------------------------------------------------------------
 *
 * A group per launch: the run id in the name keeps launches apart.  A new
 * name per launch costs a segment (shm_open, ftruncate, mmap, unlink: about
 * 50 us on a 2-core VM, docs/performance/jax.md); a reused name costs
 * nothing (the runtime keeps the mapping and advances a generation).  So
 * when every rank of the group lives in this process (SPMD), launches share
 * a small pool of names, "<base>.s<k>": the first instance of a launch to
 * arrive takes the lowest k no running launch of that base holds, the
 * others of the same run id find it, and k is free again once all local
 * instances have left.  Across processes (MPMD) the processes could not
 * agree on k without talking, so the name carries the run id instead (it is
 * the same in every process of a jax.distributed launch). */
enum { MJ_SLOTS = 64 };
typedef struct slot {
  char base[MUSTER_MAX_NAME + 1];
  int64_t run_id;
  int k, arrived, left, failed, used;
} slot_t;
static slot_t slots[MJ_SLOTS];
static pthread_mutex_t slot_lock = PTHREAD_MUTEX_INITIALIZER;

static int slot_taken(const char *base, int k) {
  for (int i = 0; i < MJ_SLOTS; i++)
    if (slots[i].used && slots[i].k == k && strcmp(slots[i].base, base) == 0) return 1;
  return 0;
}

/* Index of this launch's slot (k in *k), or -1 when the pool is full. */
static int slot_acquire(const char *base, int64_t run_id, int *k) {
  int idx = -1;
  pthread_mutex_lock(&slot_lock);
  for (int i = 0; i < MJ_SLOTS && idx < 0; i++)
    if (slots[i].used && slots[i].run_id == run_id && strcmp(slots[i].base, base) == 0) idx = i;
  if (idx < 0) {
    for (int i = 0; i < MJ_SLOTS && idx < 0; i++)
      if (!slots[i].used) idx = i;
    if (idx >= 0) {
      int kk = 0;
      while (slot_taken(base, kk)) kk++;
      slot_t *s = &slots[idx];
      snprintf(s->base, sizeof s->base, "%s", base);
      s->run_id = run_id;
      s->k = kk;
      s->arrived = s->left = s->failed = 0;
      s->used = 1;
    }
  }
  if (idx >= 0) {
    slots[idx].arrived++;
    *k = slots[idx].k;
  }
  pthread_mutex_unlock(&slot_lock);
  return idx;
}

static void slot_release(int idx, int failed, int local_ranks) {
  if (idx < 0) return;
  pthread_mutex_lock(&slot_lock);
  slot_t *s = &slots[idx];
  s->left++;
  s->failed |= failed;
  /* after a failure, instances that never arrived may never come */
  if (s->left >= local_ranks || (s->failed && s->left == s->arrived)) s->used = 0;
  pthread_mutex_unlock(&slot_lock);
}

/* MUSTER_JAX_GROUP_POOL=0 turns the pool off (a name per launch), for
 * measuring it and as a way out; read once per process. */
static pthread_once_t pool_once = PTHREAD_ONCE_INIT;
static int pool_on = 1;
static void pool_read_env(void) {
  const char *v = getenv("MUSTER_JAX_GROUP_POOL");
  pool_on = !(v && strcmp(v, "0") == 0);
}
static int pool_enabled(void) {
  pthread_once(&pool_once, pool_read_env);
  return pool_on;
}

/* Name of this launch's group; *slot set when it came from the pool.
 * MUSTER_EINVAL when the name would not fit MUSTER_MAX_NAME. */
static int group_name(mj_call_t *c, char *name, size_t cap, int *slot) {
  char base[MUSTER_MAX_NAME + 1];
  int k = 0, len;
  *slot = -1;
  len = snprintf(base, sizeof base, "jx.%s.%s.%" PRId64 ".%d", c->at.key, muster_routine_name((muster_routine_t)c->at.routine),
                 c->at.site, c->replica);
  if (len < 0 || (size_t)len + 18 > cap)
    return set_err(c, MUSTER_EINVAL, "muster_jax: group name %s... too long (group_key %s)", base, c->at.key);
  if (c->at.local_ranks == c->at.nranks && c->run_id != 0 && pool_enabled())
    *slot = slot_acquire(base, c->run_id, &k);
  if (*slot >= 0)
    snprintf(name, cap, "%.*s.s%d", (int)len, base, k);
  else
    snprintf(name, cap, "%.*s.%" PRIx64, (int)len, base, (uint64_t)c->run_id);
  return 0;
}

/* ---- what the last solve of rank 0 took (benchmarks read it) ----------------- */
static pthread_mutex_t stats_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
  double solve_s;    /* muster_solve on rank 0: rendezvous + provider + results */
  double provider_s; /* the provider alone (muster_solve_result.seconds)        */
  int64_t tile;
  char provider[32];
  uint64_t calls;
} stats;

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void stats_record(const mj_call_t *c, double t, const muster_solve_result_t *res) {
  if (c->rank != 0) return;
  pthread_mutex_lock(&stats_lock);
  stats.solve_s = t;
  stats.provider_s = res->seconds;
  stats.tile = res->tile;
  snprintf(stats.provider, sizeof stats.provider, "%s", res->provider);
  stats.calls++;
  pthread_mutex_unlock(&stats_lock);
}

static int run_solve(mj_call_t *c, const muster_shard_t *mine, muster_solve_result_t *res) {
  char name[MUSTER_MAX_NAME + 1];
  muster_group_opts_t opts = {NULL, 0.0, c->device};
  muster_group_t *g = NULL;
  muster_solve_args_t args;
  memset(&args, 0, sizeof args);
  args.routine = (muster_routine_t)c->at.routine;
  args.dtype = c->dtype;
  args.n = c->at.n;
  args.nrhs = c->at.nrhs;
  args.tile = c->at.tile;
  args.layout = (muster_layout_t)c->at.layout;
  args.flags = (unsigned)c->at.flags;
  args.provider = c->at.provider[0] ? c->at.provider : NULL;
  int slot;
  int rc = group_name(c, name, sizeof name, &slot);
  if (rc < 0) return rc;
  rc = muster_group_join(name, c->rank, c->at.nranks, &opts, &g);
  if (rc < 0) {
    set_err(c, rc, "muster_jax %s rank %d/%d (device %d): joining group %s: %s",
            muster_routine_name((muster_routine_t)c->at.routine), c->rank, c->at.nranks, c->device, name, muster_last_error());
    slot_release(slot, 1, c->at.local_ranks);
    return rc;
  }
  double t0 = now_s();
  rc = muster_solve(g, &args, mine, res);
  if (rc == 0) stats_record(c, now_s() - t0, res);
  if (rc < 0)
    set_err(c, rc, "muster_jax %s rank %d/%d (device %d, group %s): %s", muster_routine_name((muster_routine_t)c->at.routine),
            c->rank, c->at.nranks, c->device, name, muster_last_error());
  int lrc = muster_group_leave(g);
  if (rc == 0 && lrc < 0) {
    rc = lrc;
    set_err(c, rc, "muster_jax %s rank %d/%d: leaving group %s: %s", muster_routine_name((muster_routine_t)c->at.routine), c->rank,
            c->at.nranks, name, muster_last_error());
  }
  slot_release(slot, rc < 0, c->at.local_ranks);
  return rc;
}

/* Copy between XLA's buffer and a stage: memcpy on the host, a copy
 * ordered on XLA's stream on a GPU (the provider syncs the stream before it
 * publishes the shard). */
static int stage_copy(mj_call_t *c, void *dst, const void *src, size_t n) {
  if (!n) return 0;
  if (!c->cuda) {
    memcpy(dst, src, n);
    return 0;
  }
  return mj_cuda_copy(c->stream, dst, src, n, c->err, sizeof c->err);
}

/* In process mode the leader must reach every rank's shard: host shards
 * through muster_shard_alloc memory, GPU shards through CUDA IPC, which
 * refuses XLA's own allocations (jax 0.11.2, every allocator): stage them
 * in both cases. */
static int solve(mj_call_t *c, muster_solve_result_t *res) {
  muster_shard_t mine;
  stage_t *st = NULL;
  size_t abytes = bytes_of(c, c->a_out), bbytes = c->b_out ? bytes_of(c, c->b_out) : 0;
  size_t wbytes = c->w_out ? bytes_of(c, c->w_out) : 0;
  int staged = c->at.process_mode, rc;
  if (staged) {
    rc = stage_get(c, align64(abytes) + align64(bbytes) + wbytes, &st);
    if (rc < 0)
      return set_err(c, rc, "muster_jax: staging buffer of %zu bytes: %s", abytes + bbytes + wbytes,
                     rc == MUSTER_EBUSY ? "more than 16 calls at once in this process"
                     : c->cuda          ? c->err
                                        : muster_last_error());
  }
  fill_shard(c, &mine, staged ? st->p : NULL);
  if (staged && ((rc = stage_copy(c, mine.a, c->a_out->data, abytes)) < 0 ||
                 (rc = stage_copy(c, mine.b, bbytes ? c->b_out->data : NULL, bbytes)) < 0)) {
    stage_put(st);
    return set_err(c, rc, "muster_jax: staging the shard: %s", c->err);
  }
  rc = run_solve(c, &mine, res);
  if (staged) {
    if (rc == 0) {
      int crc = stage_copy(c, c->a_out->data, mine.a, abytes);
      if (crc == 0) crc = stage_copy(c, bbytes ? c->b_out->data : NULL, mine.b, bbytes);
      if (crc == 0) crc = stage_copy(c, wbytes ? c->w_out->data : NULL, mine.w, wbytes);
      if (crc < 0) rc = set_err(c, crc, "muster_jax: copying the result back: %s", c->err);
    }
    stage_put(st);
  }
  return rc;
}

static int read_rank(mj_call_t *c) {
  int32_t rr[2] = {-1, -1};
  int rc = mem_read(c, c->rank_in->data, rr, sizeof rr);
  if (rc < 0) return set_err(c, rc, "muster_jax: reading the rank operand: %s", c->err);
  if (rr[0] < 0 || rr[0] >= c->at.nranks || rr[1] < 0)
    return set_err(c, MUSTER_EINVAL, "muster_jax: rank %d out of 0..%d (replica %d)", (int)rr[0],
                   c->at.nranks - 1, (int)rr[1]);
  c->rank = rr[0];
  c->replica = rr[1];
  return 0;
}

static int32_t status_of(int rc, const muster_solve_result_t *res) {
  if (rc == MUSTER_ENOTPD && res->info > 0) return (int32_t)res->info;
  return rc;
}

static XLA_FFI_Error *metadata(XLA_FFI_CallFrame *cf) {
  /* XLA passes no api here: nothing can be reported but success */
  XLA_FFI_Metadata_Extension *ext = (XLA_FFI_Metadata_Extension *)cf->extension_start;
  ext->metadata->api_version.major_version = MJ_FFI_MAJOR;
  ext->metadata->api_version.minor_version = MJ_FFI_MINOR;
  ext->metadata->traits = 0; /* not command-buffer (CUDA graph) compatible */
  return NULL;
}

/* The XLA code of a muster failure: by its kind (muster/errno.h), the same
 * mapping as every other adapter's. */
static XLA_FFI_Error_Code xla_code_of(int rc) {
  switch (muster_err_kind(rc)) {
  case MUSTER_KIND_INVALID_ARGUMENT:
  case MUSTER_KIND_NUMERICAL: return XLA_FFI_Error_Code_INVALID_ARGUMENT;
  case MUSTER_KIND_DEADLINE_EXCEEDED: return XLA_FFI_Error_Code_DEADLINE_EXCEEDED;
  case MUSTER_KIND_ABORTED: return XLA_FFI_Error_Code_ABORTED;
  case MUSTER_KIND_RESOURCE_EXHAUSTED: return XLA_FFI_Error_Code_RESOURCE_EXHAUSTED;
  case MUSTER_KIND_PERMISSION_DENIED: return XLA_FFI_Error_Code_PERMISSION_DENIED;
  case MUSTER_KIND_NOT_FOUND: return XLA_FFI_Error_Code_NOT_FOUND;
  case MUSTER_KIND_UNIMPLEMENTED: return XLA_FFI_Error_Code_UNIMPLEMENTED;
  case MUSTER_KIND_FAILED_PRECONDITION: return XLA_FFI_Error_Code_FAILED_PRECONDITION;
  default: return XLA_FFI_Error_Code_INTERNAL;
  }
}

/* After the solve: the status output always; on failure either NaN outputs
 * (return_status) or an XLA error carrying the message. */
static XLA_FFI_Error *finish(mj_call_t *c, int rc, const muster_solve_result_t *res) {
  char why[MJ_ERRLEN];
  snprintf(why, sizeof why, "%s", c->err); /* mem_write may reuse c->err */
  int32_t status = status_of(rc, res);
  int wrc = mem_write(c, c->status_out->data, &status, sizeof status);
  if (rc == 0)
    return wrc < 0 ? xla_error(c->api, XLA_FFI_Error_Code_INTERNAL, c->err) : NULL;
  if (!c->at.return_status) return xla_error(c->api, xla_code_of(rc), why);
  mem_fill_nan(c, c->a_out);
  mem_fill_nan(c, c->b_out);
  mem_fill_nan(c, c->w_out);
  return wrc < 0 ? xla_error(c->api, XLA_FFI_Error_Code_INTERNAL, c->err) : NULL;
}

static XLA_FFI_Error *handle(XLA_FFI_CallFrame *cf, int cuda) {
  if (cf->extension_start && cf->extension_start->type == XLA_FFI_Extension_Metadata)
    return metadata(cf);
  if (cf->stage != XLA_FFI_ExecutionStage_EXECUTE)
    return xla_error(cf->api, XLA_FFI_Error_Code_INVALID_ARGUMENT, "muster_jax: called at a stage other than execute");
  mj_call_t *c = calloc(1, sizeof *c);
  if (!c) return xla_error(cf->api, XLA_FFI_Error_Code_RESOURCE_EXHAUSTED, "muster_jax: out of memory");
  c->api = cf->api;
  c->cuda = cuda;
  muster_solve_result_t res;
  memset(&res, 0, sizeof res);
  XLA_FFI_Error *out;
  int rc;
  /* Malformed calls (attributes, operands) are programming errors of the
   * Python side: always an XLA error, whatever return_status says. */
  if ((rc = decode_attrs(c, &cf->attrs)) < 0 || (rc = bind_buffers(c, cf)) < 0 ||
      (rc = check_buffers(c)) < 0 || (rc = read_context(c, cf)) < 0) {
    char msg[MJ_ERRLEN + 32];
    snprintf(msg, sizeof msg, "muster_jax: %s", c->err);
    out = xla_error(cf->api, XLA_FFI_Error_Code_INVALID_ARGUMENT, msg);
  } else {
    if ((rc = read_rank(c)) == 0 && (rc = copy_alias(c, c->a_in, c->a_out)) == 0 &&
        (rc = copy_alias(c, c->b_in, c->b_out)) == 0)
      rc = solve(c, &res);
    out = finish(c, rc, &res);
  }
  free(c);
  return out;
}

/* The handlers registered with jax.ffi.register_ffi_target. */
MJ_EXPORT XLA_FFI_Error *muster_jax_cpu(XLA_FFI_CallFrame *cf) { return handle(cf, 0); }
MJ_EXPORT XLA_FFI_Error *muster_jax_cuda(XLA_FFI_CallFrame *cf) { return handle(cf, 1); }

/* The last successful solve seen by a rank 0 of this process: seconds in
 * muster_solve (what the C path of the same call costs), seconds in the
 * provider, the tile and provider used, and how many solves so far. */
MJ_EXPORT int muster_jax_last_solve(double *solve_s, double *provider_s, int64_t *tile,
                                    char *provider, size_t cap, uint64_t *calls) {
  pthread_mutex_lock(&stats_lock);
  if (solve_s) *solve_s = stats.solve_s;
  if (provider_s) *provider_s = stats.provider_s;
  if (tile) *tile = stats.tile;
  if (provider && cap) snprintf(provider, cap, "%s", stats.provider);
  if (calls) *calls = stats.calls;
  pthread_mutex_unlock(&stats_lock);
  return 0;
}

/* Version of this adapter and the FFI API it reports, for tests. */
MJ_EXPORT int muster_jax_ffi_api_version(int *major, int *minor) {
  if (major) *major = MJ_FFI_MAJOR;
  if (minor) *minor = MJ_FFI_MINOR;
  return 0;
}
