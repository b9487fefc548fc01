/*
 * adapters/jax/cudrv.c - lazily loaded CUDA driver entry points (see cudrv.h).
 */
#include "cudrv.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

#include "muster.h"

typedef int CUresult;
typedef unsigned long long CUdeviceptr;
typedef void *CUstream;
typedef void *CUcontext;
#define MJ_CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL 9

static struct {
  pthread_once_t once;
  int rc;
  char why[256];
  CUresult (*memcpy_dtoh)(void *, CUdeviceptr, size_t, CUstream);
  CUresult (*memcpy_htod)(CUdeviceptr, const void *, size_t, CUstream);
  CUresult (*memset_d8)(CUdeviceptr, unsigned char, size_t, CUstream);
  CUresult (*sync)(CUstream);
  CUresult (*err_string)(CUresult, const char **);
  CUresult (*stream_ctx)(CUstream, CUcontext *);
  CUresult (*ctx_push)(CUcontext);
  CUresult (*ctx_pop)(CUcontext *);
  CUresult (*ptr_attr)(void *, int, CUdeviceptr);
  CUresult (*mem_alloc)(CUdeviceptr *, size_t);
  CUresult (*mem_free)(CUdeviceptr);
  CUresult (*memcpy_dtod)(CUdeviceptr, CUdeviceptr, size_t, CUstream);
} drv = {PTHREAD_ONCE_INIT, 0, "", 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};

static void *sym(void *h, const char *name) {
  void *p = dlsym(h, name);
  if (!p && drv.rc == 0) {
    drv.rc = MUSTER_ECUDA;
    snprintf(drv.why, sizeof drv.why, "libcuda.so.1 has no %s", name);
  }
  return p;
}

static void load(void) {
  /* The handle is kept for the life of the process: the driver is already
   * loaded by XLA, so this only finds it. */
  void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    drv.rc = MUSTER_ECUDA;
    snprintf(drv.why, sizeof drv.why, "cannot load libcuda.so.1: %s", dlerror());
    return;
  }
  drv.memcpy_dtoh = (CUresult(*)(void *, CUdeviceptr, size_t, CUstream))sym(h, "cuMemcpyDtoHAsync_v2");
  drv.memcpy_htod = (CUresult(*)(CUdeviceptr, const void *, size_t, CUstream))sym(h, "cuMemcpyHtoDAsync_v2");
  drv.memset_d8 = (CUresult(*)(CUdeviceptr, unsigned char, size_t, CUstream))sym(h, "cuMemsetD8Async");
  drv.sync = (CUresult(*)(CUstream))sym(h, "cuStreamSynchronize");
  drv.err_string = (CUresult(*)(CUresult, const char **))sym(h, "cuGetErrorString");
  drv.stream_ctx = (CUresult(*)(CUstream, CUcontext *))sym(h, "cuStreamGetCtx");
  drv.ctx_push = (CUresult(*)(CUcontext))sym(h, "cuCtxPushCurrent_v2");
  drv.ctx_pop = (CUresult(*)(CUcontext *))sym(h, "cuCtxPopCurrent_v2");
  drv.ptr_attr = (CUresult(*)(void *, int, CUdeviceptr))sym(h, "cuPointerGetAttribute");
  drv.mem_alloc = (CUresult(*)(CUdeviceptr *, size_t))sym(h, "cuMemAlloc_v2");
  drv.mem_free = (CUresult(*)(CUdeviceptr))sym(h, "cuMemFree_v2");
  drv.memcpy_dtod = (CUresult(*)(CUdeviceptr, CUdeviceptr, size_t, CUstream))sym(h, "cuMemcpyDtoDAsync_v2");
}

static int ready(char *err, size_t errlen) {
  pthread_once(&drv.once, load);
  if (drv.rc < 0) snprintf(err, errlen, "%s", drv.why);
  return drv.rc;
}

static int check(CUresult r, const char *what, char *err, size_t errlen) {
  if (r == 0) return 0;
  const char *s = NULL;
  if (drv.err_string) drv.err_string(r, &s);
  snprintf(err, errlen, "%s failed: CUDA error %d (%s)", what, r, s ? s : "?");
  return MUSTER_ECUDA;
}

/* Make the stream's context current for one operation: XLA's thread may
 * have another (or none) current, and the driver API works on the current
 * one. */
