/*
 * runtime/devices.h - one thread per device (muster_run_on_devices) and the
 * runtime's only contact with CUDA: libcudart is dlopen()ed lazily, on the
 * first use of a device >= 0, so libmuster never links CUDA and runs where
 * no CUDA is installed (host devices, -1, touch nothing).
 */
#ifndef MUSTER_DEVICES_H
#define MUSTER_DEVICES_H

#include "error.h"

/* Make `device` current in the calling thread through cudaSetDevice of a
 * lazily loaded libcudart (libcudart.so.13, then libcudart.so).  device < 0:
 * nothing.  0, or MUSTER_ECUDA with a message naming the device and the
 * CUDA error (or why libcudart could not be loaded). */
MUSTER_HIDDEN int muster__cuda_set_device(int device);

#endif
