/*
 * tests/integration/test_solve_shards.c - process mode, one group used for
 * many solves: the leader's cached mappings of peers' muster_shard_alloc
 * memory are reused while a shard lives, and replaced when a peer frees a
 * shard and allocates a new one (same fd number, new inode): a stale
 * mapping would make the leader read the old A and write X where the peer
 * no longer looks.  The leader's mappings stay bounded.
 */
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "task.h"
#include "test_solve.h"
#include "providers/tp_util.h"

enum { R = 3, N = 45, ROUNDS = 12 };

static int count_shard_maps(void) {
  FILE *f = fopen("/proc/self/maps", "r");
  ASSERT(f != NULL);
  char line[1024];
  int n = 0;
  while (fgets(line, sizeof line, f))
    if (strstr(line, "memfd:muster.shard")) n++;
  fclose(f);
  return n;
}

static int rank_main(int rank, const double *A0, const char *group) {
  int64_t S = (N + R - 1) / R, col0 = rank * S, ncols = N - col0 < S ? N - col0 : S;
  muster_group_t *g = NULL;
  muster_group_opts_t opts = {.job = NULL, .timeout_s = 10, .device = -1};
  if (muster_group_join(group, rank, R, &opts, &g) != 0) return 10;
  double *a = NULL, *b = NULL, *B = malloc(N * sizeof *B);
  int maxmaps = 0;
  for (int round = 0; round < ROUNDS; round++) {
    /* odd rounds: every rank frees its shards and takes new ones */
    if (!a || round % 2) {
      muster_shard_free(a);
      muster_shard_free(b);
      if (muster_shard_alloc((size_t)(N * ncols) * sizeof *a, (void **)&a) != 0) return 11;
      if (muster_shard_alloc(N * sizeof *b, (void **)&b) != 0) return 12;
    }
    memcpy(a, A0 + col0 * N, (size_t)(N * ncols) * sizeof *a);
    for (int i = 0; i < N; i++) B[i] = b[i] = (double)(i % 7) - 3.0 + round;
    muster_solve_args_t args = {.routine = MUSTER_POTRS, .dtype = MUSTER_F64, .n = N, .nrhs = 1};
    muster_shard_t sh = {.mem = MUSTER_MEM_HOST, .device = -1, .a = a, .lda = N, .col0 = col0,
                         .ncols = ncols, .b = b, .ldb = N};
    muster_solve_result_t res;
    int rc = muster_solve(g, &args, &sh, &res);
    if (rc != 0) {
      fprintf(stderr, "rank %d round %d: %s\n", rank, round, muster_last_error());
      return 13;
    }
    double r = chk_potrs(MUSTER_F64, N, 1, A0, N, b, N, B, N);
    if (!(r < chk_tolerance(MUSTER_F64, N))) {
      fprintf(stderr, "rank %d round %d: residual %g\n", rank, round, r);
      return 14;
    }
    if (rank == 0) {
      int m = count_shard_maps();
      if (m > maxmaps) maxmaps = m;
    }
  }
  /* own 2 + at most 2 per peer (plus one round of slack) */
  if (rank == 0 && maxmaps > 2 + 2 * (R - 1) + 2 * (R - 1)) {
    fprintf(stderr, "leader holds %d shard mappings\n", maxmaps);
    return 15;
  }
  muster_group_leave(g);
  muster_shard_free(a);
  muster_shard_free(b);
  free(B);
  return 0;
}

