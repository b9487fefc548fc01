/*
 * tests/fault/test_fault_threads.c - failures in threads mode (a hung
 * thread, a thread that ends without leaving, an explicit abort), seats
 * taken twice, bad payloads, and what a poisoned cached group turns into.
 * (Pid namespaces: tests/integration/test_pidns.c.)
 */
#include <time.h>

#include "group/group.h"
#include "integration/test_group_util.h"

static struct rank_report reps[8];

static void nap_ms(int ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

/* join a group again after its failure: a fresh segment, rounds work */
static int rejoin_rank(int rank, int nranks, void *p) {
  muster_group_t *g;
  RCHECK(muster_group_join(p, rank, nranks, NULL, &g) == 0);
  RCHECK(muster_group_session(g) == 1);
  RCHECK(muster_group_barrier(g) == 0);
  RCHECK(muster_group_leave(g) == 0);
  return 0;
}

static int hang_rank(int rank, int nranks, void *p) {
  muster_group_opts_t o = {NULL, 0.5, rank};
  muster_group_t *g;
  RCHECK(muster_group_join("hang", rank, nranks, &o, &g) == 0);
  if (rank == 2) nap_ms(1500); /* hangs past everyone's deadline */
  double t0 = test_now();
  int v = rank, rc = muster_group_exchange(g, &v, sizeof v);
  report_fill(&reps[rank], rc, t0);
  RCHECK(muster_group_leave(g) == rc);
  return 0;
}

TEST_IMPL(fault_thread_hangs) {
  ASSERT_EQ(run_threads(3, hang_rank, NULL), 0);
  for (int r = 0; r < 3; r++) {
    ASSERT_EQ(reps[r].rc, MUSTER_ETIMEDOUT);
    ASSERT_STR_CONTAINS(reps[r].msg, "rank 2 missing after 0.5 s");
    ASSERT_STR_CONTAINS(reps[r].msg, "device 2");
    if (r != 2) ASSERT_DBL_LT(reps[r].elapsed, 1.0);
  }
  /* poisoned: kept cached (to tell late ranks) but the next join by a rank
   * that was told makes a fresh, healthy group */
  ASSERT_EQ(muster__group_cache_count(), 1);
  ASSERT_EQ(run_threads(3, rejoin_rank, "hang"), 0);
  ASSERT_EQ(muster__group_cache_count(), 1);
  muster_group_cache_flush();
  ASSERT_EQ(test_count_muster_maps(), 0);
  return 0;
}

static muster_group_t *quitter;

static int quitter_rank(int rank, int nranks, void *p) {
  muster_group_t *g;
  int v = rank;
  RCHECK(muster_group_join("quit", rank, nranks, NULL, &g) == 0);
  RCHECK(muster_group_exchange(g, &v, sizeof v) == 0);
  if (rank == 1) { /* ends its thread still seated: a bug, caught */
    quitter = g;
    return 0;
  }
  double t0 = test_now();
  int rc = muster_group_exchange(g, &v, sizeof v);
  report_fill(&reps[rank], rc, t0);
  RCHECK(muster_group_leave(g) == rc);
  return 0;
}

TEST_IMPL(fault_thread_ends_seated) {
  ASSERT_EQ(run_threads(3, quitter_rank, NULL), 0);
  for (int r = 0; r < 3; r += 2) {
    ASSERT_EQ(reps[r].rc, MUSTER_EPEERDEAD);
    ASSERT_STR_CONTAINS(reps[r].msg, "rank 1 (pid");
    ASSERT_STR_CONTAINS(reps[r].msg, "ended its thread");
    ASSERT_DBL_LT(reps[r].elapsed, 2.0);
  }
  /* the handle of the ended thread can still be left from another one */
  ASSERT_OK(muster_group_leave(quitter));
  muster_group_cache_flush();
  ASSERT_EQ(test_count_muster_maps(), 0);
  return 0;
}

static int abort_rank(int rank, int nranks, void *p) {
  muster_group_t *g;
  int v = rank;
  RCHECK(muster_group_join("abrt", rank, nranks, NULL, &g) == 0);
  RCHECK(muster_group_exchange(g, &v, sizeof v) == 0);
  double t0 = test_now();
  int rc;
  if (rank == 1) {
    RCHECK(muster_group_abort(g, MUSTER_EPROVIDER, "cusolver said no") == 0);
    RCHECK(muster_group_abort(g, MUSTER_EINVAL, "again") == 0); /* idempotent */
    rc = muster_group_barrier(g);
  } else {
    if (rank == 0) nap_ms(200); /* some wait, some arrive after */
    rc = muster_group_barrier(g);
  }
  report_fill(&reps[rank], rc, t0);
  RCHECK(muster_group_barrier(g) == MUSTER_EPOISONED);
  RCHECK(strstr(muster_last_error(), "poisoned earlier") != NULL);
  RCHECK(muster_group_leave(g) == rc);
  return 0;
}

TEST_IMPL(group_abort_reaches_all) {
  ASSERT_EQ(run_threads(4, abort_rank, NULL), 0);
  for (int r = 0; r < 4; r++) {
    ASSERT_EQ(reps[r].rc, MUSTER_EPROVIDER);
    ASSERT_STR_CONTAINS(reps[r].msg, "rank 1 (pid");
    ASSERT_STR_CONTAINS(reps[r].msg, "cusolver said no");
    ASSERT_DBL_LT(reps[r].elapsed, 1.0);
  }
  ASSERT_EQ(run_threads(4, rejoin_rank, "abrt"), 0);
  muster_group_t *g;
  ASSERT_EQ(muster_group_join("abrt", 0, 1, NULL, &g), 0);
  ASSERT_EQ(muster_group_abort(g, 0, "not an error"), MUSTER_EINVAL);
  ASSERT_EQ(muster_group_abort(g, 5, "not an error"), MUSTER_EINVAL);
  ASSERT_OK(muster_group_leave(g));
  muster_group_cache_flush();
  return 0;
}

TEST_IMPL(group_seat_taken) {
  muster_group_t *a, *b;
  ASSERT_OK(muster_group_join("seat", 1, 2, NULL, &a));
  ASSERT_EQ(muster_group_join("seat", 1, 2, NULL, &b), MUSTER_EBUSY);
  ASSERT_STR_CONTAINS(muster_last_error(), "already joined");
  /* from another process: the seat is taken by a live one */
  pid_t c = fork();
  if (c == 0) {
    muster_group_cache_flush(); /* forget the inherited mapping: go by name */
    int rc = muster_group_join("seat", 1, 2, NULL, &b);
    _exit(rc == MUSTER_EBUSY && strstr(muster_last_error(), "already taken by pid") ? 0 : 1);
  }
  int st;
  waitpid(c, &st, 0);
  ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  ASSERT_OK(muster_group_leave(a));
  ASSERT_OK(muster_group_join("seat", 1, 2, NULL, &b)); /* free again */
  ASSERT_OK(muster_group_leave(b));
  ASSERT_EQ(test_count_job_segments(test_job()), 0); /* never formed: last out removed it */
  muster_group_cache_flush();
  ASSERT_EQ(test_count_muster_maps(), 0);
  return 0;
}

static int bad_payload_rank(int rank, int nranks, void *p) {
  muster_group_t *g;
  char big[MUSTER_MAX_PAYLOAD + 1] = {0};
  RCHECK(muster_group_join("badpay", rank, nranks, NULL, &g) == 0);
  if (rank == 0) nap_ms(100); /* both have joined (a later join would make a fresh group) */
  int rc = rank == 0 ? muster_group_exchange(g, big, sizeof big) : muster_group_exchange(g, big, 4);
  report_fill(&reps[rank], rc, test_now());
  const void *d;
  size_t len;
  RCHECK(muster_group_payload(g, 0, &d, &len) == MUSTER_EINVAL); /* nothing completed */
  RCHECK(muster_group_leave(g) == rc);
  return 0;
}

TEST_IMPL(group_bad_payload) {
  ASSERT_EQ(run_threads(2, bad_payload_rank, NULL), 0);
  for (int r = 0; r < 2; r++) {
    ASSERT_EQ(reps[r].rc, MUSTER_EINVAL);
    ASSERT_STR_CONTAINS(reps[r].msg, "1025 bytes, max 1024");
  }
  muster_group_t *g;
  ASSERT_OK(muster_group_join("st", 0, 2, NULL, &g));
  /* only the leader sets a status; rank 1 may not */
  muster_group_t *g1;
  ASSERT_OK(muster_group_join("st", 1, 2, NULL, &g1));
  ASSERT_EQ(muster_group_set_status(g1, 1, NULL, 0), MUSTER_EINVAL);
  ASSERT_STR_CONTAINS(muster_last_error(), "only the leader");
  int s = 9;
  ASSERT_OK(muster_group_status(g1, &s, NULL, NULL)); /* none yet: 0 */
  ASSERT_EQ(s, 0);
  ASSERT_OK(muster_group_leave(g1));
  ASSERT_OK(muster_group_leave(g));
  muster_group_cache_flush();
  return 0;
}

/* A barrier where one rank publishes and another does not. */
static int mixed_rank(int rank, int nranks, void *p) {
  muster_group_t *g;
  int v = 5;
  RCHECK(muster_group_join("mixed", rank, nranks, NULL, &g) == 0);
  if (rank == 0) {
    RCHECK(muster_group_exchange(g, &v, sizeof v) == 0);
    const void *d;
    size_t len;
    RCHECK(muster_group_payload(g, 1, &d, &len) == MUSTER_EMISMATCH);
    RCHECK(muster_group_payload(g, 0, &d, &len) == 0 && len == sizeof v);
    RCHECK(muster_group_payload(g, 2, &d, &len) == MUSTER_EINVAL);
  } else {
    RCHECK(muster_group_barrier(g) == 0);
  }
  RCHECK(muster_group_leave(g) == 0);
  return 0;
}

TEST_IMPL(group_payload_mismatch) {
  ASSERT_EQ(run_threads(2, mixed_rank, NULL), 0);
  muster_group_cache_flush();
  return 0;
}
