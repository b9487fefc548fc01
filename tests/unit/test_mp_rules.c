/* tests/unit/test_mp_rules.c - the cusolvermp provider's host rules: the
 * grid, tile and potrs panel rules; the memory rule (potrs, getrs, gels);
 * where gels and getrs may run on more than one process.  The
 * redistribution plans are test_mp_plan.c's.  plan.c is host-only C,
 * linked in (tests/SConscript). */
#include "cusolvermp/plan.h"
#include "task.h"

TEST_IMPL(mp_plan_grid_tile_panel) {
  char why[200];
  int P, Q;
  static const int want[][3] = {{1, 1, 1}, {2, 1, 2}, {3, 1, 3}, {4, 2, 2}, {6, 2, 3}, {8, 2, 4}, {9, 3, 3},
                                {12, 3, 4}, {64, 8, 8}, {7, 1, 7}};
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
    ASSERT_EQ(mp_grid_shape(MUSTER_POTRS, want[i][0], NULL, &P, &Q, why, sizeof why), 0);
    ASSERT_EQ(P, want[i][1]);
    ASSERT_EQ(Q, want[i][2]);
    /* geqrf's default: one process row (0.8's QR is right there only),
     * and no default grid of any routine is refused by the release rules */
    ASSERT_EQ(mp_grid_shape(MUSTER_GEQRF, want[i][0], NULL, &P, &Q, why, sizeof why), 0);
    ASSERT(P == 1 && Q == want[i][0]);
    ASSERT_EQ(mp_refused_grid(mp_release_of(MP_VER(0, 8, 0)), MUSTER_GEQRF, P, Q, 0, why, sizeof why), 0);
  }
  ASSERT_EQ(mp_grid_shape(MUSTER_GEQRF, 4, "2x2", &P, &Q, why, sizeof why), 0); /* the user's grid wins */
  ASSERT(P == 2 && Q == 2);
  ASSERT_EQ(mp_grid_shape(MUSTER_POTRS, 2, "2x1", &P, &Q, why, sizeof why), 0);
  ASSERT(P == 2 && Q == 1);
  ASSERT_EQ(mp_grid_shape(MUSTER_POTRS, 2, "01x2", &P, &Q, why, sizeof why), 0);
  ASSERT(P == 1 && Q == 2);
  /* the runtime's number rule (muster/parse.h): sscanf took " 1x2",
   * "+1x2" and "1x +2", and "" was the default */
  static const char *bad[] = {"2x2", "x2", "2x", "1x2x", "0x2", "2*1", "-1x-2", "1x2 ", "",
                              " 1x2", "+1x2", "1x +2", "1x2\n", "4294967297x2"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    ASSERT_EQ(mp_grid_shape(MUSTER_POTRS, 2, bad[i], &P, &Q, why, sizeof why), MUSTER_EINVAL);
    ASSERT_STR_CONTAINS(why, "MUSTER_MP_GRID");
  }
  int64_t t;
  ASSERT_EQ(mp_tile_resolve(MUSTER_POTRS, 1000, 0, NULL, &t, why, sizeof why), 0);
  ASSERT_EQ(t, 64);
  ASSERT_EQ(mp_tile_resolve(MUSTER_POTRS, 32768, 0, NULL, &t, why, sizeof why), 0);
  ASSERT_EQ(t, 1024);
  for (int64_t n = 1; n < 100000; n = n * 2 + 1) { /* every default is a power of two */
    ASSERT_EQ(mp_tile_resolve(MUSTER_SYEVD, n, 0, NULL, &t, why, sizeof why), 0);
    ASSERT_EQ(t & (t - 1), 0);
  }
  ASSERT_EQ(mp_tile_resolve(MUSTER_POTRS, 1000, 300, "128", &t, why, sizeof why), 0);
  ASSERT_EQ(t, 300); /* the call's tile first */
  ASSERT_EQ(mp_tile_resolve(MUSTER_POTRS, 1000, 0, "128", &t, why, sizeof why), 0);
  ASSERT_EQ(t, 128);
  ASSERT_EQ(mp_tile_resolve(MUSTER_SYEVD, 1000, 300, NULL, &t, why, sizeof why), MUSTER_ETILE);
  ASSERT_STR_CONTAINS(why, "not a power of two");
  ASSERT_EQ(mp_tile_resolve(MUSTER_SYEVD, 1000, 0, "96", &t, why, sizeof why), MUSTER_ETILE);
  ASSERT_STR_CONTAINS(why, "MUSTER_MP_TILE 96");
  ASSERT_EQ(mp_tile_resolve(MUSTER_POTRS, 1000, 0, "12k", &t, why, sizeof why), MUSTER_EINVAL);
  ASSERT_EQ(mp_tile_resolve(MUSTER_POTRS, 1000, 0, "0", &t, why, sizeof why), MUSTER_EINVAL);
  static const char *bad_tile[] = {"", " 64", "+64", "64 ", "0x40", NULL};
  for (int i = 0; bad_tile[i]; i++) {
    ASSERT_EQ(mp_tile_resolve(MUSTER_POTRS, 1000, 0, bad_tile[i], &t, why, sizeof why), MUSTER_EINVAL);
    ASSERT_STR_CONTAINS(why, "MUSTER_MP_TILE");
    /* a bad value is refused even where the call's tile wins */
    ASSERT_EQ(mp_tile_resolve(MUSTER_POTRS, 1000, 300, bad_tile[i], &t, why, sizeof why), MUSTER_EINVAL);
  }
  ASSERT_EQ(mp_tile_resolve(MUSTER_POTRS, 1000, MUSTER_LAYOUT_MAX_N + 1, NULL, &t, why, sizeof why), MUSTER_ETILE);

  int64_t w;
  const mp_release_t *r08 = mp_release_of(MP_VER(0, 8, 0));
  ASSERT(r08);
  ASSERT_EQ(mp_potrs_panel(r08, NULL, 5, &w, why, sizeof why), 0);
  ASSERT_EQ(w, 1); /* the documented NRHS = 1 */
  ASSERT_EQ(mp_potrs_panel(r08, "all", 5, &w, why, sizeof why), 0);
  ASSERT_EQ(w, 5);
  ASSERT_EQ(mp_potrs_panel(r08, "64", 5, &w, why, sizeof why), 0);
  ASSERT_EQ(w, 5);
  ASSERT_EQ(mp_potrs_panel(r08, "3", 5, &w, why, sizeof why), 0);
  ASSERT_EQ(w, 3);
  ASSERT_EQ(mp_potrs_panel(NULL, NULL, 5, &w, why, sizeof why), 0);
  ASSERT_EQ(w, 1);
  ASSERT_EQ(mp_potrs_panel(r08, "0", 5, &w, why, sizeof why), MUSTER_EINVAL);
  ASSERT_EQ(mp_potrs_panel(r08, "many", 5, &w, why, sizeof why), MUSTER_EINVAL);
  ASSERT_STR_CONTAINS(why, "MUSTER_MP_POTRS_NRHS: 'many' is not a count (1 or more) or 'all'");
  static const char *bad_nrhs[] = {"", " 3", "+3", "3 ", "ALL", "-1", NULL};
  for (int i = 0; bad_nrhs[i]; i++) {
    ASSERT_EQ(mp_potrs_panel(r08, bad_nrhs[i], 5, &w, why, sizeof why), MUSTER_EINVAL);
    ASSERT_STR_CONTAINS(why, "MUSTER_MP_POTRS_NRHS");
  }
  return 0;
}

