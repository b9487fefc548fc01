/* tests/integration/test_group_exchange.c - exchange, status and many
 * rounds with 1, 2, 4, 8 participants, as threads and as processes. */
#include "group/group.h"
#include "test_group_util.h"

struct xarg {
  const char *group;
  int rounds;
};

/* payload of rank r in round k: length and bytes both depend on (r, k) */
static size_t pay_len(int r, int k) { return 8 + (size_t)((r * 131 + k * 17) % (MUSTER_MAX_PAYLOAD - 8)); }
static uint8_t pay_byte(int r, int k, size_t i) { return (uint8_t)(r * 29 + k * 7 + i * 3 + 1); }

static int exchange_rank(int rank, int nranks, void *p) {
  struct xarg *a = p;
  muster_group_opts_t o = {NULL, 20, rank % 3 - 1};
  muster_group_t *g = NULL;
  RCHECK(muster_group_join(a->group, rank, nranks, &o, &g) == 0);
  RCHECK(muster_group_rank(g) == rank && muster_group_size(g) == nranks);
  RCHECK(strcmp(muster_group_name(g), a->group) == 0);
  uint8_t buf[MUSTER_MAX_PAYLOAD];
  for (int k = 0; k < a->rounds; k++) {
    size_t n = pay_len(rank, k);
    for (size_t i = 0; i < n; i++) buf[i] = pay_byte(rank, k, i);
    if (rank == 0 && k % 2 == 0) {
      int v = 1000 + k;
      RCHECK(muster_group_set_status(g, -k, &v, sizeof v) == 0);
    }
    RCHECK(muster_group_exchange(g, buf, n) == 0);
    for (int r = 0; r < nranks; r++) {
      const void *d;
      size_t len;
      RCHECK(muster_group_payload(g, r, &d, &len) == 0);
      RCHECK(len == pay_len(r, k));
      for (size_t i = 0; i < len; i++) RCHECK(((const uint8_t *)d)[i] == pay_byte(r, k, i));
    }
    int st;
    const void *sd;
    size_t sl;
    RCHECK(muster_group_status(g, &st, &sd, &sl) == 0);
    int want_k = k - (k % 2); /* set on even rounds only: newest one */
    RCHECK(st == -want_k && sl == sizeof(int) && *(const int *)sd == 1000 + want_k);
    if (k % 5 == 4) RCHECK(muster_group_barrier(g) == 0); /* a plain barrier now and then */
  }
  for (int r = 0; r < nranks; r++) RCHECK(muster__group_device(g, r) == r % 3 - 1);
  RCHECK(muster_group_leave(g) == 0);
  return 0;
}

static int exchange_test(int mode, int nranks, int rounds) {
  char name[64];
  snprintf(name, sizeof name, "xchg.%s.%d", mode ? "p" : "t", nranks);
  struct xarg a = {name, rounds};
  int fds = test_count_fds(), maps = test_count_muster_maps();
  ASSERT_EQ(run_mode(mode, nranks, exchange_rank, &a), 0);
  muster_group_cache_flush();
  ASSERT_EQ(test_count_fds(), fds);
  ASSERT_EQ(test_count_muster_maps(), maps);
  ASSERT_EQ(test_count_job_segments(test_job()), 0);
  return 0;
}

TEST_IMPL(group_exchange_threads_1) { return exchange_test(MODE_THREADS, 1, 200); }
TEST_IMPL(group_exchange_threads_2) { return exchange_test(MODE_THREADS, 2, 2000); }
TEST_IMPL(group_exchange_threads_4) { return exchange_test(MODE_THREADS, 4, 1000); }
TEST_IMPL(group_exchange_threads_8) { return exchange_test(MODE_THREADS, 8, 500); }
TEST_IMPL(group_exchange_procs_1) { return exchange_test(MODE_PROCS, 1, 200); }
TEST_IMPL(group_exchange_procs_2) { return exchange_test(MODE_PROCS, 2, 2000); }
TEST_IMPL(group_exchange_procs_4) { return exchange_test(MODE_PROCS, 4, 1000); }
TEST_IMPL(group_exchange_procs_8) { return exchange_test(MODE_PROCS, 8, 500); }
