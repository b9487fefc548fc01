/*
 * tests/fault/test_fault_group.c - real failures: fork ranks, SIGKILL or
 * SIGSTOP one at a given phase, check every survivor's error code, message
 * and how fast it came, and that /dev/shm is clean afterwards.
 */
#include <time.h>

#include "integration/test_group_util.h"

enum phase {
  KILL_BETWEEN_CALLS,   /* after leaving call 1, before joining call 2 */
  EXIT_BETWEEN_CALLS,   /* same, but a normal exit() (library destructor runs) */
  KILL_BETWEEN_LATE,    /* KILL_BETWEEN_CALLS, and one survivor joins call 2
                           only after the others found the death: its join
                           reports it */
  KILL_BEFORE_FIRST_JOIN, /* never joined: nobody knows its pid -> timeout */
  KILL_JOINED,          /* seated, before publishing */
  KILL_WAITING,         /* arrived at the barrier, waiting for a late rank */
  KILL_AFTER_PUBLISH,   /* passed the exchange, dies before the next barrier */
  STOP_JOINED,          /* SIGSTOP: seated, never arrives */
  STOP_WAITING,         /* SIGSTOP while waiting; misses the next barrier */
};

struct shared {
  double t_fault;       /* test_now() when the fault was injected */
  int stopped;          /* the victim stopped itself */
  struct rank_report rep[8];
};

struct farg {
  enum phase phase;
  int victim;
  struct shared *sh;
};

static void fault_now(struct farg *a) {
  a->sh->t_fault = test_now();
  __atomic_store_n(&a->sh->stopped, 1, __ATOMIC_RELEASE);
  raise(a->phase >= STOP_JOINED ? SIGSTOP : SIGKILL);
}

static void *killer_thread(void *p) {
  struct timespec ts = {0, 150 * 1000000L};
  nanosleep(&ts, NULL);
  fault_now(p);
  return NULL;
}

static void nap_ms(int ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

/* Call 1 forms the group (unless the victim dies before it); call 2 has an
 * exchange and a barrier; the victim fails in one phase of it. */
static int fault_rank(int rank, int nranks, void *p) {
  struct farg *a = p;
  int victim = rank == a->victim;
  muster_group_t *g = NULL;
  struct rank_report *rep = &a->sh->rep[rank];
  int v = rank;
  const void *d;
  size_t len;
  if (a->phase == KILL_BEFORE_FIRST_JOIN && victim) fault_now(a);
  if (a->phase != KILL_BEFORE_FIRST_JOIN) {
    RCHECK(muster_group_join("flt", rank, nranks, NULL, &g) == 0);
    RCHECK(muster_group_exchange(g, &v, sizeof v) == 0);
    RCHECK(muster_group_barrier(g) == 0); /* nobody still reads call 1 */
    RCHECK(muster_group_leave(g) == 0);
    if ((a->phase == KILL_BETWEEN_CALLS || a->phase == KILL_BETWEEN_LATE) && victim) fault_now(a);
    if (a->phase == KILL_BETWEEN_LATE && rank == (a->victim + 1) % nranks) {
      nap_ms(600);
    }
    if (a->phase == EXIT_BETWEEN_CALLS && victim) {
      a->sh->t_fault = test_now();
      exit(0);
    }
  }
  double t0 = test_now();
  int rc = muster_group_join("flt", rank, nranks, NULL, &g);
  if (rc) {
    /* late to a call whose group a survivor already poisoned: the join
     * itself reports the same error */
    report_fill(rep, rc, t0);
    RCHECK(rc == MUSTER_EPEERDEAD && !victim);
    return 0;
  }
  if ((a->phase == KILL_JOINED || a->phase == STOP_JOINED) && victim) fault_now(a);
  pthread_t th;
  int have_killer = 0;
  if (a->phase == KILL_WAITING || a->phase == STOP_WAITING) {
    if (victim) RCHECK(pthread_create(&th, NULL, killer_thread, a) == 0);
    have_killer = victim;
    if (rank == (a->victim + 1) % nranks) nap_ms(400); /* the late one */
  }
  rc = muster_group_exchange(g, &v, sizeof v);
  if (rc == 0) {
    if (a->phase == KILL_AFTER_PUBLISH && victim) fault_now(a);
    RCHECK(muster_group_payload(g, (rank + 1) % nranks, &d, &len) == 0);
    if (rank == 0) muster_group_set_status(g, 7, NULL, 0);
    rc = muster_group_barrier(g);
  }
  report_fill(rep, rc, t0);
  if (have_killer) pthread_join(th, NULL); /* a stopped victim was woken up */
  if (rc) RCHECK(muster_group_barrier(g) == MUSTER_EPOISONED); /* never waits again */
  RCHECK(muster_group_leave(g) == rc);
  return 0;
}

static void check_clean(void) {
  ASSERT_EQ(test_count_job_segments(test_job()), 0);
}

/* Run the scenario with n ranks; check survivors got `code` naming the
 * victim (and its pid when `named`) within max_s of the fault. */
static int fault_test(enum phase ph, int n, int victim, int code, int named, double min_s,
                      double max_s) {
  struct shared *sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
                           -1, 0);
  ASSERT(sh != MAP_FAILED);
  memset(sh, 0, sizeof *sh);
  struct farg a = {ph, victim, sh};
  pid_t pids[8];
  fork_ranks(n, fault_rank, &a, pids);
  if (ph >= STOP_JOINED) {
    /* wait for every survivor to report, then wake the stopped victim:
     * it must get the same error at its next call */
    double t0 = test_now();
    for (int r = 0; r < n; r++)
      while (r != victim && !__atomic_load_n(&sh->rep[r].done, __ATOMIC_ACQUIRE)) {
        ASSERT(test_now() - t0 < 10);
        nap_ms(5);
      }
    ASSERT_EQ(sh->stopped, 1);
    kill(pids[victim], SIGCONT);
  }
  ASSERT_EQ(wait_ranks(n, pids), 0);
  char want[64];
  snprintf(want, sizeof want, named ? "rank %d (pid %d" : "rank %d", victim, (int)pids[victim]);
  for (int r = 0; r < n; r++) {
    if (r == victim && ph < STOP_JOINED) continue;
    struct rank_report *rep = &sh->rep[r];
    ASSERT_EQ(rep->done, 1);
    if (rep->rc != code)
      fprintf(stderr, "rank %d: rc %d (%s): %s\n", r, rep->rc, muster_strerror(rep->rc), rep->msg);
    ASSERT_EQ(rep->rc, code);
    ASSERT_STR_CONTAINS(rep->msg, want);
    /* the stopped victim is the one missing rank, described as stopped */
    if (ph >= STOP_JOINED) {
      char missing[64], stopped[96];
      snprintf(missing, sizeof missing, "rank %d missing after", victim);
      snprintf(stopped, sizeof stopped, "rank %d (pid %d, device -1) is stopped (SIGSTOP?)",
               victim, (int)pids[victim]);
      ASSERT_STR_CONTAINS(rep->msg, missing);
      ASSERT_STR_CONTAINS(rep->msg, stopped);
    }
    if (r == victim) continue; /* woken late on purpose */
    double dt = rep->t_end - sh->t_fault;
    if (dt < min_s || dt > max_s)
      fprintf(stderr, "rank %d took %.3f s after the fault (want %.1f..%.1f): %s\n", r, dt, min_s,
              max_s, rep->msg);
    ASSERT_DBL_LT(dt, max_s);
    ASSERT_DBL_LT(min_s, dt);
  }
  if (ph == KILL_BETWEEN_LATE) /* told by its join, not by a barrier */
    ASSERT_STR_CONTAINS(sh->rep[(victim + 1) % n].msg, "joining group flt as rank");
  check_clean();
  munmap(sh, sizeof *sh);
  return 0;
}

