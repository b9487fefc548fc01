/*
 * adapters/tensorflow/tf_compute.c - one call of MusterPotrs, MusterPotri,
 * MusterSyevd, MusterGetrs, MusterGels or MusterPotrsLogdet, on every
 * participant (a replica's thread, or a worker process):
 *   1. copy the inputs into a work buffer, transposed: TensorFlow tensors are
 *      row-major, muster shards column-major.  The inputs are never written.
 *   2. join group "<routine>.<key>" as rank of nranks, muster_solve with this
 *      shard (the leader runs the provider on every shard), leave
 *      (tf_solve.c);
 *   3. transpose the results out into freshly allocated outputs.
 * Errors become TensorFlow errors (tf_errors.c).  An error found here alone,
 * before the rendezvous (a malformed input), still joins the group and
 * aborts it, so the peers fail at once with our message instead of waiting
 * out the timeout.
 *
 * The kernel is synchronous and blocks its TensorFlow inter-op thread while
 * it waits for the others (TensorFlow's C async kernels hand the callback
 * over by the address of a local std::function, so it cannot be called after
 * compute returns: a deferred completion is not possible in C).  Replicas
 * therefore need one inter-op thread each; muster_tf checks that.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "muster/layout.h"
#include "tfInt.h"

/* Whether routine r takes right-hand sides b (potrs, getrs, gels). */
static bool takes_b(muster_routine_t r) { return muster_routine_takes(r) & MUSTER_TAKES_B; }

/* Whether A may be tall (gels: m x n, n learnt at the rendezvous). */
static bool takes_m(muster_routine_t r) { return muster_routine_takes(r) & MUSTER_TAKES_M; }

/* Check the inputs' shapes (the shape function did when shapes were static;
 * here they are always known) and fill w's type, sizes and place in A.  On
 * a problem writes msg and returns false. */
static bool check_inputs(const mtf_kernel_t *k, TF_Tensor *a, TF_Tensor *b,
                         mtf_work_t *w, char *msg, size_t len) {
  const mtf_type_t *t = mtf_type_of(TF_TensorType(a));
  muster_layout_geom_t L;
  if (!t) {
    char names[96];
    mtf_type_names(names, sizeof names);
    snprintf(msg, len, "a has an unsupported dtype (%s)", names);
    return false;
  }
  w->dtype = t->dtype;
  w->esz = muster_dtype_bytes(t->dtype);
  w->rsz = muster_dtype_real_bytes(t->dtype);
  if (TF_NumDims(a) != 2) {
    snprintf(msg, len, "a must be a matrix (this participant's column block of A, %s x ncols), "
             "got rank %d", takes_m(k->routine) ? "m" : "n", TF_NumDims(a));
    return false;
  }
  w->m = TF_Dim(a, 0);
  w->ncols = TF_Dim(a, 1);
  w->nrhs = 0;
  if (w->m < 1) {
    snprintf(msg, len, "a has no rows: n must be >= 1");
    return false;
  }
  if (muster_layout_geom_init(&L, w->m, 1, k->nranks) < 0) {
    snprintf(msg, len, "a has %" PRId64 " rows: n must be at most %" PRId64, w->m,
             (int64_t)MUSTER_LAYOUT_MAX_N);
    return false;
  }
  /* gels: the runtime learns n and col0 from the ranks' widths (muster_solve_named) */
  w->n = takes_m(k->routine) ? 0 : w->m;
  w->col0 = takes_m(k->routine) ? 0 : muster_layout_block_col0(&L, k->rank);
  if (!takes_b(k->routine)) return true;
  if (TF_NumDims(b) != 2 || TF_Dim(b, 0) != w->m || TF_Dim(b, 1) < 1) {
    snprintf(msg, len, "b must be %s x nrhs with %s=%" PRId64 " (a's rows) and nrhs >= 1, got %s%"
             PRId64 " x %" PRId64, takes_m(k->routine) ? "m" : "n",
             takes_m(k->routine) ? "m" : "n", w->m,
             TF_NumDims(b) == 2 ? "" : "a tensor of rank != 2: ",
             TF_NumDims(b) > 0 ? TF_Dim(b, 0) : 0, TF_NumDims(b) > 1 ? TF_Dim(b, 1) : 0);
    return false;
  }
  w->nrhs = TF_Dim(b, 1);
  return true;
}

/* gels leaves X (n x nrhs) in the first n rows of B's m: pack it to
 * leading dimension n in place (column j moves down to j*n, never past
 * where a later column still is: memmove per column, in order). */
static void pack_solution(mtf_work_t *w) {
  if (w->m == w->n) return;
  for (int64_t j = 1; j < w->nrhs; j++)
    memmove((char *)w->b + (size_t)(j * w->n) * w->esz, (char *)w->b + (size_t)(j * w->m) * w->esz,
            (size_t)w->n * w->esz);
}

/* Allocate output i (a scalar for ndims 0, [d0] or [d0, d1] of dtype t)
 * and fill it from the column-major colmajor. */
