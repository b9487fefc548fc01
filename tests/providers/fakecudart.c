/*
 * tests/providers/fakecudart.c - a stand-in CUDA runtime, built as
 * <build>/tests/providers/fakecuda/libcudart.so.13, so that tests can run
 * `muster solve`'s GPU mode where no GPU is (LD_LIBRARY_PATH=that folder):
 * "device memory" is malloc'ed host memory, copies are memcpy.  Only the
 * calls the CLI (tools/muster/cuda_dl.c) and the runtime (runtime/base/devices.c,
 * devices_mem.c) make.  Its soname is libcudart.so.13, so a test that
 * dlopens it by path first makes the runtime's lazy dlopen find it in that
 * process (test_comm_stage.c).  Environment:
 *   FAKECUDA_COUNT=N          devices there are (default 2)
 *   FAKECUDA_FAIL_MALLOC=D    cudaMalloc fails (out of memory) on device D
 *   FAKECUDA_FAIL_MEMCPY=D    cudaMemcpy fails on device D
 *   FAKECUDA_FREE_MB=M        cudaMemGetInfo's free memory (default 1024)
 *   FAKECUDA_TOTAL_MB=M       ... and total memory (default 2048)
 *   FAKECUDA_IPC_REFUSE=1     cudaIpcGetMemHandle refuses every pointer (as
 *                             for XLA's allocations); its error stays until
 *                             cudaGetLastError
 * The driver's cuMemGetAddressRange and cuPointerGetAttribute (buffer id)
 * come through cudaGetDriverEntryPointByVersion: a cudaMalloc'ed pointer is
 * in its allocation, with an id no other allocation has; any other pointer
 * is the base of an allocation of its own, without an id.  cudaFree keeps
 * the block it frees last and the next cudaMalloc of its size returns it
 * (as CUDA may: the same address, another allocation).  For tests:
 * fakecuda_ipc_handles() is how many handles cudaIpcGetMemHandle gave.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define API __attribute__((visibility("default")))

enum { OK = 0, E_VALUE = 1, E_ALLOC = 2, E_DEVICE = 101, E_LAUNCH = 719 };

static __thread int current; /* the calling thread's device, like CUDA's */
static __thread int last_error; /* what cudaGetLastError returns (and clears) */

static int env_int(const char *name, int dflt) {
  const char *v = getenv(name);
  return v && *v ? atoi(v) : dflt;
}

API int cudaGetDeviceCount(int *count) {
  *count = env_int("FAKECUDA_COUNT", 2);
  return OK;
}

API int cudaSetDevice(int device) {
  if (device < 0 || device >= env_int("FAKECUDA_COUNT", 2)) return E_DEVICE;
  current = device;
  return OK;
}

API int cudaGetDevice(int *device) {
  *device = current;
  return OK;
}

API int cudaMemGetInfo(size_t *free_b, size_t *total_b) {
  *free_b = (size_t)env_int("FAKECUDA_FREE_MB", 1024) << 20;
  *total_b = (size_t)env_int("FAKECUDA_TOTAL_MB", 2048) << 20;
  return OK;
}

API int cudaDeviceGetPCIBusId(char *busid, int len, int device) {
  if (device < 0 || device >= env_int("FAKECUDA_COUNT", 2)) return E_DEVICE;
  snprintf(busid, (size_t)len, "0000:%02x:00.0", device + 1);
  return OK;
}

/* cudaMalloc's allocations (under mu): those live, and the last freed */
struct alloc {
  char *base;
  size_t size;
  unsigned long long id;
  struct alloc *next;
};
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct alloc *live, *kept;
static unsigned long long last_id;
static int ipc_handles;

API int cudaMalloc(void **p, size_t bytes) {
  if (current == env_int("FAKECUDA_FAIL_MALLOC", -1)) return E_ALLOC;
  bytes = bytes ? bytes : 1;
  pthread_mutex_lock(&mu);
  struct alloc *a = kept && kept->size == bytes ? kept : calloc(1, sizeof *a);
  if (a == kept) kept = NULL;
  if (a && !a->base && !(a->base = malloc(bytes))) {
    free(a);
    a = NULL;
  }
  if (a) {
    a->size = bytes;
    a->id = ++last_id;
    a->next = live;
    live = a;
  }
  pthread_mutex_unlock(&mu);
  *p = a ? a->base : NULL;
  return a ? OK : E_ALLOC;
}

static void drop(struct alloc *a) {
  if (a) free(a->base);
  free(a);
}

