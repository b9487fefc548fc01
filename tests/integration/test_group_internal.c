/* tests/integration/test_group_internal.c - what runtime modules use of a
 * group (runtime/group/group.h): peers' pids and devices, threads-mode
 * detection, and a barrier without deadline that still sees a death. */
#include <time.h>

#include "group/group.h"
#include "test_group_util.h"

static void nap_ms(int ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

struct iarg {
  int mode;
  struct rank_report *rep;
};

static int info_rank(int rank, int nranks, void *p) {
  struct iarg *a = p;
  muster_group_opts_t o = {NULL, 1.0, 10 + rank};
  muster_group_t *g;
  RCHECK(muster_group_join("info", rank, nranks, &o, &g) == 0);
  RCHECK(muster__group_timeout(g) == 1.0);
  int pid = getpid();
  RCHECK(muster_group_exchange(g, &pid, sizeof pid) == 0);
  for (int r = 0; r < nranks; r++) {
    const void *d;
    size_t len;
    RCHECK(muster_group_payload(g, r, &d, &len) == 0);
    RCHECK(muster__group_peer_pid(g, r) == *(const int *)d);
    RCHECK(muster__group_device(g, r) == 10 + r);
  }
  RCHECK(muster__group_all_local(g) == (a->mode == MODE_THREADS || nranks == 1));
  RCHECK(muster__group_peer_pid(g, nranks) == 0 && muster__group_device(g, -1) == -1);
  /* the leader computes for longer than the 1 s timeout: the others wait
   * without a deadline and are not timed out */
  if (rank == 0) nap_ms(1500);
  double t0 = test_now();
  int rc = muster__group_barrier_ex(g, 0);
  report_fill(&a->rep[rank], rc, t0);
  RCHECK(rc == 0);
  RCHECK(muster_group_barrier(g) == 0);
  RCHECK(muster_group_leave(g) == 0);
  return 0;
}

TEST_IMPL(group_internal_api) {
  struct rank_report *rep = reports_new(3);
  struct iarg a = {MODE_THREADS, rep};
  ASSERT_EQ(run_threads(3, info_rank, &a), 0);
  ASSERT_DBL_LT(1.3, rep[1].elapsed);
  a.mode = MODE_PROCS;
  ASSERT_EQ(run_procs(3, info_rank, &a), 0);
  ASSERT_DBL_LT(1.3, rep[2].elapsed);
  muster_group_cache_flush();
  reports_free(rep, 3);
  return 0;
}

/* No deadline, but the leader dies while the others wait: they learn it. */
static int long_wait_rank(int rank, int nranks, void *p) {
  struct rank_report *rep = p;
  muster_group_t *g;
  RCHECK(muster_group_join("longwait", rank, nranks, NULL, &g) == 0);
  RCHECK(muster_group_barrier(g) == 0);
  if (rank == 0) {
    nap_ms(300);
    rep[0].t_end = test_now();
    raise(SIGKILL);
  }
  double t0 = test_now();
  int rc = muster__group_barrier_ex(g, 0);
  report_fill(&rep[rank], rc, t0);
  muster_group_leave(g);
  return 0;
}

TEST_IMPL(group_barrier_ex_sees_death) {
  struct rank_report *rep = reports_new(3);
  pid_t pids[3];
  fork_ranks(3, long_wait_rank, rep, pids);
  ASSERT_EQ(wait_ranks(3, pids), 0);
  for (int r = 1; r < 3; r++) {
    ASSERT_EQ(rep[r].rc, MUSTER_EPEERDEAD);
    ASSERT_STR_CONTAINS(rep[r].msg, "rank 0 (pid");
    ASSERT_DBL_LT(rep[r].t_end - rep[0].t_end, 2.0);
  }
  ASSERT_EQ(test_count_job_segments(test_job()), 0);
  reports_free(rep, 3);
  return 0;
}
