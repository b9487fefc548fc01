/* Property tests of the 1-D column block-cyclic layout (runtime/base/layout.{c,h}). */
#include "task.h"
#include "muster.h"
#include "muster/layout.h"

/* Small deterministic PRNG (xorshift64*), seeded per test so failures repeat. */
static uint64_t rng_state = 88172645463325252ull;
static uint64_t rnd(void) {
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  return rng_state * 2685821657736338717ull;
}
static int64_t rnd_in(int64_t lo, int64_t hi) { return lo + (int64_t)(rnd() % (uint64_t)(hi - lo + 1)); }

/* The jaxmg rule written the way jaxmg computes it (calculate_padding by
 * search, the shortcut T >= shard_size, the shard_size >= ndev guard), as
 * an independent reference for muster_layout_tile_valid. */
static int brute_valid(int64_t n, int64_t T, int R) {
  int64_t S = (n + R - 1) / R;
  if (T < 1 || T > S) return 0;
  if (T == S) return 1;
  if (S < R) return 0;
  int64_t pad = 0;
  while ((S + pad) % (T * R) != 0) pad++;
  return (R - 1) * pad <= S;
}

/* Element (row, gcol) of the test matrix: a unique 32-bit id in the first 4
 * bytes, then bytes derived from it, so every dtype size is covered. */
static void put_elem(unsigned char *p, size_t esz, int64_t n, int64_t row, int64_t gcol) {
  uint32_t id = (uint32_t)(gcol * n + row + 1);
  memcpy(p, &id, 4);
  for (size_t k = 4; k < esz; k++) p[k] = (unsigned char)(id * 31u + k * 7u);
}
static int elem_is(const unsigned char *p, size_t esz, int64_t n, int64_t row, int64_t gcol) {
  unsigned char want[16];
  put_elem(want, esz, n, row, gcol);
  return memcmp(p, want, esz) == 0;
}
static int elem_zero(const unsigned char *p, size_t esz) {
  for (size_t k = 0; k < esz; k++)
    if (p[k]) return 0;
  return 1;
}
#define GARBAGE 0xA5

/* One round trip block -> cyclic -> block for (dtype, n, tile, R, lda),
 * checking every cell of every buffer. */
static void round_trip(muster_dtype_t t, int64_t n, int64_t tile, int R, int64_t lda) {
  size_t esz = muster_dtype_size(t);
  muster_layout_geom_t L;
  ASSERT_OK(muster_layout_geom_init(&L, n, tile, R));
  ASSERT_EQ(muster_layout_local_cols(n, tile, R), L.local_cols);
  void *block[MUSTER_MAX_RANKS], *back[MUSTER_MAX_RANKS], *cyc[MUSTER_MAX_RANKS];
  for (int r = 0; r < R; r++) {
    int64_t bc = muster_layout_block_ncols(&L, r);
    size_t bbytes = (size_t)((bc ? bc : 1) * lda) * esz, cbytes = (size_t)(L.local_cols * lda) * esz;
    block[r] = malloc(bbytes);
    back[r] = malloc(bbytes);
    cyc[r] = malloc(cbytes);
    ASSERT(block[r] && back[r] && cyc[r]);
    memset(block[r], GARBAGE, bbytes);
    memset(back[r], GARBAGE, bbytes);
    memset(cyc[r], GARBAGE, cbytes);
    int64_t c0 = muster_layout_block_col0(&L, r);
    for (int64_t c = 0; c < bc; c++)
      for (int64_t i = 0; i < n; i++)
        put_elem((unsigned char *)block[r] + (size_t)(c * lda + i) * esz, esz, n, i, c0 + c);
  }
  ASSERT_OK(muster_layout_block_to_cyclic(t, n, lda, tile, R, block, cyc));

  /* Every real element exactly once, at its cyclic place; padding zero;
   * rows past n untouched. */
  unsigned char *seen = calloc((size_t)(n * n), 1);
  ASSERT(seen);
  for (int r = 0; r < R; r++) {
    int64_t real = muster_layout_cyclic_real_cols(&L, r);
    for (int64_t lc = 0; lc < L.local_cols; lc++) {
      int64_t g = muster_layout_cyclic_global(&L, r, lc);
      ASSERT_EQ(g >= 0, lc < real); /* padding is exactly the suffix */
      for (int64_t i = 0; i < lda; i++) {
        const unsigned char *p = (unsigned char *)cyc[r] + (size_t)(lc * lda + i) * esz;
        if (i >= n) {
          ASSERT(p[0] == GARBAGE && p[esz - 1] == GARBAGE);
        } else if (g < 0) {
          ASSERT(elem_zero(p, esz));
        } else {
          ASSERT(elem_is(p, esz, n, i, g));
          uint32_t id;
          memcpy(&id, p, 4);
          ASSERT(id >= 1 && id <= (uint32_t)(n * n));
          ASSERT_EQ(seen[id - 1], 0);
          seen[id - 1] = 1;
        }
      }
    }
  }
  for (int64_t k = 0; k < n * n; k++) ASSERT_EQ(seen[k], 1);
  free(seen);

  ASSERT_OK(muster_layout_cyclic_to_block(t, n, lda, tile, R, cyc, back));
  for (int r = 0; r < R; r++) {
    int64_t bc = muster_layout_block_ncols(&L, r);
    for (int64_t c = 0; c < bc; c++) {
      const unsigned char *a = (unsigned char *)block[r] + (size_t)(c * lda) * esz;
      const unsigned char *b = (unsigned char *)back[r] + (size_t)(c * lda) * esz;
      ASSERT(memcmp(a, b, (size_t)n * esz) == 0);
      for (int64_t i = n; i < lda; i++) ASSERT(b[(size_t)i * esz] == GARBAGE);
    }
    free(block[r]);
    free(back[r]);
    free(cyc[r]);
  }
}

