/* tests/unit/test_mp_plan.c - the cusolvermp provider's host arithmetic:
 * redistribution plans run on host buffers between random 2-D
 * block-cyclic layouts (row- and column-major rank numbering, any block,
 * any grid, chunked through a small scratch as the provider does with NCCL
 * send/recv), and there and back.  The grid, tile and potrs panel rules and
 * the memory rule: test_mp_rules.c.  plan.c is host-only C, linked in
 * (tests/SConscript). */
#include <stdlib.h>

#include "cusolvermp/plan.h"
#include "task.h"

static uint64_t rng_state = 88172645463325252ull;
static uint64_t rnd(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return rng_state;
}
static int64_t rnd_in(int64_t lo, int64_t hi) { return lo + (int64_t)(rnd() % (uint64_t)(hi - lo + 1)); }

static double val(int64_t i, int64_t j) { return (double)i * 1e5 + (double)j + 0.5; }

/* Global index of local index l on coordinate c of np, blocks of b. */
static int64_t global_of(int64_t l, int64_t b, int c, int np) { return (l / b) * b * np + (int64_t)c * b + l % b; }

typedef struct ranks {
  int R;
  mp_layout_t L;
  int64_t rows[MUSTER_MAX_RANKS], cols[MUSTER_MAX_RANKS], ld[MUSTER_MAX_RANKS];
  double *buf[MUSTER_MAX_RANKS];
} ranks_t;

/* Every rank's local piece of L (ld = local rows + pad), filled with the
 * global values (fill) or with -1. */
static void ranks_alloc(ranks_t *k, const mp_layout_t *L, int R, int fill) {
  k->R = R;
  k->L = *L;
  for (int r = 0; r < R; r++) {
    int row, col;
    mp_coords(L, r, &row, &col);
    k->rows[r] = mp_local_rows(L, row);
    k->cols[r] = mp_local_cols(L, col);
    k->ld[r] = k->rows[r] + rnd_in(0, 3);
    if (k->ld[r] < 1) k->ld[r] = 1;
    size_t cnt = (size_t)(k->ld[r] * (k->cols[r] ? k->cols[r] : 1));
    k->buf[r] = malloc(cnt * sizeof(double));
    ASSERT(k->buf[r]);
    for (size_t e = 0; e < cnt; e++) k->buf[r][e] = -1.0;
    for (int64_t j = 0; fill && j < k->cols[r]; j++)
      for (int64_t i = 0; i < k->rows[r]; i++)
        k->buf[r][i + j * k->ld[r]] =
            val(global_of(i, L->mb, row, L->nprow), global_of(j, L->nb, col, L->npcol));
  }
}

static void ranks_free(ranks_t *k) {
  for (int r = 0; r < k->R; r++) free(k->buf[r]);
}

/* Every local entry of k holds its global value. */
static void ranks_check(const ranks_t *k) {
  for (int r = 0; r < k->R; r++) {
    int row, col;
    mp_coords(&k->L, r, &row, &col);
    for (int64_t j = 0; j < k->cols[r]; j++)
      for (int64_t i = 0; i < k->rows[r]; i++) {
        double want = val(global_of(i, k->L.mb, row, k->L.nprow), global_of(j, k->L.nb, col, k->L.npcol));
        if (k->buf[r][i + j * k->ld[r]] != want) {
          fprintf(stderr, "rank %d local (%" PRId64 ", %" PRId64 "): %g, want %g\n", r, i, j,
                  k->buf[r][i + j * k->ld[r]], want);
          ASSERT(0);
        }
      }
  }
}

/* Run plans[] (one per rank) from `from` into `to` the way the provider
 * does: for every ordered pair, column chunks through cap elements. */
