/*
 * providers/cusolvermg/cusolvermg.c - the GPU provider: potrs (with log det
 * A on request), getrs, potri, syevd for f32, f64, c64, c128 through
 * cuSolverMg on 1..16 GPUs of one node.  This file holds the hooks and the
 * provider structs (ABI v2 with an estimate, and v1 for older runtimes);
 * the solve's parts are in leader_solve.c (checks, relayout), mgcall.c
 * (every cuSolverMg call), potrs.c, getrs.c, potri.c, syevd.c (the
 * routines), diag.c (what a factor's diagonal says), estimate.c (the
 * choice's estimate) and tile.c (choose_tile).
 *
 * solve() runs on the leader with every rank's shard (device pointers: the
 * ranks' own in threads mode, CUDA IPC mappings in process mode, made by
 * providers/cudacommon):
 *   1. validate (distinct devices, one lda, block/cyclic geometry);
 *   2. fetch the cached handle/grid of the device set, enable peer access;
 *   3. block layout: move A into cuSolverMg's 1-D block-cyclic layout on the
 *      GPUs (plan.h: nothing when the layouts coincide, an in-place
 *      permutation when every rank's cyclic part fits its own buffer, else a
 *      copy into cached work buffers); getrs without MUSTER_NO_FACTOR
 *      always copies A into the work buffers and factors the copy;
 *   4. run the routine (lower triangle for the Hermitian ones):
 *        potrs  potrf, then potrs on rank 0's B (chunks of at most
 *               min(tile, CMG_RHS_PANEL) columns, all on rank 0's device),
 *               then X copied to every rank's b; MUSTER_LOGDET: log det A
 *               from L's diagonal (n entries copied out of the tiles) into
 *               every rank's w;
 *        getrs  getrf (row pivots kept on the GPUs), getrs on rank 0's B
 *               as potrs, X to every rank;
 *        potri  one GPU: potrf + potri, then the lower triangle mirrored
 *               into the upper (cudacommon's kernels.cu); 2+ GPUs: potrf, then the
 *               inverse solved for in panels of identity columns
 *               (potri.c: cuSolverMg's own potri is wrong there);
 *               A gets the full Hermitian inverse either way;
 *        syevd  syevd (vectors unless MUSTER_NO_VECTORS); eigenvalues (host,
 *               pinned) copied to every rank's w;
 *   5. move A back to the block layout (also after a failure, so the
 *      caller's buffers are never left permuted); synchronize every device.
 * A's shards receive what the lapack provider gives: potrs the factor L
 * (lower; the strictly upper part unchanged), potri the inverse, syevd the
 * eigenvectors (with MUSTER_NO_VECTORS their content is unspecified),
 * getrs A unchanged (MUSTER_NO_FACTOR: unspecified).
 *
 * Every CUDA/cuSOLVER status is checked and reported as MUSTER_ECUDA naming
 * the device, the call and the status; potrf info k > 0 is MUSTER_ENOTPD
 * and getrf info k > 0 MUSTER_ESINGULAR, with *info = k; NaN/Inf that
 * getrs meets (U's diagonal, X) is MUSTER_ENONFINITE.  The calling
 * thread's current device is restored.
 */
#include <stddef.h>
#include <stdlib.h>

#include "leader_solve.h"

#define ALL_ROUTINES (MUSTER_ROUTINE_BITS(POTRS, POTRI, SYEVD, GETRS) | MUSTER_CAP_LOGDET)
/* probe, init, fini and the every-participant hooks (local_export,
 * leader_import, forget_peer): cudacommon's, around this context */
CUC_LEADER_HOOKS(cmg_ctx_t, CMG_NAME, cmg_cache_free)

/* ---- solve ------------------------------------------------------------------------ */

static int solve(void *vc, const muster_provider_call_t *call) {
  cmg_ctx_t *c = vc;
  cuc_err_t err = CMG_ERR(call->err, call->errlen), *E = &err;
  cmg_solve_t *j = calloc(1, sizeof *j);
  int rc = 0, saved;
  if (call->err && call->errlen) call->err[0] = '\0';
  if (!j) return cuc_fail(&err, MUSTER_ENOMEM, "out of host memory");
  saved = cuc_device_save();
  *call->info = 0;
  j->c = c;
  j->call = call;
  j->a = &call->args;
  j->E = &err;
  pthread_mutex_lock(&c->mu);
  cuc_ipc_tick(&c->ipc);
  cmg_stat_add(CMG_STAT_SOLVES, 1);
  CUC_CHECK(cmg_solve_validate(j));
  CUC_CHECK(cmg_devset_get(c, j->R, j->ids, &j->set, E));
  CUC_CHECK(cmg_peer_enable(c, j->R, j->ids, E));
  for (int r = 0; r < j->R; r++) CUC_CHECK(cmg_dev_ready(c, j->ids[r], E));
  CUC_CHECK(cmg_solve_prepare(j));
  CUC_CHECK(cmg_desc_get(j->set, j->lda, j->a->n, j->a->tile, cuc_cuda_type(j->a->dtype), &j->descA, E));
  switch (j->a->routine) {
  case MUSTER_POTRS: rc = cmg_potrs(j); break;
  case MUSTER_GETRS: rc = cmg_getrs(j); break;
  case MUSTER_POTRI: rc = cmg_potri(j); break;
  case MUSTER_SYEVD: rc = cmg_syevd(j); break;
  default: rc = cuc_fail(E, MUSTER_EUNSUPPORTED, "routine %d", (int)j->a->routine);
  }
out:
  rc = cmg_solve_finish(j, rc);
  pthread_mutex_unlock(&c->mu);
  free(j);
  cuc_device_restore(saved);
  return rc;
}

/* Counters for tests: fills up to cap of them (CMG_STAT_* order: handles,
 * descriptors, allocations, peer enables, IPC opens, IPC closes, solves,
 * relayout ops); returns how many exist. */
__attribute__((visibility("default"))) int muster_cusolvermg_stats(uint64_t *out, int cap) {
  for (int i = 0; i < cap && i < CMG_NSTATS; i++) out[i] = cmg_stat(i);
  return CMG_NSTATS;
}

/* The fields both ABI versions share. */
#define CMG_COMMON                                                                                          \
  .name = "cusolvermg",                                                                                     \
  .description = "cuSolverMg on 1-16 GPUs of one node (threads: device pointers; processes: CUDA IPC)",     \
  .priority = 100, .routines = ALL_ROUTINES, .dtypes = MUSTER_ALL_DTYPES, .mem_kinds = 1u << MUSTER_MEM_CUDA,      \
  .max_shards = CMG_MAX_DEV, .choose_tile = cmg_choose_tile, .solve = solve, CUC_LEADER_HOOK_FIELDS

__attribute__((visibility("default"))) const muster_provider_v2_t muster_provider_v2 = {
    .abi_version = MUSTER_PROVIDER_V2_ABI,
    .struct_size = sizeof(muster_provider_v2_t),
    .layout_rules = MUSTER_LAYOUT_RULES_VERSION,
    .kind = MUSTER_PROVIDER_LEADER,
    .spans = MUSTER_SPAN_THREADS | MUSTER_SPAN_PROCESSES,
    .estimate = cmg_estimate,
    CMG_COMMON,
};

/* The same hooks for a runtime that loads ABI v1 only (no estimate: its
 * choice goes by the cost table and priority). */
__attribute__((visibility("default"))) const muster_provider_v1_t muster_provider_v1 = {
    .abi_version = MUSTER_PROVIDER_V1_ABI,
    .struct_size = sizeof(muster_provider_v1_t),
    CMG_COMMON,
};
