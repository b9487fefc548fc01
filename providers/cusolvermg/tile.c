/* providers/cusolvermg/tile.c - the tile cuSolverMg runs with when the
 * caller gives none: a table measured on 2 x H200 (docs/tiles.md), fitted
 * to a tile that is valid for the block layout and moves whole tiles. */
#include <stdlib.h>

#include "leader_solve.h"

/* The preferred tile by routine, n and GPU count, from the measurements in
 * docs/tiles.md (2 x H200, CUDA 13.0). */
static int64_t table_tile(muster_routine_t routine, int64_t n, int nshards) {
  int64_t S = muster_ceil_div(n, nshards);
  /* syevd: 256 beats 512 by 1.5-2.5% and 1024 by 6% (n = 8192, 16384) */
  if (routine == MUSTER_SYEVD) return 256;
  /* getrs: cusolverMgGetrf takes tiles up to CMG_GETRF_MAX_TILE only (its
   * speed per tile is not measured) */
  if (routine == MUSTER_GETRS) return CMG_GETRF_MAX_TILE;
  /* one GPU: one tile (cuSolverMg then runs like cusolverDn) was fastest
   * at n = 16384 (4096: +6%, 2048: +14%); no relayout on one GPU anyway */
  if (nshards == 1) return n;
  /* potrs (potrf + potrs): 2048 is best from n = 8192 to 65536 (256 is 2-4x
   * slower); while S <= 8192, T = S costs at most 11% in cuSolverMg and
   * needs no relayout, which costs more than that. */
  if (routine == MUSTER_POTRS) return S <= 8192 ? S : 2048;
  /* potri: its solve part gains more from smaller tiles (n = 16384: 4096
   * 0.290 s, 2048 0.291 s, 8192 0.323 s) */
  if (S <= 4096) return S;
  return S <= 8192 ? 4096 : 2048;
}

int64_t cmg_fit_tile(muster_routine_t routine, int64_t want, int64_t n, int nshards) {
  int64_t S = muster_ceil_div(n, nshards);
  int64_t cap = routine == MUSTER_SYEVD ? CMG_SYEVD_MAX_TILE : routine == MUSTER_GETRS ? CMG_GETRF_MAX_TILE : S;
  if (cap > S) cap = S;
  if (want > cap) want = cap;
  if (want < 1) want = 1;
  if (want == S) return S;
  int64_t best = 0, best_g = 0, best_d = 0;
  for (int64_t t = want / 2 > 0 ? want / 2 : 1; t <= 2 * want && t <= cap; t++) {
    if (!muster_layout_tile_valid(n, t, nshards)) continue;
    /* prefer tiles dividing S (whole tiles move as single copies), then
     * the largest common unit with S, then closeness to the wanted tile */
    int64_t g = S % t == 0 ? S : cmg_gcd64(t, S), d = t > want ? t - want : want - t;
    if (!best || g > best_g || (g == best_g && d < best_d)) {
      best = t;
      best_g = g;
      best_d = d;
    }
  }
  if (best) return best;
  for (int64_t t = cap; t >= 1; t--)
    if (muster_layout_tile_valid(n, t, nshards)) return t;
  return S;
}

int64_t cmg_choose_tile(void *ctx, muster_routine_t routine, muster_dtype_t dtype, int64_t n, int nshards) {
  (void)ctx;
  (void)dtype;
  if (n < 1 || nshards < 1) return 0;
  const char *env = getenv("MUSTER_CMG_TILE"); /* measurement runs override the table */
  int64_t want = env && *env ? strtoll(env, NULL, 10) : table_tile(routine, n, nshards);
  return cmg_fit_tile(routine, want, n, nshards);
}