static void run_plans(const mp_plan_t *plans, const ranks_t *from, ranks_t *to, int64_t cap) {
  int R = from->R;
  double *stage = malloc((size_t)(cap + from->L.m + 1) * sizeof(double));
  ASSERT(stage);
  for (int a = 0; a < R; a++)
    for (int b = 0; b < R; b++) {
      const mp_plan_t *pa = &plans[a], *pb = &plans[b];
      mp_span_t sr = pa->send_rows[b], sc = pa->send_cols[b], rr = pb->recv_rows[a], rc = pb->recv_cols[a];
      ASSERT_EQ(sr.len, rr.len);
      ASSERT_EQ(sc.len, rc.len);
      int64_t nch = mp_nchunks(sr.len, sc.len, cap);
      ASSERT_EQ(nch, mp_nchunks(rr.len, rc.len, cap));
      int64_t k = mp_chunk_cols(sr.len, sc.len, cap);
      for (int64_t c0 = 0, ch = 0; ch < nch; ch++, c0 += k) {
        int64_t w = sc.len - c0 < k ? sc.len - c0 : k;
        ASSERT(w >= 1);
        ASSERT(sr.len * w <= cap || w == 1);
        for (int64_t j = 0; j < w; j++) /* pack on a */
          for (int64_t i = 0; i < sr.len; i++)
            stage[i + j * sr.len] = from->buf[a][pa->idx[sr.off + i] + pa->idx[sc.off + c0 + j] * from->ld[a]];
        for (int64_t j = 0; j < w; j++) /* unpack on b */
          for (int64_t i = 0; i < rr.len; i++)
            to->buf[b][pb->idx[rr.off + i] + pb->idx[rc.off + c0 + j] * to->ld[b]] = stage[i + j * rr.len];
      }
    }
  free(stage);
}

/* A random layout of n x n over R ranks. */
static mp_layout_t random_layout(int64_t n, int R) {
  int divs[MUSTER_MAX_RANKS], nd = 0;
  for (int d = 1; d <= R; d++)
    if (R % d == 0) divs[nd++] = d;
  int P = divs[rnd() % (uint64_t)nd];
  mp_layout_t L = {n, n, rnd_in(1, n + 2), rnd_in(1, n + 2), P, R / P, (int)(rnd() % 2)};
  if (rnd() % 3 == 0) L.mb = L.nb; /* square blocks, as cuSOLVERMp's */
  return L;
}

static void round_trip(int64_t n, int R, mp_layout_t src, mp_layout_t dst, int64_t cap) {
  ranks_t a, b, back;
  ranks_alloc(&a, &src, R, 1);
  ranks_alloc(&b, &dst, R, 0);
  ranks_alloc(&back, &src, R, 0);
  mp_plan_t *plans = calloc((size_t)R, sizeof *plans), *rev = calloc((size_t)R, sizeof *rev);
  ASSERT(plans && rev);
  for (int r = 0; r < R; r++) {
    ASSERT_EQ(mp_plan_build(&plans[r], &src, &dst, R, r), 0);
    ASSERT(plans[r].nidx <= 2 * (src.m + src.n)); /* O(m + n) whatever R */
    mp_plan_reverse(&plans[r], &rev[r]);
  }
  run_plans(plans, &a, &b, cap);
  ranks_check(&b);
  run_plans(rev, &b, &back, cap);
  ranks_check(&back);
  if (mp_layout_same(&src, &dst)) /* the same layout: every rank keeps all of its piece */
    for (int r = 0; r < R; r++) {
      ASSERT_EQ(plans[r].send_rows[r].len, a.rows[r]);
      ASSERT_EQ(plans[r].send_cols[r].len, a.cols[r]);
    }
  for (int r = 0; r < R; r++) mp_plan_free(&plans[r]);
  free(plans);
  free(rev);
  ranks_free(&a);
  ranks_free(&b);
  ranks_free(&back);
  (void)n;
}

TEST_IMPL(mp_plan_round_trip_random) {
  int runs = getenv("MUSTER_TEST_SCALE") ? 150 : 600;
  for (int t = 0; t < runs; t++) {
    int R = (int)rnd_in(1, 8);
    int64_t n = rnd_in(1, 70);
    mp_layout_t src = random_layout(n, R), dst = random_layout(n, R);
    int64_t cap = rnd() % 2 ? rnd_in(1, 40) : 1 << 20; /* tiny chunks, or none */
    round_trip(n, R, src, dst, cap);
  }
  return 0;
}

/* The provider's own directions: the caller's block layout (P = 1, Q = R,
 * nb = ceil(n/R)) to cuSOLVERMp's P x Q square tiles, column-major ranks. */
