/*
 * providers/cusolverdn/cusolverdn.c - the one-GPU provider: potrs (with
 * log det A on request), potri, syevd, getrs, gels, and the factorizations
 * geqrf, gesvd, polar (docs/factorizations.md) for f32, f64, c64, c128
 * through cusolverDn's 64-bit API on ONE GPU (the leader's, or
 * MUSTER_DN_DEVICE), fed by every rank's shard.  This file holds the hooks
 * and the provider structs; a solve's parts are in job.c (checks, target,
 * gather), move.c (every copy), dncall.c (every cusolverDn call), potrs.c,
 * potri.c, syevd.c, general.c (the routines), factors.c with factplan.c,
 * qr.c, svd.c, polar.c (the factorizations), scan.c (the NaN/Inf check,
 * the log det), and estimate.c + model.c (the engine choice).
 *
 * solve() runs on the leader with every rank's shard (device pointers: the
 * ranks' own in threads mode, CUDA IPC mappings in process mode, made by
 * providers/cudacommon):
 *   1. validate (CUDA memory, lda >= n per rank, block or cyclic geometry);
 *   2. the target's cached handle and streams, peer access both ways
 *      between the target and every rank's GPU;
 *   3. A onto the target: one rank already there (block or cyclic) is
 *      solved in its own buffer (getrs, gels: only under MUSTER_NO_FACTOR,
 *      they leave A as it was); otherwise every rank's columns are copied
 *      into the cached m x n buffer, one 2-D copy per run of the layout;
 *   4. the routine, lower triangle, on the target's non-default stream:
 *        potrs  Xpotrf + Xpotrs on the target's B (a rank's b there, else
 *               a cached buffer), X copied to every rank's b;
 *        potri  Xpotrf, then the legacy <t>potri and the lower triangle
 *               mirrored into the upper, or (MUSTER_DN_POTRI=solve)
 *               Xpotrs against identity panels written straight out;
 *               with MUSTER_LOGDET, 2 sum log L(i,i) (a kernel) into
 *               every rank's w;
 *        syevd  Xsyevd (vectors unless MUSTER_NO_VECTORS), W copied to
 *               every rank's w;
 *        getrs  Xgetrf + Xgetrs, X copied to every rank's b;
 *        gels   Xgeqrf, the rank check on R's diagonal, ormqr/unmqr and
 *               cuBLAS trsm, X (n rows) copied to every rank's b;
 *        geqrf  Xgeqrf + orgqr/ungqr (Q thin or full), gesvd Xgesvd
 *               (values, thin or full vectors; a wide A through A^H:
 *               cusolverDn's gesvd takes m >= n only), polar from the
 *               thin SVD and two cuBLAS gemm (factors.c): every factor
 *               made and checked finite on the target, then A's factor
 *               scattered into every rank's columns, B's packed into every
 *               b, the singular values into every w;
 *   5. A back into every rank's columns, unless the caller does not want
 *      it (MUSTER_NO_FACTOR, MUSTER_NO_VECTORS), it never left, or the
 *      routine leaves A as it was (getrs, gels; the factorizations
 *      scatter their own factor instead); every
 *      stream of the target drained before the status is published.
 * On failure the ranks' A is not written (except in place, where
 * cusolverDn worked on it); b and w are unspecified (the factorizations
 * write none of A, b, w on failure).
 *
 * Every CUDA/cuSOLVER status is checked (MUSTER_ECUDA naming the device,
 * the call and the status); potrf info k > 0 is MUSTER_ENOTPD with *info =
 * k; getrf info k > 0 and a rank-deficient R are MUSTER_ESINGULAR with
 * *info = k; NaN/Inf in A, B, X or W is MUSTER_ENONFINITE; a buffer that does not fit
 * on the target is MUSTER_ENOMEM naming the bytes needed and free.  The
 * calling thread's current device is restored.
 */
#include <stddef.h>
#include <stdlib.h>

#include "job.h"

#define ALL_ROUTINES \
  (MUSTER_ROUTINE_BITS(POTRS, POTRI, SYEVD, GETRS, GELS, GEQRF, GESVD, POLAR) | MUSTER_CAP_LOGDET)
