/* providers/cusolvermg/leader_solve.c - a solve's checks, its move into
 * cuSolverMg's layout and back, and the helpers every driver uses (leader_solve.h). */
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "leader_solve.h"

int cmg_solve_validate(cmg_solve_t *j) {
  const muster_provider_call_t *call = j->call;
  const muster_solve_args_t *a = j->a;
  cuc_err_t *E = j->E;
  int R = call->nshards;
  if (R < 1 || R > CMG_MAX_DEV)
    return cuc_fail(E, MUSTER_EINVAL, "%d ranks: cuSolverMg takes 1 to %d GPUs", R, CMG_MAX_DEV);
  if (a->n < 1 || a->n > INT_MAX)
    return cuc_fail(E, MUSTER_EINVAL, "n=%" PRId64 " out of range 1..%d (cuSolverMg takes int)", a->n, INT_MAX);
  int takes_b = a->routine == MUSTER_POTRS || a->routine == MUSTER_GETRS;
  if (takes_b && (a->nrhs < 1 || a->nrhs > INT_MAX))
    return cuc_fail(E, MUSTER_EINVAL, "%s: nrhs=%" PRId64 " out of range", muster_routine_str(a->routine), a->nrhs);
  if ((a->flags & MUSTER_LOGDET) && a->routine != MUSTER_POTRS)
    return cuc_fail(E, MUSTER_EINVAL, "MUSTER_LOGDET is for potrs, not %s", muster_routine_str(a->routine));
  if (a->tile < 1 || a->tile > a->n)
    return cuc_fail(E, MUSTER_ETILE, "tile %" PRId64 " out of range 1..n=%" PRId64, a->tile, a->n);
  if (a->routine == MUSTER_SYEVD && a->tile > CMG_SYEVD_MAX_TILE)
    return cuc_fail(E, MUSTER_ETILE, "syevd: tile %" PRId64 " > %d, the largest cuSolverMg's syevd takes",
                    a->tile, CMG_SYEVD_MAX_TILE);
  if (a->routine == MUSTER_GETRS && a->tile > CMG_GETRF_MAX_TILE)
    return cuc_fail(E, MUSTER_ETILE, "getrs: tile %" PRId64 " > %d, the largest cuSolverMg's getrf takes",
                    a->tile, CMG_GETRF_MAX_TILE);
  j->esz = muster_dtype_bytes(a->dtype);
  if (!j->esz) return cuc_fail(E, MUSTER_EINVAL, "unknown dtype %d", (int)a->dtype);
  muster_layout_geom_init(&j->L, a->n, a->tile, R);
  j->lda = call->shards[0].lda;
  for (int r = 0; r < R; r++) {
    const muster_shard_t *s = &call->shards[r];
    if (s->mem != MUSTER_MEM_CUDA)
      return cuc_fail(E, MUSTER_EUNSUPPORTED, "rank %d: shard memory kind %d is not CUDA device memory", r,
                      (int)s->mem);
    if (s->device < 0 || s->device >= CUC_MAX_ORDINAL)
      return cuc_fail(E, MUSTER_EINVAL, "rank %d: device %d out of range", r, s->device);
    for (int q = 0; q < r; q++)
      if (j->ids[q] == s->device)
        return cuc_fail(E, MUSTER_EINVAL, "ranks %d and %d both on device %d: cuSolverMg needs one GPU per rank",
                        q, r, s->device);
    j->ids[r] = s->device;
    if (!s->a) return cuc_fail(E, MUSTER_EINVAL, "rank %d (device %d): a is NULL", r, s->device);
    if (s->lda != j->lda || s->lda < a->n)
      return cuc_fail(E, MUSTER_EINVAL, "rank %d (device %d): lda=%" PRId64 "; every rank needs the same lda >= n=%"
                      PRId64 " (rank 0 has %" PRId64 ")", r, s->device, s->lda, a->n, j->lda);
    int rc = cuc_check_shard(a, &j->L, r, s, E); /* b, w: the routine's shape */
    if (rc < 0) return rc;
    j->user[r] = s->a;
  }
  j->R = R;
  return 0;
}