TEST_IMPL(fault_kill_between_calls) {
  return fault_test(KILL_BETWEEN_CALLS, 3, 1, MUSTER_EPEERDEAD, 1, 0, 2.0);
}
TEST_IMPL(fault_kill_between_calls_late_joiner) {
  return fault_test(KILL_BETWEEN_LATE, 3, 0, MUSTER_EPEERDEAD, 1, 0, 2.0);
}
TEST_IMPL(fault_exit_between_calls) {
  return fault_test(EXIT_BETWEEN_CALLS, 3, 2, MUSTER_EPEERDEAD, 1, 0, 2.0);
}
TEST_IMPL(fault_kill_joined) { return fault_test(KILL_JOINED, 3, 2, MUSTER_EPEERDEAD, 1, 0, 2.0); }
TEST_IMPL(fault_kill_waiting) { return fault_test(KILL_WAITING, 3, 1, MUSTER_EPEERDEAD, 1, 0, 2.0); }
TEST_IMPL(fault_kill_after_publish) {
  return fault_test(KILL_AFTER_PUBLISH, 4, 3, MUSTER_EPEERDEAD, 1, 0, 2.0);
}
TEST_IMPL(fault_kill_leader_joined) { return fault_test(KILL_JOINED, 2, 0, MUSTER_EPEERDEAD, 1, 0, 2.0); }
TEST_IMPL(fault_kill_leader_waiting) {
  return fault_test(KILL_WAITING, 2, 0, MUSTER_EPEERDEAD, 1, 0, 2.0);
}
TEST_IMPL(fault_kill_leader_after_publish) {
  return fault_test(KILL_AFTER_PUBLISH, 3, 0, MUSTER_EPEERDEAD, 1, 0, 2.0);
}
TEST_IMPL(fault_kill_before_first_join) {
  /* it never sat, so nobody knows its pid: the deadline names it */
  setenv("MUSTER_TIMEOUT", "1", 1);
  return fault_test(KILL_BEFORE_FIRST_JOIN, 3, 2, MUSTER_ETIMEDOUT, 0, 0.9, 3.0);
}
TEST_IMPL(fault_stop_joined) {
  setenv("MUSTER_TIMEOUT", "1", 1);
  return fault_test(STOP_JOINED, 3, 1, MUSTER_ETIMEDOUT, 0, 0.9, 2.5);
}
TEST_IMPL(fault_stop_waiting) {
  setenv("MUSTER_TIMEOUT", "1", 1);
  return fault_test(STOP_WAITING, 2, 0, MUSTER_ETIMEDOUT, 0, 0.9, 3.0);
}
