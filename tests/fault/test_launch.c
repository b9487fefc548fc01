/*
 * tests/fault/test_launch.c - launchers (muster_launch_*) for real: this
 * process opens a group as its launcher, forks the ranks and declares them;
 * one rank is SIGKILLed before it joined, or the leader while it computes,
 * or the launcher itself dies.  Every survivor must fail at once (not after
 * the 60 s timeout) with a message naming the victim's rank, pid, signal and
 * phase, and /dev/shm must be clean afterwards.
 */
#include <sys/prctl.h>
#include <time.h>

#include "integration/test_group_util.h"

#define TIMEOUT_S 60.0 /* the survivors must never get near it */

enum where { STOP_BEFORE_JOIN, STOP_AFTER_BARRIER_1 };

struct lcase {
  const char *group;
  int nranks, victim;
  enum where where;
  int report;      /* the launcher reaps the victim and reports it at once */
  unsigned flags;  /* muster_launch_open flags */
  int by_name;     /* ranks drop their inherited cache: they join by name, as
                      ranks that exec would */
};

struct lshared {
  double t_fault;
  struct rank_report rep[8];
};

static void nap_ms(int ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

/* Join, barrier 1, barrier 2; the victim stops itself where the case says;
 * rep gets the first failure (or 0). */
static int lrank(int rank, const struct lcase *c, struct lshared *sh) {
  muster_group_opts_t o = {.job = NULL, .timeout_s = TIMEOUT_S, .device = -1};
  muster_group_t *g = NULL;
  int victim = rank == c->victim;
  if (c->by_name) muster_group_cache_flush();
  if (victim && c->where == STOP_BEFORE_JOIN) raise(SIGSTOP);
  double t0 = test_now();
  int rc = muster_group_join(c->group, rank, c->nranks, &o, &g);
  if (rc == 0) rc = muster_group_barrier(g);
  if (rc == 0 && victim) raise(SIGSTOP); /* STOP_AFTER_BARRIER_1: "computing" */
  if (rc == 0) rc = muster_group_barrier(g);
  report_fill(&sh->rep[rank], rc, t0);
  if (g) muster_group_leave(g);
  return 0;
}

/* Fork the ranks of c, declaring each. */
static void launch_ranks(muster_launch_t *l, const struct lcase *c, struct lshared *sh,
                         pid_t *pids) {
  fflush(NULL);
  for (int r = 0; r < c->nranks; r++) {
    pid_t p = fork();
    ASSERT(p >= 0);
    if (p == 0) _exit(lrank(r, c, sh));
    pids[r] = p;
    ASSERT_OK(muster_launch_declare(l, r, p));
  }
}

static int reap(muster_launch_t *l, int rank, pid_t pid, char *fate, size_t cap) {
  int st;
  ASSERT_EQ(waitpid(pid, &st, 0), pid);
  int died = muster_launch_reap(l, rank, st, fate, cap);
  ASSERT(died == 0 || died == 1);
  return died;
}

static int launch_case(const struct lcase *c, const char *want_fmt) {
  struct lshared *sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
                            -1, 0);
  ASSERT(sh != MAP_FAILED);
  memset(sh, 0, sizeof *sh);
  muster_launch_t *l;
  ASSERT_OK(muster_launch_open(c->group, c->nranks, NULL, c->flags, &l));
  if (c->flags & MUSTER_LAUNCH_UNNAMED) ASSERT_EQ(test_count_job_segments(test_job()), 0);
  pid_t pids[8];
  launch_ranks(l, c, sh, pids);
  int st;
  ASSERT_EQ(waitpid(pids[c->victim], &st, WUNTRACED), pids[c->victim]);
  ASSERT(WIFSTOPPED(st));
  nap_ms(100); /* the others are waiting for it by now */
  sh->t_fault = test_now();
  ASSERT_EQ(kill(pids[c->victim], SIGKILL), 0);
  char fate[512];
  if (c->report) {
    ASSERT_EQ(reap(l, c->victim, pids[c->victim], fate, sizeof fate), 1);
    ASSERT_STR_CONTAINS(fate, "was killed by signal 9 (Killed)");
  }
  for (int r = 0; r < c->nranks; r++) /* survivors exit 0 after leaving: clean */
    if (r != c->victim) ASSERT_EQ(reap(l, r, pids[r], fate, sizeof fate), 0);
  if (!c->report) ASSERT_EQ(reap(l, c->victim, pids[c->victim], fate, sizeof fate), 1);
  ASSERT_OK(muster_launch_close(l));
  char want[256];
  snprintf(want, sizeof want, want_fmt, c->victim, (int)pids[c->victim], c->group);
  for (int r = 0; r < c->nranks; r++) {
    if (r == c->victim) continue;
    const struct rank_report *rep = &sh->rep[r];
    double dt = rep->t_end - sh->t_fault;
    fprintf(stderr, "rank %d: %.3f s after the kill: %s\n", r, dt, rep->msg);
    ASSERT_EQ(rep->done, 1);
    ASSERT_EQ(rep->rc, MUSTER_EPEERDEAD);
    ASSERT_STR_CONTAINS(rep->msg, want);
    ASSERT_DBL_LT(dt, 2.0);
  }
  ASSERT_EQ(test_count_job_segments(test_job()), 0);
  munmap(sh, sizeof *sh);
  return 0;
}

