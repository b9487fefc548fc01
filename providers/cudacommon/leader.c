/* providers/cudacommon/leader.c - the hooks every leader GPU provider
 * shares around its own context (cudacommon.h, "leader hooks"): fini's
 * order, leader_import and forget_peer under the context's mutex, peer
 * access among a call's GPUs, and waiting for them. */
#include <stdlib.h>

#include "cudacommon.h"

int cuc_leader_init(size_t size, size_t mu_off, const char *who, void **out, char *errbuf, size_t errlen) {
  char *c = calloc(1, size);
  if (!c) {
    cuc_err_t e = {errbuf, errlen, who};
    return cuc_fail(&e, MUSTER_ENOMEM, "out of host memory");
  }
  pthread_mutex_init((pthread_mutex_t *)(c + mu_off), NULL);
  *out = c;
  return 0;
}

void cuc_leader_fini(pthread_mutex_t *mu, cuc_ipc_cache_t *ipc, void (*free_cache)(void *ctx), void *ctx) {
  int saved = cuc_device_save();
  pthread_mutex_lock(mu);
  cuc_ipc_free(ipc); /* mappings first: they name devices the cache frees nothing of */
  free_cache(ctx);
  pthread_mutex_unlock(mu);
  pthread_mutex_destroy(mu);
  cuc_device_restore(saved);
  (void)cudaGetLastError();
  free(ctx);
}

int cuc_leader_import(pthread_mutex_t *mu, cuc_ipc_cache_t *ipc, const char *who, int rank, int64_t peer_pid,
                      const void *blob, size_t len, muster_shard_t *shard, char *errbuf, size_t errlen) {
  cuc_err_t err = {errbuf, errlen, who};
  pthread_mutex_lock(mu);
  int rc = cuc_ipc_import(ipc, rank, peer_pid, blob, len, shard, &err);
  pthread_mutex_unlock(mu);
  return rc;
}

void cuc_leader_forget(pthread_mutex_t *mu, cuc_ipc_cache_t *ipc, int64_t peer_pid) {
  pthread_mutex_lock(mu);
  cuc_ipc_forget(ipc, peer_pid);
  pthread_mutex_unlock(mu);
}

int cuc_peer_enable_all(cuc_peers_t *p, int n, const int *ids, cuc_err_t *E) {
  int rc = 0;
  for (int a = 0; a < n; a++)
    for (int b = 0; b < n; b++) CUC_CHECK(cuc_peer_enable(p, ids[a], ids[b], E));
out:
  return rc;
}

int cuc_sync_devices(int n, const int *ids, cuc_err_t *E) {
  int rc = 0;
  for (int i = 0; i < n; i++) {
    CUC_CU(ids[i], cudaSetDevice(ids[i]));
    CUC_CU(ids[i], cudaDeviceSynchronize());
  }
out:
  return rc;
}
