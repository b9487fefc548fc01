/*
 * adapters/tensorflow/tf_kernels.c - CPU kernels of MusterPotrs, MusterPotri,
 * MusterSyevd on TensorFlow's C kernel API.
 *
 * One call, on every participant (a replica's thread, or a worker process):
 *   1. copy the inputs into a work buffer, transposed: TensorFlow tensors are
 *      row-major, muster shards column-major.  The inputs are never written.
 *   2. join group "<routine>.<key>" as rank of nranks, muster_solve with this
 *      shard (the leader runs the provider on every shard), leave;
 *   3. transpose the results out into freshly allocated outputs.
 * Errors become TensorFlow errors carrying muster_strerror() and
 * muster_last_error(): who, what, where.  An error found here alone, before
 * the rendezvous (a malformed input), still joins the group and aborts it,
 * so the peers fail at once with our message instead of waiting out the
 * timeout.
 *
 * The kernel is synchronous and blocks its TensorFlow inter-op thread while
 * it waits for the others (TensorFlow's C async kernels hand the callback
 * over by the address of a local std::function, so it cannot be called after
 * compute returns: a deferred completion is not possible in C).  Replicas
 * therefore need one inter-op thread each; muster_tf checks that.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tfInt.h"
#include "tensorflow/c/kernels.h"

#define ALIGN 64
#define PRINTF(a, b) __attribute__((format(printf, a, b)))

typedef struct kernel {
  muster_routine_t routine;
  int rank, nranks;
  int64_t tile;
  bool shared;              /* participants are processes: shard memory */
  bool same_step;           /* participants share a TF step id: check it  */
  double timeout_s;
  char provider[32];        /* "" : default choice                        */
  char group[MUSTER_MAX_NAME + 1];
  pthread_mutex_t busy;     /* one run of this op instance at a time      */
  void *buf;                /* work buffer reused from call to call, so a */
  size_t cap;               /* leader maps a peer's shard memory once     */
} kernel_t;

/* Where one call keeps its work: column-major copies of a and b, and w. */
typedef struct work {
  muster_dtype_t dtype;
  size_t esz, rsz;          /* element size, its real part's size */
  int64_t n, ncols, nrhs;
  void *a, *b, *w;
} work_t;

/* ---- errors -------------------------------------------------------------- */

static void fail(TF_OpKernelContext *ctx, TF_Code code, const kernel_t *k, const char *fmt, ...)
    PRINTF(4, 5);
static void fail(TF_OpKernelContext *ctx, TF_Code code, const kernel_t *k, const char *fmt, ...) {
  char msg[2048];
  int off = snprintf(msg, sizeof msg, "%s (group %s, rank %d of %d): ",
                     muster__tf_op_name(k->routine), k->group, k->rank, k->nranks);
  va_list ap;
  va_start(ap, fmt);
  if (off > 0 && (size_t)off < sizeof msg) vsnprintf(msg + off, sizeof msg - off, fmt, ap);
  va_end(ap);
  TF_Status *st = TF_NewStatus();
  TF_SetStatus(st, code, msg);
  TF_OpKernelContext_Failure(ctx, st);
  TF_DeleteStatus(st);
}

/* The TensorFlow code of a muster failure: by its kind (muster/errno.h),
 * the same mapping as every other adapter's. */
static TF_Code tf_code(int rc) {
  switch (muster_err_kind(rc)) {
  case MUSTER_KIND_OK: return TF_OK;
  case MUSTER_KIND_INVALID_ARGUMENT:
  case MUSTER_KIND_NUMERICAL: return TF_INVALID_ARGUMENT;
  case MUSTER_KIND_DEADLINE_EXCEEDED: return TF_DEADLINE_EXCEEDED;
  case MUSTER_KIND_ABORTED: return TF_ABORTED;
  case MUSTER_KIND_RESOURCE_EXHAUSTED: return TF_RESOURCE_EXHAUSTED;
  case MUSTER_KIND_PERMISSION_DENIED: return TF_PERMISSION_DENIED;
  case MUSTER_KIND_NOT_FOUND: return TF_NOT_FOUND;
  case MUSTER_KIND_UNIMPLEMENTED: return TF_UNIMPLEMENTED;
  case MUSTER_KIND_FAILED_PRECONDITION: return TF_FAILED_PRECONDITION;
  default: return TF_INTERNAL;
  }
}

