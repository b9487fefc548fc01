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

enum { MEMCPY_DEVICE_TO_DEVICE = 3, ENTRY_CUDA_VERSION = 12000, POINTER_ATTRIBUTE_BUFFER_ID = 7 };

typedef int (*get_device_fn)(int *);
typedef int (*set_device_fn)(int);
typedef int (*entry_fn)(const char *, void **, unsigned int, unsigned long long, int *);
typedef int (*range_fn)(uint64_t *, size_t *, uint64_t); /* cuMemGetAddressRange (CUresult) */
typedef int (*attr_fn)(void *, int, uint64_t);           /* cuPointerGetAttribute (CUresult) */
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
static attr_fn attr;   /* the same (NULL: no allocation's verdict is kept)  */
static pthread_once_t fn_once = PTHREAD_ONCE_INIT;
static char load_why[160] = "not found";

/* A driver function through libcudart's entry point, or NULL. */
static void *driver_fn(const char *name) {
  void *f = NULL;
  int status = -1;
  if (fns[ENTRY] && FN(entry_fn, ENTRY)(name, &f, ENTRY_CUDA_VERSION, 0, &status) == 0 && status == 0) return f;
  return NULL;
}

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
  range = (range_fn)driver_fn("cuMemGetAddressRange");
  attr = (attr_fn)driver_fn("cuPointerGetAttribute");
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

/* The verdict kept for allocation a, or NULL. */
static const struct muster__shareable_seen *seen_find(const muster__shareable_cache_t *c,
                                                      const struct muster__shareable_seen *a) {
  for (int k = 0; k < MUSTER__SHAREABLE_SEEN; k++) {
    const struct muster__shareable_seen *e = &c->seen[k];
    if (e->id == a->id && e->base == a->base && e->size == a->size && e->device == a->device) return e;
  }
  return NULL;
}

static void seen_keep(muster__shareable_cache_t *c, const struct muster__shareable_seen *a) {
  c->seen[c->next] = *a;
  c->next = (c->next + 1) % MUSTER__SHAREABLE_SEEN;
}

/* cudaIpcGetMemHandle of the allocation at base: 1 when given, else 0 */
static int ipc_opens(uint64_t base) {
  unsigned char handle[64];
  if (FN(ipc_fn, IPC)(handle, (void *)(uintptr_t)base) == 0) return 1;
  (void)FN(last_error_fn, LAST_ERROR)(); /* a refused handle must not fail the caller's next CUDA call */
  return 0;
}

int muster__cuda_shareable(int device, const void *p, muster__shareable_cache_t *cache) {
  int was, rc = enter(device, &was, "checking memory for CUDA IPC");
  if (rc < 0) return rc;
  /* the allocation's base, as the providers export it (cudacommon/ipc.c) */
  struct muster__shareable_seen a = {.device = device};
  int ok = range && range(&a.base, &a.size, (uint64_t)(uintptr_t)p) == 0;
  if (ok && cache && attr && attr(&a.id, POINTER_ATTRIBUTE_BUFFER_ID, a.base) != 0) a.id = 0;
  const struct muster__shareable_seen *known = ok && a.id ? seen_find(cache, &a) : NULL;
  if (known) {
    ok = known->shareable;
  } else if (ok) {
    ok = a.shareable = ipc_opens(a.base);
    if (a.id) seen_keep(cache, &a);
  }
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
