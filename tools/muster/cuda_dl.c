/* tools/muster/cuda_dl.c - see cuda_dl.h. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

#include "cuda_dl.h"

typedef int (*int_fn)(int);
typedef int (*count_fn)(int *);
typedef int (*malloc_fn)(void **, size_t);
typedef int (*free_fn)(void *);
typedef int (*memcpy_fn)(void *, const void *, size_t, int);
typedef int (*sync_fn)(void);
typedef const char *(*errstr_fn)(int);

#define CUDA_MEMCPY_DEFAULT 4 /* cudaMemcpyDefault */

static struct {
  int_fn set_device;
  count_fn device_count;
  malloc_fn malloc_;
  free_fn free_;
  memcpy_fn memcpy_;
  sync_fn sync;
  errstr_fn err_name, err_string;
  int ok;
  char why[320];
} cu;

static pthread_once_t cu_once = PTHREAD_ONCE_INIT;

static void load_once(void) {
  /* the soname the providers link first: when cusolvermg.so is loaded,
   * this finds its libcudart already in the process, wherever it lives */
  static const char *names[] = {"libcudart.so.13", "libcudart.so.12", "libcudart.so"};
  void *h = NULL;
  for (size_t i = 0; i < sizeof names / sizeof names[0] && !h; i++) {
    h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (!h && i == 0) snprintf(cu.why, sizeof cu.why, "cannot load the CUDA runtime: %s", dlerror());
  }
  if (!h) return;
  cu.set_device = (int_fn)dlsym(h, "cudaSetDevice");
  cu.device_count = (count_fn)dlsym(h, "cudaGetDeviceCount");
  cu.malloc_ = (malloc_fn)dlsym(h, "cudaMalloc");
  cu.free_ = (free_fn)dlsym(h, "cudaFree");
  cu.memcpy_ = (memcpy_fn)dlsym(h, "cudaMemcpy");
  cu.sync = (sync_fn)dlsym(h, "cudaDeviceSynchronize");
  cu.err_name = (errstr_fn)dlsym(h, "cudaGetErrorName");
  cu.err_string = (errstr_fn)dlsym(h, "cudaGetErrorString");
  if (!cu.set_device || !cu.device_count || !cu.malloc_ || !cu.free_ || !cu.memcpy_ || !cu.sync ||
      !cu.err_name || !cu.err_string) {
    snprintf(cu.why, sizeof cu.why, "the CUDA runtime (libcudart) lacks a function the CLI needs");
    dlclose(h);
    return;
  }
  cu.ok = 1; /* the handle stays open for the life of the process */
}

int cudl_load(char *why, size_t len) {
  pthread_once(&cu_once, load_once);
  if (cu.ok) return 0;
  snprintf(why, len, "%s", cu.why[0] ? cu.why : "cannot load the CUDA runtime (libcudart)");
  return -1;
}

/* st != 0: the message "CALL failed: NAME (N): text" */
static int cuda_fail(int st, const char *call, char *why, size_t len) {
  if (st == 0) return 0;
  snprintf(why, len, "%s failed: %s (%d): %s", call, cu.err_name(st), st, cu.err_string(st));
  return -1;
}

int cudl_device_count(int *count, char *why, size_t len) {
  *count = 0;
  if (cudl_load(why, len) < 0) return -1;
  return cuda_fail(cu.device_count(count), "cudaGetDeviceCount", why, len);
}

int cudl_set_device(int device, char *why, size_t len) {
  char call[48];
  if (cudl_load(why, len) < 0) return -1;
  snprintf(call, sizeof call, "cudaSetDevice(%d)", device);
  return cuda_fail(cu.set_device(device), call, why, len);
}

int cudl_malloc(void **p, size_t bytes, char *why, size_t len) {
  char call[64];
  *p = NULL;
  if (cudl_load(why, len) < 0) return -1;
  snprintf(call, sizeof call, "cudaMalloc(%zu bytes)", bytes);
  int rc = cuda_fail(cu.malloc_(p, bytes), call, why, len);
  if (rc < 0) *p = NULL;
  return rc;
}

void cudl_free(void *p) {
  if (p && cu.ok) cu.free_(p); /* nothing useful to do with a failure here */
}

int cudl_copy(void *dst, const void *src, size_t bytes, char *why, size_t len) {
  char call[64];
  if (cudl_load(why, len) < 0) return -1;
  snprintf(call, sizeof call, "cudaMemcpy(%zu bytes)", bytes);
  if (bytes && cuda_fail(cu.memcpy_(dst, src, bytes, CUDA_MEMCPY_DEFAULT), call, why, len) < 0) return -1;
  return cuda_fail(cu.sync(), "cudaDeviceSynchronize", why, len);
}
