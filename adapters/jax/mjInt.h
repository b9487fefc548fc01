/*
 * adapters/jax/mjInt.h - private to libmuster_jax.so, the XLA FFI handler of
 * muster_jax: what its files share.
 *
 * One handler call runs per device per launch (ffi.c says what it does and
 * which operands it takes).  The call is split by concern:
 *   ffi.c         the exported entry points: XLA's metadata call, the
 *                 execution context, XLA errors and the status result
 *   attrs.c       decoding the call's attributes into mj_attrs_t
 *   buffers.c     binding operands and results, checking their shapes
 *   memory.c      reading, writing and copying host or device memory
 *   staging.c     process-mode staging regions, pooled per process
 *   group_name.c  the group a launch meets in, and the pool of reused names
 *   solve.c       the shard, join + muster_solve + leave, the stats
 *   cudrv.c       the CUDA driver calls the cuda platform needs (cudrv.h)
 * and, for muster_jax.distributed's solve inside jit (its own entry points):
 *   store_ffi.c   one process's piece through muster_solve_comm(_dist)
 *   set_table.c   the ids the Python side gives the store sets' comms
 * Every function here returns 0 or a negative MUSTER_E* code and leaves
 * its message in c->err (mj_set_err), unless its comment says otherwise.
 */
#ifndef MUSTER_JAX_MJINT_H
#define MUSTER_JAX_MJINT_H

#include <stddef.h>
#include <stdint.h>

#include "muster.h"
#include "muster/comm.h"
#include "muster/layout.h"
#include "xla/ffi/api/c_api.h"

/* Symbols XLA and muster_jax/_lib.py look up; everything else is hidden
 * (the library is built with -fvisibility=hidden). */
#define MJ_EXPORT __attribute__((visibility("default")))

enum { MJ_ERRLEN = 1536 };

/* The attributes of one call, decoded and range-checked (attrs.c). */
typedef struct mj_attrs {
  int routine;     /* MUSTER_POTRS, _POTRI, _SYEVD, _GETRS or _GELS          */
  int64_t n;       /* global order                                           */
  int64_t nrhs;    /* columns of B (potrs, getrs, gels), else 0              */
  int64_t tile;    /* T_A; 0 lets the runtime choose (block layout only)     */
  int64_t site;    /* the Python call site: two solves of a program never mix */
  int layout;      /* MUSTER_LAYOUT_BLOCK or _CYCLIC: what the shard holds   */
  int flags;       /* MUSTER_NO_VECTORS, MUSTER_NO_FACTOR                     */
  int nranks;      /* ranks of the group (devices along the solve's axis)    */
  int local_ranks; /* ranks of the group in this process                     */
  int return_status, process_mode;
  char provider[32]; /* forced provider, "" for the runtime's choice        */
  char group_key[48]; /* "p<pid>" when the Python side gave none           */
} mj_attrs_t;

/* One handler call: everything the files pass around, freed at its end. */
typedef struct mj_call {
  const XLA_FFI_Api *api;
  int cuda; /* the cuda platform: buffers in device memory, stream ordered */
  mj_attrs_t at;
  muster_dtype_t dtype; /* A's, from its XLA buffer (buffers.c)            */
  /* The layout geometry of A's shard (buffers.c).  A block call's tile is
   * 1 here: block columns do not depend on it, and its T_A may be 0. */
  muster_layout_geom_t geom;
  XLA_FFI_Buffer *rank_in, *a_in, *b_in;          /* b_in: routines with B */
  XLA_FFI_Buffer *a_out, *b_out, *w_out, *status_out; /* NULL when absent  */
  void *stream;   /* XLA's CUDA stream; NULL on the cpu                        */
  int device;     /* CUDA ordinal on the cuda platform, else XLA's ordinal or -1 */
  int64_t run_id; /* XLA's per-launch id, 0 when the api lacks RunId_Get       */
  int rank;       /* along the solve's mesh axis, from the rank operand        */
  int replica;    /* which copy of the group, when the mesh has other axes    */
  int rank_known; /* rank and replica read (mj_read_rank)                     */
  char err[MJ_ERRLEN];
} mj_call_t;

/* ffi.c: write the message of a failure into c->err and return code.  The
 * arguments may include c->err itself. */