TEST_IMPL(mp_plan_memory_rule) {
  mp_shape_t s = {MUSTER_POTRS, MUSTER_F64, 65536, 1, 0, 1, 2, 1024, 256ll << 20, 0, 0, 0, 0};
  mp_need_t need;
  mp_need(&s, 0, 0, &need);
  ASSERT_EQ(need.matrix, 65536ull * 32768 * 8); /* half the matrix on each of 1 x 2 */
  ASSERT_EQ(need.vectors, 0);
  ASSERT_EQ(need.rhs, 65536ull * 8);             /* the one rhs column lives on grid column 0 */
  mp_need(&s, 0, 1, &need);
  ASSERT_EQ(need.rhs, 0);                          /* grid column 1 holds no rhs */
  ASSERT_EQ(need.scratch, 256ull << 20);
  ASSERT_EQ(need.total, need.matrix + need.rhs + need.scratch + need.workspace + MP_FIXED_BYTES);
  s.in_place = 1;
  mp_need(&s, 0, 0, &need);
  ASSERT_EQ(need.matrix, 0);
  /* syevd keeps a second piece for the eigenvectors and a bigger workspace */
  mp_shape_t e = {MUSTER_SYEVD, MUSTER_C128, 10000, 0, 0, 2, 1, 512, 0, 0, 0, 0, 0};
  mp_need(&e, 0, 0, &need);
  uint64_t piece = (uint64_t)muster_layout_numroc(10000, 512, 0, 2) * 10000 * 16;
  ASSERT_EQ(need.matrix, piece);
  ASSERT_EQ(need.vectors, piece + 10000 * 8);
  ASSERT_GE(need.workspace, 2 * piece);
  ASSERT_EQ(need.scratch, 2ull * 10000 * 16); /* no setting: two columns */
  /* grid row 1 of 2 x 1 holds less when the tiles do not split evenly */
  mp_need_t row1;
  mp_need(&e, 1, 0, &row1);
  ASSERT_LT(row1.matrix, need.matrix);
  return 0;
}

