/* tests/unit/test_mp_svd.c - the cusolvermp provider's host rules for
 * gesvd and polar (svd.c): which releases run them (0.9 only, "needs
 * cuSOLVERMp 0.9.1" from 0.8 and from a version not known yet), polar's
 * m >= n, gesvd's power-of-two tile, the factor shapes (mp_svd_dims)
 * against muster_routine_outputs, and the memory rule counting U, V^H (or
 * H) and S on every grid position.  plan.c and version.c are host-only C,
 * linked in (tests/SConscript). */
#include <string.h>

#include "cusolvermp/plan.h"
#include "task.h"

static uint64_t lcg = 0x9e3779b97f4a7c15ull;
static int64_t rnd_in(int64_t lo, int64_t hi) {
  lcg = lcg * 6364136223846793005ull + 1442695040888963407ull;
  return lo + (int64_t)((lcg >> 33) % (uint64_t)(hi - lo + 1));
}

static mp_shape_t shape(muster_routine_t r, unsigned flags, int64_t m, int64_t n, int P, int Q, int64_t T) {
  mp_shape_t s;
  memset(&s, 0, sizeof s);
  s.routine = r;
  s.dtype = MUSTER_C64;
  s.n = n;
  s.m = m;
  s.flags = flags;
  s.nprow = P;
  s.npcol = Q;
  s.tile = T;
  return s;
}

TEST_IMPL(mp_svd_releases) {
  char why[200] = "";
  const mp_release_t *r08 = mp_release_of(MP_VER(0, 8, 0)), *r09 = mp_release_of(MP_VER(0, 9, 1));
  ASSERT(r08 && r09 && !r08->svd_polar && r09->svd_polar);
  ASSERT(mp_runs(MUSTER_GESVD) && mp_runs(MUSTER_POLAR));
  static const muster_routine_t both[] = {MUSTER_GESVD, MUSTER_POLAR};
  for (int i = 0; i < 2; i++) {
    ASSERT_EQ(mp_refused_grid(r08, both[i], 1, 1, 0, why, sizeof why), MUSTER_EUNSUPPORTED);
    ASSERT_STR_CONTAINS(why, "needs cuSOLVERMp 0.9.1");
    ASSERT_STR_CONTAINS(why, "the one loaded is 0.8");
    ASSERT_STR_CONTAINS(why, i ? "cusolverMpPolar" : "cusolverMpGesvd");
    ASSERT_EQ(mp_refused_grid(NULL, both[i], 2, 2, 0, why, sizeof why), MUSTER_EUNSUPPORTED);
    ASSERT_STR_CONTAINS(why, "not known yet");
    for (int P = 1; P <= 4; P++) /* every grid 0.9 runs, P x 1 included */
      for (int Q = 1; P * Q <= 4; Q++) ASSERT_EQ(mp_refused_grid(r09, both[i], P, Q, 0, why, sizeof why), 0);
  }
  /* polar: m >= n only (cuSOLVERMp's Polar), square and tall taken */
  mp_shape_t s = shape(MUSTER_POLAR, 0, 90, 100, 1, 2, 64);
  ASSERT_EQ(mp_refused(r09, &s, why, sizeof why), MUSTER_EUNSUPPORTED);
  ASSERT_STR_CONTAINS(why, "polar of a wide A (m 90 < n 100)");
  s.m = 100;
  ASSERT_EQ(mp_refused(r09, &s, why, sizeof why), 0);
  s.m = 0; /* estimate(): no m, read as n */
  ASSERT_EQ(mp_refused(r09, &s, why, sizeof why), 0);
  s = shape(MUSTER_GESVD, 0, 90, 100, 2, 2, 64); /* gesvd takes a wide A */
  ASSERT_EQ(mp_refused(r09, &s, why, sizeof why), 0);
  ASSERT_EQ(mp_refused(r08, &s, why, sizeof why), MUSTER_EUNSUPPORTED);
  /* both always factor a copy (Gesvd destroys A; nothing written on failure) */
  ASSERT(mp_factors_a_copy(MUSTER_GESVD, MUSTER_NO_VECTORS) && mp_factors_a_copy(MUSTER_POLAR, 0));
  /* gesvd's tile: a power of two (its eigensolver), polar's any */
  int64_t t = 0;
  ASSERT_EQ(mp_tile_resolve(MUSTER_GESVD, 1000, 96, NULL, &t, why, sizeof why), MUSTER_ETILE);
  ASSERT_STR_CONTAINS(why, "not a power of two");
  ASSERT_STR_CONTAINS(why, "gesvd");
  ASSERT_EQ(mp_tile_resolve(MUSTER_GESVD, 1000, 128, NULL, &t, why, sizeof why), 0);
  ASSERT_EQ(t, 128);
  ASSERT_EQ(mp_tile_resolve(MUSTER_POLAR, 1000, 96, NULL, &t, why, sizeof why), 0);
  ASSERT_EQ(t, 96);
  return 0;
}