TEST_IMPL(layout_round_trip_random) {
  rng_state ^= 0x1234;
  int cases = 0;
  while (cases < 400) {
    int R = (int)rnd_in(1, (rnd() % 8) ? 8 : 64);
    int64_t n = rnd_in(1, 160);
    int64_t tiles[512];
    int64_t nv = muster_layout_valid_tiles(n, R, tiles, 512);
    ASSERT_GE(nv, 1);
    int64_t tile = tiles[rnd() % (uint64_t)(nv < 512 ? nv : 512)];
    muster_dtype_t t = (muster_dtype_t)rnd_in(MUSTER_F32, MUSTER_C128);
    int64_t lda = n + ((rnd() & 1) ? 0 : rnd_in(1, 5));
    round_trip(t, n, tile, R, lda);
    cases++;
  }
  /* The drawn examples of docs/layout.md and jaxmg's, every dtype, packed. */
  for (int t = MUSTER_F32; t <= MUSTER_C128; t++) {
    round_trip((muster_dtype_t)t, 10, 2, 2, 10);
    round_trip((muster_dtype_t)t, 10, 2, 3, 10);
    round_trip((muster_dtype_t)t, 12, 2, 2, 12);
    round_trip((muster_dtype_t)t, 100, 4, 4, 100);
    round_trip((muster_dtype_t)t, 9, 3, 4, 11); /* last rank holds no column */
  }
  return 0;
}

/* The inline helpers on every tile (valid or not): maps are inverse, runs
 * cover each column once and never cross a tile or a block boundary. */
