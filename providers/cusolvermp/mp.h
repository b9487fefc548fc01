/*
 * providers/cusolvermp/mp.h - the provider's state and the parts of a
 * collective call, shared by its files:
 *   cusolvermp.c  the hooks and the provider struct
 *   comm.c        communicators: NCCL + cuSOLVERMp handle, grid and stream,
 *                 cached per (bootstrap key, grid, device); cancel's abort
 *   wait.c        the polling wait that cancel and NCCL errors end
 *   redist.c      running a plan (plan.h) on the GPUs over NCCL
 *   solve.c       collective_solve: agree, move A in, the routine, back, agree
 *   routines.c    potrs and syevd; general.c getrs and the factor's
 *                 diagonal; gels.c gels; qr.c geqrf
 *   estimate.c    estimate(): the memory rule against each rank's free bytes
 *
 * Locks: ctx->mu serializes collective_solve and release_comms within the
 * process (one GPU per rank: concurrent calls of one process would share
 * it anyway); ctx->run_mu guards the list of running calls and each
 * communicator's `aborted`, and is all cancel() takes, so the watchdog's
 * cancel never waits for a solve.
 */
#ifndef MUSTER_MP_H
#define MUSTER_MP_H

#include <pthread.h>
#include <stdint.h>

#include "../common/keyed.h"
#include "cudacommon.h"
#include "libs.h"
#include "muster/provider.h"
#include "plan.h"

#define MP_NAME "cusolvermp"
#define MP_ERR(buf, len) ((cuc_err_t){(buf), (len), MP_NAME})

/* Device buffers a communicator keeps between calls. */
enum { MP_BUF_A, MP_BUF_Q, MP_BUF_B, MP_BUF_X, MP_BUF_SEND, MP_BUF_RECV, MP_BUF_WORK, MP_BUF_IDX, MP_BUF_W,
       MP_BUF_INFO, MP_BUF_PIV, MP_BUF_TAU, MP_BUF_SCAN, MP_NBUF };

typedef struct mp_comm {
  muster__keyed_t link; /* first: the entry of ctx->comms (keyed.h) */
  int nprow, npcol, nranks, rank, device;
  mp_ncclComm_t nccl;
  mp_solverHandle_t handle;
  mp_solverGrid_t grid;
  cudaStream_t stream;
  const mp_release_t *rel;
  int aborted;  /* ncclCommAbort ran (under run_mu): NCCL freed it; what
                   refers to it (grid, handle) is leaked, never touched   */
  int broken;   /* a call failed on it: never reused                    */
  int nonblocking; /* made with MUSTER_MP_NCCL_BLOCKING=0: every NCCL call
                      of ours waits first for the last to finish
                      (mp_nccl_ready)                                     */
  void *buf[MP_NBUF];
  size_t have[MP_NBUF];
  void *hwork;
  size_t hhave;
} mp_comm_t;

/* One running collective_solve, as cancel finds it. */
typedef struct mp_run {
  struct mp_run *next;
  const muster_collective_call_t *call;
  mp_comm_t *comm;       /* once it exists (set under run_mu)              */
  volatile int cancelled;
  int code;
  char why[512];
} mp_run_t;

typedef struct mp_ctx {
  pthread_mutex_t mu, run_mu;
  muster__keyed_t *comms; /* mp_comm_t entries */
  mp_run_t *running;
  const mp_libs_t *libs;
} mp_ctx_t;

/* ---- comm.c --------------------------------------------------------------------- */

/* The communicator of (boot->key, grid P x Q) on `device`: cached, or made
 * now (rank 0's ncclUniqueId through boot->allgather, NCCL, the
 * cuSOLVERMp handle on a new non-blocking stream, its grid).  Every rank
 * calls it at the same point (one allgather when nothing is cached, none
 * when it is: every rank of a key caches the same).  run->comm is set as
 * soon as there is something cancel can abort.  0, or a code with the
 * message in E. */
MP_HIDDEN int mp_comm_get(mp_ctx_t *c, mp_run_t *run, const muster_bootstrap_t *boot, int nprow, int npcol,
                          int device, mp_comm_t **out, cuc_err_t *E);
/* Free the communicators of key (0: all). */
MP_HIDDEN void mp_comm_release(mp_ctx_t *c, uint64_t key);
/* cancel's work: abort run's communicator once (under run_mu). */
MP_HIDDEN void mp_comm_abort_locked(mp_ctx_t *c, mp_comm_t *m);
/* Buffer i of m grown to bytes (device memory of m->device; refused with
 * MUSTER_ENOMEM naming what when it cannot fit). */
MP_HIDDEN int mp_comm_buf(mp_comm_t *m, int i, size_t bytes, const char *what, cuc_err_t *E);

/* ---- wait.c ---------------------------------------------------------------------- */

/* Wait for m->stream to drain: polls, and also ends when run was cancelled
 * (its code and why) or NCCL reports an error on m (then m is aborted so
 * the stream drains).  After a cancel the stream is given MP_DRAIN_S to
 * drain before the call returns without it (its buffers are then left
 * allocated: m is aborted).  0, or a code with E. */
MP_HIDDEN int mp_wait(mp_ctx_t *c, mp_run_t *run, mp_comm_t *m, cuc_err_t *E);
#define MP_DRAIN_S 5.0
/* On a non-blocking communicator (m->nonblocking), NCCL refuses every
 * call (ncclInvalidArgument: "still initializing or in progress") while the
 * last operation on it, ours or cuSOLVERMp's, is ncclInProgress; this
 * polls ncclCommGetAsyncError until it is not.  Call it before and after
 * each NCCL call or group of ours and after cuSOLVERMp made the grid.  A
 * cancel (run may be NULL: none) or an abort ends the wait; an NCCL error
 * aborts m.  0 at once on a blocking one; or a code with E. */
MP_HIDDEN int mp_nccl_ready(mp_ctx_t *c, mp_run_t *run, mp_comm_t *m, cuc_err_t *E);
/* A cancelled run's code with its why in E (0 when not cancelled). */
MP_HIDDEN int mp_cancelled(mp_run_t *run, cuc_err_t *E);
/* An NCCL result other than success: MUSTER_ECUDA "device D: CALL failed:
 * NCCL's text". */
MP_HIDDEN int mp_nccl_fail(cuc_err_t *E, int dev, const char *call, mp_nres_t r);
#define MP_NC(dev, call)                                                           \
  do {                                                                             \
    mp_nres_t r_ = (call);                                                         \
    if (r_ != MP_NCCL_SUCCESS && r_ != MP_NCCL_IN_PROGRESS) {                      \
      rc = mp_nccl_fail(E, (dev), #call, r_);                                      \
      goto out;                                                                    \
    }                                                                              \
  } while (0)

/* ---- redist.c -------------------------------------------------------------------- */

/* mp_redist: job.h (it needs the job's run for its NCCL waits). */

/* ---- solve.c, estimate.c ------------------------------------------------------------- */

MP_HIDDEN int mp_collective_solve(mp_ctx_t *c, const muster_collective_call_t *call);
MP_HIDDEN int mp_estimate(void *ctx, const muster_provider_query_t *q, muster_provider_estimate_t *est);

/* The call's shape from the arguments and the environment (grid, tile,
 * scratch): shared by estimate and solve so both apply the same rules.
 * 0, or a code with why. */
MP_HIDDEN int mp_shape_of(const muster_solve_args_t *a, int nranks, int64_t *tile_in, mp_shape_t *s, char *why,
                          size_t len);

#endif
