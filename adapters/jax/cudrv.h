/*
 * adapters/jax/cudrv.h - the few CUDA driver calls the JAX handler needs on
 * the cuda platform, loaded lazily with dlopen("libcuda.so.1").
 *
 * The handler links nothing of CUDA so one libmuster_jax.so serves the cpu
 * and cuda platforms and loads on a machine without a driver.  It needs the
 * driver to read the 8-byte rank operand (int32[2]) XLA keeps in device memory,
 * to write the status output (and the NaN fill of return_status=True), to
 * find which CUDA device holds a buffer, and in process mode to stage the
 * shard in memory CUDA IPC can export (staging.c).  Every call orders
 * itself on XLA's stream.
 */
#ifndef MUSTER_JAX_CUDRV_H
#define MUSTER_JAX_CUDRV_H

#include <stddef.h>
#include <stdint.h>

/* 0, or a negative MUSTER_E* code with a message in err. */
int mj_cuda_read(void *stream, const void *dev_src, void *host_dst, size_t bytes,
                 char *err, size_t errlen);
int mj_cuda_write(void *stream, void *dev_dst, const void *host_src, size_t bytes,
                  char *err, size_t errlen);
int mj_cuda_fill_ff(void *stream, void *dev_dst, size_t bytes, char *err, size_t errlen);
/* CUDA ordinal of the device that holds dev_ptr (XLA's device ordinal is
 * the client's, which differs from CUDA's when a process sees a subset). */
int mj_cuda_device_of(const void *dev_ptr, int *device, char *err, size_t errlen);
/* Device memory of cuMemAlloc (exportable with CUDA IPC, which XLA's own
 * buffers are not), in the stream's context; copies ordered on the stream. */
int mj_cuda_alloc(void *stream, size_t bytes, void **out, char *err, size_t errlen);
void mj_cuda_free(void *stream, void *p);
int mj_cuda_copy(void *stream, void *dst, const void *src, size_t bytes, char *err, size_t errlen);
/* Wait until everything ordered on the stream so far has run. */
int mj_cuda_sync(void *stream, char *err, size_t errlen);

#endif
