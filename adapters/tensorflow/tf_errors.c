/*
 * adapters/tensorflow/tf_errors.c - how a failed call reaches TensorFlow: a
 * TensorFlow error whose code is the muster code's kind (muster/errno.h,
 * docs/errors.md: the same meaning in every adapter) and whose message says
 * which op, group and rank, the phase, muster_strerror() and the runtime's
 * muster_last_error().
 */
#include <stdarg.h>
#include <stdio.h>

#include "tfInt.h"

void mtf_fail(TF_OpKernelContext *ctx, TF_Code code, const mtf_kernel_t *k,
                     const char *fmt, ...) {
  char msg[2048];
  int off = snprintf(msg, sizeof msg, "%s (group %s, rank %d of %d): ",
                     mtf_op_name(k->routine, k->logdet), k->group, k->rank, k->nranks);
  va_list ap;
  va_start(ap, fmt);
  if (off > 0 && (size_t)off < sizeof msg) vsnprintf(msg + off, sizeof msg - off, fmt, ap);
  va_end(ap);
  TF_Status *st = TF_NewStatus();
  TF_SetStatus(st, code, msg);
  TF_OpKernelContext_Failure(ctx, st);
  TF_DeleteStatus(st);
}

/* The TensorFlow code of a muster failure: by its kind. */
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

void mtf_fail_muster(TF_OpKernelContext *ctx, const mtf_kernel_t *k,
                            const char *phase, int rc, const char *detail) {
  const char *hint = "";
  if (rc == MUSTER_ETIMEDOUT)
    hint = " (in TensorFlow: every replica must run this op concurrently, i.e. inside "
           "tf.function, and each blocks one inter-op thread while it waits: "
           "inter_op_parallelism_threads must be >= this process's replicas)";
  mtf_fail(ctx, tf_code(rc), k, "%s: %s%s%s%s", phase, muster_strerror(rc),
                  detail[0] ? ": " : "", detail, hint);
}