TEST_IMPL(mp_plan_caller_to_solver) {
  static const int64_t ns[] = {1, 2, 7, 100, 333};
  static const int grids[][2] = {{1, 1}, {1, 2}, {2, 1}, {1, 3}, {2, 2}, {3, 2}, {2, 3}};
  for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++)
    for (size_t g = 0; g < sizeof grids / sizeof grids[0]; g++) {
      int P = grids[g][0], Q = grids[g][1], R = P * Q;
      int64_t n = ns[i];
      muster_dist_t d = muster_layout_block_dist(n, R, 0, n);
      mp_layout_t src = mp_layout_of_dist(&d);
      for (int64_t T = 1; T <= 600; T = T * 3 + 1) {
        mp_layout_t dst = mp_layout_solver(n, n, T, P, Q);
        round_trip(n, R, src, dst, n * 5 + 3);
      }
    }
  return 0;
}

TEST_IMPL(mp_plan_layout_same) {
  mp_layout_t a = {100, 100, 100, 25, 1, 4, 0}, b = mp_layout_solver(100, 100, 25, 1, 4);
  ASSERT(mp_layout_same(&a, &b)); /* one grid row: the row block does not matter, nor the numbering */
  b.nb = 24;
  ASSERT(!mp_layout_same(&a, &b));
  mp_layout_t c = {100, 100, 10, 10, 2, 2, 0}, e = mp_layout_solver(100, 100, 10, 2, 2);
  ASSERT(!mp_layout_same(&c, &e)); /* 2 x 2: row-major and column-major ranks differ */
  c.colmajor = 1;
  ASSERT(mp_layout_same(&c, &e));
  mp_layout_t f = {100, 100, 10, 10, 4, 1, 0}, h = mp_layout_solver(100, 100, 10, 4, 1);
  ASSERT(mp_layout_same(&f, &h));
  /* a bad plan request */
  mp_plan_t p;
  mp_layout_t bad = e;
  bad.nprow = 3;
  ASSERT_EQ(mp_plan_build(&p, &e, &bad, 4, 0), MUSTER_EINVAL);
  ASSERT_EQ(mp_plan_build(&p, &e, &e, 4, 4), MUSTER_EINVAL);
  mp_layout_t other = mp_layout_solver(99, 100, 10, 2, 2);
  ASSERT_EQ(mp_plan_build(&p, &e, &other, 4, 0), MUSTER_EINVAL);
  return 0;
}

/* The diagonal tiles each rank holds (log det, getrs's NaN check): over
 * every rank of random grids, tiles and n, each diagonal entry exactly
 * once, at the local row and column that hold global (g, g). */
TEST_IMPL(mp_plan_diag_tiles) {
  for (int trial = 0; trial < 300; trial++) {
    int P = (int)rnd_in(1, 4), Q = (int)rnd_in(1, 4);
    int64_t T = rnd_in(1, 40), n = rnd_in(1, 400);
    mp_layout_t L = mp_layout_solver(n, n, T, P, Q);
    char *seen = calloc((size_t)n, 1);
    ASSERT(seen);
    int64_t total = 0;
    for (int rank = 0; rank < P * Q; rank++) {
      int row, col;
      mp_coords(&L, rank, &row, &col);
      int64_t lr = mp_local_rows(&L, row), lc = mp_local_cols(&L, col);
      for (int64_t t = -1; t * T < n + T; t++) {
        int64_t li = -1, lj = -1, w = 0;
        if (!mp_diag_tile(&L, t, row, col, &li, &lj, &w)) continue;
        ASSERT(t >= 0 && w >= 1 && w <= T && li + w <= lr && lj + w <= lc);
        for (int64_t k = 0; k < w; k++) {
          int64_t g = global_of(li + k, T, row, P);
          ASSERT_EQ(g, t * T + k);
          ASSERT_EQ(global_of(lj + k, T, col, Q), g);
          ASSERT(!seen[g]);
          seen[g] = 1;
        }
        total += w;
      }
    }
    ASSERT_EQ(total, n);
    free(seen);
  }
  return 0;
}

/* gels's A is m x n (m = ldb >= n): the caller's shards are column blocks
 * (or cyclic tiles) of all m rows (the runtime's dist: mb = m), moved to
 * cuSOLVERMp's m x n square tiles and back, for m = n, n + 1, 2n and more;
 * R's n diagonal entries are each on exactly one rank (the rank check);
 * and on every grid row the local rows of X (global < n) are the first of
 * its local rows of B (x_to_everyone scatters that prefix). */