TEST_IMPL(solve_process_shards_remapped_after_realloc) {
  setenv("MUSTER_PROVIDER_PATH", tp_lapack_dir(), 1);
  setenv("MUSTER_PROVIDER", "lapack", 1);
  double *A0 = malloc(N * N * sizeof *A0);
  chk_rng_t rng;
  chk_seed(&rng, 99);
  chk_random_hermitian(MUSTER_F64, N, 1, &rng, A0, N);
  char group[64];
  snprintf(group, sizeof group, "shards%d", (int)getpid());
  pid_t pids[R];
  for (int r = 0; r < R; r++) {
    pids[r] = fork();
    ASSERT(pids[r] >= 0);
    if (pids[r] == 0) _exit(rank_main(r, A0, group));
  }
  for (int r = 0; r < R; r++) {
    int st;
    ASSERT(waitpid(pids[r], &st, 0) == pids[r]);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
      fprintf(stderr, "rank %d: status %d\n", r, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  }
  free(A0);
  ASSERT_EQ(test_count_job_segments(test_job()), 0);
  return 0;
}

/* A long-lived leader (this process, rank 0) meets new peer processes each
 * round: mappings of the peers that are gone are dropped. */
TEST_IMPL(solve_leader_drops_mappings_of_gone_peers) {
  setenv("MUSTER_PROVIDER_PATH", tp_lapack_dir(), 1);
  setenv("MUSTER_PROVIDER", "lapack", 1);
  double *A0 = malloc(N * N * sizeof *A0);
  chk_rng_t rng;
  chk_seed(&rng, 7);
  chk_random_hermitian(MUSTER_F64, N, 1, &rng, A0, N);
  int64_t S = (N + R - 1) / R;
  for (int round = 0; round < 6; round++) {
    char group[64];
    snprintf(group, sizeof group, "gone%d_%d", (int)getpid(), round);
    pid_t pids[R];
    for (int r = 1; r < R; r++) {
      pids[r] = fork();
      ASSERT(pids[r] >= 0);
      if (pids[r] == 0) {
        int64_t col0 = r * S, ncols = N - col0 < S ? N - col0 : S;
        double *a, *b;
        if (muster_shard_alloc((size_t)(N * ncols) * sizeof *a, (void **)&a) ||
            muster_shard_alloc(N * sizeof *b, (void **)&b))
          _exit(20);
        memcpy(a, A0 + col0 * N, (size_t)(N * ncols) * sizeof *a);
        for (int i = 0; i < N; i++) b[i] = 1;
        muster_group_t *g;
        muster_group_opts_t opts = {.job = NULL, .timeout_s = 10, .device = -1};
        if (muster_group_join(group, r, R, &opts, &g)) _exit(21);
        muster_solve_args_t args = {.routine = MUSTER_POTRS, .dtype = MUSTER_F64, .n = N, .nrhs = 1};
        muster_shard_t sh = {.mem = MUSTER_MEM_HOST, .device = -1, .a = a, .lda = N, .col0 = col0,
                             .ncols = ncols, .b = b, .ldb = N};
        int rc = muster_solve(g, &args, &sh, NULL);
        muster_group_leave(g);
        _exit(rc ? 22 : 0);
      }
    }
    double *a = malloc((size_t)(N * S) * sizeof *a), *b = malloc(N * sizeof *b);
    memcpy(a, A0, (size_t)(N * S) * sizeof *a);
    for (int i = 0; i < N; i++) b[i] = 1;
    muster_group_t *g;
    muster_group_opts_t opts = {.job = NULL, .timeout_s = 10, .device = -1};
    ASSERT_OK(muster_group_join(group, 0, R, &opts, &g));
    muster_solve_args_t args = {.routine = MUSTER_POTRS, .dtype = MUSTER_F64, .n = N, .nrhs = 1};
    muster_shard_t sh = {.mem = MUSTER_MEM_HOST, .device = -1, .a = a, .lda = N, .col0 = 0,
                         .ncols = S, .b = b, .ldb = N};
    ASSERT_OK(muster_solve(g, &args, &sh, NULL));
    muster_group_leave(g);
    for (int r = 1; r < R; r++) {
      int st;
      ASSERT(waitpid(pids[r], &st, 0) == pids[r]);
      ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    }
    /* this round's peers' a and b only: earlier rounds' were dropped */
    ASSERT_LE(count_shard_maps(), 2 * (R - 1));
    free(a);
    free(b);
  }
  free(A0);
  ASSERT_EQ(test_count_job_segments(test_job()), 0);
  return 0;
}