API int cudaFree(void *p) {
  pthread_mutex_lock(&mu);
  struct alloc **at = &live;
  while (*at && (*at)->base != (char *)p) at = &(*at)->next;
  struct alloc *a = *at, *old = NULL;
  if (a) {
    *at = a->next;
    old = kept;
    kept = a;
  }
  pthread_mutex_unlock(&mu);
  drop(old);
  if (!a) free(p); /* memory the test malloc'ed as "device memory" */
  return OK;
}

__attribute__((destructor)) static void drop_kept(void) {
  drop(kept);
  kept = NULL;
}

/* The live allocation holding ptr (under mu), or NULL. */
static struct alloc *holding(unsigned long long ptr) {
  for (struct alloc *a = live; a; a = a->next)
    if (ptr >= (unsigned long long)(uintptr_t)a->base && ptr < (unsigned long long)(uintptr_t)a->base + a->size)
      return a;
  return NULL;
}

API int cudaMemcpy(void *dst, const void *src, size_t bytes, int kind) {
  if (current == env_int("FAKECUDA_FAIL_MEMCPY", -1)) return E_LAUNCH;
  if (kind < 0 || kind > 4) return E_VALUE;
  memcpy(dst, src, bytes);
  return OK;
}

API int cudaDeviceSynchronize(void) { return OK; }

API int cudaMemcpyAsync(void *dst, const void *src, size_t bytes, int kind, void *stream) {
  (void)stream;
  return cudaMemcpy(dst, src, bytes, kind);
}

API int cudaStreamSynchronize(void *stream) {
  (void)stream;
  return OK;
}

API int cudaGetLastError(void) {
  int e = last_error;
  last_error = OK;
  return e;
}

API int cudaIpcGetMemHandle(void *handle, void *p) {
  if (getenv("FAKECUDA_IPC_REFUSE")) return last_error = E_VALUE;
  memset(handle, 0, 64);
  memcpy(handle, &p, sizeof p);
  pthread_mutex_lock(&mu);
  ipc_handles++;
  pthread_mutex_unlock(&mu);
  return OK;
}

API int fakecuda_ipc_handles(void) {
  pthread_mutex_lock(&mu);
  int n = ipc_handles;
  pthread_mutex_unlock(&mu);
  return n;
}

/* cuMemGetAddressRange (CUresult) */
static int fake_address_range(unsigned long long *base, size_t *size, unsigned long long ptr) {
  pthread_mutex_lock(&mu);
  struct alloc *a = holding(ptr);
  *base = a ? (unsigned long long)(uintptr_t)a->base : ptr;
  *size = a ? a->size : 1;
  pthread_mutex_unlock(&mu);
  return OK;
}

/* cuPointerGetAttribute (CUresult), CU_POINTER_ATTRIBUTE_BUFFER_ID (7) only */
static int fake_pointer_attribute(void *data, int attribute, unsigned long long ptr) {
  pthread_mutex_lock(&mu);
  struct alloc *a = attribute == 7 ? holding(ptr) : NULL;
  if (a) *(unsigned long long *)data = a->id;
  pthread_mutex_unlock(&mu);
  return a ? OK : E_VALUE; /* CUDA_ERROR_INVALID_VALUE */
}

API int cudaGetDriverEntryPointByVersion(const char *symbol, void **fn, unsigned int version, unsigned long long flags,
                                         int *status) {
  (void)version;
  (void)flags;
  *fn = !strcmp(symbol, "cuMemGetAddressRange")    ? (void *)fake_address_range
        : !strcmp(symbol, "cuPointerGetAttribute") ? (void *)fake_pointer_attribute
                                                   : NULL;
  int found = *fn != NULL;
  if (status) *status = found ? 0 : 1; /* cudaDriverEntryPointSymbolNotFound */
  return OK;
}

API const char *cudaGetErrorName(int st) {
  switch (st) {
  case OK: return "cudaSuccess";
  case E_VALUE: return "cudaErrorInvalidValue";
  case E_ALLOC: return "cudaErrorMemoryAllocation";
  case E_DEVICE: return "cudaErrorInvalidDevice";
  case E_LAUNCH: return "cudaErrorLaunchFailure";
  default: return "cudaErrorUnknown";
  }
}

API const char *cudaGetErrorString(int st) {
  switch (st) {
  case OK: return "no error";
  case E_ALLOC: return "out of memory (fake)";
  case E_DEVICE: return "invalid device ordinal (fake)";
  case E_LAUNCH: return "unspecified launch failure (fake)";
  default: return "fake CUDA error";
  }
}
