/*
 * tests/integration/test_comm_refusal.c - a collective call refused alike on
 * every rank before any engine traffic (provider_v2.h:
 * MUSTER_PROVIDER_REFUSED_ALIKE) fails that call only: the store set the
 * ranks met over stays usable, and the next call runs.  A failure the
 * provider does not mark so (the engine may have left peers inside it)
 * still aborts the set, and the next call fails naming the abort.
 *
 * 3 forked ranks over a kind store comm (comm_local_util.h), the collective
 * test provider colllapack forced, potrs f64; COLLLAPACK_REFUSE (read by
 * colllapack at each call) makes it refuse: "alike" or "alone".  Found on
 * GPUs (2026-11-27): cuSOLVERMp's "polar of a wide A", refused after its
 * own agreed check, aborted muster_jax's store set, and every later call
 * of the process failed.  A rank whose own step before the call failed
 * (muster_solve_comm_fail, 0.3 s after the others began waiting) fails
 * that call on every rank within 3 s with its reason, and the set holds.
 */
#include <unistd.h>

#include <stdlib.h>
#include <string.h>

#include "task.h"
#include "integration/comm_local_util.h"
#include "../../tools/muster/check.h"

enum { N = 29, NRHS = 2, NCALL = 4 };

typedef struct refusal_shared {
  uint64_t seed;
  const char *refuse[NCALL]; /* COLLLAPACK_REFUSE of each call, NULL: unset */
  int rc[NCALL][CL_MAX_RANKS];
  char msg[NCALL][CL_MAX_RANKS][600];
  double X[NCALL][CL_MAX_RANKS][N * NRHS];
  int fail_rank[NCALL]; /* the rank that calls muster_solve_comm_fail instead (-1: none) */
  double took[NCALL][CL_MAX_RANKS];
} refusal_shared_t;

static void refusal_rank(muster_comm_t *c, int rank, int R, void *arg) {
  refusal_shared_t *sh = arg;
  for (int k = 0; k < NCALL; k++) {
    if (sh->refuse[k]) setenv("COLLLAPACK_REFUSE", sh->refuse[k], 1);
    else unsetenv("COLLLAPACK_REFUSE");
    void *a, *b;
    cl_problem(MUSTER_POTRS, MUSTER_F64, N, NRHS, sh->seed + (uint64_t)k, &a, &b);
    muster_shard_t s = cl_shard(MUSTER_F64, N, NRHS, a, b, R, rank, 0);
    muster_solve_args_t args = {.routine = MUSTER_POTRS, .dtype = MUSTER_F64, .n = N, .nrhs = NRHS,
                                .provider = "colllapack"};
    muster_solve_result_t res;
    double t0 = test_now();
    if (sh->fail_rank[k] == rank) {
      usleep(300 * 1000); /* the others wait in the call by now */
      t0 = test_now();
      sh->rc[k][rank] = muster_solve_comm_fail(c, MUSTER_ENOMEM, "its piece's copy found no memory (test)");
    } else {
      sh->rc[k][rank] = muster_solve_comm(c, &args, &s, &res);
    }
    sh->took[k][rank] = test_now() - t0;
    snprintf(sh->msg[k][rank], sizeof sh->msg[k][rank], "%s", sh->rc[k][rank] ? muster_last_error() : "");
    memcpy(sh->X[k][rank], s.b, sizeof sh->X[k][rank]);
    cl_shard_free(&s, 0);
    free(a);
    free(b);
  }
}

static refusal_shared_t *run(const char *const refuse[NCALL], int R, int fail_at) {
  char dir[256];
  cl_setup(dir, sizeof dir);
  refusal_shared_t *sh = cl_shared(sizeof *sh);
  sh->seed = test_seed("MUSTER_TEST_SEED");
  memcpy(sh->refuse, refuse, sizeof sh->refuse);
  for (int k = 0; k < NCALL; k++) sh->fail_rank[k] = k == fail_at ? 1 : -1;
  pid_t pids[CL_MAX_RANKS];
  cl_fork(dir, R, 10, refusal_rank, sh, NULL, pids);
  cl_wait(R, pids, -1);
  for (int k = 0; k < NCALL; k++)
    for (int r = 0; r < R; r++)
      fprintf(stderr, "call %d (%s) rank %d: rc %d %s\n", k, refuse[k] ? refuse[k] : "-", r, sh->rc[k][r],
              sh->msg[k][r]);
  test_remove_tree(dir);
  return sh;
}

