/* providers/cusolvermp/comm.c - communicators cached per (key, grid,
 * device), made through the runtime's bootstrap (mp.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../common/agree.h"
#include "../common/env.h"
#include "mp.h"

/* What every rank publishes when a communicator is made: its own status
 * (rank 0's ncclGetUniqueId may fail; the others must hear it) and rank
 * 0's id. */
typedef struct boot_msg {
  int32_t rc;
  int32_t device;
  mp_ncclUniqueId id;
} boot_msg_t;


/* Rank 0's unique id, known to every rank; the same code on every rank. */
static int share_id(const mp_api_t *api, const muster_bootstrap_t *boot, int device, mp_ncclUniqueId *id,
                    cuc_err_t *E) {
  boot_msg_t mine, *all = NULL;
  memset(&mine, 0, sizeof mine);
  mine.device = device;
  mp_nres_t r = MP_NCCL_SUCCESS;
  if (boot->rank == 0 && (r = api->ncclGetUniqueId(&mine.id)) != MP_NCCL_SUCCESS) mine.rc = MUSTER_ECUDA;
  char err[400];
  int rc = muster__agree_gather(boot, &mine, sizeof mine, (void **)&all, "sharing NCCL's unique id", err, sizeof err);
  if (rc < 0) {
    rc = cuc_fail(E, rc, "%s", err);
  } else if (all[0].rc < 0) {
    rc = cuc_fail(E, all[0].rc, "rank 0: ncclGetUniqueId failed%s%s", boot->rank == 0 ? ": " : "",
                  boot->rank == 0 ? api->ncclGetErrorString(r) : "");
  } else {
    *id = all[0].id;
  }
  free(all);
  return rc;
}

int mp_nccl_fail(cuc_err_t *E, int dev, const char *call, mp_nres_t r) {
  const mp_libs_t *L = mp_libs_get();
  return cuc_fail(E, MUSTER_ECUDA, "device %d: %s failed: NCCL result %d: %s", dev, call, r,
                  L->rc == 0 ? L->api.ncclGetErrorString(r) : "?");
}

/* NCCL's communicator for boot's ranks on the current device; in
 * non-blocking mode its initialization is waited for here, a cancel ending
 * the wait. */
static int nccl_init(mp_ctx_t *c, mp_run_t *run, const muster_bootstrap_t *boot, mp_comm_t *m, cuc_err_t *E) {
  const mp_api_t *api = &c->libs->api;
  mp_ncclUniqueId id;
  char why[160];
  int blocking, rc = prov_env_switch("MUSTER_MP_NCCL_BLOCKING", 1, &blocking, why, sizeof why);
  if (rc < 0) return cuc_fail(E, rc, "%s", why);
  if ((rc = share_id(api, boot, m->device, &id, E)) < 0) return rc;
  /* NVLink multicast (NVLS) stays off unless the user asked for it */
  setenv("NCCL_NVLS_ENABLE", "0", 0);
  mp_ncclConfig_t cfg = {sizeof cfg, MP_NCCL_CONFIG_MAGIC, MP_NCCL_CONFIG_VERSION, blocking,
                         MP_NCCL_CONFIG_UNDEF_INT, MP_NCCL_CONFIG_UNDEF_INT, MP_NCCL_CONFIG_UNDEF_INT, NULL,
                         MP_NCCL_CONFIG_UNDEF_INT};
  mp_ncclComm_t comm = NULL;
  mp_nres_t r = api->ncclCommInitRankConfig(&comm, boot->size, id, boot->rank, &cfg);
  if (r != MP_NCCL_SUCCESS && r != MP_NCCL_IN_PROGRESS) {
    if (comm) api->ncclCommAbort(comm);
    return mp_nccl_fail(E, m->device, "ncclCommInitRankConfig", r);
  }
  pthread_mutex_lock(&c->run_mu);
  m->nccl = comm;
  m->nonblocking = !blocking;
  run->comm = m;
  pthread_mutex_unlock(&c->run_mu);
  /* non-blocking: wait for the initialization, polling */
  for (;;) {
    mp_nres_t a = MP_NCCL_SUCCESS;
    if ((rc = mp_cancelled(run, E)) < 0) return rc;
    r = api->ncclCommGetAsyncError(comm, &a);
    if (r != MP_NCCL_SUCCESS) return mp_nccl_fail(E, m->device, "ncclCommGetAsyncError", r);
    if (a == MP_NCCL_SUCCESS) return 0;
    if (a != MP_NCCL_IN_PROGRESS) return mp_nccl_fail(E, m->device, "ncclCommInitRankConfig (non-blocking)", a);
    nanosleep(&(struct timespec){0, 200000}, NULL);
  }
}

