/*
 * providers/tiled/tiled.c - our own tiled multi-GPU Cholesky (issue 27):
 * potrs, with log det A on request (MUSTER_LOGDET), for f32, f64, c64,
 * c128 on 1..16 GPUs of one node, in threads mode (device pointers) and
 * processes mode (CUDA IPC mappings, providers/cudacommon).  This file
 * holds the hooks and the provider struct; tsched.c the tile schedule
 * (host-only, unit-tested), factor.c its execution and checks, move.c the
 * caller's layout, bsolve.c the solves with B and log det, cache.c the
 * cached handles, streams, events and buffers, kern.c the tile kernels by
 * dtype, estimate.c the choice's hooks.
 *
 * solve() runs on the leader with every rank's shard:
 *   1. validate (one GPU per rank, one lda, the layout's geometry);
 *   2. per GPU: handles and streams (cached), peer access (once per pair);
 *   3. A into the engine's 1-D tile-column layout (move.c: in place for a
 *      cyclic caller or one GPU, else peer copies into work buffers; with
 *      MUSTER_TILED_OVERLAP=1 those copies are the schedule's MOVE ops);
 *   4. the schedule issued whole, no host synchronization inside;
 *   5. then the infos and the factor's diagonal read: MUSTER_ENOTPD with
 *      *info = the failing leading minor, MUSTER_ENONFINITE for NaN/Inf;
 *   6. MUSTER_LOGDET: log det A into every rank's w; X = A^-1 B from rank
 *      0's b into every rank's b (bsolve.c);
 *   7. L back into the caller's A (copy mode, unless MUSTER_NO_FACTOR;
 *      with MUSTER_TILED_OVERLAP=1 issued before 6's solve, beside it);
 *      every device synchronized.
 * A's shards receive L (lower; the strictly upper part unchanged), as
 * with every provider; after a failure the caller's A is unchanged in copy
 * mode (with MUSTER_TILED_OVERLAP=1: after a failed factorization; a solve
 * with B failing after a good one leaves L there, move.c says why) and
 * holds the partial factor in place.  Every CUDA, cuBLAS and
 * cuSOLVER status is checked (MUSTER_ECUDA naming device and call).  A
 * leader provider has no cancel hook: a rank that dies mid-solve is the
 * runtime's to report, as with cusolvermg.
 * The calling thread's current device is restored.
 */
#include <stddef.h>
#include <stdlib.h>
#include <time.h>

#include "tiled.h"
#include "muster/clock.h"

#define ROUTINES (MUSTER_ROUTINE_BITS(POTRS) | MUSTER_CAP_LOGDET)

/* probe, init, fini and the every-participant hooks (local_export,
 * leader_import, forget_peer): cudacommon's, around this context */
CUC_LEADER_HOOKS(tl_ctx_t, TL_NAME, tl_cache_free)

/* The end of a phase: with MUSTER_TILED_TIMING=1 every device is waited
 * for first, so the phase's time is its GPU time. */
static int phase_end(tl_solve_t *j, int which, double *t) {
  int rc = j->timing ? tl_sync(j) : 0;
  double t1 = muster_clock_s();
  tl_time_set(which, t1 - *t);
  *t = t1;
  return rc;
}

static int run(tl_solve_t *j) {
  int rc = 0;
  cuc_err_t *E = j->E;
  double t0 = muster_clock_s(), t = t0;
  char why[160];
  CUC_CHECK(tl_validate(j));
  CUC_CHECK(tl_options(j));
  for (int g = 0; g < j->G; g++) CUC_CHECK(tl_dev_ready(j->c, j->ids[g], E));
  CUC_CHECK(cuc_peer_enable_all(&j->c->peers, j->G, j->ids, E));
  int64_t T = j->in_place && j->a->layout == MUSTER_LAYOUT_CYCLIC ? j->a->tile
                                                                  : tl_engine_tile(j->a->dtype, j->n, j->G);
  if (ts_build(&j->s, j->n, T, j->G, tl_slots(j->lookahead), j->lookahead, j->prio,
               j->overlap && !j->in_place, why, sizeof why) < 0)
    return cuc_fail(E, MUSTER_ENOMEM, "%s", why);
  CUC_CHECK(tl_move_in(j));
  CUC_CHECK(phase_end(j, TL_T_IN, &t));
  CUC_CHECK(tl_factor(j));
  CUC_CHECK(phase_end(j, TL_T_FACTOR, &t));
  CUC_CHECK(tl_check_factor(j));
  if (j->a->flags & MUSTER_LOGDET) CUC_CHECK(tl_logdet(j));
  CUC_CHECK(phase_end(j, TL_T_CHECK, &t));
  int out = !(j->a->flags & MUSTER_NO_FACTOR);
  if (out && j->overlap) CUC_CHECK(tl_move_out(j)); /* the factor is good: beside the solve */
  CUC_CHECK(tl_solve_b(j));
  CUC_CHECK(phase_end(j, TL_T_SOLVE, &t));
  if (out && !j->overlap) CUC_CHECK(tl_move_out(j));
  CUC_CHECK(tl_sync(j));
  CUC_CHECK(phase_end(j, TL_T_OUT, &t));
  tl_time_set(TL_T_TOTAL, muster_clock_s() - t0);
out:
  return rc;
}

static int solve(void *vc, const muster_provider_call_t *call) {
  tl_ctx_t *c = vc;
  cuc_err_t err = TL_ERR(call->err, call->errlen);
  tl_solve_t *j = calloc(1, sizeof *j);
  if (call->err && call->errlen) call->err[0] = '\0';
  if (!j) return cuc_fail(&err, MUSTER_ENOMEM, "out of host memory");
  int saved = cuc_device_save();
  *call->info = 0;
  j->c = c;
  j->call = call;
  j->a = &call->args;
  j->E = &err;
  pthread_mutex_lock(&c->mu);
  cuc_ipc_tick(&c->ipc);
  tl_stat_add(TL_STAT_SOLVES, 1);
  int rc = run(j);
  if (rc < 0 && j->G > 0) { /* leave no work queued behind an error */
    char keep[16];
    cuc_err_t quiet = {keep, sizeof keep, TL_NAME};
    j->E = &quiet;
    (void)tl_sync(j);
  }
  pthread_mutex_unlock(&c->mu);
  ts_free(&j->s);
  free(j);
  cuc_device_restore(saved);
  return rc;
}

__attribute__((visibility("default"))) const muster_provider_v2_t muster_provider_v2 = {
    .abi_version = MUSTER_PROVIDER_V2_ABI,
    .struct_size = sizeof(muster_provider_v2_t),
    .layout_rules = MUSTER_LAYOUT_RULES_VERSION,
    .kind = MUSTER_PROVIDER_LEADER,
    .name = "tiled",
    .description = "our tiled Cholesky with lookahead on 1-16 GPUs of one node (threads: device pointers; "
                   "processes: CUDA IPC)",
    .priority = 50,
    .routines = ROUTINES,
    .dtypes = MUSTER_ALL_DTYPES,
    .mem_kinds = 1u << MUSTER_MEM_CUDA,
    .spans = MUSTER_SPAN_THREADS | MUSTER_SPAN_PROCESSES,
    .max_shards = TL_MAX_DEV,
    .estimate = tl_estimate,
    .choose_tile = tl_choose_tile,
    .solve = solve,
    CUC_LEADER_HOOK_FIELDS,
};
