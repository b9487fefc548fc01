/* providers/tiled/estimate.c - the hooks the engine choice and the tile
 * resolution ask (muster/provider_v2.h, docs/choice.md).  Pure arithmetic,
 * no CUDA.
 *
 * Time: this answers seconds < 0 (no model), so the cost table beside the
 * .so decides: tiled.cost holds f64 potrs on 1, 2 and 4 H200s (measured
 * 2026-11-27); a call with no row (another dtype) has no expected time and
 * loses to a provider that has one. */
#include <stdio.h>

#include "tiled.h"

int tl_estimate(void *ctx, const muster_provider_query_t *q, muster_provider_estimate_t *est) {
  (void)ctx;
  est->seconds = -1.0;
  est->peak_bytes = 0;
  if (q->routine != MUSTER_POTRS) {
    snprintf(est->note, sizeof est->note, "the tiled engine runs potrs only, not %s", muster_routine_str(q->routine));
    return MUSTER_EUNSUPPORTED;
  }
  if (q->devices && q->mem == MUSTER_MEM_CUDA && q->ndevices < q->nranks) {
    snprintf(est->note, sizeof est->note, "%d ranks on %d GPU(s): the tiled engine needs one GPU per rank", q->nranks,
             q->ndevices);
    return MUSTER_EUNSUPPORTED;
  }
  int G = q->ndevices > 0 ? q->ndevices : q->nranks;
  if (G > 0 && q->n > 0) { /* tile columns (copy mode) + panel slots, per GPU */
    int64_t T = tl_engine_tile(q->dtype, q->n, G), nt = muster_ceil_div(q->n, T);
    est->peak_bytes = (uint64_t)(muster_ceil_div(nt, G) * T + tl_slots(tl_env_lookahead()) * T) * (uint64_t)q->n *
                      muster_dtype_bytes(q->dtype);
  }
  snprintf(est->note, sizeof est->note, "no model: the cost table tiled.cost decides (f64 rows only)");
  return 0;
}

int64_t tl_choose_tile(void *ctx, muster_routine_t routine, muster_dtype_t dtype, int64_t n, int nshards) {
  (void)ctx;
  (void)routine;
  if (n < 1 || nshards < 1 || nshards > MUSTER_MAX_RANKS) return 0;
  /* a cyclic caller works in place with this tile; a block caller's tile
   * only has to be valid (the engine copies into its own tiles) */
  int64_t want = tl_engine_tile(dtype, n, nshards);
  if (muster_layout_tile_valid(n, want, nshards)) return want;
  int64_t t = muster_layout_tile_below(n, want, nshards);
  return t ? t : muster_layout_default_tile(n, nshards);
}
