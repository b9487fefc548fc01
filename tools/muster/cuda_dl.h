/*
 * tools/muster/cuda_dl.h - the few CUDA runtime calls `muster solve` needs
 * for GPU shards, through a libcudart dlopen()ed on first use: the CLI links
 * no CUDA and runs where none is installed (only GPU mode then fails, with
 * the reason).  Every call returns 0, or -1 with a message in why naming the
 * call, the CUDA error name and number and its text.
 *
 * CUDA must not be initialized in a process that forks ranks later:
 * cudl_load only dlopen()s (no CUDA call); everything else initializes CUDA.
 */
#ifndef MUSTER_CUDA_DL_H
#define MUSTER_CUDA_DL_H

#include <stddef.h>

int cudl_load(char *why, size_t len);                /* dlopen + dlsym only */
int cudl_device_count(int *count, char *why, size_t len);
int cudl_set_device(int device, char *why, size_t len);
int cudl_malloc(void **p, size_t bytes, char *why, size_t len);
void cudl_free(void *p);                             /* NULL: nothing */
/* cudaMemcpy with cudaMemcpyDefault (unified addressing decides the
 * direction), then cudaDeviceSynchronize of the current device. */
int cudl_copy(void *dst, const void *src, size_t bytes, char *why, size_t len);

#endif