TEST_IMPL(mp_plan_gels_layouts) {
  static const int64_t ns[] = {1, 7, 100};
  static const int grids[][2] = {{1, 1}, {1, 2}, {2, 1}, {2, 2}, {2, 3}};
  for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++)
    for (int k = 0; k < 4; k++) {
      int64_t n = ns[i], m = k == 0 ? n : k == 1 ? n + 1 : k == 2 ? 2 * n : 3 * n + 5;
      muster_shape_t sh;
      ASSERT_EQ(muster_routine_shape(MUSTER_GELS, n, 2, m, &sh), 0);
      ASSERT_EQ(sh.a_rows, m);
      for (size_t g = 0; g < sizeof grids / sizeof grids[0]; g++) {
        int P = grids[g][0], Q = grids[g][1], R = P * Q;
        for (int cyc = 0; cyc < 2; cyc++) {
          int64_t ct = n / R > 0 ? n / R : 1;
          muster_dist_t d = cyc && muster_layout_tile_valid(n, ct, R) ? muster_layout_cyclic_dist(n, ct, R, 0, m)
                                                                       : muster_layout_block_dist(n, R, 0, m);
          d.m = d.mb = sh.a_rows; /* as the runtime's muster__collective_dist */
          mp_layout_t src = mp_layout_of_dist(&d);
          for (int64_t T = 1; T <= 300; T = T * 4 + 1) {
            mp_layout_t dst = mp_layout_solver(m, n, T, P, Q);
            round_trip(n, R, src, dst, m * 3 + 1);
            int64_t seen = 0;
            for (int rank = 0; rank < R; rank++) {
              int row, col;
              mp_coords(&dst, rank, &row, &col);
              for (int64_t t = 0; t * T < m; t++) {
                int64_t li, lj, w;
                if (!mp_diag_tile(&dst, t, row, col, &li, &lj, &w)) continue;
                ASSERT(t * T + w <= n);
                seen += w;
              }
            }
            ASSERT_EQ(seen, n);
            for (int row = 0; row < P; row++) {
              int64_t lr = mp_local_rows(&dst, row), lrx = muster_layout_numroc(n, T, row, P);
              for (int64_t l = 0; l < lr; l++)
                ASSERT_EQ(global_of(l, T, row, P) < n, l < lrx);
            }
          }
        }
      }
    }
  /* a wide A has no shape */
  muster_shape_t sh;
  ASSERT_EQ(muster_routine_shape(MUSTER_GELS, 10, 1, 9, &sh), MUSTER_EINVAL);
  return 0;
}

/* geqrf (qr.c): on more than one process only where the release table saw
 * its Geqrf + Orgqr right there (0.8 on 1 x Q grids; not 0.9 yet) and only
 * on 1 x Q grids, or forced by MUSTER_MP_QR_GRIDS=1 (gels too); B's
 * factor's piece (R n x n thin, Q m x m full or wide) as qr.c reads it: R
 * the first local rows of A's piece, on A's columns; Q on A's rows, so its
 * leading dimension is A's; every entry on exactly one rank; the memory
 * rule counts it, tau and A's m rows (wide too), and A is always copied. */