/* A muster failure: code, its meaning and the runtime's detailed message
 * (`detail`, copied before any later muster call could replace it). */
static void fail_muster(TF_OpKernelContext *ctx, const kernel_t *k, const char *phase, int rc,
                        const char *detail) {
  const char *hint = "";
  if (rc == MUSTER_ETIMEDOUT)
    hint = " (in TensorFlow: every replica must run this op concurrently, i.e. inside "
           "tf.function, and each blocks one inter-op thread while it waits: "
           "inter_op_parallelism_threads must be >= replicas x muster ops in flight)";
  fail(ctx, tf_code(rc), k, "%s: %s%s%s%s", phase, muster_strerror(rc), detail[0] ? ": " : "",
       detail, hint);
}

/* Make the peers fail now with our problem instead of at their timeout. */
static void abort_peers(const kernel_t *k, int code, const char *why) {
  muster_group_opts_t o = {.job = NULL, .timeout_s = k->timeout_s, .device = -1};
  muster_group_t *g = NULL;
  if (muster_group_join(k->group, k->rank, k->nranks, &o, &g) < 0) return;
  (void)muster_group_abort(g, code, why);
  (void)muster_group_leave(g);
}

/* ---- construction -------------------------------------------------------- */

static bool attr_ok(TF_OpKernelConstruction *c, TF_Status *st) {
  if (TF_GetCode(st) == TF_OK) return true;
  TF_OpKernelConstruction_Failure(c, st);
  return false;
}

static void construction_fail(TF_OpKernelConstruction *c, TF_Status *st, const char *fmt, ...)
    PRINTF(3, 4);
static void construction_fail(TF_OpKernelConstruction *c, TF_Status *st, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  TF_SetStatus(st, TF_INVALID_ARGUMENT, msg);
  TF_OpKernelConstruction_Failure(c, st);
}

/* Read a string attribute into buf (NUL-terminated); false on failure. */
static bool attr_string(TF_OpKernelConstruction *c, const char *name, char *buf, size_t cap,
                        TF_Status *st) {
  int32_t list_size = 0, total = 0;
  TF_OpKernelConstruction_GetAttrSize(c, name, &list_size, &total, st);
  if (!attr_ok(c, st)) return false;
  if (total < 0 || (size_t)total >= cap) {
    construction_fail(c, st, "attribute %s is %d bytes long; at most %zu", name, (int)total,
                      cap - 1);
    return false;
  }
  TF_OpKernelConstruction_GetAttrString(c, name, buf, (size_t)total, st);
  if (!attr_ok(c, st)) return false;
  buf[total] = '\0';
  return true;
}

static void kernel_delete(void *p) {
  kernel_t *k = p;
  if (!k) return;
  if (k->buf) {
    if (k->shared) muster_shard_free(k->buf);
    else free(k->buf);
  }
  pthread_mutex_destroy(&k->busy);
  free(k);
}

/* Check syevd's Tw against T: eigenvalues are float for float/complex64 and
 * double for double/complex128. */
static bool syevd_types_ok(TF_OpKernelConstruction *c, TF_Status *st) {
  TF_DataType t, tw;
  TF_OpKernelConstruction_GetAttrType(c, "T", &t, st);
  if (!attr_ok(c, st)) return false;
  TF_OpKernelConstruction_GetAttrType(c, "Tw", &tw, st);
  if (!attr_ok(c, st)) return false;
  TF_DataType want = (t == TF_FLOAT || t == TF_COMPLEX64) ? TF_FLOAT : TF_DOUBLE;
  if (tw != want) {
    construction_fail(c, st, "MusterSyevd: Tw (eigenvalue type) must be %s for T=%s",
                      want == TF_FLOAT ? "float" : "double",
                      t == TF_FLOAT ? "float" : t == TF_DOUBLE ? "double"
                      : t == TF_COMPLEX64 ? "complex64" : "complex128");
    return false;
  }
  return true;
}

