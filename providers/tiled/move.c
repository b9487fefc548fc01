/* providers/tiled/move.c - a solve's checks, the engine's tile, and the
 * caller's layout moved into the engine's tile columns and back (tiled.h).
 *
 * The engine's layout is 1-D block-cyclic by tile column: tile column j on
 * GPU j % G at local column (j / G) * T.  That is the caller's cyclic
 * layout with tile T, and on one GPU the block layout too: then the engine
 * works in the caller's buffers (no copy, no extra memory).  Otherwise
 * (block layout on 2+ GPUs) each tile column is copied, rows [jT, n) only
 * (the engine reads and writes nothing above a tile column's diagonal
 * tile), from the ranks' blocks into cached work buffers by peer copies on
 * the receiving GPU's compute stream, and L is copied back the same way
 * unless MUSTER_NO_FACTOR says the caller wants X only.  A failed
 * factorization leaves the caller's A as it was in copy mode.
 *
 * MUSTER_TILED_OVERLAP=1 overlaps both moves with the work beside them:
 * - in: the schedule's MOVE ops (tsched.h) copy the columns in order on
 *   each owner's copy stream to itself, and each column's first op waits
 *   for its own MOVE's event, not for all of A: panel 0 starts once
 *   column 0 is in.
 * - out: NOT beside the factorization.  Column j of L is final after its
 *   panel, but a later panel may still fail (not positive definite) or
 *   the factor hold a NaN, and then the caller's A must be as it was; its
 *   original lower triangle is gone from our buffers by then (overwritten
 *   by L), so a column written back early could not be undone.  Whether
 *   the factorization failed is known only after its last panel, on the
 *   host (the infos and the diagonal's NaN check), i.e. at the end of the
 *   factorization.  So L goes back once the factor is checked good, on the
 *   copy streams, beside the solve with B (which only reads L too).  A
 *   solve that then fails (X non-finite with a finite factor) leaves L in
 *   the caller's A, as the in-place layouts do. */
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>

#include "../common/env.h"
#include "tiled.h"

int tl_options(tl_solve_t *j) {
  char why[200];
  int64_t t, la = TL_LOOKAHEAD;
  int rc = prov_env_int("MUSTER_TILED_TILE", 1, MUSTER_LAYOUT_MAX_N, 0, &t, why, sizeof why);
  if (rc == 0) rc = prov_env_switch("MUSTER_TILED_TIMING", 0, &j->timing, why, sizeof why);
  if (rc == 0) rc = prov_env_int("MUSTER_TILED_LOOKAHEAD", 1, TS_MAX_LOOKAHEAD, TL_LOOKAHEAD, &la, why, sizeof why);
  if (rc == 0) rc = prov_env_switch("MUSTER_TILED_PRIORITY", TL_PRIORITY, &j->prio, why, sizeof why);
  if (rc == 0) rc = prov_env_switch("MUSTER_TILED_OVERLAP", TL_OVERLAP, &j->overlap, why, sizeof why);
  j->lookahead = (int)la;
  return rc < 0 ? cuc_fail(j->E, rc, "%s", why) : 0;
}

int tl_env_lookahead(void) {
  int64_t la;
  char why[8];
  if (prov_env_int("MUSTER_TILED_LOOKAHEAD", 1, TS_MAX_LOOKAHEAD, TL_LOOKAHEAD, &la, why, sizeof why) < 0)
    la = TL_LOOKAHEAD;
  return (int)la;
}

int64_t tl_engine_tile(muster_dtype_t dtype, int64_t n, int G) {
  int64_t t = 0;
  char why[8];
  if (prov_env_int("MUSTER_TILED_TILE", 1, MUSTER_LAYOUT_MAX_N, 0, &t, why, sizeof why) < 0)
    t = 0; /* tl_options makes the solve fail naming it */
  if (t < 1) {
    /* big tiles keep the gemms near peak and the steps few; the panel
     * (potrf + trsm on one GPU) is the critical path, so not bigger than
     * needed.  Complex tiles do 4x the flops per element: half the size. */
    int cplx = muster_dtype_is_complex(dtype);
    t = n >= 16384 ? 1024 : n >= 4096 ? 512 : 256;
    if (cplx && t > 256) t /= 2;
    (void)G;
  }
  return t < n ? t : n;
}