static int plan_force(void) {
  const char *s = getenv("MUSTER_CMG_RELAYOUT"); /* tests: inplace | copy */
  if (s && !strcmp(s, "copy")) return CMG_PLAN_COPY;
  if (s && !strcmp(s, "inplace")) return CMG_PLAN_INPLACE;
  return 0;
}

/* getrs leaves the caller's A as it was unless MUSTER_NO_FACTOR lets it
 * factor in place (muster.h): it factors a private copy, in the work
 * buffers, which is never moved back. */
static int private_copy(const cmg_solve_t *j) {
  return j->a->routine == MUSTER_GETRS && !(j->a->flags & MUSTER_NO_FACTOR);
}

/* Every rank's work buffer grown to its cyclic shard (local_cols columns)
 * and made what cuSolverMg works on. */
static int use_work(cmg_solve_t *j) {
  int rc = 0;
  size_t bytes = (size_t)(j->L.local_cols * j->lda) * j->esz;
  for (int r = 0; r < j->R; r++) {
    cmg_dev_t *d = &j->c->dev[j->ids[r]];
    CUC_CHECK(cuc_grow(j->ids[r], &d->work, &d->work_bytes, bytes, j->E));
    j->work[r] = j->mats[r] = d->work;
  }
out:
  return rc;
}

/* The caller's A already is in the cyclic layout (a cyclic call, or a block
 * one whose layouts coincide): each rank's real columns copied into its
 * work buffer as they are, the padding columns zeroed. */
static int copy_as_is(cmg_solve_t *j) {
  int rc = 0;
  cuc_err_t *E = j->E;
  CUC_CHECK(use_work(j));
  for (int r = 0; r < j->R; r++) {
    int dev = j->ids[r];
    cudaStream_t s = j->c->dev[dev].streams[0];
    size_t col = (size_t)j->lda * j->esz, real = (size_t)muster_layout_cyclic_real_cols(&j->L, r);
    CUC_CU(dev, cudaSetDevice(dev));
    CUC_CU(dev, cudaMemcpyAsync(j->work[r], j->user[r], real * col, cudaMemcpyDefault, s));
    CUC_CU(dev, cudaMemsetAsync((char *)j->work[r] + real * col, 0, ((size_t)j->L.local_cols - real) * col, s));
  }
  CUC_CHECK(cmg_solve_sync(j));
out:
  return rc;
}

int cmg_solve_prepare(cmg_solve_t *j) {
  int rc = 0;
  cuc_err_t *E = j->E;
  int keep = private_copy(j);
  for (int r = 0; r < j->R; r++) j->mats[r] = j->user[r];
  if (j->a->layout != MUSTER_LAYOUT_BLOCK) return keep ? copy_as_is(j) : 0;
  int64_t cap[CMG_MAX_DEV];
  for (int r = 0; r < j->R; r++) cap[r] = j->call->shards[r].ncols;
  cmg_plan_req_t req = {j->a->n, j->lda, j->a->tile, j->R, j->esz, cap, CMG_TO_CYCLIC,
                        keep ? CMG_PLAN_COPY : plan_force(), CMG_STAGE_CAP};
  char why[160];
  if (cmg_plan_build(&j->to_cyc, &req, why, sizeof why) < 0) return cuc_fail(E, MUSTER_ENOMEM, "%s", why);
  if (keep && j->to_cyc.kind == CMG_PLAN_IDENTITY) return copy_as_is(j);
  req.direction = CMG_TO_BLOCK;
  req.force = j->to_cyc.kind == CMG_PLAN_COPY ? CMG_PLAN_COPY : req.force;
  if (!keep && cmg_plan_build(&j->to_blk, &req, why, sizeof why) < 0) return cuc_fail(E, MUSTER_ENOMEM, "%s", why);
  if (j->to_cyc.kind == CMG_PLAN_COPY) CUC_CHECK(use_work(j));
  CUC_CHECK(cmg_plan_run(j->c, &j->to_cyc, j->ids, j->user, j->work, E));
out:
  return rc;
}