/* The launcher's report names the signal and "before it joined". */
TEST_IMPL(launch_rank_killed_before_join) {
  struct lcase c = {"lk_before", 3, 2, STOP_BEFORE_JOIN, 1, MUSTER_LAUNCH_UNNAMED, 0};
  return launch_case(&c, "rank %d (pid %d) was killed by signal 9 (Killed) before it joined "
                         "group %s; reported by its launcher");
}

/* No report (the launcher is busy): the declared pid alone gives the death
 * away, about 0.6 s later; the ranks joined by name (named group). */
TEST_IMPL(launch_declared_pid_without_report) {
  struct lcase c = {"lk_declared", 3, 1, STOP_BEFORE_JOIN, 0, 0, 1};
  return launch_case(&c, "rank %d (pid %d, declared by its launcher) died or exited while "
                         "group %s waited at barrier 1");
}

/* The leader dies "computing" (after barrier 1): the others, waiting at
 * barrier 2, get its pid, signal and phase from the launcher. */
TEST_IMPL(launch_leader_killed_computing) {
  struct lcase c = {"lk_leader", 3, 0, STOP_AFTER_BARRIER_1, 1, MUSTER_LAUNCH_UNNAMED, 0};
  return launch_case(&c, "rank %d (pid %d) was killed by signal 9 (Killed) past barrier 1 of "
                         "group %s (computing, or between calls); reported by its launcher");
}

/* The launcher dies without closing while rank 0 waits for rank 1 (which
 * never joins; neither dies with the launcher here): rank 0 fails at its
 * next liveness check naming the launcher, and removes the unformed name. */
TEST_IMPL(launch_launcher_dies) {
  struct lshared *sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
                            -1, 0);
  ASSERT(sh != MAP_FAILED);
  memset(sh, 0, sizeof *sh);
  ASSERT_EQ(prctl(PR_SET_CHILD_SUBREAPER, 1), 0); /* the orphans come back to us */
  struct lcase c = {"lk_launcher", 2, 1, STOP_BEFORE_JOIN, 0, 0, 1};
  fflush(NULL);
  pid_t launcher = fork();
  ASSERT(launcher >= 0);
  if (launcher == 0) {
    muster_launch_t *l;
    pid_t pids[2];
    if (muster_launch_open(c.group, 2, NULL, 0, &l) != 0) _exit(2);
    launch_ranks(l, &c, sh, pids);
    nap_ms(300); /* rank 0 waits at barrier 1 */
    sh->t_fault = test_now();
    raise(SIGKILL);
  }
  int st;
  ASSERT_EQ(waitpid(launcher, &st, 0), launcher);
  ASSERT(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
  double t0 = test_now();
  while (!__atomic_load_n(&sh->rep[0].done, __ATOMIC_ACQUIRE) && test_now() - t0 < 5) nap_ms(5);
  const struct rank_report *rep = &sh->rep[0];
  fprintf(stderr, "rank 0: %.3f s after the launcher died: %s\n", rep->t_end - sh->t_fault,
          rep->msg);
  ASSERT_EQ(rep->done, 1);
  ASSERT_EQ(rep->rc, MUSTER_EPEERDEAD);
  char want[160];
  snprintf(want, sizeof want, "the launcher (pid %d) of group %s died while rank 0 waited at "
           "barrier 1", (int)launcher, c.group);
  ASSERT_STR_CONTAINS(rep->msg, want);
  ASSERT_DBL_LT(rep->t_end - sh->t_fault, 2.0);
  /* rank 1 is still stopped before joining: end it, reap both orphans */
  int reaped = 0;
  for (double t1 = test_now(); reaped < 2 && test_now() - t1 < 5;) {
    pid_t w = waitpid(-1, &st, WNOHANG | WUNTRACED);
    if (w > 0 && WIFSTOPPED(st)) kill(w, SIGKILL);
    else if (w > 0) reaped++;
    else nap_ms(5);
  }
  ASSERT_EQ(reaped, 2);
  ASSERT_EQ(test_count_job_segments(test_job()), 0);
  munmap(sh, sizeof *sh);
  return 0;
}

