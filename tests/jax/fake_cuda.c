/*
 * tests/jax/fake_cuda.c - a stand-in libcuda.so.1 for the handler
 * test: the few driver entry points adapters/jax/cudrv.c loads, working on
 * host memory, with counters the test reads (balanced context push/pop,
 * calls made).  Never used outside tests.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
typedef unsigned long long CUdeviceptr;
typedef void *CUstream;
typedef void *CUcontext;

#define EXPORT __attribute__((visibility("default")))

static __thread int depth;          /* contexts pushed and not popped, per thread */
static int max_depth, copies, sets; /* read by the test */
static int fake_device = 3;

EXPORT CUresult cuStreamGetCtx(CUstream s, CUcontext *ctx) {
  if (!s) return 201; /* CUDA_ERROR_INVALID_CONTEXT: XLA always passes a stream */
  *ctx = (CUcontext)(uintptr_t)0xc0;
  return 0;
}

EXPORT CUresult cuCtxPushCurrent_v2(CUcontext ctx) {
  if (ctx != (CUcontext)(uintptr_t)0xc0) return 201;
  if (++depth > __atomic_load_n(&max_depth, __ATOMIC_RELAXED)) __atomic_store_n(&max_depth, depth, __ATOMIC_RELAXED);
  return 0;
}

EXPORT CUresult cuCtxPopCurrent_v2(CUcontext *ctx) {
  if (depth <= 0) return 201;
  depth--;
  if (ctx) *ctx = (CUcontext)(uintptr_t)0xc0;
  return 0;
}

static CUresult need_ctx(void) { return depth > 0 ? 0 : 201; }

EXPORT CUresult cuMemcpyDtoHAsync_v2(void *dst, CUdeviceptr src, size_t n, CUstream s) {
  if (need_ctx()) return 201;
  memcpy(dst, (const void *)(uintptr_t)src, n);
  __atomic_add_fetch(&copies, 1, __ATOMIC_RELAXED);
  return 0;
}

EXPORT CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void *src, size_t n, CUstream s) {
  if (need_ctx()) return 201;
  memcpy((void *)(uintptr_t)dst, src, n);
  __atomic_add_fetch(&copies, 1, __ATOMIC_RELAXED);
  return 0;
}

EXPORT CUresult cuMemsetD8Async(CUdeviceptr dst, unsigned char v, size_t n, CUstream s) {
  if (need_ctx()) return 201;
  memset((void *)(uintptr_t)dst, v, n);
  __atomic_add_fetch(&sets, 1, __ATOMIC_RELAXED);
  return 0;
}

EXPORT CUresult cuStreamSynchronize(CUstream s) { return need_ctx(); }

EXPORT CUresult cuGetErrorString(CUresult r, const char **s) {
  *s = r == 201 ? "CUDA_ERROR_INVALID_CONTEXT (fake)" : "fake error";
  return 0;
}

EXPORT CUresult cuPointerGetAttribute(void *data, int attr, CUdeviceptr p) {
  if (attr != 9 || !p) return 1;
  *(int *)data = fake_device;
  return 0;
}

EXPORT CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t n) {
  if (need_ctx()) return 201;
  *p = (CUdeviceptr)(uintptr_t)malloc(n);
  return *p ? 0 : 2;
}

EXPORT CUresult cuMemFree_v2(CUdeviceptr p) {
  free((void *)(uintptr_t)p);
  return 0;
}

EXPORT CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr d, CUdeviceptr src, size_t n, CUstream s) {
  if (need_ctx()) return 201;
  memcpy((void *)(uintptr_t)d, (const void *)(uintptr_t)src, n);
  __atomic_add_fetch(&copies, 1, __ATOMIC_RELAXED);
  return 0;
}

/* for the test */
EXPORT void fake_cuda_stats(int *max_push_depth, int *ncopies, int *nsets, int *open_depth) {
  *max_push_depth = max_depth;
  *ncopies = copies;
  *nsets = sets;
  *open_depth = depth;
}
