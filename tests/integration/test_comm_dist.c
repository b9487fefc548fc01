/*
 * tests/integration/test_comm_dist.c - muster_solve_comm_dist: a 2-D
 * block-cyclic piece per rank (a framework's 2-D mesh) reaches the
 * collective provider as the dist it is, without a gather.  Ranks are
 * threads on a kind group comm; the collective test provider (colltwo,
 * tests/providers/testprov_v2.h) checks the dist against its rank and
 * writes 1 + i * n + j at each global (i, j) of its own piece, which each
 * rank checks from its own place.  Then the refusals, the same on every
 * rank: a grid of another size, a rank at another place, blocks that
 * differ, a tile, lld != lda, a rank without a 2-D piece.
 */
#include <sys/mman.h>
#include <unistd.h>

#include "task.h"
#include "muster.h"
#include "providers/tp_util.h"

enum { R = 4 };

typedef enum { GOOD, WRONG_SIZE, SWAPPED, OTHER_MB, TILE, BAD_LLD, ONE_1D, NCASES } dist_case_t;

typedef struct dist_arg {
  char name[64];
  int nprow, npcol; /* the grid of case GOOD */
  int64_t n;
  int rc[NCASES][R]; /* every rank's code: the same on all */
  char msg[NCASES][400];
  int bad[R];       /* GOOD: elements of the piece that were wrong */
} dist_arg_t;

/* This rank's dist in case k (GOOD: block-cyclic with blocks of 3 x 2). */
static muster_dist_t dist_of(const dist_arg_t *g, int rank, dist_case_t k) {
  int P = g->nprow, Q = g->npcol, r = rank;
  if (k == SWAPPED && rank < 2) r = 1 - rank; /* ranks 0 and 1 claim each other's place */
  muster_dist_t d = {.m = g->n, .n = g->n, .mb = 3, .nb = 2, .nprow = P, .npcol = Q, .myrow = r / Q,
                     .mycol = r % Q};
  if (k == WRONG_SIZE) d.nprow = 1, d.npcol = 2, d.myrow = 0, d.mycol = rank % 2;
  if (k == OTHER_MB && rank == 2) d.mb = 4;
  d.lld = muster_layout_numroc(d.m, d.mb, d.myrow, d.nprow);
  if (d.lld < 1) d.lld = 1;
  return d;
}

static int dist_rank(int rank, int device, void *arg) {
  (void)device;
  dist_arg_t *g = arg;
  muster_comm_opts_t o = {.kind = "group", .rank = rank, .size = R, .name = g->name, .timeout_s = 10, .device = -1};
  muster_comm_t *c = NULL;
  ASSERT_OK(muster_comm_open(&o, &c));
  int64_t n = g->n;
  for (int k = 0; k < NCASES; k++) {
    muster_dist_t d = dist_of(g, rank, (dist_case_t)k);
    int64_t rows = muster_layout_numroc(d.m, d.mb, d.myrow, d.nprow);
    int64_t cols = muster_layout_numroc(d.n, d.nb, d.mycol, d.npcol);
    double *a = calloc((size_t)(d.lld * (cols > 0 ? cols : 1)), sizeof *a);
    ASSERT(a);
    muster_shard_t s = {.mem = MUSTER_MEM_HOST, .device = -1, .a = a, .lda = d.lld + (k == BAD_LLD && rank == 3)};
    muster_solve_args_t args = {.routine = MUSTER_POTRI, .dtype = MUSTER_F64, .n = n,
                                .tile = k == TILE ? 2 : 0};
    muster_solve_result_t res;
    if (k == ONE_1D && rank == 1) { /* this rank passes a 1-D block piece */
      int64_t col0, nc;
      ASSERT_OK(muster_layout_block_cols(n, R, rank, &col0, &nc));
      double *a1 = calloc((size_t)(n * nc), sizeof *a1);
      muster_shard_t s1 = {.mem = MUSTER_MEM_HOST, .device = -1, .a = a1, .lda = n, .col0 = col0, .ncols = nc};
      g->rc[k][rank] = muster_solve_comm(c, &args, &s1, &res);
      free(a1);
    } else {
      g->rc[k][rank] = muster_solve_comm_dist(c, &args, &s, &d, &res);
    }
    if (rank == 0) snprintf(g->msg[k], sizeof g->msg[k], "%s", g->rc[k][rank] ? muster_last_error() : "");
    if (k == GOOD && g->rc[k][rank] == 0) {
      ASSERT(!strcmp(res.provider, "colltwo"));
      for (int64_t lj = 0; lj < cols; lj++)
        for (int64_t li = 0; li < rows; li++) {
          int64_t i = (li / d.mb * d.nprow + d.myrow) * d.mb + li % d.mb;
          int64_t j = (lj / d.nb * d.npcol + d.mycol) * d.nb + lj % d.nb;
          g->bad[rank] += a[lj * d.lld + li] != (double)(1 + i * n + j);
        }
    }
    free(a);
  }
  ASSERT_OK(muster_comm_close(c));
  return 0;
}

static void run_grid(int nprow, int npcol) {
  char dir[256];
  tp_env_fresh(dir, sizeof dir);
  tp_link(dir, "potri", "colltwo.so", "testprov_coll2.so");
  dist_arg_t *g = mmap(NULL, sizeof *g, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  ASSERT(g != MAP_FAILED);
  memset(g, 0, sizeof *g);
  snprintf(g->name, sizeof g->name, "dist%d-%dx%d", (int)getpid(), nprow, npcol);
  g->nprow = nprow;
  g->npcol = npcol;
  g->n = 11; /* divisible by no block or grid side */
  int devices[R] = {-1, -1, -1, -1};
  ASSERT_OK(muster_run_on_devices(R, devices, dist_rank, g));
  if (g->rc[GOOD][0]) fprintf(stderr, "good case: %d %s\n", g->rc[GOOD][0], g->msg[GOOD]);
  for (int r = 0; r < R; r++) {
    ASSERT_EQ(g->rc[GOOD][r], 0);
    ASSERT_EQ(g->bad[r], 0);
  }
  static const struct { int rc; const char *has; } want[NCASES] = {
      [WRONG_SIZE] = {MUSTER_EINVAL, "rank 0's dist is a 1 x 2 grid, the communicator has 4 ranks"},
      [SWAPPED] = {MUSTER_EINVAL, "rank 0 holds grid place"},
      [OTHER_MB] = {MUSTER_EMISMATCH, "rank 2's dist is a"},
      [TILE] = {MUSTER_ETILE, "tile=2 with a 2-D piece"},
      [BAD_LLD] = {MUSTER_EINVAL, "dist.lld="},
      [ONE_1D] = {MUSTER_EMISMATCH, "rank 1 does not pass a 2-D piece"},
  };
  for (int k = 1; k < NCASES; k++) {
    if (g->rc[k][0] != want[k].rc) fprintf(stderr, "case %d: %d %s\n", k, g->rc[k][0], g->msg[k]);
    for (int r = 0; r < R; r++) ASSERT_EQ(g->rc[k][r], want[k].rc);
    ASSERT_STR_CONTAINS(g->msg[k], want[k].has);
  }
  munmap(g, sizeof *g);
  test_remove_tree(dir);
  ASSERT_EQ(test_count_job_segments(test_job()), 0);
}

TEST_IMPL(comm_dist_2x2) {
  run_grid(2, 2);
  return 0;
}

TEST_IMPL(comm_dist_4x1) {
  run_grid(4, 1);
  return 0;
}
