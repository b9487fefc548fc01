/*
 * runtime/base/devices.h - one thread per device (muster_run_on_devices) and the
 * runtime's only contact with CUDA: libcudart is dlopen()ed lazily, on the
 * first use of a device >= 0, so libmuster never links CUDA and runs where
 * no CUDA is installed (host devices, -1, touch nothing).
 */
#ifndef MUSTER_DEVICES_H
#define MUSTER_DEVICES_H

#include <stddef.h>
#include <stdint.h>

#include "base/error.h"

/* Make `device` current in the calling thread through cudaSetDevice of a
 * lazily loaded libcudart (libcudart.so.13, then libcudart.so).  device < 0:
 * nothing.  0, or MUSTER_ECUDA with a message naming the device and the
 * CUDA error (or why libcudart could not be loaded). */
MUSTER_HIDDEN int muster__cuda_set_device(int device);

/* What the engine choice needs to know of `device` (docs/choice.md): its
 * free and total memory (cudaMemGetInfo, with the device made current for
 * the query and the caller's current device restored) and its PCI bus id
 * ("0000:41:00.0", cudaDeviceGetPCIBusId) into busid (cap bytes).  Unknown
 * facts are 0 / "": device < 0, no libcudart, or a failing call.  Never
 * fails and never sets an error. */
MUSTER_HIDDEN void muster__cuda_device_facts(int device, uint64_t *free_b, uint64_t *total_b,
                                             char *busid, size_t cap);

/* The lazily loaded libcudart's dlopen handle (for devices_mem.c), or
 * NULL with why it could not be loaded in *why. */
MUSTER_HIDDEN void *muster__cudart(const char **why);
/* cudaGetErrorName of st ("cudaError" without libcudart). */
MUSTER_HIDDEN const char *muster__cuda_error_name(int st);

/* ---- device memory the runtime handles itself (devices_mem.c) ---------------------
 * For the staging of muster_solve_comm's one-node route (comm_stage.h):
 * each makes `device` current for the call and gives the caller's thread
 * its own back.  Errors: MUSTER_ECUDA naming the device, the call and the
 * CUDA error (or why libcudart could not be loaded). */

/* What muster__cuda_shareable found for allocations it saw: each entry an
 * allocation (device, base and size from cuMemGetAddressRange, and its
 * buffer id, CU_POINTER_ATTRIBUTE_BUFFER_ID: unique in the process, so
 * memory freed and allocated again at the same range is another entry and
 * no verdict outlives its allocation) and whether it opens by CUDA IPC.
 * Why: cudaIpcGetMemHandle is a driver round trip a call; the same few
 * allocations (a framework's pools) come back every call.  Inline, the
 * oldest entry replaced when full: nothing to free.  Zeroed: empty. */
#define MUSTER__SHAREABLE_SEEN 16
typedef struct muster__shareable_cache {
  struct muster__shareable_seen {
    uint64_t base, id; /* id 0: an unused entry */
    size_t size;
    int device, shareable;
  } seen[MUSTER__SHAREABLE_SEEN];
  int next; /* the entry the next new allocation takes */
} muster__shareable_cache_t;

/* 1 when another process can open p's allocation by CUDA IPC (its base,
 * from the driver's cuMemGetAddressRange, gives a cudaIpcGetMemHandle:
 * cudaMalloc memory), 0 when not (XLA's allocations, the stream-ordered
 * allocator's pools; the CUDA error this left is cleared), or the error
 * when libcudart cannot be loaded.  cache (NULL: none): the verdicts of
 * allocations seen before, used and kept; an allocation whose buffer id
 * the driver does not give is asked every time. */
MUSTER_HIDDEN int muster__cuda_shareable(int device, const void *p, muster__shareable_cache_t *cache);

/* cudaMalloc / cudaFree of `bytes` on device (free: NULL is nothing). */
MUSTER_HIDDEN int muster__cuda_alloc(int device, size_t bytes, void **out);
MUSTER_HIDDEN void muster__cuda_free(int device, void *p);

/* Copy bytes of device memory from src to dst on `stream` (a
 * cudaStream_t; NULL: the default stream), after the work queued there
 * before, and wait for it: complete on return. */
MUSTER_HIDDEN int muster__cuda_copy(int device, void *dst, const void *src, size_t bytes, void *stream);

#endif
