/* tests/integration/test_group_soak.c - 100,000 rounds and 10,000
 * join/leave cycles with fds and mappings unchanged. */
#include "group/group.h"
#include "test_group_util.h"

static int soak_rank(int rank, int nranks, void *p) {
  int rounds = *(int *)p;
  muster_group_t *g;
  RCHECK(muster_group_join("soak", rank, nranks, NULL, &g) == 0);
  for (int k = 0; k < rounds; k++) {
    int v[2] = {rank, k};
    RCHECK(muster_group_exchange(g, v, sizeof v) == 0);
    const void *d;
    size_t len;
    int other = (rank + 1) % nranks;
    RCHECK(muster_group_payload(g, other, &d, &len) == 0);
    RCHECK(((const int *)d)[0] == other && ((const int *)d)[1] == k);
  }
  RCHECK(muster_group_leave(g) == 0);
  return 0;
}

static int cycle_rank(int rank, int nranks, void *p) {
  int cycles = *(int *)p;
  for (int k = 0; k < cycles; k++) {
    muster_group_t *g;
    RCHECK(muster_group_join("soakc", rank, nranks, NULL, &g) == 0);
    int v = k * 2 + rank;
    RCHECK(muster_group_exchange(g, &v, sizeof v) == 0);
    const void *d;
    size_t len;
    RCHECK(muster_group_payload(g, 1 - rank, &d, &len) == 0 && *(const int *)d == k * 2 + 1 - rank);
    RCHECK(muster_group_leave(g) == 0);
  }
  return 0;
}

TEST_IMPL(group_soak_threads) {
  int fds = test_count_fds(), maps = test_count_muster_maps();
  int rounds = 100000, cycles = 10000;
  double t0 = test_now();
  ASSERT_EQ(run_threads(2, soak_rank, &rounds), 0);
  double t1 = test_now();
  ASSERT_EQ(run_threads(2, cycle_rank, &cycles), 0);
  double t2 = test_now();
  fprintf(stderr, "soak: %d rounds %.2f us/round, %d cycles %.2f us/cycle (2 threads)\n", rounds,
          (t1 - t0) / rounds * 1e6, cycles, (t2 - t1) / cycles * 1e6);
  ASSERT_EQ(muster__group_cache_count(), 2);
  ASSERT_EQ(test_count_muster_maps(), maps + 2); /* the two cached groups */
  ASSERT_EQ(test_count_fds(), fds + 2);
  muster_group_cache_flush();
  ASSERT_EQ(test_count_fds(), fds);
  ASSERT_EQ(test_count_muster_maps(), maps);
  return 0;
}

static int proc_soak_rank(int rank, int nranks, void *p) {
  int fds = test_count_fds();
  int n = 20000, c = 2000;
  if (soak_rank(rank, nranks, &n) || cycle_rank(rank, nranks, &c)) return 1;
  if (test_count_fds() != fds + 2 || test_count_muster_maps() != 2)
    fprintf(stderr, "rank %d: fds %d -> %d, maps %d, cached %d\n", rank, fds, test_count_fds(),
            test_count_muster_maps(), muster__group_cache_count());
  RCHECK(test_count_fds() == fds + 2 && test_count_muster_maps() == 2);
  /* a peer's flush retires the groups (our next join would go by name):
   * flush only once everybody has counted */
  muster_group_t *g;
  RCHECK(muster_group_join("soakfin", rank, nranks, NULL, &g) == 0);
  RCHECK(muster_group_barrier(g) == 0);
  RCHECK(muster_group_leave(g) == 0);
  muster_group_cache_flush();
  RCHECK(test_count_fds() == fds && test_count_muster_maps() == 0);
  return 0;
}

TEST_IMPL(group_soak_processes) {
  ASSERT_EQ(run_procs(2, proc_soak_rank, NULL), 0);
  return 0;
}
