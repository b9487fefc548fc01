/* providers/cudacommon/shard.c - a rank's shard against the call
 * (cudacommon.h). */
#include <inttypes.h>

#include "cudacommon.h"

int cuc_check_shard(const muster_solve_args_t *a, const muster_layout_geom_t *L, int r, const muster_shard_t *s,
                    cuc_err_t *E) {
  /* which operands the routine takes: muster_routine_shape and the map's
   * `takes` column, never a list of routines here */
  const char *rn = muster_routine_str(a->routine);
  muster_shape_t sh;
  if (muster_routine_shape(a->routine, a->n, a->nrhs, s->ldb, &sh) < 0)
    return cuc_fail(E, MUSTER_EINVAL, "rank %d (device %d): %s has no shape for n=%" PRId64 ", ldb=%" PRId64, r,
                    s->device, rn ? rn : "?", a->n, s->ldb);
  if (sh.b_rows && (!s->b || s->ldb < sh.b_rows))
    return cuc_fail(E, MUSTER_EINVAL, "rank %d (device %d): %s needs b with ldb >= n (b=%p ldb=%" PRId64 ")", r,
                    s->device, rn, s->b, s->ldb);
  int logdet = (a->flags & MUSTER_LOGDET) != 0;
  if ((logdet || (muster_routine_takes(a->routine) & MUSTER_TAKES_W)) && !s->w)
    return cuc_fail(E, MUSTER_EINVAL, "rank %d (device %d): %s%s needs w%s", r, s->device, rn,
                    logdet ? " with MUSTER_LOGDET" : "", logdet ? " (one real)" : "");
  if (a->layout == MUSTER_LAYOUT_BLOCK) {
    int64_t c0 = muster_layout_block_col0(L, r), nc = muster_layout_block_ncols(L, r);
    if (s->col0 != c0 || s->ncols < nc)
      return cuc_fail(E, MUSTER_EINVAL, "rank %d (device %d): block shard holds columns [%" PRId64 ", +%" PRId64
                      "), the block layout of n=%" PRId64 " over %d ranks puts [%" PRId64 ", +%" PRId64 ") there",
                      r, s->device, s->col0, s->ncols, a->n, L->nranks, c0, nc);
  } else if (s->ncols < muster_layout_cyclic_real_cols(L, r)) {
    return cuc_fail(E, MUSTER_EINVAL, "rank %d (device %d): cyclic shard of %" PRId64 " columns, tile %" PRId64
                    " needs %" PRId64, r, s->device, s->ncols, a->tile, muster_layout_cyclic_real_cols(L, r));
  }
  return 0;
}
