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

#endif
