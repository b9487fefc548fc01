/*
 * providers/cusolvermp/cusolvermp.c - the collective provider on NVIDIA's
 * cuSOLVERMp: every rank (one process per GPU, any number of nodes) calls
 * collective_solve with its piece of A; potrs (with log det A on request),
 * getrs, gels, geqrf and syevd, and on cuSOLVERMp 0.9 gesvd and polar,
 * for f32, f64, c64, c128 on a 2-D
 * block-cyclic grid over NCCL.  NCCL and cuSOLVERMp (and
 * cuBLASMp for 0.9) are loaded with dlopen from where the user has them
 * (libs.h); nothing links them.  This file holds the hooks and the struct;
 * mp.h lists the other parts.
 *
 * cancel (the runtime's watchdog thread, when a peer died or the group was
 * poisoned): marks the call cancelled and aborts its NCCL communicator
 * (ncclCommAbort), which ends the NCCL kernels a dead peer would leave
 * waiting; collective_solve's polling wait (wait.c) then returns the code.
 * The communicator is never reused (release_comms frees what it can).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mp.h"

#define DESCRIPTION "cuSOLVERMp over NCCL: one process per GPU, any number of nodes (2-D block-cyclic)"

/* CUDA devices (never starting CUDA here: cudacommon's child probe) and
 * the libraries with versions this provider runs. */
static int probe(char *why, size_t whylen) {
  int rc = cuc_probe(NULL, why, whylen);
  if (rc < 0) return rc;
  const mp_libs_t *L = mp_libs_get();
  if (L->rc < 0) {
    snprintf(why, whylen, "%s", L->why);
    return L->rc;
  }
  snprintf(why, whylen, "%s", L->summary); /* the note `muster providers` shows */
  return 0;
}

static int init(void **out, char *err, size_t errlen) {
  mp_ctx_t *c = calloc(1, sizeof *c);
  if (!c) {
    cuc_err_t e = MP_ERR(err, errlen);
    return cuc_fail(&e, MUSTER_ENOMEM, "out of host memory");
  }
  pthread_mutex_init(&c->mu, NULL);
  pthread_mutex_init(&c->run_mu, NULL);
  c->libs = mp_libs_get();
  *out = c;
  return 0;
}

static void release_comms(void *vc, uint64_t key) {
  mp_ctx_t *c = vc;
  pthread_mutex_lock(&c->mu);
  pthread_mutex_lock(&c->run_mu); /* no cancel holds a communicator we free */
  pthread_mutex_unlock(&c->run_mu);
  if (c->libs->rc == 0) mp_comm_release(c, key);
  pthread_mutex_unlock(&c->mu);
}

static void fini(void *vc) {
  mp_ctx_t *c = vc;
  if (!c) return;
  release_comms(c, 0);
  pthread_mutex_destroy(&c->mu);
  pthread_mutex_destroy(&c->run_mu);
  free(c);
}

static int collective_solve(void *vc, const muster_collective_call_t *call) {
  return mp_collective_solve(vc, call);
}

static void cancel(void *vc, const muster_collective_call_t *call, int code, const char *why) {
  mp_ctx_t *c = vc;
  pthread_mutex_lock(&c->run_mu);
  for (mp_run_t *r = c->running; r; r = r->next)
    if (r->call == call && !r->cancelled) {
      r->code = code;
      snprintf(r->why, sizeof r->why, "%s", why ? why : "cancelled by the runtime");
      __atomic_store_n(&r->cancelled, 1, __ATOMIC_RELEASE);
      mp_comm_abort_locked(c, r->comm);
    }
  pthread_mutex_unlock(&c->run_mu);
}

/* The cuSOLVERMp release loaded, for the cost table's rows of it
 * (muster/provider.h): 0.9.1 is much faster than 0.8 for syevd (n = 8192
 * on 4 x H200: 1.16 s against 2.07 s), so the choice needs the rows of the
 * release that runs. */
__attribute__((visibility("default"))) int muster_provider_engine_version(void *ctx, char *out, size_t cap) {
  (void)ctx;
  int ver = mp_libs_solver_version();
  if (!ver) return MUSTER_ENOENT;
  mp_ver_str(ver, out, cap);
  return 0;
}

__attribute__((visibility("default"))) const muster_provider_v2_t muster_provider_v2 = {
    .abi_version = MUSTER_PROVIDER_V2_ABI,
    .struct_size = sizeof(muster_provider_v2_t),
    .layout_rules = MUSTER_LAYOUT_RULES_VERSION,
    .kind = MUSTER_PROVIDER_COLLECTIVE,
    .name = MP_NAME,
    .description = DESCRIPTION,
    .priority = 70,
    .routines = MUSTER_ROUTINE_BITS(POTRS, SYEVD, GETRS, GELS, GEQRF, GESVD, POLAR) | MUSTER_CAP_LOGDET,
    .dtypes = MUSTER_ALL_DTYPES,
    .mem_kinds = 1u << MUSTER_MEM_CUDA,
    .spans = MUSTER_SPAN_THREADS | MUSTER_SPAN_PROCESSES | MUSTER_SPAN_NODES,
    .max_shards = MUSTER_MAX_RANKS,
    .probe = probe,
    .init = init,
    .fini = fini,
    .estimate = mp_estimate,
    .collective_solve = collective_solve,
    .cancel = cancel,
    .release_comms = release_comms,
};