TEST_IMPL(layout_maps_and_runs) {
  for (int R = 1; R <= 9; R++) {
    for (int64_t n = 1; n <= 40; n++) {
      for (int64_t T = 1; T <= n + 2; T++) {
        muster_layout_geom_t L;
        ASSERT_OK(muster_layout_geom_init(&L, n, T, R));
        ASSERT_EQ(L.local_cols, ((((n + T - 1) / T) + R - 1) / R) * T);
        int64_t total_real = 0;
        for (int r = 0; r < R; r++) total_real += muster_layout_cyclic_real_cols(&L, r);
        ASSERT_EQ(total_real, n);
        int64_t total_block = 0;
        for (int r = 0; r < R; r++) {
          ASSERT_EQ(muster_layout_block_col0(&L, r), r * L.block_cols < n ? r * L.block_cols : n);
          total_block += muster_layout_block_ncols(&L, r);
        }
        ASSERT_EQ(total_block, n);
        for (int64_t g = 0; g < n; g++) {
          int rank;
          int64_t lc;
          muster_layout_cyclic_owner(&L, g, &rank, &lc);
          ASSERT_EQ(rank, (g / T) % R);
          ASSERT_LT(lc, muster_layout_cyclic_real_cols(&L, rank));
          ASSERT_EQ(muster_layout_cyclic_global(&L, rank, lc), g);
          muster_layout_block_owner(&L, g, &rank, &lc);
          ASSERT_EQ(muster_layout_block_col0(&L, rank) + lc, g);
          ASSERT_LT(lc, muster_layout_block_ncols(&L, rank));
        }
        ASSERT_EQ(muster_layout_cyclic_global(&L, 0, L.local_cols), -1);
        ASSERT_EQ(muster_layout_cyclic_global(&L, R, 0), -1);
        muster_layout_iter_t it;
        muster_layout_run_t run;
        int64_t next = 0;
        for (muster_layout_iter_start(&it, &L); muster_layout_iter_next(&it, &run);) {
          ASSERT_EQ(run.gcol, next);
          ASSERT_GE(run.ncols, 1);
          ASSERT_LE(run.ncols, T);
          int64_t last = run.gcol + run.ncols - 1;
          ASSERT_EQ(run.gcol / T, last / T);
          ASSERT_EQ(run.gcol / L.block_cols, last / L.block_cols);
          int rank;
          int64_t lc;
          muster_layout_cyclic_owner(&L, run.gcol, &rank, &lc);
          ASSERT_EQ(rank, run.cyc_rank);
          ASSERT_EQ(lc, run.cyc_col);
          muster_layout_block_owner(&L, run.gcol, &rank, &lc);
          ASSERT_EQ(rank, run.blk_rank);
          ASSERT_EQ(lc, run.blk_col);
          next = last + 1;
        }
        ASSERT_EQ(next, n);
      }
    }
  }
  return 0;
}

TEST_IMPL(layout_valid_tiles_brute_force) {
  int64_t tiles[4096];
  for (int R = 1; R <= 12; R++) {
    for (int64_t n = 1; n <= 300; n += (n < 60 ? 1 : 7)) {
      int64_t count = muster_layout_valid_tiles(n, R, tiles, 4096);
      ASSERT_GE(count, 1);
      int64_t k = 0, S = (n + R - 1) / R;
      for (int64_t T = 0; T <= S + 3; T++) {
        int want = brute_valid(n, T, R);
        ASSERT_EQ(muster_layout_tile_valid(n, T, R), want);
        ASSERT_EQ(muster_layout_check_tile(n, T, R) == 0, want);
        if (want) {
          ASSERT_LT(k, count);
          ASSERT_EQ(tiles[k], T);
          k++;
        }
      }
      ASSERT_EQ(k, count);
      ASSERT_EQ(tiles[count - 1], S); /* the block width is always valid */
      /* A short buffer gets the first cap tiles and the full count. */
      int64_t two[2] = {-1, -1};
      ASSERT_EQ(muster_layout_valid_tiles(n, R, two, 1), count);
      ASSERT_EQ(two[0], tiles[0]);
      ASSERT_EQ(two[1], -1);
      ASSERT_EQ(muster_layout_valid_tiles(n, R, NULL, 0), count);
    }
  }
  /* Known cases: jaxmg's examples (N=12, 2 GPUs, T_A=2; N=100, 4 GPUs, T_A=4
   * with 7 columns of padding), and every tile on one rank. */
  ASSERT_OK(muster_layout_check_tile(12, 2, 2));
  ASSERT_OK(muster_layout_check_tile(100, 4, 4));
  ASSERT_EQ(muster_layout_valid_tiles(10, 3, tiles, 16), 3);
  ASSERT(tiles[0] == 1 && tiles[1] == 2 && tiles[2] == 4);
  ASSERT_EQ(muster_layout_valid_tiles(37, 1, tiles, 64), 37);
  return 0;
}

/* The default tile (the runtime's fallback, the lapack provider's
 * choose_tile): the largest valid tile <= 256, else S, which happens only
 * from 18 ranks on (n = 4861: S = 271 and no valid tile <= 256). */
