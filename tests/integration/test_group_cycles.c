/* tests/integration/test_group_cycles.c - a group used call after call:
 * join (cached after the first), exchange, status, leave; generation
 * advances; nothing in /dev/shm once formed; two jobs and two groups side
 * by side. */
#include "group/group.h"
#include "test_group_util.h"

struct carg {
  const char *group;
  const char *job;   /* NULL: $MUSTER_JOB */
  int cycles;
  int salt;
};

static int cycle_rank(int rank, int nranks, void *p) {
  struct carg *a = p;
  muster_group_opts_t o = {a->job, 20, -1};
  for (int c = 0; c < a->cycles; c++) {
    muster_group_t *g = NULL;
    RCHECK(muster_group_join(a->group, rank, nranks, &o, &g) == 0);
    RCHECK(muster_group_session(g) == (uint64_t)c + 1);
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    RCHECK(muster_group_generation(g) == muster_group_session(g)); /* the old name stays */
#pragma GCC diagnostic pop
    int mine[3] = {rank, c, a->salt};
    RCHECK(muster_group_exchange(g, mine, sizeof mine) == 0);
    for (int r = 0; r < nranks; r++) {
      const void *d;
      size_t len;
      RCHECK(muster_group_payload(g, r, &d, &len) == 0);
      const int *v = d;
      RCHECK(len == sizeof mine && v[0] == r && v[1] == c && v[2] == a->salt);
    }
    /* formed: its name is gone from /dev/shm */
    RCHECK(test_count_job_segments(a->job ? a->job : test_job()) == 0);
    if (rank == 0) RCHECK(muster_group_set_status(g, c * 3 + a->salt, &c, sizeof c) == 0);
    RCHECK(muster_group_barrier(g) == 0);
    int st;
    const void *sd;
    size_t sl;
    RCHECK(muster_group_status(g, &st, &sd, &sl) == 0);
    RCHECK(st == c * 3 + a->salt && sl == sizeof c && *(const int *)sd == c);
    RCHECK(muster_group_leave(g) == 0);
  }
  return 0;
}

static int cycles_test(int mode, int nranks, int cycles) {
  struct carg a = {mode ? "cyc.p" : "cyc.t", NULL, cycles, 5};
  int fds = test_count_fds(), maps = test_count_muster_maps();
  ASSERT_EQ(run_mode(mode, nranks, cycle_rank, &a), 0);
  if (mode == MODE_THREADS) ASSERT_EQ(muster__group_cache_count(), 1);
  muster_group_cache_flush();
  ASSERT_EQ(muster__group_cache_count(), 0);
  ASSERT_EQ(test_count_fds(), fds);
  ASSERT_EQ(test_count_muster_maps(), maps);
  ASSERT_EQ(test_count_job_segments(test_job()), 0);
  return 0;
}

TEST_IMPL(group_cycles_threads_2) { return cycles_test(MODE_THREADS, 2, 2000); }
TEST_IMPL(group_cycles_threads_4) { return cycles_test(MODE_THREADS, 4, 500); }
TEST_IMPL(group_cycles_procs_2) { return cycles_test(MODE_PROCS, 2, 2000); }
TEST_IMPL(group_cycles_procs_4) { return cycles_test(MODE_PROCS, 4, 500); }

/* Two jobs with the same group name at once, each with its own payloads:
 * neither sees the other's. */
static int two_jobs_rank(int rank, int nranks, void *p) {
  (void)p;
  char job[64];
  struct carg a = {"same.name", job, 300, 0};
  /* ranks 0..1 are job A, ranks 2..3 job B: two groups of 2 */
  snprintf(job, sizeof job, "%s_%s", test_job(), rank < 2 ? "A" : "B");
  a.salt = rank < 2 ? 111 : 222;
  return cycle_rank(rank % 2, 2, &a);
}

TEST_IMPL(group_isolation_two_jobs) {
  ASSERT_EQ(run_procs(4, two_jobs_rank, NULL), 0);
  char job[64];
  snprintf(job, sizeof job, "%s_A", test_job());
  ASSERT_EQ(test_count_job_segments(job), 0);
  snprintf(job, sizeof job, "%s_B", test_job());
  ASSERT_EQ(test_count_job_segments(job), 0);
  return 0;
}

TEST_IMPL(group_isolation_two_jobs_threads) {
  ASSERT_EQ(run_threads(4, two_jobs_rank, NULL), 0);
  ASSERT_EQ(muster__group_cache_count(), 2);
  muster_group_cache_flush();
  return 0;
}

