/* providers/cudacommon/device.c - the current device, buffers grown on
 * demand, peer access, a rank's local_export, and the counters
 * (cudacommon.h). */
#include "cudacommon.h"

static uint64_t stats[CUC_NSTATS];

uint64_t cuc_stat(int which) { return __atomic_load_n(&stats[which], __ATOMIC_RELAXED); }

void cuc_stat_add(int which, uint64_t n) { __atomic_add_fetch(&stats[which], n, __ATOMIC_RELAXED); }

int cuc_device_save(void) {
  int dev = -1;
  if (cudaGetDevice(&dev) != cudaSuccess) {
    (void)cudaGetLastError();
    dev = -1;
  }
  return dev;
}

void cuc_device_restore(int saved) {
  if (saved >= 0) cudaSetDevice(saved);
}

int cuc_grow(int dev, void **buf, size_t *have, size_t bytes, cuc_err_t *E) {
  int rc = 0;
  if (bytes <= *have && *buf) return 0;
  if (bytes == 0) bytes = 1;
  if (dev >= 0) {
    CUC_CU(dev, cudaSetDevice(dev));
    if (*buf) CUC_CU(dev, cudaFree(*buf));
    *buf = NULL;
    *have = 0;
    CUC_CU(dev, cudaMalloc(buf, bytes));
  } else {
    if (*buf) cudaFreeHost(*buf);
    *buf = NULL;
    *have = 0;
    CUC_CU(dev, cudaMallocHost(buf, bytes));
  }
  *have = bytes;
  cuc_stat_add(CUC_STAT_ALLOCS, 1);
  return 0;
out:
  if (rc == MUSTER_ECUDA) cuc_err_append(E, " (asked for %zu bytes)", bytes);
  return rc;
}

int cuc_grow_checked(int dev, void **buf, size_t *have, size_t bytes, const char *what, cuc_err_t *E) {
  int rc = 0;
  if (dev >= 0 && (bytes > *have || !*buf)) {
    size_t free_b = 0, total = 0;
    CUC_CU(dev, cudaSetDevice(dev));
    CUC_CU(dev, cudaMemGetInfo(&free_b, &total));
    if (bytes > free_b + *have)
      return cuc_fail(E, MUSTER_ENOMEM, "device %d: %s needs %zu bytes, %zu free (the provider holds %zu there "
                      "in this buffer)", dev, what, bytes, free_b, *have);
  }
  rc = cuc_grow(dev, buf, have, bytes, E);
  if (rc < 0) cuc_err_append(E, " for %s", what);
out:
  return rc;
}

int cuc_peer_enable(cuc_peers_t *p, int from, int to, cuc_err_t *E) {
  int rc = 0, can = 0;
  if (from < 0 || from >= CUC_MAX_ORDINAL || to < 0 || to >= CUC_MAX_ORDINAL)
    return cuc_fail(E, MUSTER_EINVAL, "device ordinals %d, %d: out of range 0..%d", from, to, CUC_MAX_ORDINAL - 1);
  if (from == to || p->state[from][to]) return 0;
  CUC_CU(from, cudaDeviceCanAccessPeer(&can, from, to));
  if (!can) {
    p->state[from][to] = 2;
    return 0;
  }
  CUC_CU(from, cudaSetDevice(from));
  cudaError_t st = cudaDeviceEnablePeerAccess(to, 0);
  if (st == cudaErrorPeerAccessAlreadyEnabled) {
    (void)cudaGetLastError();
  } else if (st != cudaSuccess) {
    return cuc_cuda(E, from, "cudaDeviceEnablePeerAccess", st);
  }
  p->state[from][to] = 1;
  cuc_stat_add(CUC_STAT_PEER, 1);
out:
  return rc;
}

int cuc_local_export(const muster_shard_t *mine, int process_mode, void *blob, size_t cap, size_t *len,
                     cuc_err_t *E) {
  int rc = 0, saved;
  *len = 0;
  if (!mine || mine->mem != MUSTER_MEM_CUDA)
    return cuc_fail(E, MUSTER_EUNSUPPORTED, "shard memory kind %d is not CUDA device memory",
                    mine ? (int)mine->mem : -1);
  saved = cuc_device_save();
  int dev = mine->device;
  CUC_CU(dev, cudaSetDevice(dev));
  if (mine->stream)
    CUC_CU(dev, cudaStreamSynchronize((cudaStream_t)mine->stream));
  else
    CUC_CU(dev, cudaDeviceSynchronize());
  if (process_mode) CUC_CHECK(cuc_ipc_export(mine, blob, cap, len, E));
out:
  cuc_device_restore(saved);
  return rc;
}
