/* runtime/base/layout.c - public 1-D column block-cyclic layout API (host side).
 * The arithmetic lives in layout.h; docs/layout.md draws the layout. */
#include <inttypes.h>
#include <stdio.h>

#include "base/error.h"
#include "muster/layout.h"

/* Check (n, nranks) and word the error the public functions return. */
static int check_shape(const char *who, int64_t n, int nranks) {
  if (n < 1 || n > MUSTER_LAYOUT_MAX_N)
    return muster__err(MUSTER_EINVAL, "%s: n=%" PRId64 " out of range (1..2^40)", who, n);
  if (nranks < 1 || nranks > MUSTER_MAX_RANKS)
    return muster__err(MUSTER_EINVAL, "%s: ranks=%d out of range (1..%d)", who, nranks,
                       MUSTER_MAX_RANKS);
  return 0;
}

int muster_layout_block_cols(int64_t n, int nranks, int rank, int64_t *col0, int64_t *ncols) {
  int rc = check_shape("muster_layout_block_cols", n, nranks);
  if (rc < 0) return rc;
  if (!col0 || !ncols)
    return muster__err(MUSTER_EINVAL, "muster_layout_block_cols: col0 or ncols is NULL");
  if (rank < 0 || rank >= nranks)
    return muster__err(MUSTER_EINVAL, "muster_layout_block_cols: rank %d out of 0..%d", rank,
                       nranks - 1);
  muster_layout_geom_t L;
  if (muster_layout_geom_init(&L, n, 1, nranks) < 0)
    return muster__err(MUSTER_EINVAL, "muster_layout_block_cols: n=%" PRId64 " invalid", n);
  *col0 = muster_layout_block_col0(&L, rank);
  *ncols = muster_layout_block_ncols(&L, rank);
  return 0;
}

int64_t muster_layout_local_cols(int64_t n, int64_t tile, int nranks) {
  int rc = check_shape("muster_layout_local_cols", n, nranks);
  if (rc < 0) return rc;
  muster_layout_geom_t L;
  if (muster_layout_geom_init(&L, n, tile, nranks) < 0)
    return muster__err(MUSTER_ETILE, "muster_layout_local_cols: tile %" PRId64
                       " out of range for n=%" PRId64, tile, n);
  return L.local_cols;
}

int64_t muster_layout_cyclic_cols(int64_t n, int64_t tile, int nranks, int rank, int64_t *gcols,
                                  int64_t cap) {
  int rc = check_shape("muster_layout_cyclic_cols", n, nranks);
  if (rc < 0) return rc;
  if (rank < 0 || rank >= nranks)
    return muster__err(MUSTER_EINVAL, "muster_layout_cyclic_cols: rank %d out of 0..%d", rank,
                       nranks - 1);
  if (cap < 0 || (cap > 0 && !gcols))
    return muster__err(MUSTER_EINVAL, "muster_layout_cyclic_cols: gcols=%p cap=%" PRId64,
                       (void *)gcols, cap);
  muster_layout_geom_t L;
  if (muster_layout_geom_init(&L, n, tile, nranks) < 0)
    return muster__err(MUSTER_ETILE, "muster_layout_cyclic_cols: tile %" PRId64
                       " out of range for n=%" PRId64, tile, n);
  for (int64_t l = 0; l < L.local_cols && l < cap; l++)
    gcols[l] = muster_layout_cyclic_global(&L, rank, l);
  return L.local_cols;
}

int muster_layout_check_tile(int64_t n, int64_t tile, int nranks) {
  int rc = check_shape("muster_layout_check_tile", n, nranks);
  if (rc < 0) return rc;
  if (muster_layout_tile_valid(n, tile, nranks)) return 0;
  int64_t S = muster_ceil_div(n, nranks);
  int64_t below = muster_layout_tile_below(n, tile, nranks);
  int64_t above = muster_layout_tile_above(n, tile, nranks);
  const char *head = "tile %" PRId64 " invalid for n=%" PRId64 ", ranks=%d";
  char what[128];
  snprintf(what, sizeof what, head, tile, n, nranks);
  if (below && above)
    return muster__err(MUSTER_ETILE, "%s: nearest valid %" PRId64 " or %" PRId64, what, below,
                       above);
  if (above)
    return muster__err(MUSTER_ETILE, "%s: nearest valid %" PRId64 " (none smaller)", what,
                       above);
  return muster__err(MUSTER_ETILE,
                     "%s: nearest valid %" PRId64 " (a tile may not exceed the block width "
                     "ceil(n/ranks)=%" PRId64 ")",
                     what, below, S);
}

int64_t muster_layout_valid_tiles(int64_t n, int nranks, int64_t *tiles, int64_t cap) {
  int rc = check_shape("muster_layout_valid_tiles", n, nranks);
  if (rc < 0) return rc;
  if (cap < 0 || (cap > 0 && !tiles))
    return muster__err(MUSTER_EINVAL, "muster_layout_valid_tiles: tiles=%p cap=%" PRId64,
                       (void *)tiles, cap);
  int64_t S = muster_ceil_div(n, nranks), count = 0;
  for (int64_t t = 1; t <= S; t++) {
    if (!muster_layout_tile_valid(n, t, nranks)) continue;
    if (count < cap) tiles[count] = t;
    count++;
  }
  return count;
}