TEST_IMPL(layout_default_tile) {
  int fallbacks = 0;
  for (int R = 1; R <= MUSTER_MAX_RANKS; R += (R < 20 ? 1 : 11)) {
    for (int64_t n = 1; n <= 300 * (int64_t)R; n += 1 + n / 5) {
      int64_t S = (n + R - 1) / R, want = 0;
      for (int64_t T = 1; T <= S && T <= MUSTER_LAYOUT_DEFAULT_TILE_MAX; T++)
        if (brute_valid(n, T, R)) want = T;
      if (!want) fallbacks++;
      ASSERT_EQ(muster_layout_default_tile(n, R), want ? want : S);
    }
  }
  ASSERT_GT(fallbacks, 0);
  ASSERT_EQ(muster_layout_default_tile(4861, 18), 271);
  ASSERT_EQ(muster_layout_default_tile(4096, 2), 256);
  ASSERT_EQ(muster_layout_default_tile(0, 2), 0);
  ASSERT_EQ(muster_layout_default_tile(10, 0), 0);
  ASSERT_EQ(muster_layout_default_tile(10, MUSTER_MAX_RANKS + 1), 0);
  return 0;
}

TEST_IMPL(layout_tile_error_messages) {
  ASSERT_EQ(muster_layout_check_tile(1000, 300, 3), MUSTER_ETILE);
  ASSERT_STR_CONTAINS(muster_last_error(), "tile 300 invalid for n=1000, ranks=3: nearest valid 167 or 334");
  ASSERT_EQ(muster_layout_check_tile(1000, 200, 4), MUSTER_ETILE);
  ASSERT_STR_CONTAINS(muster_last_error(), "nearest valid 83 or 250");
  ASSERT_EQ(muster_layout_check_tile(10, 3, 3), MUSTER_ETILE);
  ASSERT_STR_CONTAINS(muster_last_error(), "nearest valid 2 or 4");
  /* Above the block width: only a smaller one exists. */
  ASSERT_EQ(muster_layout_check_tile(10, 6, 2), MUSTER_ETILE);
  ASSERT_STR_CONTAINS(muster_last_error(), "tile 6 invalid for n=10, ranks=2: nearest valid 5 (");
  ASSERT_EQ(muster_layout_check_tile(10, 0, 2), MUSTER_ETILE);
  ASSERT_STR_CONTAINS(muster_last_error(), "nearest valid 1 (none smaller)");
  /* The suggestions always agree with the brute-force list. */
  for (int R = 2; R <= 6; R++) {
    for (int64_t n = 1; n <= 200; n++) {
      int64_t S = (n + R - 1) / R;
      for (int64_t T = 1; T <= S; T++) {
        if (brute_valid(n, T, R)) continue;
        int64_t below = 0, above = 0;
        for (int64_t u = T - 1; u >= 1 && !below; u--)
          if (brute_valid(n, u, R)) below = u;
        for (int64_t u = T + 1; u <= S && !above; u++)
          if (brute_valid(n, u, R)) above = u;
        ASSERT_EQ(muster_layout_check_tile(n, T, R), MUSTER_ETILE);
        char want[160];
        if (below)
          snprintf(want, sizeof want, "nearest valid %" PRId64 " or %" PRId64, below, above);
        else
          snprintf(want, sizeof want, "nearest valid %" PRId64 " (none smaller)", above);
        ASSERT_STR_CONTAINS(muster_last_error(), want);
      }
    }
  }
  return 0;
}