/* Call k solved right on every rank (the same X, a small residual). */
static int solved(const refusal_shared_t *sh, int k, int R) {
  void *a, *b;
  cl_problem(MUSTER_POTRS, MUSTER_F64, N, NRHS, sh->seed + (uint64_t)k, &a, &b);
  for (int r = 0; r < R; r++) {
    ASSERT_EQ(sh->rc[k][r], 0);
    ASSERT(!memcmp(sh->X[k][r], sh->X[k][0], sizeof sh->X[k][0]));
  }
  ASSERT_DBL_LT(chk_potrs(MUSTER_F64, N, NRHS, a, N, sh->X[k][0], N, b, N),
                chk_routine_tolerance(MUSTER_POTRS, MUSTER_F64, N));
  free(a);
  free(b);
  return 0;
}

/* Refused alike, solved, refused alike, solved: each refusal fails its call
 * on every rank with the provider's words; the set holds. */
TEST_IMPL(comm_refusal_alike_keeps_set) {
  enum { R = 3 };
  static const char *const refuse[NCALL] = {"alike", NULL, "alike", NULL};
  refusal_shared_t *sh = run(refuse, R, -1);
  for (int k = 0; k < NCALL; k += 2)
    for (int r = 0; r < R; r++) {
      ASSERT_EQ(sh->rc[k][r], MUSTER_EUNSUPPORTED);
      ASSERT_STR_CONTAINS(sh->msg[k][r], "refused potrs");
      ASSERT_STR_CONTAINS(sh->msg[k][r], "colllapack: refused by COLLLAPACK_REFUSE=alike");
      ASSERT(strstr(sh->msg[k][r], "aborted") == NULL);
    }
  ASSERT_EQ(solved(sh, 1, R), 0);
  ASSERT_EQ(solved(sh, 3, R), 0);
  ASSERT_EQ(test_count_job_segments(test_job()), 0);
  cl_unshare(sh, sizeof *sh);
  return 0;
}

/* The same failure without the mark aborts the set: the calls after it
 * fail on every rank, naming the abort. */
TEST_IMPL(comm_refusal_unmarked_aborts_set) {
  enum { R = 3 };
  static const char *const refuse[NCALL] = {NULL, "alone", NULL, NULL};
  refusal_shared_t *sh = run(refuse, R, -1);
  ASSERT_EQ(solved(sh, 0, R), 0);
  for (int r = 0; r < R; r++) {
    ASSERT_LT(sh->rc[1][r], 0);
    ASSERT_STR_CONTAINS(sh->msg[1][r], "failed in potrs");
    for (int k = 2; k < NCALL; k++) {
      ASSERT_LT(sh->rc[k][r], 0);
      ASSERT_STR_CONTAINS(sh->msg[k][r], "aborted the store set");
    }
  }
  ASSERT_EQ(test_count_job_segments(test_job()), 0);
  cl_unshare(sh, sizeof *sh);
  return 0;
}

/* Solved, rank 1 fails before its call, solved, solved: the others' call
 * fails within 3 s naming rank 1 and its reason; the set holds. */
TEST_IMPL(comm_rank_fail_keeps_set) {
  enum { R = 3 };
  static const char *const refuse[NCALL] = {NULL, NULL, NULL, NULL};
  refusal_shared_t *sh = run(refuse, R, 1);
  ASSERT_EQ(solved(sh, 0, R), 0);
  for (int r = 0; r < R; r++) {
    ASSERT_EQ(sh->rc[1][r], MUSTER_ENOMEM);
    ASSERT_STR_CONTAINS(sh->msg[1][r], "rank 1 (pid ");
    ASSERT_STR_CONTAINS(sh->msg[1][r], "its piece's copy found no memory (test)");
    ASSERT_DBL_LT(sh->took[1][r], r == 1 ? 3.0 : 3.3); /* the others waited its 0.3 s first */
  }
  ASSERT_EQ(solved(sh, 2, R), 0);
  ASSERT_EQ(solved(sh, 3, R), 0);
  ASSERT_EQ(muster_solve_comm_fail(NULL, MUSTER_ENOMEM, "x"), MUSTER_EINVAL);
  ASSERT_EQ(test_count_job_segments(test_job()), 0);
  cl_unshare(sh, sizeof *sh);
  return 0;
}