int mj_set_err(mj_call_t *c, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* ffi.c, shared with store_ffi.c: an XLA error carrying msg; the XLA code
 * of a MUSTER_E* code (by its kind); the device, run id and (cuda) stream
 * and A's CUDA device (c->a_in set). */
XLA_FFI_Error *mj_xla_error(const XLA_FFI_Api *api, XLA_FFI_Error_Code code, const char *msg);
XLA_FFI_Error_Code mj_xla_code_of(int rc);
int mj_read_context(mj_call_t *c, XLA_FFI_CallFrame *cf);
/* One call of a handler: XLA's metadata call answered, other stages
 * refused, else run on a fresh mj_call_t (freed after). */
typedef XLA_FFI_Error *(*mj_execute_fn)(mj_call_t *c, XLA_FFI_CallFrame *cf);
XLA_FFI_Error *mj_handle(XLA_FFI_CallFrame *cf, int cuda, mj_execute_fn run);

/* attrs.c: decode and check every attribute into c->at. */
int mj_decode_attrs(mj_call_t *c, const XLA_FFI_Attrs *attrs);
/* An integer scalar attribute of any integer type (-1: not one); whether an
 * attribute's name is s; a string attribute into dst[cap]. */
int mj_scalar_int(const XLA_FFI_Scalar *s, int64_t *out);
int mj_name_is(const XLA_FFI_ByteSpan *name, const char *s);
int mj_attr_string(mj_call_t *c, const XLA_FFI_ByteSpan *name, XLA_FFI_AttrType type, const void *value,
                   char *dst, size_t cap);

/* buffers.c */
/* muster's dtype of an XLA element type; -1 for one muster does not take. */
int mj_dtype_of(XLA_FFI_DataType t, muster_dtype_t *out);
/* Point c's buffer fields at the call frame's operands and results, after
 * checking their number and kind for c->at.routine. */
int mj_bind_buffers(mj_call_t *c, const XLA_FFI_CallFrame *cf);
/* Shapes and dtypes against the attributes; fills c->dtype and c->geom. */
int mj_check_buffers(mj_call_t *c);
/* Bytes of buffer b (one of c's), from its dims and element type. */
size_t mj_bytes_of(const mj_call_t *c, const XLA_FFI_Buffer *b);
/* Read the rank operand (int32[2], checked) into c->rank and c->replica,
 * range-checked; c->rank_known = 1. */
int mj_read_rank(mj_call_t *c);
/* Copy in to out unless XLA aliased them (it should: the Python side
 * declares input_output_aliases).  in may be NULL (nothing to do). */
int mj_copy_alias(mj_call_t *c, XLA_FFI_Buffer *in, XLA_FFI_Buffer *out);

/* memory.c: memcpy on the cpu; on the cuda platform copies ordered on
 * c->stream (mj_mem_read / mj_mem_write wait for theirs to finish). */
int mj_mem_read(mj_call_t *c, const void *src, void *host_dst, size_t n);
int mj_mem_write(mj_call_t *c, void *dst, const void *host_src, size_t n);
int mj_mem_copy(mj_call_t *c, void *dst, const void *src, size_t n);
/* Fill buffer b (may be NULL) with NaN; best effort, errors are ignored
 * (it runs only on the way out of a failed call). */
void mj_mem_fill_nan(mj_call_t *c, XLA_FFI_Buffer *b);

/* staging.c: a region of at least `bytes` the leader of a process-mode
 * group can reach, on c's device (cuMemAlloc) or the host
 * (muster_shard_alloc); MUSTER_EBUSY when every region is in use.  Give it
 * back with mj_stage_put; mj_stage_ptr is its memory. */
typedef struct mj_stage mj_stage_t;
int mj_stage_get(mj_call_t *c, size_t bytes, mj_stage_t **out);
void *mj_stage_ptr(const mj_stage_t *s);
void mj_stage_put(mj_stage_t *s);

/* group_name.c: the name of this launch's group in name[cap].  *pooled is
 * the pool entry it came from, or -1; pass it to mj_group_name_release
 * once this instance has left the group.  MUSTER_EINVAL when the name
 * would not fit MUSTER_MAX_NAME. */
int mj_group_name(mj_call_t *c, char *name, size_t cap, int *pooled);
void mj_group_name_release(int pooled, int failed, int local_ranks);

/* solve.c: this rank's part of the solve, staged in process mode; res
 * says what the provider reported.  A failure before the join (the
 * staging) has told the peers (mj_abort_peers). */
int mj_solve(mj_call_t *c, muster_solve_result_t *res);
/* This rank failed before it joined its launch's group (code, c->err
 * says why): abort the group by name (muster_abort_named) so that the
 * peers, waiting already or coming later, fail at once with this rank's
 * reason instead of at their deadline.  Nothing is done when the group
 * cannot be named (the attributes or the rank operand are unreadable: every
 * instance of the program fails alike there).  Returns once every rank has
 * joined, the group's timeout at most; c->err is kept. */
void mj_abort_peers(mj_call_t *c, int code);

/* set_table.c: the comm of set `id` for one solve (held until
 * mj_set_give, so that muster_jax_set_forget waits for it; solves on one
 * set run one at a time); MUSTER_ENOENT with a message when it was
 * forgotten (its StoreSet closed) or never given. */
int mj_set_take(int64_t id, muster_comm_t **comm, char *err, size_t errlen);
void mj_set_give(int64_t id);

#endif