static void *kernel_create(TF_OpKernelConstruction *c, muster_routine_t routine) {
  TF_Status *st = TF_NewStatus();
  kernel_t *k = calloc(1, sizeof *k);
  char key[MUSTER_MAX_NAME + 1];
  int64_t rank = 0, nranks = 0;
  TF_Bool shared = 0, same_step = 0;
  float timeout = 0;
  if (!k) {
    construction_fail(c, st, "%s: out of memory", muster__tf_op_name(routine));
    goto bad;
  }
  pthread_mutex_init(&k->busy, NULL);
  k->routine = routine;
  TF_OpKernelConstruction_GetAttrInt64(c, "rank", &rank, st);
  if (!attr_ok(c, st)) goto bad;
  TF_OpKernelConstruction_GetAttrInt64(c, "nranks", &nranks, st);
  if (!attr_ok(c, st)) goto bad;
  TF_OpKernelConstruction_GetAttrInt64(c, "tile", &k->tile, st);
  if (!attr_ok(c, st)) goto bad;
  TF_OpKernelConstruction_GetAttrBool(c, "shared_memory", &shared, st);
  if (!attr_ok(c, st)) goto bad;
  TF_OpKernelConstruction_GetAttrBool(c, "same_step", &same_step, st);
  if (!attr_ok(c, st)) goto bad;
  TF_OpKernelConstruction_GetAttrFloat(c, "timeout", &timeout, st);
  if (!attr_ok(c, st)) goto bad;
  if (!attr_string(c, "key", key, sizeof key, st)) goto bad;
  if (!attr_string(c, "provider", k->provider, sizeof k->provider, st)) goto bad;
  if (routine == MUSTER_SYEVD && !syevd_types_ok(c, st)) goto bad;
  if (nranks < 1 || nranks > MUSTER_MAX_RANKS || rank < 0 || rank >= nranks) {
    construction_fail(c, st, "%s: rank=%" PRId64 " nranks=%" PRId64 ": need 0 <= rank < nranks <= %d",
                      muster__tf_op_name(routine), rank, nranks, MUSTER_MAX_RANKS);
    goto bad;
  }
  if (!key[0] || strchr(key, '/')) {
    construction_fail(c, st, "%s: key '%s' must be non-empty and contain no '/'",
                      muster__tf_op_name(routine), key);
    goto bad;
  }
  int len = snprintf(k->group, sizeof k->group, "%s.%s", muster_routine_name(routine), key);
  if (len < 0 || (size_t)len >= sizeof k->group) {
    construction_fail(c, st, "%s: key '%s' too long: the group name '%s.<key>' has at most %d bytes",
                      muster__tf_op_name(routine), key, muster_routine_name(routine),
                      MUSTER_MAX_NAME);
    goto bad;
  }
  k->rank = (int)rank;
  k->nranks = (int)nranks;
  k->shared = shared != 0;
  k->same_step = same_step != 0;
  k->timeout_s = timeout;
  TF_DeleteStatus(st);
  return k;
bad:
  kernel_delete(k);
  TF_DeleteStatus(st);
  return NULL;
}

static void *create_potrs(TF_OpKernelConstruction *c) { return kernel_create(c, MUSTER_POTRS); }
static void *create_potri(TF_OpKernelConstruction *c) { return kernel_create(c, MUSTER_POTRI); }
static void *create_syevd(TF_OpKernelConstruction *c) { return kernel_create(c, MUSTER_SYEVD); }

/* ---- layout: row-major tensors <-> column-major shards --------------------- */

#define TILE 32
/* src row-major rows x cols -> dst row-major cols x rows, in cache tiles.
 * A row-major [n, k] tensor transposed this way is its column-major copy
 * (ld n), and back. */
#define DEFINE_TRANSPOSE(name, type)                                                   \
  static void name(int64_t rows, int64_t cols, const type *src, type *dst) {          \
    for (int64_t i0 = 0; i0 < rows; i0 += TILE)                                        \
      for (int64_t j0 = 0; j0 < cols; j0 += TILE) {                                    \
        int64_t i1 = i0 + TILE < rows ? i0 + TILE : rows;                              \
        int64_t j1 = j0 + TILE < cols ? j0 + TILE : cols;                              \
        for (int64_t i = i0; i < i1; i++)                                              \
          for (int64_t j = j0; j < j1; j++) dst[j * rows + i] = src[i * cols + j];     \
      }                                                                                \
  }
typedef struct { uint64_t re, im; } c128_bits_t;
DEFINE_TRANSPOSE(transpose4, uint32_t)
DEFINE_TRANSPOSE(transpose8, uint64_t)
DEFINE_TRANSPOSE(transpose16, c128_bits_t)

static void transpose(size_t esz, int64_t rows, int64_t cols, const void *src, void *dst) {
  if (rows <= 0 || cols <= 0) return;
  if (esz == 4) transpose4(rows, cols, src, dst);
  else if (esz == 8) transpose8(rows, cols, src, dst);
  else transpose16(rows, cols, src, dst);
}

