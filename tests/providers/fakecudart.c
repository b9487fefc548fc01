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
 */
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

API int cudaMalloc(void **p, size_t bytes) {
  if (current == env_int("FAKECUDA_FAIL_MALLOC", -1)) return E_ALLOC;
  *p = malloc(bytes ? bytes : 1);
  return *p ? OK : E_ALLOC;
}

API int cudaFree(void *p) {
  free(p);
  return OK;
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
  return OK;
}

/* cuMemGetAddressRange: every pointer is the base of its own allocation */
static int fake_address_range(unsigned long long *base, size_t *size, unsigned long long ptr) {
  *base = ptr;
  *size = 1;
  return OK;
}

API int cudaGetDriverEntryPointByVersion(const char *symbol, void **fn, unsigned int version, unsigned long long flags,
                                         int *status) {
  (void)version;
  (void)flags;
  int found = !strcmp(symbol, "cuMemGetAddressRange");
  *fn = found ? (void *)fake_address_range : NULL;
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