#define DESCRIPTION "cusolverDn on one GPU fed by every rank (threads: peer copies; processes: CUDA IPC)"

/* probe, init, fini and the every-participant hooks (local_export,
 * leader_import, forget_peer): cudacommon's, around this context */
CUC_LEADER_HOOKS(dn_ctx_t, DN_NAME, dn_cache_free)

/* The block layout needs no tile (blocks move whole): the block width, the
 * tile that is always valid.  A cyclic layout comes with the caller's. */
static int64_t choose_tile(void *ctx, muster_routine_t routine, muster_dtype_t dtype, int64_t n, int nshards) {
  (void)ctx;
  (void)routine;
  (void)dtype;
  return n < 1 || nshards < 1 ? 0 : muster_ceil_div(n, nshards);
}

/* ---- solve ------------------------------------------------------------------------ */

static int solve(void *vc, const muster_provider_call_t *call) {
  dn_ctx_t *c = vc;
  cuc_err_t err = DN_ERR(call->err, call->errlen);
  dn_job_t j = {.c = c, .call = call, .a = &call->args, .E = &err};
  int rc = 0, saved = cuc_device_save();
  if (call->err && call->errlen) call->err[0] = '\0';
  *call->info = 0;
  pthread_mutex_lock(&c->mu);
  cuc_ipc_tick(&c->ipc);
  dn_stat_add(DN_STAT_SOLVES, 1);
  CUC_CHECK(dn_job_validate(&j));
  CUC_CHECK(dn_job_prepare(&j));
  switch (j.a->routine) {
  case MUSTER_POTRS: rc = dn_potrs(&j); break;
  case MUSTER_POTRI: rc = dn_potri(&j); break;
  case MUSTER_GETRS: rc = dn_getrs(&j); break;
  case MUSTER_GELS: rc = dn_gels(&j); break;
  case MUSTER_GEQRF:
  case MUSTER_GESVD:
  case MUSTER_POLAR: rc = dn_factors(&j); break;
  default: rc = dn_syevd(&j); break; /* validate admits only these eight */
  }
out:
  rc = dn_job_finish(&j, rc);
  pthread_mutex_unlock(&c->mu);
  cuc_device_restore(saved);
  return rc;
}

/* Counters for tests: fills up to cap of them (DN_STAT_* order: handles,
 * allocations, peer enables, IPC opens, IPC closes, solves, copies,
 * in-place solves, bytes held on the last target); returns how many
 * exist. */
__attribute__((visibility("default"))) int muster_cusolverdn_stats(uint64_t *out, int cap) {
  for (int i = 0; i < cap && i < DN_NSTATS; i++) out[i] = dn_stat(i);
  return DN_NSTATS;
}

/* What both structs say, and the hooks both hand out. */
#define DN_COMMON                                                                                   \
  .name = DN_NAME, .description = DESCRIPTION, .priority = 90, .routines = ALL_ROUTINES, .dtypes = MUSTER_ALL_DTYPES, \
  .mem_kinds = 1u << MUSTER_MEM_CUDA, .max_shards = MUSTER_MAX_RANKS, .choose_tile = choose_tile, .solve = solve, \
  CUC_LEADER_HOOK_FIELDS

__attribute__((visibility("default"))) const muster_provider_v2_t muster_provider_v2 = {
    .abi_version = MUSTER_PROVIDER_V2_ABI,
    .struct_size = sizeof(muster_provider_v2_t),
    .layout_rules = MUSTER_LAYOUT_RULES_VERSION,
    .kind = MUSTER_PROVIDER_LEADER,
    .spans = MUSTER_SPAN_THREADS | MUSTER_SPAN_PROCESSES,
    .estimate = dn_estimate,
    DN_COMMON,
};

/* The same hooks for a runtime that loads ABI v1 only (no estimate: such a
 * runtime picks by priority, and 90 leaves cusolvermg its default; forced
 * by name, cusolverdn runs there as here). */
__attribute__((visibility("default"))) const muster_provider_v1_t muster_provider_v1 = {
    .abi_version = MUSTER_PROVIDER_V1_ABI,
    .struct_size = sizeof(muster_provider_v1_t),
    DN_COMMON,
};
