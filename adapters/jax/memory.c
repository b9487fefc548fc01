/*
 * adapters/jax/memory.c - reading and writing the call's buffers wherever
 * they live: host memory on the cpu platform (memcpy), device memory on the
 * cuda platform (the CUDA driver through cudrv.h, ordered on XLA's stream).
 */
#include <string.h>

#include "cudrv.h"
#include "mjInt.h"

int mj_mem_read(mj_call_t *c, const void *src, void *host_dst, size_t n) {
  if (!c->cuda) {
    memcpy(host_dst, src, n);
    return 0;
  }
  return mj_cuda_read(c->stream, src, host_dst, n, c->err, sizeof c->err);
}

int mj_mem_write(mj_call_t *c, void *dst, const void *host_src, size_t n) {
  if (!c->cuda) {
    memcpy(dst, host_src, n);
    return 0;
  }
  return mj_cuda_write(c->stream, dst, host_src, n, c->err, sizeof c->err);
}

/* Between XLA's buffer and a stage: the provider syncs the stream before
 * it publishes the shard, so a device copy need not wait here. */
int mj_mem_copy(mj_call_t *c, void *dst, const void *src, size_t n) {
  if (!n) return 0;
  if (!c->cuda) {
    memcpy(dst, src, n);
    return 0;
  }
  return mj_cuda_copy(c->stream, dst, src, n, c->err, sizeof c->err);
}

void mj_mem_fill_nan(mj_call_t *c, XLA_FFI_Buffer *b) {
  char ignored[256];
  if (!b) return;
  /* all-ones bytes are a NaN in every float format we handle */
  if (!c->cuda)
    memset(b->data, 0xff, mj_bytes_of(c, b));
  else
    (void)mj_cuda_fill_ff(c->stream, b->data, mj_bytes_of(c, b), ignored, sizeof ignored);
}