/* getrs: B as potrs's, the row pivots (local rows + one tile of int64 per
 * rank), and A copied unless MUSTER_NO_FACTOR lets it be factored in
 * place. */
TEST_IMPL(mp_plan_getrs_memory) {
  mp_shape_t s = {MUSTER_GETRS, MUSTER_C64, 5000, 3, 0, 2, 2, 256, 64ll << 20, 0, 0, 0, 0};
  mp_need_t need;
  for (int row = 0; row < 2; row++) {
    mp_need(&s, row, 0, &need);
    int64_t lr = muster_layout_numroc(5000, 256, row, 2);
    ASSERT_EQ(need.pivots, (uint64_t)(lr + 256) * 8);
    ASSERT_EQ(need.rhs, (uint64_t)lr * 3 * 8); /* the 3 columns: one tile, on grid column 0 */
    ASSERT_EQ(need.matrix, (uint64_t)lr * muster_layout_numroc(5000, 256, 0, 2) * 8);
    ASSERT_EQ(need.total, need.matrix + need.rhs + need.pivots + need.scratch + need.workspace + MP_FIXED_BYTES);
  }
  s.routine = MUSTER_POTRS;
  mp_need(&s, 0, 0, &need);
  ASSERT_EQ(need.pivots, 0);
  ASSERT(mp_factors_a_copy(MUSTER_GETRS, 0));
  ASSERT(!mp_factors_a_copy(MUSTER_GETRS, MUSTER_NO_FACTOR));
  ASSERT(!mp_factors_a_copy(MUSTER_POTRS, 0));
  return 0;
}

/* gels's memory: A's piece, B's piece and the relayout scratch grow with m;
 * tau is one scalar per local column; A is always copied (its second
 * pass, Gels, re-reads the caller's A); m = 0 is read as n. */
TEST_IMPL(mp_plan_gels_memory) {
  mp_shape_t s = {MUSTER_GELS, MUSTER_F64, 3000, 4, 0, 2, 2, 256, 0, 0, 6000, 0, 0};
  mp_need_t need, sq;
  for (int row = 0; row < 2; row++)
    for (int col = 0; col < 2; col++) {
      mp_need(&s, row, col, &need);
      int64_t lr = muster_layout_numroc(6000, 256, row, 2), lc = muster_layout_numroc(3000, 256, col, 2);
      ASSERT_EQ(need.matrix, (uint64_t)(lr * lc) * 8);
      ASSERT_EQ(need.rhs, (uint64_t)(lr * muster_layout_numroc(4, 256, col, 2)) * 8);
      ASSERT_EQ(need.tau, (uint64_t)lc * 8);
      ASSERT_EQ(need.pivots, 0);
      ASSERT_EQ(need.scratch, 2ull * 6000 * 8); /* two columns of m rows */
      ASSERT_EQ(need.total, need.matrix + need.rhs + need.tau + need.scratch + need.workspace + MP_FIXED_BYTES);
    }
  mp_shape_t t = s;
  t.m = 0; /* read as n */
  mp_need(&t, 0, 0, &sq);
  mp_need(&s, 0, 0, &need);
  ASSERT_EQ(sq.matrix, (uint64_t)muster_layout_numroc(3000, 256, 0, 2) * muster_layout_numroc(3000, 256, 0, 2) * 8);
  ASSERT_GT(need.workspace, sq.workspace); /* the panel buffers hold m rows */
  ASSERT_EQ(mp_rows(&t), 3000);
  ASSERT_EQ(mp_rows(&s), 6000);
  ASSERT(mp_factors_a_copy(MUSTER_GELS, 0));
  ASSERT(mp_factors_a_copy(MUSTER_GELS, MUSTER_NO_FACTOR));
  return 0;
}

/* gels on more than one process, and getrs on a P x 1 grid, only where the
 * release was seen right there (version.c): neither release so far; other
 * grids and routines always */