static int ranges_overlap(const char *a, size_t alen, const char *b, size_t blen) {
  return a < b + blen && b < a + alen;
}

/* Everything both relayout directions check before touching memory. */
static int relayout_prepare(const char *who, muster_dtype_t t, int64_t n, int64_t lda,
                            int64_t tile, int nranks, void *const *block, void *const *cyc,
                            muster_layout_geom_t *L, size_t *esz) {
  int rc = check_shape(who, n, nranks);
  if (rc < 0) return rc;
  *esz = muster_dtype_size(t);
  if (*esz == 0) return muster__err(MUSTER_EINVAL, "%s: unknown dtype %d", who, (int)t);
  if (lda < n) return muster__err(MUSTER_EINVAL, "%s: lda=%" PRId64 " < n=%" PRId64, who, lda, n);
  if (!block || !cyc) return muster__err(MUSTER_EINVAL, "%s: null shard array", who);
  rc = muster_layout_check_tile(n, tile, nranks);
  if (rc < 0) return muster__err_prefix(rc, "%s", who);
  muster_layout_geom_init(L, n, tile, nranks);
  for (int r = 0; r < nranks; r++) {
    if (!cyc[r]) return muster__err(MUSTER_EINVAL, "%s: cyclic shard of rank %d is null", who, r);
    if (!block[r] && muster_layout_block_ncols(L, r) > 0)
      return muster__err(MUSTER_EINVAL, "%s: block shard of rank %d is null", who, r);
  }
  /* Out of place only: an overlap would silently corrupt columns. */
  for (int r = 0; r < nranks; r++) {
    size_t blen = (size_t)(muster_layout_block_ncols(L, r) * lda) * *esz;
    for (int s = 0; s < nranks && blen; s++) {
      size_t clen = (size_t)(L->local_cols * lda) * *esz;
      if (ranges_overlap(block[r], blen, cyc[s], clen))
        return muster__err(MUSTER_EINVAL, "%s: block shard %d overlaps cyclic shard %d", who, r, s);
    }
  }
  return 0;
}

static char *col_ptr(void *base, int64_t col, int64_t lda, size_t esz) {
  return (char *)base + (size_t)(col * lda) * esz;
}

int muster_layout_block_to_cyclic(muster_dtype_t t, int64_t n, int64_t lda, int64_t tile,
                                  int nranks, void *const *block, void *const *cyc) {
  muster_layout_geom_t L;
  size_t esz;
  int rc = relayout_prepare("muster_layout_block_to_cyclic", t, n, lda, tile, nranks, block, cyc,
                            &L, &esz);
  if (rc < 0) return rc;
  muster_layout_iter_t it;
  muster_layout_run_t run;
  for (muster_layout_iter_start(&it, &L); muster_layout_iter_next(&it, &run);)
    muster_copy_cols(col_ptr(cyc[run.cyc_rank], run.cyc_col, lda, esz), lda,
                      col_ptr(block[run.blk_rank], run.blk_col, lda, esz), lda, n, run.ncols, esz);
  for (int r = 0; r < nranks; r++) {
    int64_t real = muster_layout_cyclic_real_cols(&L, r);
    muster_zero_cols(col_ptr(cyc[r], real, lda, esz), lda, n, L.local_cols - real, esz);
  }
  return 0;
}

int muster_layout_cyclic_to_block(muster_dtype_t t, int64_t n, int64_t lda, int64_t tile,
                                  int nranks, void *const *cyc, void *const *block) {
  muster_layout_geom_t L;
  size_t esz;
  int rc = relayout_prepare("muster_layout_cyclic_to_block", t, n, lda, tile, nranks, block, cyc,
                            &L, &esz);
  if (rc < 0) return rc;
  muster_layout_iter_t it;
  muster_layout_run_t run;
  for (muster_layout_iter_start(&it, &L); muster_layout_iter_next(&it, &run);)
    muster_copy_cols(col_ptr(block[run.blk_rank], run.blk_col, lda, esz), lda,
                      col_ptr(cyc[run.cyc_rank], run.cyc_col, lda, esz), lda, n, run.ncols, esz);
  return 0;
}

int muster_routine_outputs_flat(int routine, unsigned flags, int64_t m, int64_t n, int64_t *out) {
  muster_outputs_t o;
  int rc = muster_routine_outputs(routine, flags, m, n, &o);
  if (rc < 0) return muster__err(rc, "muster_routine_outputs: routine %d, flags %#x, m %" PRId64 ", n %" PRId64
                                 ": not a factorization it places", routine, flags, m, n);
  if (!out) return muster__err(MUSTER_EINVAL, "muster_routine_outputs_flat: out is NULL");
  out[0] = o.a_holds;
  out[1] = o.nparts;
  for (int i = 0; i < 2; i++) {
    out[2 + 4 * i] = o.part[i].what;
    out[3 + 4 * i] = o.part[i].rows;
    out[4 + 4 * i] = o.part[i].cols;
    out[5 + 4 * i] = o.part[i].offset;
  }
  out[10] = o.b_cols;
  out[11] = o.w_count;
  return 0;
}
