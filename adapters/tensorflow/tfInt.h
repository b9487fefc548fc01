/*
 * adapters/tensorflow/tfInt.h - private to libmuster_tf.so: who owns what.
 *
 * The files depend on each other in one direction only: each calls only
 * files below it in this list (and the runtime, libmuster.so), never one
 * above it.
 *
 *   tf_init.c     the library constructor: registers each op, then its kernels
 *   tf_kernel.c   one kernel instance: its attributes, its lifetime, and the
 *                 kernel registrations (one per element type)
 *   tf_compute.c  one call: inputs -> work buffer -> rendezvous -> outputs
 *   tf_solve.c    the muster side of a call, no TensorFlow in it: work
 *                 buffers, join, check the step, solve, leave, abort the peers
 *   tf_errors.c   TensorFlow errors from muster codes
 *   tf_ops.c      op names, op definitions and shape functions
 *   tf_tensor.c   element types, row-major <-> column-major copies
 *
 * This header declares what each file offers the ones above it, in the same
 * order.
 *
 * The TensorFlow C API headers come from the tensorflow pip wheel
 * (tf.sysconfig.get_include()).  ops.h declares its handle types only as
 * `struct X;`, which is enough for C++ but not for C, so we give C the
 * typedefs it needs before including it (a repeated identical typedef is
 * valid C11 should a later ops.h add them).
 */
#ifndef MUSTER_TF_INT_H
#define MUSTER_TF_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tensorflow/c/c_api.h"
#include "tensorflow/c/tf_datatype.h"
#include "tensorflow/c/tf_status.h"
#include "tensorflow/c/tf_tensor.h"

typedef struct TF_OpDefinitionBuilder TF_OpDefinitionBuilder;
typedef struct TF_ShapeHandle TF_ShapeHandle;
typedef struct TF_DimensionHandle TF_DimensionHandle;
typedef struct TF_ShapeInferenceContext TF_ShapeInferenceContext;
#include "tensorflow/c/ops.h"
/* kernels.h, in C, defines (not just declares) the object
 * TF_InputRange_Args_STRUCT_SIZE, so every file including it would define it
 * again and the link would fail.  Made weak, the copies merge into one. */
#define TF_InputRange_Args_STRUCT_SIZE TF_InputRange_Args_STRUCT_SIZE __attribute__((weak))
#include "tensorflow/c/kernels.h"
#undef TF_InputRange_Args_STRUCT_SIZE

#include "muster.h"

#define MUSTER_TF_HIDDEN __attribute__((visibility("hidden")))
#define MUSTER_TF_PRINTF(a, b) __attribute__((format(printf, a, b)))

/* One op instance (TensorFlow creates one per node and device, and reuses it
 * from step to step).  Made by tf_kernel.c from the op's attributes. */
typedef struct mtf_kernel {
  muster_routine_t routine;
  bool logdet;              /* MusterPotrsLogdet: potrs with MUSTER_LOGDET */
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
} mtf_kernel_t;

/* Where one call keeps its work: column-major copies of a and b, and w.
 * A is m x n: m = n but for gels, whose n (its global column count) no
 * participant can tell from its own block: 0 until the participants have
 * told each other their widths (tf_solve.c), like col0. */
typedef struct mtf_work {
  muster_dtype_t dtype;
  size_t esz, rsz;          /* element size, its real part's size */
  int64_t m, n, ncols, nrhs; /* rows of A and B, columns of A, ... */
  int64_t col0;             /* first global column of this shard  */
  void *a, *b, *w;
} mtf_work_t;

/* ---- tf_kernel.c --------------------------------------------------------- */

/* Register the CPU kernels of routine r's op (logdet: MusterPotrsLogdet),
 * one per element type.  Called once, at load, after the op itself is
 * registered.  0, or -1 with `why` filled. */
MUSTER_TF_HIDDEN int mtf_register_kernels(muster_routine_t r, bool logdet, char *why,
                                                 size_t whylen);

/* ---- tf_compute.c -------------------------------------------------------- */

/* The compute function of every kernel: p is a mtf_kernel_t. */
MUSTER_TF_HIDDEN void mtf_compute(void *p, TF_OpKernelContext *ctx);