int tl_validate(tl_solve_t *j) {
  const muster_provider_call_t *call = j->call;
  const muster_solve_args_t *a = j->a;
  cuc_err_t *E = j->E;
  int G = call->nshards;
  if (G < 1 || G > TL_MAX_DEV) return cuc_fail(E, MUSTER_EINVAL, "%d ranks: the engine takes 1 to %d GPUs", G, TL_MAX_DEV);
  if (a->routine != MUSTER_POTRS) return cuc_fail(E, MUSTER_EUNSUPPORTED, "routine %s", muster_routine_str(a->routine));
  if (a->n < 1 || a->n > INT_MAX) return cuc_fail(E, MUSTER_EINVAL, "n=%" PRId64 " out of range 1..%d", a->n, INT_MAX);
  if (a->nrhs < 1) return cuc_fail(E, MUSTER_EINVAL, "potrs: nrhs=%" PRId64 " out of range", a->nrhs);
  if (a->tile < 1 || a->tile > a->n)
    return cuc_fail(E, MUSTER_ETILE, "tile %" PRId64 " out of range 1..n=%" PRId64, a->tile, a->n);
  j->esz = muster_dtype_bytes(a->dtype);
  if (!j->esz) return cuc_fail(E, MUSTER_EINVAL, "unknown dtype %d", (int)a->dtype);
  muster_layout_geom_t L;
  muster_layout_geom_init(&L, a->n, a->tile, G);
  j->n = a->n;
  j->lda = call->shards[0].lda;
  for (int r = 0; r < G; r++) {
    const muster_shard_t *s = &call->shards[r];
    if (s->mem != MUSTER_MEM_CUDA)
      return cuc_fail(E, MUSTER_EUNSUPPORTED, "rank %d: shard memory kind %d is not CUDA device memory", r, (int)s->mem);
    if (s->device < 0 || s->device >= CUC_MAX_ORDINAL)
      return cuc_fail(E, MUSTER_EINVAL, "rank %d: device %d out of range", r, s->device);
    for (int q = 0; q < r; q++)
      if (j->ids[q] == s->device)
        return cuc_fail(E, MUSTER_EINVAL, "ranks %d and %d both on device %d: the engine needs one GPU per rank", q, r,
                        s->device);
    j->ids[r] = s->device;
    if (!s->a) return cuc_fail(E, MUSTER_EINVAL, "rank %d (device %d): a is NULL", r, s->device);
    if (s->lda != j->lda || s->lda < a->n)
      return cuc_fail(E, MUSTER_EINVAL, "rank %d (device %d): lda=%" PRId64 "; every rank needs the same lda >= n=%"
                      PRId64 " (rank 0 has %" PRId64 ")", r, s->device, s->lda, a->n, j->lda);
    int rc = cuc_check_shard(a, &L, r, s, E);
    if (rc < 0) return rc;
    j->user[r] = s->a;
  }
  j->G = G;
  j->in_place = a->layout == MUSTER_LAYOUT_CYCLIC || G == 1;
  return 0;
}

char *tl_col(const tl_solve_t *j, int k) {
  return (char *)j->mat[ts_owner(&j->s, k)] + (size_t)(ts_local_col(&j->s, k) * j->ld) * j->esz;
}

int tl_move_col(tl_solve_t *j, int k, int to_user, cudaStream_t st) {
  int rc = 0;
  cuc_err_t *E = j->E;
  const ts_sched_t *s = &j->s;
  int o = ts_owner(s, k), dev = j->ids[o];
  int64_t S = muster_ceil_div(j->n, j->G), r0 = (int64_t)k * s->T, end = r0 + ts_width(s, k);
  size_t esz = j->esz, width = (size_t)(j->n - r0) * esz;
  for (int64_t c = r0; c < end;) { /* the part of the tile in each block */
    int r = (int)(c / S);
    int64_t cnt = ((int64_t)r + 1) * S < end ? ((int64_t)r + 1) * S - c : end - c;
    char *eng = tl_col(j, k) + (size_t)((c - r0) * j->ld + r0) * esz;
    char *usr = (char *)j->user[r] + (size_t)((c - (int64_t)r * S) * j->lda + r0) * esz;
    size_t pe = (size_t)j->ld * esz, pu = (size_t)j->lda * esz;
    if (to_user) CUC_CU(dev, cudaMemcpy2DAsync(usr, pu, eng, pe, width, (size_t)cnt, cudaMemcpyDefault, st));
    else CUC_CU(dev, cudaMemcpy2DAsync(eng, pe, usr, pu, width, (size_t)cnt, cudaMemcpyDefault, st));
    c += cnt;
  }
out:
  return rc;
}

int tl_move_in(tl_solve_t *j) {
  int rc = 0;
  cuc_err_t *E = j->E;
  if (j->in_place) {
    for (int g = 0; g < j->G; g++) j->mat[g] = j->user[g];
    j->ld = j->lda;
    return 0;
  }
  j->ld = (j->n + 31) / 32 * 32; /* aligned columns for the kernels */
  for (int g = 0; g < j->G; g++) {
    int dev = j->ids[g];
    tl_dev_t *d = &j->c->dev[dev];
    size_t bytes = (size_t)ts_local_tiles(&j->s, g) * (size_t)j->s.T * (size_t)j->ld * j->esz;
    CUC_CU(dev, cudaSetDevice(dev));
    CUC_CHECK(cuc_grow_checked(dev, &d->work, &d->work_bytes, bytes, "the tile columns", E));
    j->mat[g] = d->work;
  }
  for (int k = 0; k < j->s.nt && !j->s.move; k++) {
    int dev = j->ids[ts_owner(&j->s, k)];
    CUC_CU(dev, cudaSetDevice(dev));
    CUC_CHECK(tl_move_col(j, k, 0, j->c->dev[dev].comp));
  }
out:
  return rc;
}

int tl_move_out(tl_solve_t *j) {
  int rc = 0;
  cuc_err_t *E = j->E;
  if (j->in_place) return 0;
  for (int k = 0; k < j->s.nt; k++) {
    int o = ts_owner(&j->s, k), dev = j->ids[o];
    cudaStream_t st = j->c->dev[dev].comp;
    CUC_CU(dev, cudaSetDevice(dev));
    if (j->overlap) CUC_CHECK(tl_copy_stream(j->c, dev, o, &st, E));
    CUC_CHECK(tl_move_col(j, k, 1, st));
  }
out:
  return rc;
}
