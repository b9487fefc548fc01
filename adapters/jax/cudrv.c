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

static struct {
  pthread_once_t once;
  int rc;
  char why[256];
  CUresult (*memcpy_dtoh)(void *, CUdeviceptr, size_t, CUstream);
  CUresult (*memcpy_htod)(CUdeviceptr, const void *, size_t, CUstream);
  CUresult (*memset_d8)(CUdeviceptr, unsigned char, size_t, CUstream);
  CUresult (*sync)(CUstream);
  CUresult (*err_string)(CUresult, const char **);
} drv = {PTHREAD_ONCE_INIT, 0, "", 0, 0, 0, 0, 0};

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

int mj_cuda_read(void *stream, const void *dev_src, void *host_dst, size_t bytes,
                 char *err, size_t errlen) {
  int rc = ready(err, errlen);
  if (rc < 0) return rc;
  rc = check(drv.memcpy_dtoh(host_dst, (CUdeviceptr)(uintptr_t)dev_src, bytes, stream),
             "cuMemcpyDtoHAsync", err, errlen);
  if (rc < 0) return rc;
  return check(drv.sync(stream), "cuStreamSynchronize", err, errlen);
}

int mj_cuda_write(void *stream, void *dev_dst, const void *host_src, size_t bytes,
                  char *err, size_t errlen) {
  int rc = ready(err, errlen);
  if (rc < 0) return rc;
  rc = check(drv.memcpy_htod((CUdeviceptr)(uintptr_t)dev_dst, host_src, bytes, stream),
             "cuMemcpyHtoDAsync", err, errlen);
  if (rc < 0) return rc;
  /* host_src is the caller's stack: wait until the copy has read it */
  return check(drv.sync(stream), "cuStreamSynchronize", err, errlen);
}

int mj_cuda_fill_ff(void *stream, void *dev_dst, size_t bytes, char *err, size_t errlen) {
  int rc = ready(err, errlen);
  if (rc < 0) return rc;
  return check(drv.memset_d8((CUdeviceptr)(uintptr_t)dev_dst, 0xff, bytes, stream),
               "cuMemsetD8Async", err, errlen);
}