static bool output(TF_OpKernelContext *ctx, const mtf_kernel_t *k, int i, TF_DataType t,
                   int ndims, int64_t d0, int64_t d1, size_t esz, const void *colmajor) {
  TF_Status *st = TF_NewStatus();
  int64_t dims[2] = {d0, d1};
  size_t bytes = (size_t)(ndims ? d0 : 1) * (size_t)(ndims == 2 ? d1 : 1) * esz;
  TF_Tensor *o = TF_AllocateOutput(ctx, i, t, dims, ndims, bytes, st);
  bool ok = TF_GetCode(st) == TF_OK && o;
  if (!ok) {
    mtf_fail(ctx, TF_RESOURCE_EXHAUSTED, k, "allocating output %d: %s", i,
                    TF_Message(st));
  } else if (ndims < 2) {
    memcpy(TF_TensorData(o), colmajor, bytes);
  } else {
    /* column-major n x k is row-major k x n: transpose back to [n, k] */
    mtf_transpose(esz, d1, d0, colmajor, TF_TensorData(o));
  }
  if (o) TF_DeleteTensor(o);
  TF_DeleteStatus(st);
  return ok;
}

static void write_outputs(TF_OpKernelContext *ctx, const mtf_kernel_t *k,
                          mtf_work_t *w, TF_DataType t) {
  switch (k->routine) {
  case MUSTER_POTRS:
  case MUSTER_GETRS:
  case MUSTER_GELS:
    pack_solution(w); /* gels: X is B's first n of m rows */
    if (output(ctx, k, 0, t, 2, w->n, w->nrhs, w->esz, w->b) && k->logdet)
      output(ctx, k, 1, mtf_real_type(mtf_type_of(t))->tf, 0, 0, 0, w->rsz, w->w);
    break;
  case MUSTER_POTRI:
    output(ctx, k, 0, t, 2, w->n, w->ncols, w->esz, w->a);
    break;
  case MUSTER_SYEVD: {
    TF_DataType tw = mtf_real_type(mtf_type_of(t))->tf;
    if (output(ctx, k, 0, tw, 1, w->n, 0, w->rsz, w->w))
      output(ctx, k, 1, t, 2, w->n, w->ncols, w->esz, w->a);
    break;
  }
  default: /* every routine has its case above */
    break;
  }
}

void mtf_compute(void *p, TF_OpKernelContext *ctx) {
  mtf_kernel_t *k = p;
  TF_Status *st = TF_NewStatus();
  TF_Tensor *a = NULL, *b = NULL;
  mtf_work_t w = {0};
  char detail[1024];
  const char *phase = "";
  bool locked = false;
  int rc;

  if (pthread_mutex_trylock(&k->busy) != 0) {
    mtf_fail(ctx, TF_FAILED_PRECONDITION, k,
                    "this op is already running: the same traced function runs concurrently "
                    "(two threads calling it at once); one trace's muster ops cannot overlap "
                    "with themselves");
    goto out;
  }
  locked = true;
  TF_GetInput(ctx, 0, &a, st);
  if (TF_GetCode(st) == TF_OK && takes_b(k->routine)) TF_GetInput(ctx, 1, &b, st);
  if (TF_GetCode(st) != TF_OK) {
    mtf_fail(ctx, TF_INTERNAL, k, "reading inputs: %s", TF_Message(st));
    goto out;
  }
  if (!check_inputs(k, a, b, &w, detail, sizeof detail)) {
    char why[1200];
    snprintf(why, sizeof why, "rank %d: %s", k->rank, detail);
    mtf_abort_peers(k, MUSTER_EINVAL, why);
    mtf_fail(ctx, TF_INVALID_ARGUMENT, k, "%s", detail);
    goto out;
  }
  if ((rc = mtf_work_buffers(k, &w)) < 0) {
    /* copied: abort_peers' own muster calls replace muster_last_error() */
    snprintf(detail, sizeof detail, "rank %d: %s", k->rank,
             rc == MUSTER_ENOMEM && !k->shared ? "no memory for the work buffer"
                                               : muster_last_error());
    mtf_abort_peers(k, rc, detail);
    mtf_fail_muster(ctx, k, "allocating work buffers", rc, detail);
    goto out;
  }
  /* inputs stay untouched: the solve runs in place on these copies */
  mtf_transpose(w.esz, w.m, w.ncols, TF_TensorData(a), w.a);
  if (b) mtf_transpose(w.esz, w.m, w.nrhs, TF_TensorData(b), w.b);
  rc = mtf_rendezvous(k, &w, TF_GetStepId(ctx), &phase, detail, sizeof detail);
  if (rc < 0) {
    mtf_fail_muster(ctx, k, phase, rc, detail);
    goto out;
  }
  write_outputs(ctx, k, &w, TF_TensorType(a));
out:
  if (a) TF_DeleteTensor(a);
  if (b) TF_DeleteTensor(b);
  if (locked) pthread_mutex_unlock(&k->busy);
  TF_DeleteStatus(st);
}