TEST_IMPL(mp_plan_geqrf) {
  char why[200] = "";
  const mp_release_t *r08 = mp_release_of(MP_VER(0, 8, 0)), *r09 = mp_release_of(MP_VER(0, 9, 1));
  ASSERT(r08 && r09 && r08->geqrf_grids && !r09->geqrf_grids);
  ASSERT_EQ(mp_refused_grid(r08, MUSTER_GEQRF, 1, 1, 0, why, sizeof why), 0);
  ASSERT_EQ(mp_refused_grid(r08, MUSTER_GEQRF, 1, 2, 0, why, sizeof why), 0);
  ASSERT_EQ(mp_refused_grid(r08, MUSTER_GEQRF, 1, 4, 0, why, sizeof why), 0);
  ASSERT_EQ(mp_refused_grid(r08, MUSTER_GEQRF, 2, 1, 0, why, sizeof why), MUSTER_EUNSUPPORTED);
  ASSERT(strstr(why, "2x1 grid") && strstr(why, "0.8") && strstr(why, "1x2"));
  ASSERT_EQ(mp_refused_grid(r08, MUSTER_GEQRF, 2, 2, 0, why, sizeof why), MUSTER_EUNSUPPORTED);
  ASSERT_EQ(mp_refused_grid(r09, MUSTER_GEQRF, 1, 2, 0, why, sizeof why), MUSTER_EUNSUPPORTED);
  ASSERT(strstr(why, "geqrf on 2 processes") && strstr(why, "0.9") && strstr(why, "MUSTER_MP_QR_GRIDS=1"));
  ASSERT_EQ(mp_refused_grid(NULL, MUSTER_GEQRF, 2, 2, 0, why, sizeof why), MUSTER_EUNSUPPORTED);
  ASSERT_EQ(mp_refused_grid(r08, MUSTER_GEQRF, 2, 2, 1, why, sizeof why), 0);
  ASSERT_EQ(mp_refused_grid(r08, MUSTER_GELS, 2, 2, 1, why, sizeof why), 0);
  ASSERT_EQ(mp_refused_grid(r08, MUSTER_GETRS, 2, 1, 1, why, sizeof why), MUSTER_EUNSUPPORTED); /* not a QR */
  ASSERT_EQ(mp_refused_grid(r08, MUSTER_GELS, 1, 2, 0, why, sizeof why), MUSTER_EUNSUPPORTED); /* geqrf's table is not gels's */
  ASSERT(mp_runs(MUSTER_GEQRF) && mp_runs(MUSTER_GELS) && mp_runs(MUSTER_GESVD) && !mp_runs(MUSTER_POTRI));
  ASSERT(mp_factors_a_copy(MUSTER_GEQRF, 0) && mp_factors_a_copy(MUSTER_GEQRF, MUSTER_FULL_MATRICES));
  for (int trial = 0; trial < 300; trial++) {
    int P = (int)rnd_in(1, 3), Q = (int)rnd_in(1, 3);
    int64_t n = rnd_in(1, 60), m = rnd_in(1, 90), T = rnd_in(1, 16);
    unsigned flags = trial % 2 ? MUSTER_FULL_MATRICES : 0;
    mp_shape_t s = {MUSTER_GEQRF, MUSTER_C128, n, 0, flags, P, Q, T, 0, 0, m, 0, 0};
    int thin = !flags && m >= n;
    int64_t side = thin ? n : m, count = 0;
    ASSERT_EQ(mp_rows(&s), m);
    mp_layout_t A = mp_layout_solver(m, n, T, P, Q);
    for (int row = 0; row < P; row++)
      for (int col = 0; col < Q; col++) {
        int64_t fr, fc;
        mp_qr_piece(&s, row, col, &fr, &fc);
        ASSERT_EQ(fr, muster_layout_numroc(side, T, row, P));
        ASSERT_EQ(fc, muster_layout_numroc(side, T, col, Q));
        if (thin) ASSERT(fr <= mp_local_rows(&A, row) && fc == mp_local_cols(&A, col));
        else ASSERT_EQ(fr, mp_local_rows(&A, row));
        /* the reflectors: the first numroc(min(m, n)) local columns of A's
         * piece, copied into the first of Q's (full) */
        int64_t kc = muster_layout_numroc(m < n ? m : n, T, col, Q);
        ASSERT(kc <= fc && kc <= mp_local_cols(&A, col));
        count += fr * fc;
        mp_need_t need;
        mp_need(&s, row, col, &need);
        ASSERT_EQ(need.matrix, (uint64_t)(mp_local_rows(&A, row) * mp_local_cols(&A, col)) * 16);
        ASSERT_EQ(need.vectors, (uint64_t)(fr * fc) * 16);
        ASSERT_EQ(need.tau, (uint64_t)(fc > mp_local_cols(&A, col) ? fc : mp_local_cols(&A, col)) * 16);
        ASSERT_EQ(need.rhs, 0);
        ASSERT_EQ(need.total, need.matrix + need.vectors + need.tau + need.scratch + need.workspace + MP_FIXED_BYTES);
      }
    ASSERT_EQ(count, side * side);
  }
  return 0;
}
