/* providers/cusolvermp/wait.c - the polling wait a cancel can end (mp.h).
 * A blocking cudaStreamSynchronize could sleep forever behind an NCCL
 * kernel waiting for a dead peer; polling lets cancel (ncclCommAbort from
 * the runtime's watchdog) and NCCL's own error reports end the wait. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "mp.h"
#include "muster/clock.h"

int mp_cancelled(mp_run_t *run, cuc_err_t *E) {
  if (!__atomic_load_n(&run->cancelled, __ATOMIC_ACQUIRE)) return 0;
  return cuc_fail(E, run->code, "cancelled: %s", run->why);
}

int mp_wait(mp_ctx_t *c, mp_run_t *run, mp_comm_t *m, cuc_err_t *E) {
  const mp_api_t *api = &c->libs->api;
  double drain_from = 0;
  for (int spins = 0;; spins++) {
    cudaError_t st = cudaStreamQuery(m->stream);
    if (st == cudaSuccess) break;
    if (st != cudaErrorNotReady) return cuc_cuda(E, m->device, "cudaStreamQuery", st);
    if (__atomic_load_n(&run->cancelled, __ATOMIC_ACQUIRE)) {
      if (drain_from == 0) drain_from = muster_clock_s();
      if (muster_clock_s() - drain_from > MP_DRAIN_S) {
        int rc = mp_cancelled(run, E);
        cuc_err_append(E, " (the GPU's stream did not drain within %.0f s of the abort: its buffers are left)",
                       MP_DRAIN_S);
        return rc;
      }
    } else {
      mp_nres_t a = MP_NCCL_SUCCESS;
      pthread_mutex_lock(&c->run_mu);
      if (!m->aborted && api->ncclCommGetAsyncError(m->nccl, &a) == MP_NCCL_SUCCESS && a != MP_NCCL_SUCCESS &&
          a != MP_NCCL_IN_PROGRESS) {
        mp_comm_abort_locked(c, m);
        pthread_mutex_unlock(&c->run_mu);
        return mp_nccl_fail(E, m->device, "an NCCL operation (ncclCommGetAsyncError)", a);
      }
      pthread_mutex_unlock(&c->run_mu);
    }
    /* spin briefly (short kernels), then sleep 200 us between looks */
    if (spins > 64) nanosleep(&(struct timespec){0, 200000}, NULL);
  }
  return mp_cancelled(run, E);
}

int mp_nccl_ready(mp_ctx_t *c, mp_run_t *run, mp_comm_t *m, cuc_err_t *E) {
  if (!m->nonblocking) return 0;
  const mp_api_t *api = &c->libs->api;
  for (int spins = 0;; spins++) {
    mp_nres_t a = MP_NCCL_SUCCESS, r = MP_NCCL_SUCCESS;
    int aborted;
    /* under run_mu: cancel's ncclCommAbort frees the communicator */
    pthread_mutex_lock(&c->run_mu);
    aborted = m->aborted;
    if (!aborted) r = api->ncclCommGetAsyncError(m->nccl, &a);
    if (!aborted && r == MP_NCCL_SUCCESS && a != MP_NCCL_SUCCESS && a != MP_NCCL_IN_PROGRESS)
      mp_comm_abort_locked(c, m);
    pthread_mutex_unlock(&c->run_mu);
    int rc = run ? mp_cancelled(run, E) : 0;
    if (rc < 0) return rc;
    if (aborted) return cuc_fail(E, MUSTER_ECUDA, "device %d: the NCCL communicator was aborted", m->device);
    if (r != MP_NCCL_SUCCESS) return mp_nccl_fail(E, m->device, "ncclCommGetAsyncError", r);
    if (a == MP_NCCL_SUCCESS) return 0;
    if (a != MP_NCCL_IN_PROGRESS) return mp_nccl_fail(E, m->device, "an NCCL operation (non-blocking)", a);
    if (spins > 64) nanosleep(&(struct timespec){0, 200000}, NULL);
  }
}