/* Two groups in one process at once: every thread is in both, alternating. */
static int two_groups_rank(int rank, int nranks, void *p) {
  muster_group_t *ga = NULL, *gb = NULL;
  RCHECK(muster_group_join("grp.a", rank, nranks, NULL, &ga) == 0);
  RCHECK(muster_group_join("grp.b", nranks - 1 - rank, nranks, NULL, &gb) == 0);
  for (int k = 0; k < 500; k++) {
    int va = rank * 1000 + k, vb = -va;
    RCHECK(muster_group_exchange(ga, &va, sizeof va) == 0);
    RCHECK(muster_group_exchange(gb, &vb, sizeof vb) == 0);
    for (int r = 0; r < nranks; r++) {
      const void *d;
      size_t len;
      RCHECK(muster_group_payload(ga, r, &d, &len) == 0 && *(const int *)d == r * 1000 + k);
      RCHECK(muster_group_payload(gb, r, &d, &len) == 0);
      RCHECK(*(const int *)d == -((nranks - 1 - r) * 1000 + k));
    }
  }
  RCHECK(muster_group_leave(ga) == 0);
  RCHECK(muster_group_leave(gb) == 0);
  return 0;
}

TEST_IMPL(group_two_groups_one_process) {
  ASSERT_EQ(run_threads(3, two_groups_rank, NULL), 0);
  ASSERT_EQ(muster__group_cache_count(), 2);
  muster_group_cache_flush();
  ASSERT_EQ(test_count_muster_maps(), 0);
  return 0;
}

TEST_IMPL(group_two_groups_processes) {
  ASSERT_EQ(run_procs(3, two_groups_rank, NULL), 0);
  return 0;
}

/* Many processes race to create/attach fresh groups (one new name per
 * round): exactly one creates, the rest attach, none sees a half-built
 * header, nothing is left. */
static int race_rank(int rank, int nranks, void *p) {
  for (int k = 0; k < 150; k++) {
    char name[32];
    snprintf(name, sizeof name, "race.%d", k);
    muster_group_t *g;
    RCHECK(muster_group_join(name, rank, nranks, NULL, &g) == 0);
    int v = rank + k;
    RCHECK(muster_group_exchange(g, &v, sizeof v) == 0);
    const void *d;
    size_t len;
    RCHECK(muster_group_payload(g, (rank + 1) % nranks, &d, &len) == 0);
    RCHECK(*(const int *)d == (rank + 1) % nranks + k);
    RCHECK(muster_group_leave(g) == 0);
    RCHECK(muster__group_cache_count() <= 64); /* bounded: LRU drops idle ones */
  }
  RCHECK(test_count_muster_maps() <= 64);
  return 0;
}

TEST_IMPL(group_create_race) {
  ASSERT_EQ(run_procs(6, race_rank, NULL), 0);
  ASSERT_EQ(test_count_job_segments(test_job()), 0);
  return 0;
}

/* One process drops the group from its cache (flush) between calls while
 * its peer has already re-joined the old, cached segment and waits there:
 * the peer notices the group was retired and moves to the new segment, and
 * the call succeeds for both. */
static int retire_rank(int rank, int nranks, void *p) {
  muster_group_t *g;
  const void *d;
  size_t len;
  for (int call = 0; call < 3; call++) {
    if (rank == 1 && call > 0) {
      struct timespec ts = {0, 300 * 1000000L}; /* rank 0 is waiting in the old one */
      nanosleep(&ts, NULL);
      muster_group_cache_flush();
    }
    RCHECK(muster_group_join("retire", rank, nranks, NULL, &g) == 0);
    int v = rank * 10 + call, st = 0;
    /* a status set before the round that moves goes along */
    if (rank == 0) RCHECK(muster_group_set_status(g, 40 + call, &v, sizeof v) == 0);
    RCHECK(muster_group_exchange(g, &v, sizeof v) == 0);
    RCHECK(muster_group_payload(g, 1 - rank, &d, &len) == 0);
    RCHECK(*(const int *)d == (1 - rank) * 10 + call);
    RCHECK(muster_group_session(g) == 1); /* a new segment each call */
    RCHECK(muster_group_status(g, &st, &d, &len) == 0);
    RCHECK(st == 40 + call && len == sizeof v && *(const int *)d == call);
    RCHECK(muster_group_leave(g) == 0);
  }
  return 0;
}

TEST_IMPL(group_retired_relocates) {
  double t0 = test_now();
  ASSERT_EQ(run_procs(2, retire_rank, NULL), 0);
  ASSERT_DBL_LT(test_now() - t0, 5.0); /* nobody sat out a timeout */
  ASSERT_EQ(test_count_job_segments(test_job()), 0);
  ASSERT_EQ(run_threads(2, retire_rank, NULL), 0);
  muster_group_cache_flush();
  ASSERT_EQ(test_count_muster_maps(), 0);
  return 0;
}