/* cuSOLVERMp's handle (its version confirmed), stream and grid on m. */
static int solver_init(mp_ctx_t *c, mp_run_t *run, mp_comm_t *m, cuc_err_t *E) {
  const mp_api_t *api = &c->libs->api;
  int rc = 0, code = 0;
  char why[512];
  CUC_CU(m->device, cudaStreamCreateWithFlags(&m->stream, cudaStreamNonBlocking));
  CUC_SO(m->device, api->Create(&m->handle, m->device, m->stream));
  CUC_SO(m->device, api->GetVersion(m->handle, &code));
  if (mp_libs_confirm(code, &m->rel, why, sizeof why) < 0) {
    rc = cuc_fail(E, MUSTER_EUNSUPPORTED, "%s", why);
    goto out;
  }
  CUC_SO(m->device, api->CreateDeviceGrid(m->handle, &m->grid, m->nccl, m->nprow, m->npcol, MP_GRID_COL_MAJOR));
  /* the grid's own NCCL work (0.9.1: ncclCommQueryProperties and more) may
   * still be in progress on a non-blocking communicator */
  CUC_CHECK(mp_nccl_ready(c, run, m, E));
out:
  return rc;
}

/* Free m's resources.  A broken communicator is aborted, not destroyed,
 * and its grid and handle are left (they refer to the NCCL communicator
 * NCCL freed); its buffers too while its stream has not drained. */
static void comm_free(mp_ctx_t *c, mp_comm_t *m) {
  const mp_api_t *api = &c->libs->api;
  int saved = cuc_device_save();
  cudaSetDevice(m->device);
  if (m->stream && !m->broken) cudaStreamSynchronize(m->stream);
  if (m->broken) {
    /* a failed call's peers may be gone: only NCCL's local abort is safe
     * (destroying the grid may talk to them) */
    if (!m->aborted && m->nccl) api->ncclCommAbort(m->nccl);
    m->aborted = 1;
  } else {
    if (m->grid) api->DestroyGrid(m->grid);
    if (m->handle) api->Destroy(m->handle);
    if (m->nccl) api->ncclCommDestroy(m->nccl);
  }
  if (!m->stream || cudaStreamQuery(m->stream) == cudaSuccess) {
    for (int i = 0; i < MP_NBUF; i++) cudaFree(m->buf[i]);
    if (m->stream) cudaStreamDestroy(m->stream);
  }
  free(m->hwork);
  (void)cudaGetLastError();
  cuc_device_restore(saved);
  free(m);
}

int mp_comm_get(mp_ctx_t *c, mp_run_t *run, const muster_bootstrap_t *boot, int nprow, int npcol, int device,
                mp_comm_t **out, cuc_err_t *E) {
  for (muster__keyed_t *e = c->comms; e; e = e->next) {
    mp_comm_t *m = (mp_comm_t *)e;
    if (e->key == boot->key && m->nprow == nprow && m->npcol == npcol && m->device == device &&
        m->rank == boot->rank && !m->broken && !m->aborted) {
      pthread_mutex_lock(&c->run_mu);
      run->comm = m;
      pthread_mutex_unlock(&c->run_mu);
      *out = m;
      return 0;
    }
  }
  mp_comm_t *m = calloc(1, sizeof *m);
  if (!m) return cuc_fail(E, MUSTER_ENOMEM, "out of host memory");
  *m = (mp_comm_t){.link.key = boot->key, .nprow = nprow, .npcol = npcol, .nranks = boot->size, .rank = boot->rank,
                   .device = device};
  int rc = 0;
  CUC_CU(device, cudaSetDevice(device));
  CUC_CHECK(nccl_init(c, run, boot, m, E));
  CUC_CHECK(solver_init(c, run, m, E));
out:
  if (rc < 0) m->broken = 1;
  /* listed even when broken: cancel may hold it, release_comms frees it */
  muster__keyed_push(&c->comms, &m->link);
  *out = m;
  return rc;
}

void mp_comm_release(mp_ctx_t *c, uint64_t key) {
  for (muster__keyed_t *e; (e = muster__keyed_take(&c->comms, key));) comm_free(c, (mp_comm_t *)e);
}

void mp_comm_abort_locked(mp_ctx_t *c, mp_comm_t *m) {
  if (!m || m->aborted || !m->nccl) return;
  m->aborted = 1;
  m->broken = 1;
  c->libs->api.ncclCommAbort(m->nccl);
}

int mp_comm_buf(mp_comm_t *m, int i, size_t bytes, const char *what, cuc_err_t *E) {
  return cuc_grow_checked(m->device, &m->buf[i], &m->have[i], bytes, what, E);
}
