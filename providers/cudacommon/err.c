/* providers/cudacommon/err.c - messages for failed CUDA and cuSOLVER calls
 * (cudacommon.h). */
#include <stdarg.h>

#include "../common/err.h"
#include "cudacommon.h"
#include "muster/append.h"

int cuc_fail(cuc_err_t *e, int code, const char *fmt, ...) {
  if (!e) return code;
  va_list ap;
  va_start(ap, fmt);
  muster__prov_verr(e->buf, e->len, code, e->who ? e->who : "cuda", fmt, ap);
  va_end(ap);
  return code;
}

void cuc_err_append(cuc_err_t *e, const char *fmt, ...) {
  if (!e || !e->buf) return;
  va_list ap;
  va_start(ap, fmt);
  muster__vappend(e->buf, e->len, fmt, ap);
  va_end(ap);
}

int cuc_cuda(cuc_err_t *e, int dev, const char *call, cudaError_t st) {
  (void)cudaGetLastError(); /* do not leave a sticky-looking error behind */
  return cuc_fail(e, MUSTER_ECUDA, "device %d: %s failed: %s (%d): %s", dev, call, cudaGetErrorName(st), (int)st,
                  cudaGetErrorString(st));
}

const char *cuc_solver_status_name(cusolverStatus_t st) {
  switch (st) {
  case CUSOLVER_STATUS_SUCCESS: return "CUSOLVER_STATUS_SUCCESS";
  case CUSOLVER_STATUS_NOT_INITIALIZED: return "CUSOLVER_STATUS_NOT_INITIALIZED";
  case CUSOLVER_STATUS_ALLOC_FAILED: return "CUSOLVER_STATUS_ALLOC_FAILED";
  case CUSOLVER_STATUS_INVALID_VALUE: return "CUSOLVER_STATUS_INVALID_VALUE";
  case CUSOLVER_STATUS_ARCH_MISMATCH: return "CUSOLVER_STATUS_ARCH_MISMATCH";
  case CUSOLVER_STATUS_MAPPING_ERROR: return "CUSOLVER_STATUS_MAPPING_ERROR";
  case CUSOLVER_STATUS_EXECUTION_FAILED: return "CUSOLVER_STATUS_EXECUTION_FAILED";
  case CUSOLVER_STATUS_INTERNAL_ERROR: return "CUSOLVER_STATUS_INTERNAL_ERROR";
  case CUSOLVER_STATUS_MATRIX_TYPE_NOT_SUPPORTED: return "CUSOLVER_STATUS_MATRIX_TYPE_NOT_SUPPORTED";
  case CUSOLVER_STATUS_NOT_SUPPORTED: return "CUSOLVER_STATUS_NOT_SUPPORTED";
  case CUSOLVER_STATUS_ZERO_PIVOT: return "CUSOLVER_STATUS_ZERO_PIVOT";
  case CUSOLVER_STATUS_INVALID_LICENSE: return "CUSOLVER_STATUS_INVALID_LICENSE";
  case CUSOLVER_STATUS_INVALID_WORKSPACE: return "CUSOLVER_STATUS_INVALID_WORKSPACE";
  default: return "CUSOLVER_STATUS_UNKNOWN";
  }
}

int cuc_solver(cuc_err_t *e, int dev, const char *call, cusolverStatus_t st) {
  (void)cudaGetLastError();
  return cuc_fail(e, MUSTER_ECUDA, "device %d: %s failed: %s (%d)", dev, call, cuc_solver_status_name(st), (int)st);
}
