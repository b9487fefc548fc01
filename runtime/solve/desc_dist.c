/*
 * runtime/solve/desc_dist.c - the descriptor of a 2-D block-cyclic piece
 * (muster_solve_comm_dist, muster/comm.h; desc.h): one rank's dist checked
 * alone, then every rank's together, so that the collective engine gets a
 * dist it can redistribute from (muster_collective_call_t.dist) and every
 * rank reaches the same verdict.
 */
#include <inttypes.h>

#include "solve/desc.h"
#include "muster/layout.h"

void muster__desc_set_dist(const muster_dist_t *g, int64_t m, int64_t tile, int64_t lda, muster__desc_t *d) {
  if (g->nprow < 1 || g->npcol < 1 || (int64_t)g->nprow * g->npcol > MUSTER_MAX_RANKS) {
    muster__desc_problem(d, MUSTER_EINVAL, "dist: a %d x %d grid (each side >= 1, at most %d ranks)", g->nprow,
                         g->npcol, MUSTER_MAX_RANKS);
    return;
  }
  if (g->myrow < 0 || g->myrow >= g->nprow || g->mycol < 0 || g->mycol >= g->npcol) {
    muster__desc_problem(d, MUSTER_EINVAL, "dist: place (%d, %d) is outside the %d x %d grid", g->myrow,
                         g->mycol, g->nprow, g->npcol);
    return;
  }
  if (g->mb < 1 || g->nb < 1 || g->mb > MUSTER_LAYOUT_MAX_N || g->nb > MUSTER_LAYOUT_MAX_N) {
    muster__desc_problem(d, MUSTER_EINVAL, "dist: blocks of %" PRId64 " x %" PRId64 " (each >= 1)", g->mb,
                         g->nb);
    return;
  }
  if (g->m != m || g->n != d->n) {
    muster__desc_problem(d, MUSTER_EINVAL, "dist describes a %" PRId64 " x %" PRId64 " matrix, the call's A "
                         "is %" PRId64 " x %" PRId64, g->m, g->n, m, d->n);
    return;
  }
  /* the engine picks its own tile: the caller's blocks are dist's */
  if (tile != 0) {
    muster__desc_problem(d, MUSTER_ETILE, "tile=%" PRId64 " with a 2-D piece: pass 0 (the engine chooses its "
                         "tile; the piece's blocks are dist.mb x dist.nb)", tile);
    return;
  }
  int64_t rows = muster_layout_numroc(g->m, g->mb, g->myrow, g->nprow);
  int64_t cols = muster_layout_numroc(g->n, g->nb, g->mycol, g->npcol);
  if (g->lld != lda || lda < (rows > 1 ? rows : 1)) {
    muster__desc_problem(d, MUSTER_EINVAL, "dist.lld=%" PRId64 ", shard lda=%" PRId64 ": they must be equal "
                         "and >= %" PRId64 " (this rank's rows)", g->lld, lda, rows > 1 ? rows : 1);
    return;
  }
  d->layout = MUSTER__LAYOUT_DIST;
  d->grid = (muster__desc_grid_t){g->mb, g->nb, g->nprow, g->npcol, g->myrow, g->mycol};
  d->col0 = 0;
  d->ncols = rows > 0 ? cols : 0; /* no rows: nothing held, a may be NULL */
}

int muster__desc_validate_dist(const muster__desc_t *const *ds, int R) {
  const muster__desc_grid_t *g0 = &ds[0]->grid;
  if (g0->nprow * g0->npcol != R)
    return muster__err(MUSTER_EINVAL, "rank 0's dist is a %d x %d grid, the communicator has %d ranks",
                       g0->nprow, g0->npcol, R);
  for (int r = 0; r < R; r++) {
    const muster__desc_grid_t *g = &ds[r]->grid;
    if (g->nprow != g0->nprow || g->npcol != g0->npcol || g->mb != g0->mb || g->nb != g0->nb)
      return muster__err(MUSTER_EMISMATCH, "rank %d's dist is a %d x %d grid of %" PRId64 " x %" PRId64
                         " blocks, rank 0's a %d x %d grid of %" PRId64 " x %" PRId64, r, g->nprow, g->npcol,
                         g->mb, g->nb, g0->nprow, g0->npcol, g0->mb, g0->nb);
    /* muster_dist_t's numbering: the providers find each rank's blocks by it */
    if (g->myrow * g->npcol + g->mycol != r)
      return muster__err(MUSTER_EINVAL, "rank %d holds grid place (%d, %d), which is rank %d (row * npcol + "
                         "col): take that rank in the communicator", r, g->myrow, g->mycol,
                         g->myrow * g->npcol + g->mycol);
  }
  return 0;
}