TEST_IMPL(layout_bad_arguments) {
  double a[16] = {0}, c0[16], c1[16];
  void *block[2] = {a, a + 8}, *cyc[2] = {c0, c1};
  ASSERT_EQ(muster_layout_check_tile(0, 1, 1), MUSTER_EINVAL);
  ASSERT_EQ(muster_layout_check_tile(4, 1, 0), MUSTER_EINVAL);
  ASSERT_EQ(muster_layout_check_tile(4, 1, MUSTER_MAX_RANKS + 1), MUSTER_EINVAL);
  ASSERT_STR_CONTAINS(muster_last_error(), "ranks=65");
  ASSERT_EQ(muster_layout_local_cols(4, 0, 2), MUSTER_ETILE);
  ASSERT_EQ(muster_layout_local_cols(-1, 2, 2), MUSTER_EINVAL);
  ASSERT_EQ(muster_layout_local_cols(10, 3, 2), 6); /* defined for any tile >= 1 */
  ASSERT_EQ(muster_layout_valid_tiles(4, 2, NULL, 3), MUSTER_EINVAL);
  ASSERT_EQ(muster_layout_block_to_cyclic((muster_dtype_t)9, 4, 4, 1, 2, block, cyc), MUSTER_EINVAL);
  ASSERT_STR_CONTAINS(muster_last_error(), "dtype");
  ASSERT_EQ(muster_layout_block_to_cyclic(MUSTER_F64, 4, 3, 1, 2, block, cyc), MUSTER_EINVAL);
  ASSERT_STR_CONTAINS(muster_last_error(), "lda=3");
  ASSERT_EQ(muster_layout_block_to_cyclic(MUSTER_F64, 4, 4, 3, 2, block, cyc), MUSTER_ETILE);
  ASSERT_STR_CONTAINS(muster_last_error(), "muster_layout_block_to_cyclic: tile 3 invalid");
  void *nulls[2] = {c0, NULL};
  ASSERT_EQ(muster_layout_block_to_cyclic(MUSTER_F64, 4, 4, 1, 2, block, nulls), MUSTER_EINVAL);
  ASSERT_STR_CONTAINS(muster_last_error(), "rank 1");
  ASSERT_EQ(muster_layout_cyclic_to_block(MUSTER_F64, 4, 4, 1, 2, cyc, NULL), MUSTER_EINVAL);
  void *overlap[2] = {a + 4, c1};
  ASSERT_EQ(muster_layout_block_to_cyclic(MUSTER_F64, 4, 4, 1, 2, block, overlap), MUSTER_EINVAL);
  ASSERT_STR_CONTAINS(muster_last_error(), "overlaps");
  /* A rank with no block columns may pass NULL (n=3 over 4 ranks: 1,1,1,0). */
  double b0[3] = {1, 2, 3}, b1[3] = {4, 5, 6}, b2[3] = {7, 8, 9}, d[4][3];
  void *blk3[4] = {b0, b1, b2, NULL}, *cyc3[4] = {d[0], d[1], d[2], d[3]};
  ASSERT_OK(muster_layout_block_to_cyclic(MUSTER_F64, 3, 3, 1, 4, blk3, cyc3));
  ASSERT(d[1][2] == 6 && d[3][0] == 0 && d[3][2] == 0);
  return 0;
}

/* muster_layout_block_cols (what the Python adapters call) partitions
 * [0, n) in rank order with blocks of ceil(n/R), for many shapes, and
 * refuses bad arguments with a message. */
TEST_IMPL(layout_block_cols) {
  for (int R = 1; R <= MUSTER_MAX_RANKS; R += (R < 8 ? 1 : 7)) {
    for (int64_t n = 1; n <= 200; n += (n < 20 ? 1 : 17)) {
      int64_t next = 0, S = (n + R - 1) / R;
      for (int r = 0; r < R; r++) {
        int64_t c0 = -1, nc = -1;
        ASSERT_OK(muster_layout_block_cols(n, R, r, &c0, &nc));
        ASSERT_EQ(c0, next < n ? next : n);
        ASSERT(nc >= 0 && nc <= S);
        next = c0 + nc;
      }
      ASSERT_EQ(next, n);
    }
  }
  int64_t c0, nc;
  ASSERT_EQ(muster_layout_block_cols(10, 2, 2, &c0, &nc), MUSTER_EINVAL);
  ASSERT_STR_CONTAINS(muster_last_error(), "rank 2");
  ASSERT_EQ(muster_layout_block_cols(0, 2, 0, &c0, &nc), MUSTER_EINVAL);
  ASSERT_EQ(muster_layout_block_cols(10, 65, 0, &c0, &nc), MUSTER_EINVAL);
  ASSERT_EQ(muster_layout_block_cols(10, 2, 0, NULL, &nc), MUSTER_EINVAL);
  return 0;
}