/* ---- tf_solve.c ---------------------------------------------------------- */

/* Point w->a, w->b, w->w into k's work buffer (w->m, ncols, nrhs, esz, rsz
 * set), growing it if needed; process mode: shard memory the leader can map.
 * 0 or a MUSTER_E* code (message in muster_last_error, except ENOMEM from
 * posix_memalign in thread mode, which sets none). */
MUSTER_TF_HIDDEN int mtf_work_buffers(mtf_kernel_t *k, mtf_work_t *w);

/* Free k's work buffer (kernel deletion). */
MUSTER_TF_HIDDEN void mtf_work_free(mtf_kernel_t *k);

/* muster_solve_named with w: join k's group, check the step when
 * k->same_step, learn n and col0 for gels (w->n set after), solve, leave.
 * 0 or a MUSTER_E* code with *phase and detail (the runtime's message,
 * which names the step that failed, copied) set. */
MUSTER_TF_HIDDEN int mtf_rendezvous(const mtf_kernel_t *k,
                                           mtf_work_t *w, int64_t step,
                                           const char **phase, char *detail, size_t len);

/* muster_abort_named: join k's group only to abort it with code and why,
 * so that the peers fail now with our problem instead of at their timeout.
 * Best effort. */
MUSTER_TF_HIDDEN void mtf_abort_peers(const mtf_kernel_t *k, int code,
                                             const char *why);

/* ---- tf_errors.c --------------------------------------------------------- */

/* Fail the call with code and "<Op> (group G, rank r of R): <message>". */
MUSTER_TF_HIDDEN void mtf_fail(TF_OpKernelContext *ctx, TF_Code code,
                                      const mtf_kernel_t *k, const char *fmt, ...)
    MUSTER_TF_PRINTF(4, 5);

/* Fail the call with muster code rc: the TensorFlow code of rc's kind, the
 * phase, muster_strerror(rc) and `detail` (the runtime's message, copied
 * before any later muster call could replace it). */
MUSTER_TF_HIDDEN void mtf_fail_muster(TF_OpKernelContext *ctx,
                                             const mtf_kernel_t *k, const char *phase,
                                             int rc, const char *detail);

/* ---- tf_ops.c ------------------------------------------------------------ */

/* The op name of routine r: "Muster" and its muster_routine_name()
 * capitalised ("MusterPotrs"); "Muster?" for no routine.  logdet (potrs
 * only): "MusterPotrsLogdet", potrs that also returns log det A. */
MUSTER_TF_HIDDEN const char *mtf_op_name(muster_routine_t r, bool logdet);

/* Register the definition of routine r's op (logdet: as mtf_op_name).
 * 0, or -1 with `why` filled. */
MUSTER_TF_HIDDEN int mtf_register_op(muster_routine_t r, bool logdet, char *why,
                                            size_t whylen);

/* ---- tf_tensor.c --------------------------------------------------------- */

/* An element type the ops take: TensorFlow's and muster's name of it. */
typedef struct mtf_type {
  TF_DataType tf;
  muster_dtype_t dtype;
  const char *name;         /* as in the op's attribute T ("complex64") */
} mtf_type_t;

/* The i-th type the ops take, or NULL past the last. */
MUSTER_TF_HIDDEN const mtf_type_t *mtf_type_at(size_t i);

/* The row of t, or NULL for a type the ops do not take. */
MUSTER_TF_HIDDEN const mtf_type_t *mtf_type_of(TF_DataType t);

/* The real type of t (syevd's eigenvalues): the row of the real type whose
 * size is t's real part size (float for float and complex64). */
MUSTER_TF_HIDDEN const mtf_type_t *mtf_real_type(const mtf_type_t *t);

/* The names of every type, joined by ", ", into buf (cap bytes). */
MUSTER_TF_HIDDEN void mtf_type_names(char *buf, size_t cap);

/* src row-major rows x cols -> dst row-major cols x rows (elements of esz
 * bytes: 4, 8 or 16).  A row-major [n, k] tensor transposed this way is its
 * column-major copy (ld n), and back. */
MUSTER_TF_HIDDEN void mtf_transpose(size_t esz, int64_t rows, int64_t cols,
                                           const void *src, void *dst);

#endif