TEST_IMPL(mp_plan_gels_on_grids) {
  char why[200] = "";
  const mp_release_t *r08 = mp_release_of(MP_VER(0, 8, 0)), *r09 = mp_release_of(MP_VER(0, 9, 1));
  ASSERT(r08 && r09 && !r08->qr_grids && !r09->qr_grids && !r08->lu_columns && !r09->lu_columns);
  ASSERT_EQ(mp_refused_grid(r08, MUSTER_GELS, 1, 2, 0, why, sizeof why), MUSTER_EUNSUPPORTED);
  ASSERT(strstr(why, "gels on 2 processes") && strstr(why, "0.8"));
  ASSERT_EQ(mp_refused_grid(r08, MUSTER_GELS, 2, 1, 0, why, sizeof why), MUSTER_EUNSUPPORTED);
  ASSERT_EQ(mp_refused_grid(NULL, MUSTER_GELS, 2, 2, 0, why, sizeof why), MUSTER_EUNSUPPORTED);
  ASSERT(strstr(why, "not known yet"));
  ASSERT_EQ(mp_refused_grid(r08, MUSTER_GELS, 1, 1, 0, why, sizeof why), 0);
  ASSERT_EQ(mp_refused_grid(r08, MUSTER_GETRS, 2, 1, 0, why, sizeof why), MUSTER_EUNSUPPORTED);
  ASSERT(strstr(why, "getrs on a 2x1 grid") && strstr(why, "MUSTER_MP_GRID"));
  ASSERT_EQ(mp_refused_grid(r09, MUSTER_GETRS, 4, 1, 0, why, sizeof why), MUSTER_EUNSUPPORTED);
  int ok[][2] = {{1, 1}, {1, 2}, {2, 2}, {1, 4}, {2, 4}};
  for (int g = 0; g < 5; g++) ASSERT_EQ(mp_refused_grid(r08, MUSTER_GETRS, ok[g][0], ok[g][1], 0, why, sizeof why), 0);
  muster_routine_t others[] = {MUSTER_POTRS, MUSTER_SYEVD};
  for (int i = 0; i < 2; i++) {
    ASSERT_EQ(mp_refused_grid(r08, others[i], 2, 2, 0, why, sizeof why), 0);
    ASSERT_EQ(mp_refused_grid(r08, others[i], 4, 1, 0, why, sizeof why), 0);
  }
  mp_release_t seen = *r08;
  seen.qr_grids = seen.lu_columns = 1;
  ASSERT_EQ(mp_refused_grid(&seen, MUSTER_GELS, 2, 2, 0, why, sizeof why), 0);
  ASSERT_EQ(mp_refused_grid(&seen, MUSTER_GETRS, 2, 1, 0, why, sizeof why), 0);
  return 0;
}

/* A non-blocking communicator (MUSTER_MP_NCCL_BLOCKING=0): refused on more
 * than one process by a release whose solvers failed on one (0.8), after
 * the grid rules; one process, a blocking one, 0.9 (not tried) and an
 * unknown release are not refused for it */
TEST_IMPL(mp_plan_nonblocking_refused) {
  char why[300] = "";
  const mp_release_t *r08 = mp_release_of(MP_VER(0, 8, 0)), *r09 = mp_release_of(MP_VER(0, 9, 1));
  ASSERT(r08 && r09 && r08->nonblocking_fails && !r09->nonblocking_fails);
  mp_shape_t s = {.routine = MUSTER_POTRS, .n = 1000, .nprow = 1, .npcol = 2, .nonblocking = 1};
  ASSERT_EQ(mp_refused(r08, &s, why, sizeof why), MUSTER_EUNSUPPORTED);
  ASSERT(strstr(why, "MUSTER_MP_NCCL_BLOCKING=0) on 2 processes") && strstr(why, "0.8"));
  s.nprow = 2;
  ASSERT_EQ(mp_refused(r08, &s, why, sizeof why), MUSTER_EUNSUPPORTED);
  ASSERT(strstr(why, "on 4 processes"));
  ASSERT_EQ(mp_refused(r09, &s, why, sizeof why), 0);
  ASSERT_EQ(mp_refused(NULL, &s, why, sizeof why), 0);
  s.nonblocking = 0;
  ASSERT_EQ(mp_refused(r08, &s, why, sizeof why), 0);
  s.nonblocking = 1;
  s.nprow = s.npcol = 1;
  ASSERT_EQ(mp_refused(r08, &s, why, sizeof why), 0);
  /* the grid rules come first: their reason, not this one */
  s.routine = MUSTER_GETRS;
  s.nprow = 2;
  ASSERT_EQ(mp_refused(r08, &s, why, sizeof why), MUSTER_EUNSUPPORTED);
  ASSERT(strstr(why, "getrs on a 2x1 grid"));
  return 0;
}
