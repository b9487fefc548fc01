/* providers/scalapack/grid.c - the process grid's shape and the tile. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "../common/env.h"
#include "slInt.h"

/* The most square P x Q with P <= Q: ScaLAPACK's factorizations balance
 * their panel broadcasts best on a square grid, and a grid one column wider
 * than tall keeps the row broadcasts (the longer ones in pXpotrf with
 * uplo = 'L') on the smaller side. */
static void square_ish(int nranks, int *nprow, int *npcol) {
  int p = 1;
  for (int d = 1; (int64_t)d * d <= nranks; d++)
    if (nranks % d == 0) p = d;
  *nprow = p;
  *npcol = nranks / p;
}

int sl_grid_shape(int nranks, int *nprow, int *npcol, char *why, size_t whylen) {
  const char *env = getenv("MUSTER_SCALAPACK_GRID");
  if (!env) {
    square_ish(nranks, nprow, npcol);
    return 0;
  }
  return prov_env_grid_of("MUSTER_SCALAPACK_GRID", env, nranks, nprow, npcol, why, whylen);
}

/* Measured on the 2-core development VM (docs/performance/scalapack.md,
 * f64, 2 and 4 ranks, n = 256 .. 2048): tiles 16 and 32 were slower
 * everywhere (potrs up to 2-3x at n >= 1024, syevd 16 about 2x); 64, 128
 * and 256 were within the run-to-run noise of that shared machine (+-50%),
 * with 128 the steadiest for potrf and 64 for syevd.  Complex and single
 * precision use the same rows (not measured separately).  potri is
 * potrf-shaped.  Rows: this tile for n <= n_max. */
static const struct {
  int64_t n_max;
  int64_t potrf, syevd;
} tile_table[] = {
    {256, 64, 64},
    {INT64_MAX, 128, 64},
};

int64_t sl_auto_tile(muster_routine_t routine, muster_dtype_t dtype, int64_t n, int nprow,
                     int npcol) {
  int64_t t = 64;
  for (size_t i = 0; i < sizeof tile_table / sizeof tile_table[0]; i++) {
    if (n <= tile_table[i].n_max) {
      t = routine == MUSTER_SYEVD ? tile_table[i].syevd : tile_table[i].potrf;
      break;
    }
  }
  /* every grid row and column should own at least one tile */
  int wide = nprow > npcol ? nprow : npcol;
  int64_t cap = muster_ceil_div(n, wide);
  if (t > cap) t = cap;
  return t < 1 ? 1 : t;
}