/* ---- one call ------------------------------------------------------------ */

static bool dtype_of(TF_DataType t, work_t *w) {
  switch (t) {
  case TF_FLOAT: w->dtype = MUSTER_F32; w->rsz = 4; break;
  case TF_DOUBLE: w->dtype = MUSTER_F64; w->rsz = 8; break;
  case TF_COMPLEX64: w->dtype = MUSTER_C64; w->rsz = 4; break;
  case TF_COMPLEX128: w->dtype = MUSTER_C128; w->rsz = 8; break;
  default: return false;
  }
  w->esz = muster_dtype_size(w->dtype);
  return true;
}

static size_t round_up(size_t x) { return (x + ALIGN - 1) / ALIGN * ALIGN; }

/* Point w->a, w->b, w->w into the kernel's work buffer, growing it if
 * needed.  Process mode: shard memory the leader can map.  0 or a MUSTER_E*
 * code (message in muster_last_error, or set here for ENOMEM). */
static int work_buffers(kernel_t *k, work_t *w) {
  size_t sa = round_up((size_t)(w->n * w->ncols) * w->esz);
  size_t sb = round_up((size_t)(w->n * w->nrhs) * w->esz);
  size_t sw = round_up((size_t)w->n * w->rsz);
  size_t need = sa + sb + sw;
  if (need > k->cap) {
    if (k->buf) {
      if (k->shared) muster_shard_free(k->buf);
      else free(k->buf);
      k->buf = NULL;
      k->cap = 0;
    }
    if (k->shared) {
      int rc = muster_shard_alloc(need, &k->buf);
      if (rc < 0) return rc;
    } else if (posix_memalign(&k->buf, ALIGN, need) != 0) {
      k->buf = NULL;
      return MUSTER_ENOMEM;
    }
    k->cap = need;
  }
  w->a = k->buf;
  w->b = w->nrhs ? (char *)k->buf + sa : NULL;
  w->w = k->routine == MUSTER_SYEVD ? (char *)k->buf + sa + sb : NULL;
  return 0;
}

/* Check the inputs' shapes (the shape function did when shapes were static;
 * here they are always known).  Fills w; on a problem writes msg. */
static bool check_inputs(const kernel_t *k, TF_Tensor *a, TF_Tensor *b, work_t *w, char *msg,
                         size_t len) {
  if (!dtype_of(TF_TensorType(a), w)) {
    snprintf(msg, len, "a has an unsupported dtype (float, double, complex64, complex128)");
    return false;
  }
  if (TF_NumDims(a) != 2) {
    snprintf(msg, len, "a must be a matrix (this participant's column block of A, n x ncols), "
             "got rank %d", TF_NumDims(a));
    return false;
  }
  w->n = TF_Dim(a, 0);
  w->ncols = TF_Dim(a, 1);
  w->nrhs = 0;
  if (w->n < 1) {
    snprintf(msg, len, "a has no rows: n must be >= 1");
    return false;
  }
  if (k->routine != MUSTER_POTRS) return true;
  if (TF_NumDims(b) != 2 || TF_Dim(b, 0) != w->n || TF_Dim(b, 1) < 1) {
    snprintf(msg, len, "b must be n x nrhs with n=%" PRId64 " (a's rows) and nrhs >= 1, got %s%" PRId64
             " x %" PRId64, w->n, TF_NumDims(b) == 2 ? "" : "a tensor of rank != 2: ",
             TF_NumDims(b) > 0 ? TF_Dim(b, 0) : 0, TF_NumDims(b) > 1 ? TF_Dim(b, 1) : 0);
    return false;
  }
  w->nrhs = TF_Dim(b, 1);
  return true;
}

/* Replicas of one function call share its step id.  Two overlapping runs of
 * one traced function use the same groups; without this check rank 0 of one
 * run could solve with rank 1 of the other.  Every rank sees every id, so
 * all detect a mismatch alike and abort.  0 or a MUSTER_E* code (detail
 * says why). */