/* A clean end, and the calls' refusals. */
TEST_IMPL(launch_api) {
  muster_launch_t *l, *l2;
  char fate[256];
  ASSERT_EQ(muster_launch_open("la", 2, NULL, 0, NULL), MUSTER_EINVAL);
  ASSERT_EQ(muster_launch_open("la", 2, NULL, 0x80, &l), MUSTER_EINVAL);
  ASSERT_EQ(muster_launch_open("la", 0, NULL, 0, &l), MUSTER_EINVAL);
  ASSERT_EQ(muster_launch_open("la", MUSTER_MAX_RANKS + 1, NULL, 0, &l), MUSTER_EINVAL);
  ASSERT_EQ(muster_launch_open("a/b", 2, NULL, 0, &l), MUSTER_EINVAL);
  setenv("MUSTER_TIMEOUT", "1e300", 1);
  ASSERT_EQ(muster_launch_open("la", 2, NULL, 0, &l), MUSTER_EINVAL);
  ASSERT_STR_CONTAINS(muster_last_error(), "MUSTER_TIMEOUT: '1e300'");
  unsetenv("MUSTER_TIMEOUT");
  ASSERT_OK(muster_launch_open("la", 2, NULL, 0, &l));
  ASSERT_EQ(test_count_job_segments(test_job()), 1); /* named until it forms */
  ASSERT_EQ(muster_launch_open("la", 2, NULL, 0, &l2), MUSTER_EBUSY);
  ASSERT_STR_CONTAINS(muster_last_error(), "already has a launcher");
  ASSERT_EQ(test_count_job_segments(test_job()), 1); /* the refusal removed nothing */
  ASSERT_EQ(muster_launch_declare(l, 2, 1234), MUSTER_EINVAL);
  ASSERT_EQ(muster_launch_declare(l, 0, 0), MUSTER_EINVAL);
  ASSERT_EQ(muster_launch_declare(NULL, 0, 1), MUSTER_EINVAL);
  ASSERT_EQ(muster_launch_reap(l, 0, 0x137f /* stopped by SIGSTOP */, fate, sizeof fate),
            MUSTER_EINVAL);
  ASSERT_EQ(muster_launch_reap(l, 5, 0, fate, sizeof fate), MUSTER_EINVAL);
  /* two ranks that do their rounds and exit 0: clean ends */
  pid_t pids[2];
  struct lshared *sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
                            -1, 0);
  struct lcase c = {"la", 2, -1, STOP_BEFORE_JOIN, 1, 0, 1};
  launch_ranks(l, &c, sh, pids);
  for (int r = 0; r < 2; r++) {
    int died = reap(l, r, pids[r], fate, sizeof fate);
    fprintf(stderr, "%s (rc %d: %s)\n", fate, sh->rep[r].rc, sh->rep[r].msg);
    ASSERT_EQ(died, 0);
    ASSERT_STR_CONTAINS(fate, "exited with status 0 after it left group la");
    ASSERT_EQ(sh->rep[r].rc, 0);
  }
  ASSERT_EQ(test_count_job_segments(test_job()), 0); /* it formed */
  ASSERT_OK(muster_launch_close(l));
  ASSERT_EQ(muster_launch_close(NULL), MUSTER_EINVAL);
  /* a group that already existed cannot be made nameless */
  muster_group_t *g;
  ASSERT_OK(muster_group_join("lb", 0, 2, NULL, &g));
  ASSERT_EQ(muster_launch_open("lb", 2, NULL, MUSTER_LAUNCH_UNNAMED, &l), MUSTER_EEXIST);
  ASSERT_EQ(test_count_job_segments(test_job()), 1); /* its name is still there */
  ASSERT_OK(muster_launch_open("lb", 2, NULL, 0, &l)); /* attaching is fine */
  ASSERT_OK(muster_launch_close(l)); /* never formed: the name goes */
  ASSERT_EQ(test_count_job_segments(test_job()), 0);
  muster_group_leave(g);
  munmap(sh, sizeof *sh);
  return 0;
}