/* mp_svd_dims gives what muster_routine_outputs places: the factor shaped
 * like A (U thin tall, V^H thin wide) and every part in B have the dims
 * svd.c computes; values only computes none. */
static void dims_match_outputs(muster_routine_t r, unsigned flags, int64_t m, int64_t n) {
  mp_shape_t s = shape(r, flags, m, n, 1, 1, 8);
  mp_svd_dims_t d = mp_svd_dims(&s);
  muster_outputs_t o;
  ASSERT_EQ(muster_routine_outputs(r, flags, m, n, &o), 0);
  int64_t k = m < n ? m : n;
  if (r == MUSTER_GESVD && (flags & MUSTER_NO_VECTORS)) {
    ASSERT(d.urows == 0 && d.ucols == 0 && d.vrows == 0 && d.vcols == 0);
    ASSERT_EQ(o.nparts, 0);
    ASSERT_EQ(o.w_count, k);
    return;
  }
  if (o.a_holds == MUSTER_FACTOR_U) ASSERT(d.urows == m && d.ucols == n);
  if (o.a_holds == MUSTER_FACTOR_VH) ASSERT(d.vrows == m && d.vcols == n);
  if (o.a_holds == MUSTER_FACTOR_UP) ASSERT(d.urows == 0 && m >= n); /* U_p over the copy of A */
  for (int p = 0; p < o.nparts; p++) {
    const muster_part_t *q = &o.part[p];
    if (q->what == MUSTER_FACTOR_U) ASSERT(d.urows == q->rows && d.ucols == q->cols);
    else ASSERT(d.vrows == q->rows && d.vcols == q->cols); /* V^H or H */
  }
}

TEST_IMPL(mp_svd_shapes_and_memory) {
  static const unsigned gflags[] = {0, MUSTER_FULL_MATRICES, MUSTER_NO_VECTORS};
  for (int trial = 0; trial < 300; trial++) {
    int64_t m = rnd_in(1, 80), n = rnd_in(1, 80);
    dims_match_outputs(MUSTER_GESVD, gflags[trial % 3], m, n);
    if (m >= n) dims_match_outputs(MUSTER_POLAR, 0, m, n);
  }
  /* the memory rule: A's copy, U and V^H (H) pieces, S; summed over the grid
   * each factor is counted exactly once */
  for (int trial = 0; trial < 200; trial++) {
    int P = (int)rnd_in(1, 3), Q = (int)rnd_in(1, 3);
    int64_t m = rnd_in(1, 300), n = rnd_in(1, 300), T = (int64_t)1 << rnd_in(0, 6);
    int polar = trial % 4 == 3 && m >= n;
    mp_shape_t s = shape(polar ? MUSTER_POLAR : MUSTER_GESVD, polar ? 0 : gflags[trial % 3], m, n, P, Q, T);
    mp_svd_dims_t d = mp_svd_dims(&s);
    uint64_t k = (uint64_t)(m < n ? m : n), vec = 0, mat = 0;
    for (int row = 0; row < P; row++)
      for (int col = 0; col < Q; col++) {
        mp_need_t need;
        mp_need(&s, row, col, &need);
        vec += need.vectors - (polar ? 0 : k * 4); /* S: k floats (c64) on every rank */
        mat += need.matrix;
        ASSERT(need.tau == 0 && need.rhs == 0 && need.pivots == 0);
        ASSERT_GE(need.workspace, 64ull << 20);
        ASSERT_EQ(need.total, need.matrix + need.vectors + need.scratch + need.workspace + MP_FIXED_BYTES);
      }
    ASSERT_EQ(mat, (uint64_t)(m * n) * 8);
    ASSERT_EQ(vec, (uint64_t)(d.urows * d.ucols + d.vrows * d.vcols) * 8);
  }
  /* the workspace bound grows with the matrix: QDWH's stacked QR */
  mp_shape_t small = shape(MUSTER_POLAR, 0, 2000, 1000, 2, 2, 256), big = small;
  big.m = 20000;
  big.n = 10000;
  mp_need_t a, b;
  mp_need(&small, 0, 0, &a);
  mp_need(&big, 0, 0, &b);
  ASSERT_GT(b.workspace, a.workspace + 3 * (uint64_t)(b.matrix - a.matrix));
  return 0;
}