/* Where muster_layout_block_to_cyclic put each local column of rank r's
 * cyclic shard (an f64 n x n matrix whose column g holds g + 1, 0 for
 * padding) against muster_layout_cyclic_cols for that rank. */
static int cyclic_cols_match_relayout(int64_t n, int64_t T, int R) {
  int64_t lc = muster_layout_local_cols(n, T, R), S = (n + R - 1) / R;
  double *blk = calloc((size_t)(S * R * n), sizeof *blk), *cyc = calloc((size_t)(lc * R * n), sizeof *cyc);
  int64_t *g = malloc((size_t)lc * sizeof *g);
  void *bp[MUSTER_MAX_RANKS], *cp[MUSTER_MAX_RANKS];
  int ok = blk && cyc && g;
  for (int64_t c = 0; ok && c < n; c++)
    for (int64_t row = 0; row < n; row++) blk[c * n + row] = (double)(c + 1);
  for (int r = 0; r < R; r++) {
    bp[r] = blk + (size_t)(r * S * n);
    cp[r] = cyc + (size_t)(r * lc * n);
  }
  ok = ok && muster_layout_block_to_cyclic(MUSTER_F64, n, n, T, R, bp, cp) == 0;
  for (int r = 0; ok && r < R; r++) {
    ok = muster_layout_cyclic_cols(n, T, R, r, g, lc) == lc;
    for (int64_t l = 0; ok && l < lc; l++) ok = ((double *)cp[r])[l * n] == (double)(g[l] + 1);
  }
  free(blk);
  free(cyc);
  free(g);
  return ok;
}

/* muster_layout_cyclic_cols (what muster_jax's cyclic_1d_layout calls):
 * for any tile, the ranks' real columns cover [0, n) exactly once, each
 * rank's in increasing order with the padding a suffix of real_cols; for
 * valid tiles it agrees with the relayout; bad arguments are refused. */
TEST_IMPL(layout_cyclic_cols) {
  int64_t g[256];
  for (int R = 1; R <= 9; R++)
    for (int64_t n = 1; n <= 40; n++)
      for (int64_t T = 1; T <= n; T++) {
        unsigned char seen[40] = {0};
        muster_layout_geom_t L;
        ASSERT_OK(muster_layout_geom_init(&L, n, T, R));
        for (int r = 0; r < R; r++) {
          ASSERT_EQ(muster_layout_cyclic_cols(n, T, R, r, g, 256), L.local_cols);
          int64_t real = muster_layout_cyclic_real_cols(&L, r), prev = -1;
          for (int64_t l = 0; l < L.local_cols; l++) {
            ASSERT_EQ(g[l] >= 0, l < real);
            if (g[l] < 0) continue;
            ASSERT(g[l] > prev && g[l] < n && !seen[g[l]]);
            seen[g[l]] = 1;
            prev = g[l];
          }
        }
        for (int64_t c = 0; c < n; c++) ASSERT(seen[c]);
        if (muster_layout_tile_valid(n, T, R)) ASSERT(cyclic_cols_match_relayout(n, T, R));
      }
  /* cap: only cap entries written, the count still returned */
  g[2] = 777;
  ASSERT_EQ(muster_layout_cyclic_cols(10, 2, 2, 1, g, 2), 6);
  ASSERT_EQ(g[0], 2);
  ASSERT_EQ(g[1], 3);
  ASSERT_EQ(g[2], 777);
  ASSERT_EQ(muster_layout_cyclic_cols(10, 2, 2, 0, NULL, 0), 6);
  ASSERT_EQ(muster_layout_cyclic_cols(10, 2, 2, 2, g, 256), MUSTER_EINVAL);
  ASSERT_STR_CONTAINS(muster_last_error(), "rank 2");
  ASSERT_EQ(muster_layout_cyclic_cols(10, 2, 2, 0, NULL, 4), MUSTER_EINVAL);
  ASSERT_EQ(muster_layout_cyclic_cols(10, 2, 2, 0, g, -1), MUSTER_EINVAL);
  ASSERT_EQ(muster_layout_cyclic_cols(10, 0, 2, 0, g, 256), MUSTER_ETILE);
  ASSERT_EQ(muster_layout_cyclic_cols(0, 2, 2, 0, g, 256), MUSTER_EINVAL);
  ASSERT_EQ(muster_layout_cyclic_cols(10, 2, 65, 0, g, 256), MUSTER_EINVAL);
  return 0;
}

