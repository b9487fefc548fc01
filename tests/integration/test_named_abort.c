/*
 * tests/integration/test_named_abort.c - muster_abort_named (muster/named.h)
 * across processes, whatever the order in which the ranks come: 3 forked
 * ranks, one of which fails before its call (what an adapter's rank does
 * when its staging allocation or an argument check fails) and aborts the
 * group by name while the others call muster_solve_named (potrs, lapack,
 * timeout 30 s):
 *   - the aborting rank first, the others 0.2 s and 0.5 s later (the group
 *     not formed when it aborts: a late rank used to meet in a fresh
 *     segment and wait out its 30 s), the leader aborting first, and the
 *     aborting rank last: every other rank fails with the abort's code and
 *     reason, naming the rank, within 3 s of its call;
 *   - the next call of every rank in the same group name, then in another,
 *     solves (the aborting rank's process kept the poisoned group cached:
 *     it must not report the old abort there);
 *   - nothing of the job left in /dev/shm.
 */
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "task.h"
#include "muster.h"

enum { RANKS = 3, N = 6 };

typedef struct plan {
  int victim;           /* the rank that aborts instead of solving */
  double delay[RANKS];  /* seconds each rank sleeps before its first call */
  char group[64];
} plan_t;

typedef struct out {
  int rc[3];   /* the call that meets the abort, the same name again, another name */
  double took; /* seconds in the first call */
  int done;
  char msg[700];
} out_t;

/* potrs of 4 I x = b over the block layout, in muster_shard_alloc memory
 * (the leader maps it); 0 and x = b / 4, or the call's code. */
static int solve(const char *group, int rank, double timeout_s, char *msg, size_t cap) {
  int64_t col0, ncols;
  ASSERT_OK(muster_layout_block_cols(N, RANKS, rank, &col0, &ncols));
  double *a, *b;
  ASSERT_OK(muster_shard_alloc(sizeof(double) * N * (ncols ? ncols : 1), (void **)&a));
  ASSERT_OK(muster_shard_alloc(sizeof(double) * N, (void **)&b));
  for (int64_t j = 0; j < ncols; j++)
    for (int i = 0; i < N; i++) a[j * N + i] = i == col0 + j ? 4.0 : 0.0;
  for (int i = 0; i < N; i++) b[i] = i + 1;
  muster_named_t who = {.group = group, .rank = rank, .nranks = RANKS, .timeout_s = timeout_s, .device = -1};
  muster_solve_args_t args = {.routine = MUSTER_POTRS, .dtype = MUSTER_F64, .n = N, .nrhs = 1,
                              .layout = MUSTER_LAYOUT_BLOCK, .provider = "lapack"};
  muster_shard_t s = {.mem = MUSTER_MEM_HOST, .device = -1, .a = a, .lda = N, .col0 = col0, .ncols = ncols,
                      .b = b, .ldb = N};
  muster_solve_result_t res;
  int rc = muster_solve_named(&who, &args, &s, &res);
  snprintf(msg, cap, "%s", rc ? muster_last_error() : "");
  for (int i = 0; rc == 0 && i < N; i++) ASSERT(b[i] == (i + 1) / 4.0);
  muster_shard_free(a);
  muster_shard_free(b);
  return rc;
}

static void rank_main(const plan_t *p, int rank, out_t *o) {
  char ignored[700], other[80];
  usleep((useconds_t)(p->delay[rank] * 1e6));
  double t0 = test_now();
  if (rank == p->victim)
    o->rc[0] = muster_abort_named(&(muster_named_t){.group = p->group, .rank = rank, .nranks = RANKS,
                                                    .timeout_s = 30, .device = -1},
                                  MUSTER_ENOMEM, "test: this rank's staging region could not be allocated");
  else
    o->rc[0] = solve(p->group, rank, 30, o->msg, sizeof o->msg);
  o->took = test_now() - t0;
  /* the next calls: a short timeout, so that a rank left waiting fails the test soon */
  o->rc[1] = solve(p->group, rank, 10, o->msg[0] ? ignored : o->msg, sizeof o->msg);
  snprintf(other, sizeof other, "%s.next", p->group);
  o->rc[2] = solve(other, rank, 10, o->msg[0] ? ignored : o->msg, sizeof o->msg);
  muster_group_cache_flush();
  o->done = 1;
}

static void run_plan(const plan_t *p) {
  out_t *outs = mmap(NULL, sizeof(out_t) * RANKS, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  ASSERT(outs != MAP_FAILED);
  memset(outs, 0, sizeof(out_t) * RANKS);
  pid_t pids[RANKS];
  for (int r = 0; r < RANKS; r++) {
    pids[r] = fork();
    ASSERT(pids[r] >= 0);
    if (pids[r] == 0) {
      rank_main(p, r, &outs[r]);
      _exit(0);
    }
  }
  for (int r = 0; r < RANKS; r++) {
    int st;
    ASSERT_EQ(waitpid(pids[r], &st, 0), pids[r]);
    ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  }
  char victim[32];
  snprintf(victim, sizeof victim, "rank %d (pid", p->victim);
  for (int r = 0; r < RANKS; r++) {
    const out_t *o = &outs[r];
    fprintf(stderr, "victim %d, rank %d: rc %d %d %d, %.3f s: %s\n", p->victim, r, o->rc[0], o->rc[1], o->rc[2],
            o->took, o->msg);
    ASSERT(o->done);
    if (r == p->victim) {
      ASSERT_EQ(o->rc[0], 0);
    } else {
      ASSERT_EQ(o->rc[0], MUSTER_ENOMEM);
      ASSERT_STR_CONTAINS(o->msg, victim);
      ASSERT_STR_CONTAINS(o->msg, "staging region could not be allocated");
      ASSERT_DBL_LT(o->took, 3.0);
    }
    ASSERT_EQ(o->rc[1], 0);
    ASSERT_EQ(o->rc[2], 0);
  }
  munmap(outs, sizeof(out_t) * RANKS);
  ASSERT_EQ(test_count_job_segments(test_job()), 0);
}

TEST_IMPL(named_abort_any_order_processes) {
  setenv("OPENBLAS_NUM_THREADS", "1", 0);
  plan_t plans[] = {
      {.victim = 1, .delay = {0.2, 0.0, 0.5}}, /* first: the group not formed when it aborts */
      {.victim = 0, .delay = {0.0, 0.3, 0.3}}, /* the leader, first */
      {.victim = 2, .delay = {0.0, 0.0, 0.5}}, /* last: the others wait already */
  };
  for (size_t i = 0; i < sizeof plans / sizeof plans[0]; i++) {
    snprintf(plans[i].group, sizeof plans[i].group, "nabortp%d.%zu", (int)getpid(), i);
    run_plan(&plans[i]);
  }
  return 0;
}
