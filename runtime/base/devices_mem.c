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

/* libcudart's functions this file calls, by name; FN(type, k) calls one */
enum { GET_DEVICE, SET_DEVICE, ENTRY, IPC, LAST_ERROR, MALLOC, FREE, COPY, SYNC, NFN };
static const char *const fn_names[NFN] = {
    "cudaGetDevice", "cudaSetDevice", "cudaGetDriverEntryPointByVersion", "cudaIpcGetMemHandle", "cudaGetLastError",
    "cudaMalloc",    "cudaFree",      "cudaMemcpyAsync",                  "cudaStreamSynchronize"};
static void *fns[NFN];
#define FN(type, k) ((type)fns[k])
static range_fn range; /* the driver's, through the entry point; NULL: unknown */
static pthread_once_t fn_once = PTHREAD_ONCE_INIT;
static char load_why[160] = "not found";

static void fn_load(void) {
  const char *why;
  void *h = muster__cudart(&why);
  if (!h) {
    snprintf(load_why, sizeof load_why, "%s", why);
    return;
  }
  for (int k = 0; k < NFN; k++)
    if (!(fns[k] = dlsym(h, fn_names[k])) && k != ENTRY) { /* without ENTRY every piece is staged */
      snprintf(load_why, sizeof load_why, "libcudart has no %s", fn_names[k]);
      fns[SYNC] = NULL; /* the mark of a complete load (enter) */
      return;
    }
  void *f = NULL;
  int status = -1;
  if (fns[ENTRY] && FN(entry_fn, ENTRY)("cuMemGetAddressRange", &f, ENTRY_CUDA_VERSION, 0, &status) == 0 &&
      status == 0)
    range = (range_fn)f;
}

/* Make device current, the caller's in *was; 0 or the error. */
static int enter(int device, int *was, const char *what) {
  pthread_once(&fn_once, fn_load);
  if (!fns[SYNC])
    return muster__err(MUSTER_ECUDA, "device %d: %s: cannot load the CUDA runtime (libcudart): %s", device, what,
                       load_why);
  *was = -1;
  int st = FN(get_device_fn, GET_DEVICE)(was);
  if (st == 0 && *was != device) st = FN(set_device_fn, SET_DEVICE)(device);
  if (st != 0)
    return muster__err(MUSTER_ECUDA, "device %d: %s: cudaSetDevice failed: %s (%d)", device, what,
                       muster__cuda_error_name(st), st);
  return 0;
}

static void leave(int device, int was) {
  if (was >= 0 && was != device) FN(set_device_fn, SET_DEVICE)(was);
}

int muster__cuda_shareable(int device, const void *p) {
  int was, rc = enter(device, &was, "checking memory for CUDA IPC");
  if (rc < 0) return rc;
  uint64_t base = 0;
  size_t size = 0;
  unsigned char handle[64];
  /* the allocation's base, as the providers export it (cudacommon/ipc.c) */
  int ok = range && range(&base, &size, (uint64_t)(uintptr_t)p) == 0 &&
           FN(ipc_fn, IPC)(handle, (void *)(uintptr_t)base) == 0;
  if (!ok) (void)FN(last_error_fn, LAST_ERROR)(); /* a refused handle must not fail the caller's next CUDA call */
  leave(device, was);
  return ok;
}

int muster__cuda_alloc(int device, size_t bytes, void **out) {
  *out = NULL;
  int was, rc = enter(device, &was, "allocating a staging region");
  if (rc < 0) return rc;
  int st = FN(malloc_fn, MALLOC)(out, bytes);
  leave(device, was);
  if (st != 0) {
    *out = NULL;
    (void)FN(last_error_fn, LAST_ERROR)();
    return muster__err(MUSTER_ECUDA, "device %d: cudaMalloc(%zu) for a staging region failed: %s (%d)", device,
                       bytes, muster__cuda_error_name(st), st);
  }
  return 0;
}

void muster__cuda_free(int device, void *p) {
  int was;
  if (!p || enter(device, &was, "freeing a staging region") < 0) return;
  FN(free_fn, FREE)(p);
  leave(device, was);
}

int muster__cuda_copy(int device, void *dst, const void *src, size_t bytes, void *stream) {
  int was, rc = enter(device, &was, "copying device memory");
  if (rc < 0) return rc;
  const char *call = "cudaMemcpyAsync";
  int st = FN(copy_fn, COPY)(dst, src, bytes, MEMCPY_DEVICE_TO_DEVICE, stream);
  if (st == 0) {
    call = "cudaStreamSynchronize";
    st = FN(sync_fn, SYNC)(stream);
  }
  leave(device, was);
  if (st != 0)
    return muster__err(MUSTER_ECUDA, "device %d: %s of %zu bytes (%p to %p) failed: %s (%d)", device, call, bytes,
                       src, dst, muster__cuda_error_name(st), st);
  return 0;
}