/* MUSTER_NO_FACTOR: after a successful potrs or getrs, leave A (the factor) in
 * cuSolverMg's cyclic layout instead of moving it back: saves the second
 * relayout when the caller only wants X (A's content is then unspecified,
 * as muster.h says).  Without the flag A receives L, as with every
 * provider. */
static int skip_factor_writeback(const cmg_solve_t *j, int rc) {
  return rc == 0 && (j->a->routine == MUSTER_POTRS || j->a->routine == MUSTER_GETRS) &&
         j->to_cyc.kind == CMG_PLAN_INPLACE && (j->a->flags & MUSTER_NO_FACTOR);
}

int cmg_solve_finish(cmg_solve_t *j, int rc) {
  const muster_provider_call_t *call = j->call;
  if (j->to_blk.nchains > 0 && !skip_factor_writeback(j, rc)) { /* never leave the caller's A permuted */
    char keep[512] = "";
    if (rc < 0 && call->err) snprintf(keep, sizeof keep, "%s", call->err);
    int rc2 = cmg_solve_sync(j);
    if (rc2 == 0) rc2 = cmg_plan_run(j->c, &j->to_blk, j->ids, j->user, j->work, j->E);
    if (rc < 0 && call->err) snprintf(call->err, call->errlen, "%s", keep);
    if (rc == 0) rc = rc2;
  }
  if (j->R > 0) {
    int rc2 = cmg_solve_sync(j);
    if (rc == 0) rc = rc2;
  }
  cmg_plan_free(&j->to_cyc);
  cmg_plan_free(&j->to_blk);
  return rc;
}

int cmg_solve_sync(cmg_solve_t *j) { return cuc_sync_devices(j->R, j->ids, j->E); }

int cmg_solve_info(cmg_solve_t *j, const char *what, int info) {
  *j->call->info = info;
  if (info == 0) return 0;
  /* info > 0: the detail only, the runtime words the verdict (muster/provider.h) */
  if (info > 0 && strstr(what, "Potrf")) return cuc_fail(j->E, MUSTER_ENOTPD, "%s on devices %d..", what, j->ids[0]);
  if (info > 0 && strstr(what, "Getrf"))
    return cuc_fail(j->E, MUSTER_ESINGULAR, "U(%d,%d) is exactly zero; %s on devices %d..", info, info, what,
                    j->ids[0]);
  if (info > 0) return cuc_fail(j->E, MUSTER_EPROVIDER, "%s on devices %d..", what, j->ids[0]);
  return cuc_fail(j->E, MUSTER_EPROVIDER, "%s: parameter %d was refused (info=%d)", what, -info, info);
}

int cmg_solve_diag(cmg_solve_t *j, void *host) {
  int rc = 0;
  cuc_err_t *E = j->E;
  int64_t n = j->a->n, T = j->a->tile, lda = j->lda;
  size_t esz = j->esz;
  for (int64_t C = 0; C * T < n; C++) { /* tile C's diagonal block starts at row C*T of its local columns */
    int r;
    int64_t lc, w = n - C * T < T ? n - C * T : T;
    muster_layout_cyclic_owner(&j->L, C * T, &r, &lc);
    const char *src = (const char *)j->mats[r] + (size_t)(lc * lda + C * T) * esz;
    CUC_CU(j->ids[r], cudaSetDevice(j->ids[r]));
    CUC_CU(j->ids[r], cudaMemcpy2D((char *)host + (size_t)(C * T) * esz, esz, src, (size_t)(lda + 1) * esz, esz,
                                   (size_t)w, cudaMemcpyDefault));
  }
out:
  return rc;
}