static int check_step(const kernel_t *k, muster_group_t *g, int64_t step, char *detail,
                      size_t dlen) {
  int rc = muster_group_exchange(g, &step, sizeof step);
  if (rc < 0) {
    snprintf(detail, dlen, "%s", muster_last_error());
    return rc;
  }
  for (int r = 0; r < k->nranks; r++) {
    const void *p = NULL;
    size_t len = 0;
    int64_t theirs;
    if ((rc = muster_group_payload(g, r, &p, &len)) < 0) {
      snprintf(detail, dlen, "%s", muster_last_error());
      return rc;
    }
    if (len != sizeof theirs) continue;
    memcpy(&theirs, p, sizeof theirs);
    if (theirs != step) {
      char why[400];
      snprintf(why, sizeof why, "rank %d is in TensorFlow step %" PRId64 " but rank %d in step %"
               PRId64 ": two runs of one traced function overlap (one trace's muster ops "
               "cannot run concurrently with themselves)", k->rank, step, r, theirs);
      (void)muster_group_abort(g, MUSTER_EMISMATCH, why);
      snprintf(detail, dlen, "%s", why);
      return MUSTER_EMISMATCH;
    }
  }
  return 0;
}

/* Join, (check the step,) solve, leave.  0 or a MUSTER_E* code with *phase
 * and detail set. */
static int rendezvous(const kernel_t *k, const work_t *w, int64_t step, const char **phase,
                      char *detail, size_t len) {
  muster_group_opts_t o = {.job = NULL, .timeout_s = k->timeout_s, .device = -1};
  muster_solve_args_t args = {
      .routine = k->routine, .dtype = w->dtype, .n = w->n, .nrhs = w->nrhs, .tile = k->tile,
      .layout = MUSTER_LAYOUT_BLOCK, .flags = 0, .provider = k->provider[0] ? k->provider : NULL};
  int64_t block = (w->n + k->nranks - 1) / k->nranks;
  int64_t col0 = block * k->rank < w->n ? block * k->rank : w->n; /* trailing ranks may be empty */
  muster_shard_t mine = {.mem = MUSTER_MEM_HOST, .device = -1, .a = w->a, .lda = w->n,
                         .col0 = col0, .ncols = w->ncols, .b = w->b, .ldb = w->n,
                         .w = w->w, .stream = NULL};
  muster_solve_result_t res;
  muster_group_t *g = NULL;
  *phase = "joining the group";
  int rc = muster_group_join(k->group, k->rank, k->nranks, &o, &g);
  if (rc < 0) {
    snprintf(detail, len, "%s", muster_last_error());
    return rc;
  }
  if (k->same_step) {
    *phase = "checking the step";
    rc = check_step(k, g, step, detail, len);
  }
  if (rc == 0) {
    *phase = "solving";
    rc = muster_solve(g, &args, &mine, &res);
    if (rc < 0) snprintf(detail, len, "%s", muster_last_error());
  }
  int lrc = muster_group_leave(g);
  if (rc == 0 && lrc < 0) {
    *phase = "leaving the group";
    snprintf(detail, len, "%s", muster_last_error());
    rc = lrc;
  }
  return rc;
}

/* Allocate output i ([d0] or [d0, d1] of dtype t) and fill it. */
static bool output(TF_OpKernelContext *ctx, const kernel_t *k, int i, TF_DataType t, int ndims,
                   int64_t d0, int64_t d1, size_t esz, const void *colmajor) {
  TF_Status *st = TF_NewStatus();
  int64_t dims[2] = {d0, d1};
  size_t bytes = (size_t)d0 * (size_t)(ndims == 2 ? d1 : 1) * esz;
  TF_Tensor *o = TF_AllocateOutput(ctx, i, t, dims, ndims, bytes, st);
  bool ok = TF_GetCode(st) == TF_OK && o;
  if (!ok) {
    fail(ctx, TF_RESOURCE_EXHAUSTED, k, "allocating output %d: %s", i, TF_Message(st));
  } else if (ndims == 1) {
    memcpy(TF_TensorData(o), colmajor, bytes);
  } else {
    /* column-major n x k is row-major k x n: transpose back to [n, k] */
    transpose(esz, d1, d0, colmajor, TF_TensorData(o));
  }
  if (o) TF_DeleteTensor(o);
  TF_DeleteStatus(st);
  return ok;
}

static void write_outputs(TF_OpKernelContext *ctx, const kernel_t *k, const work_t *w,
                          TF_DataType t) {
  switch (k->routine) {
  case MUSTER_POTRS:
    output(ctx, k, 0, t, 2, w->n, w->nrhs, w->esz, w->b);
    break;
  case MUSTER_POTRI:
    output(ctx, k, 0, t, 2, w->n, w->ncols, w->esz, w->a);
    break;
  case MUSTER_SYEVD:
    if (output(ctx, k, 0, w->rsz == 4 ? TF_FLOAT : TF_DOUBLE, 1, w->n, 0, w->rsz, w->w))
      output(ctx, k, 1, t, 2, w->n, w->ncols, w->esz, w->a);
    break;
  }
}