static int enter(void *stream, char *err, size_t errlen) {
  CUcontext ctx = NULL;
  int rc = check(drv.stream_ctx(stream, &ctx), "cuStreamGetCtx", err, errlen);
  if (rc < 0) return rc;
  return check(drv.ctx_push(ctx), "cuCtxPushCurrent", err, errlen);
}

static void leave(void) {
  CUcontext ignored;
  (void)drv.ctx_pop(&ignored);
}

int mj_cuda_read(void *stream, const void *dev_src, void *host_dst, size_t bytes,
                 char *err, size_t errlen) {
  int rc = ready(err, errlen);
  if (rc < 0 || (rc = enter(stream, err, errlen)) < 0) return rc;
  rc = check(drv.memcpy_dtoh(host_dst, (CUdeviceptr)(uintptr_t)dev_src, bytes, stream),
             "cuMemcpyDtoHAsync", err, errlen);
  if (rc == 0) rc = check(drv.sync(stream), "cuStreamSynchronize", err, errlen);
  leave();
  return rc;
}

int mj_cuda_write(void *stream, void *dev_dst, const void *host_src, size_t bytes,
                  char *err, size_t errlen) {
  int rc = ready(err, errlen);
  if (rc < 0 || (rc = enter(stream, err, errlen)) < 0) return rc;
  rc = check(drv.memcpy_htod((CUdeviceptr)(uintptr_t)dev_dst, host_src, bytes, stream),
             "cuMemcpyHtoDAsync", err, errlen);
  /* host_src is the caller's stack: wait until the copy has read it */
  if (rc == 0) rc = check(drv.sync(stream), "cuStreamSynchronize", err, errlen);
  leave();
  return rc;
}

int mj_cuda_fill_ff(void *stream, void *dev_dst, size_t bytes, char *err, size_t errlen) {
  int rc = ready(err, errlen);
  if (rc < 0 || (rc = enter(stream, err, errlen)) < 0) return rc;
  rc = check(drv.memset_d8((CUdeviceptr)(uintptr_t)dev_dst, 0xff, bytes, stream),
             "cuMemsetD8Async", err, errlen);
  leave();
  return rc;
}

int mj_cuda_device_of(const void *dev_ptr, int *device, char *err, size_t errlen) {
  int rc = ready(err, errlen);
  if (rc < 0) return rc;
  int ord = -1;
  rc = check(drv.ptr_attr(&ord, MJ_CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, (CUdeviceptr)(uintptr_t)dev_ptr),
             "cuPointerGetAttribute(DEVICE_ORDINAL)", err, errlen);
  if (rc == 0) *device = ord;
  return rc;
}

int mj_cuda_alloc(void *stream, size_t bytes, void **out, char *err, size_t errlen) {
  int rc = ready(err, errlen);
  if (rc < 0 || (rc = enter(stream, err, errlen)) < 0) return rc;
  CUdeviceptr p = 0;
  rc = check(drv.mem_alloc(&p, bytes), "cuMemAlloc", err, errlen);
  leave();
  if (rc == 0) *out = (void *)(uintptr_t)p;
  return rc;
}

void mj_cuda_free(void *stream, void *p) {
  char ignored[256];
  if (!p || ready(ignored, sizeof ignored) < 0 || enter(stream, ignored, sizeof ignored) < 0) return;
  (void)drv.mem_free((CUdeviceptr)(uintptr_t)p);
  leave();
}

int mj_cuda_sync(void *stream, char *err, size_t errlen) {
  int rc = ready(err, errlen);
  if (rc < 0 || (rc = enter(stream, err, errlen)) < 0) return rc;
  rc = check(drv.sync(stream), "cuStreamSynchronize", err, errlen);
  leave();
  return rc;
}

int mj_cuda_copy(void *stream, void *dst, const void *src, size_t bytes, char *err, size_t errlen) {
  int rc = ready(err, errlen);
  if (rc < 0 || (rc = enter(stream, err, errlen)) < 0) return rc;
  rc = check(drv.memcpy_dtod((CUdeviceptr)(uintptr_t)dst, (CUdeviceptr)(uintptr_t)src, bytes, stream),
             "cuMemcpyDtoDAsync", err, errlen);
  leave();
  return rc;
}
