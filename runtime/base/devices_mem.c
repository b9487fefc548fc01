/*
 * runtime/base/devices_mem.c - device memory the runtime handles itself
 * (devices.h): whether a pointer's allocation can be opened by another
 * process through CUDA IPC, and a region to copy pieces into when it
 * cannot (the staging of muster_solve_comm's one-node route: XLA's own
 * allocations refuse CUDA IPC, docs/multinode.md).  Every CUDA function is
 * looked up in the lazily loaded libcudart (devices.c): libmuster links no
 * CUDA.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "base/devices.h"

enum { MEMCPY_DEVICE_TO_DEVICE = 3, ENTRY_CUDA_VERSION = 12000 };

typedef int (*get_device_fn)(int *);
typedef int (*set_device_fn)(int);
typedef int (*entry_fn)(const char *, void **, unsigned int, unsigned long long, int *);
typedef int (*range_fn)(uint64_t *, size_t *, uint64_t); /* cuMemGetAddressRange (CUresult) */
typedef int (*ipc_fn)(void *, void *);                   /* cudaIpcGetMemHandle(64-byte handle, ptr) */
typedef int (*last_error_fn)(void);
typedef int (*malloc_fn)(void **, size_t);
typedef int (*free_fn)(void *);
typedef int (*copy_fn)(void *, const void *, size_t, int, void *);
typedef int (*sync_fn)(void *);

static struct {
  get_device_fn get_device;
  set_device_fn set_device;
  entry_fn entry;
  range_fn range;
  ipc_fn ipc;
  last_error_fn last_error;
  malloc_fn malloc;
  free_fn free;
  copy_fn copy;
  sync_fn sync;
} fn;
static pthread_once_t fn_once = PTHREAD_ONCE_INIT;
static int fn_ok; /* every function but range found */
static const char *load_why = "not found";

static void fn_load(void) {
  void *h = muster__cudart(&load_why);
  if (!h) return;
  fn.get_device = (get_device_fn)dlsym(h, "cudaGetDevice");
  fn.set_device = (set_device_fn)dlsym(h, "cudaSetDevice");
  fn.entry = (entry_fn)dlsym(h, "cudaGetDriverEntryPointByVersion");
  fn.ipc = (ipc_fn)dlsym(h, "cudaIpcGetMemHandle");
  fn.last_error = (last_error_fn)dlsym(h, "cudaGetLastError");
  fn.malloc = (malloc_fn)dlsym(h, "cudaMalloc");
  fn.free = (free_fn)dlsym(h, "cudaFree");
  fn.copy = (copy_fn)dlsym(h, "cudaMemcpyAsync");
  fn.sync = (sync_fn)dlsym(h, "cudaStreamSynchronize");
  void *range = NULL;
  int status = -1;
  if (fn.entry && fn.entry("cuMemGetAddressRange", &range, ENTRY_CUDA_VERSION, 0, &status) == 0 && status == 0)
    fn.range = (range_fn)range;
  fn_ok = fn.get_device && fn.set_device && fn.ipc && fn.last_error && fn.malloc && fn.free && fn.copy && fn.sync;
  if (!fn_ok)
    load_why = "libcudart lacks one of cudaGetDevice, cudaSetDevice, cudaIpcGetMemHandle, cudaGetLastError, "
               "cudaMalloc, cudaFree, cudaMemcpyAsync, cudaStreamSynchronize";
}

/* Make device current, the caller's in *was; 0 or the error. */
static int enter(int device, int *was, const char *what) {
  pthread_once(&fn_once, fn_load);
  if (!fn_ok)
    return muster__err(MUSTER_ECUDA, "device %d: %s: cannot load the CUDA runtime (libcudart): %s", device, what,
                       load_why);
  *was = -1;
  int st = fn.get_device(was);
  if (st == 0 && *was != device) st = fn.set_device(device);
  if (st != 0)
    return muster__err(MUSTER_ECUDA, "device %d: %s: cudaSetDevice failed: %s (%d)", device, what,
                       muster__cuda_error_name(st), st);
  return 0;
}

static void leave(int device, int was) {
  if (was >= 0 && was != device) fn.set_device(was);
}

int muster__cuda_shareable(int device, const void *p) {
  int was, rc = enter(device, &was, "checking memory for CUDA IPC");
  if (rc < 0) return rc;
  uint64_t base = 0;
  size_t size = 0;
  unsigned char handle[64];
  /* the allocation's base, as the providers export it (cudacommon/ipc.c) */
  int ok = fn.range && fn.range(&base, &size, (uint64_t)(uintptr_t)p) == 0 &&
           fn.ipc(handle, (void *)(uintptr_t)base) == 0;
  if (!ok) (void)fn.last_error(); /* a refused handle must not fail the caller's next CUDA call */
  leave(device, was);
  return ok;
}

int muster__cuda_alloc(int device, size_t bytes, void **out) {
  *out = NULL;
  int was, rc = enter(device, &was, "allocating a staging region");
  if (rc < 0) return rc;
  int st = fn.malloc(out, bytes);
  leave(device, was);
  if (st != 0) {
    *out = NULL;
    (void)fn.last_error();
    return muster__err(MUSTER_ECUDA, "device %d: cudaMalloc(%zu) for a staging region failed: %s (%d)", device,
                       bytes, muster__cuda_error_name(st), st);
  }
  return 0;
}

void muster__cuda_free(int device, void *p) {
  int was;
  if (!p || enter(device, &was, "freeing a staging region") < 0) return;
  fn.free(p);
  leave(device, was);
}

int muster__cuda_copy(int device, void *dst, const void *src, size_t bytes, void *stream) {
  int was, rc = enter(device, &was, "copying device memory");
  if (rc < 0) return rc;
  const char *call = "cudaMemcpyAsync";
  int st = fn.copy(dst, src, bytes, MEMCPY_DEVICE_TO_DEVICE, stream);
  if (st == 0) {
    call = "cudaStreamSynchronize";
    st = fn.sync(stream);
  }
  leave(device, was);
  if (st != 0)
    return muster__err(MUSTER_ECUDA, "device %d: %s of %zu bytes (%p to %p) failed: %s (%d)", device, call, bytes,
                       src, dst, muster__cuda_error_name(st), st);
  return 0;
}