static void kernel_compute(void *p, TF_OpKernelContext *ctx) {
  kernel_t *k = p;
  TF_Status *st = TF_NewStatus();
  TF_Tensor *a = NULL, *b = NULL;
  work_t w = {0};
  char detail[1024];
  const char *phase = "";
  bool locked = false;
  int rc;

  if (pthread_mutex_trylock(&k->busy) != 0) {
    fail(ctx, TF_FAILED_PRECONDITION, k,
         "this op is already running: the same traced function runs concurrently (two threads "
         "calling it at once); one trace's muster ops cannot overlap with themselves");
    goto out;
  }
  locked = true;
  TF_GetInput(ctx, 0, &a, st);
  if (TF_GetCode(st) == TF_OK && k->routine == MUSTER_POTRS) TF_GetInput(ctx, 1, &b, st);
  if (TF_GetCode(st) != TF_OK) {
    fail(ctx, TF_INTERNAL, k, "reading inputs: %s", TF_Message(st));
    goto out;
  }
  if (!check_inputs(k, a, b, &w, detail, sizeof detail)) {
    char why[1200];
    snprintf(why, sizeof why, "rank %d: %s", k->rank, detail);
    abort_peers(k, MUSTER_EINVAL, why);
    fail(ctx, TF_INVALID_ARGUMENT, k, "%s", detail);
    goto out;
  }
  if ((rc = work_buffers(k, &w)) < 0) {
    /* copied: abort_peers' own muster calls replace muster_last_error() */
    snprintf(detail, sizeof detail, "rank %d: %s", k->rank,
             rc == MUSTER_ENOMEM && !k->shared ? "no memory for the work buffer"
                                               : muster_last_error());
    abort_peers(k, rc, detail);
    fail_muster(ctx, k, "allocating work buffers", rc, detail);
    goto out;
  }
  /* inputs stay untouched: the solve runs in place on these copies */
  transpose(w.esz, w.n, w.ncols, TF_TensorData(a), w.a);
  if (b) transpose(w.esz, w.n, w.nrhs, TF_TensorData(b), w.b);
  rc = rendezvous(k, &w, TF_GetStepId(ctx), &phase, detail, sizeof detail);
  if (rc < 0) {
    fail_muster(ctx, k, phase, rc, detail);
    goto out;
  }
  write_outputs(ctx, k, &w, TF_TensorType(a));
out:
  if (a) TF_DeleteTensor(a);
  if (b) TF_DeleteTensor(b);
  if (locked) pthread_mutex_unlock(&k->busy);
  TF_DeleteStatus(st);
}

/* ---- registration -------------------------------------------------------- */

int muster__tf_register_kernels(muster_routine_t r, char *why, size_t whylen) {
  static const struct { TF_DataType t; const char *name; } types[] = {
      {TF_FLOAT, "float"}, {TF_DOUBLE, "double"},
      {TF_COMPLEX64, "complex64"}, {TF_COMPLEX128, "complex128"}};
  void *(*create)(TF_OpKernelConstruction *) =
      r == MUSTER_POTRS ? create_potrs : r == MUSTER_POTRI ? create_potri : create_syevd;
  const char *op = muster__tf_op_name(r);
  TF_Status *st = TF_NewStatus();
  int rc = 0;
  for (size_t i = 0; i < sizeof types / sizeof types[0] && rc == 0; i++) {
    char name[96];
    snprintf(name, sizeof name, "%s_CPU_%s", op, types[i].name);
    TF_KernelBuilder *kb = TF_NewKernelBuilder(op, "CPU", create, kernel_compute, kernel_delete);
    TF_KernelBuilder_TypeConstraint(kb, "T", types[i].t, st);
    if (TF_GetCode(st) != TF_OK) {
      TF_DeleteKernelBuilder(kb);
    } else {
      TF_RegisterKernelBuilder(name, kb, st); /* takes kb */
    }
    if (TF_GetCode(st) != TF_OK) {
      snprintf(why, whylen, "registering kernel %s: %s", name, TF_Message(st));
      rc = -1;
    }
  }
  TF_DeleteStatus(st);
  return rc;
}