/* muster_layout_numroc against counting the blocks one by one, and the
 * 1-D layouts expressed as dists hold the same columns as the 1-D rules. */
TEST_IMPL(layout_numroc_and_dists) {
  for (int64_t extent = 0; extent <= 60; extent++)
    for (int64_t block = 1; block <= 9; block++)
      for (int P = 1; P <= 5; P++) {
        int64_t sum = 0;
        for (int c = 0; c < P; c++) {
          int64_t count = 0;
          for (int64_t i = 0; i < extent; i++) count += (i / block) % P == c;
          ASSERT_EQ(muster_layout_numroc(extent, block, c, P), count);
          sum += count;
        }
        ASSERT_EQ(sum, extent);
      }
  for (int R = 1; R <= 6; R++)
    for (int64_t n = 1; n <= 40; n++) {
      muster_layout_geom_t L;
      ASSERT_OK(muster_layout_geom_init(&L, n, 1, R));
      for (int r = 0; r < R; r++) {
        muster_dist_t d = muster_layout_block_dist(n, R, r, n);
        ASSERT_EQ(muster_layout_numroc(d.n, d.nb, d.mycol, d.npcol), muster_layout_block_ncols(&L, r));
        ASSERT_EQ(muster_layout_numroc(d.m, d.mb, d.myrow, d.nprow), n);
      }
      for (int64_t T = 1; T <= n; T++) {
        muster_layout_geom_t C;
        ASSERT_OK(muster_layout_geom_init(&C, n, T, R));
        for (int r = 0; r < R; r++) {
          muster_dist_t d = muster_layout_cyclic_dist(n, T, R, r, n);
          ASSERT_EQ(muster_layout_numroc(d.n, d.nb, d.mycol, d.npcol), muster_layout_cyclic_real_cols(&C, r));
        }
      }
    }
  return 0;
}

/* muster_routine_writes_a: the caller's A holds an output after the call
 * exactly where types.h and layout.h say one lands there (the staging of
 * the one-node route and cusolverdn's scatter skip the others). */
TEST_IMPL(layout_routine_writes_a) {
  static const struct {
    int routine;
    unsigned flags;
    int64_t m;
    int want;
  } cases[] = {
      {MUSTER_POTRS, 0, 9, 1},         {MUSTER_POTRS, MUSTER_NO_FACTOR, 9, 0},
      {MUSTER_POTRS, MUSTER_LOGDET, 9, 1}, {MUSTER_POTRI, 0, 9, 1},
      {MUSTER_SYEVD, 0, 9, 1},         {MUSTER_SYEVD, MUSTER_NO_VECTORS, 9, 0},
      {MUSTER_GETRS, 0, 9, 0},         {MUSTER_GETRS, MUSTER_NO_FACTOR, 9, 0},
      {MUSTER_GELS, 0, 20, 0},         {MUSTER_GEQRF, 0, 20, 1}, /* Q */
      {MUSTER_GEQRF, MUSTER_FULL_MATRICES, 20, 1},              /* R */
      {MUSTER_GESVD, 0, 20, 1},        {MUSTER_GESVD, 0, 5, 1},  /* U; V^H of a wide A */
      {MUSTER_GESVD, MUSTER_FULL_MATRICES, 20, 0},              /* U and V^H both in B */
      {MUSTER_GESVD, MUSTER_NO_VECTORS, 20, 0}, {MUSTER_POLAR, 0, 20, 1},
      {MUSTER_POLAR, MUSTER_NO_VECTORS, 20, 0}, /* a flag polar refuses: nothing written */
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    int got = muster_routine_writes_a(cases[i].routine, cases[i].flags, cases[i].m, 9);
    if (got != cases[i].want)
      fprintf(stderr, "%s flags 0x%x m=%lld: %d, want %d\n", muster_routine_str((muster_routine_t)cases[i].routine),
              cases[i].flags, (long long)cases[i].m, got, cases[i].want);
    ASSERT_EQ(got, cases[i].want);
  }
  return 0;
}
