/*
 * tests/fault/test_fault_stop.c - SIGSTOP and the rendezvous deadline.
 *
 * What a deadline means (docs/runtime.md): it counts the time in which the
 * group could make progress.  A stop of every participant (the job's
 * process group, or the one process holding every rank as threads) does
 * not count: the rounds go on after SIGCONT.  One rank stopped alone is a
 * missing rank: the others fail with MUSTER_ETIMEDOUT after MUSTER_TIMEOUT,
 * naming it "stopped (SIGSTOP?)" and no one else.
 *
 * The ranks loop: exchange (rank 0 publishes whether to finish), barrier.
 * In the "mid-work" cases rank 1 computes 60 ms of CPU time between the
 * two, and the stop comes as it starts: the others have waited at the
 * barrier since before the stop, and after it rank 1 still has work left.
 * Counting wall time, they time out at once after SIGCONT (every time, on
 * the old code); not counting the stop, they wait for it.
 */
#include <sched.h>
#include <time.h>

#include "integration/test_group_util.h"

enum { R = 3, STOPS = 2, WORKER = 1 };
#define TIMEOUT_S 1.0
#define STOP_S 2.0
/* short, so that what is left after SIGCONT finishes well within the
 * timeout even on a loaded machine (60 ms of CPU took 0.6 s at load 20) */
#define WORK_S 0.06

struct stop_shared {
  int finish;      /* set by the test; rank 0 publishes it */
  int in_work;     /* WORKER is computing between exchange and barrier */
  int rounds[R];   /* rounds completed, per rank */
  struct rank_report rep[R];
};

struct stop_arg {
  struct stop_shared *sh;
  double work_s;   /* WORKER's CPU seconds per round (0: none) */
};

static double cpu_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Work that a stop pauses: CPU time does not pass while stopped. */
static void cpu_work(double s) {
  double t0 = cpu_now();
  while (cpu_now() - t0 < s) {
  }
}

static void nap_ms(int ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

static int loop_rank(int rank, int nranks, void *p) {
  struct stop_arg *a = p;
  struct stop_shared *sh = a->sh;
  muster_group_opts_t opts = {.job = NULL, .timeout_s = TIMEOUT_S, .device = -1};
  muster_group_t *g = NULL;
  RCHECK(muster_group_join("stop", rank, nranks, &opts, &g) == 0);
  double t0 = test_now();
  int rc = 0;
  for (int round = 0;; round++) {
    int fin = rank == 0 ? __atomic_load_n(&sh->finish, __ATOMIC_ACQUIRE) : 0;
    const void *d;
    size_t len;
    if ((rc = muster_group_exchange(g, &fin, sizeof fin)) != 0) break;
    RCHECK(muster_group_payload(g, 0, &d, &len) == 0 && len == sizeof fin);
    int stop = *(const int *)d;
    if (rank == WORKER && a->work_s > 0) {
      __atomic_store_n(&sh->in_work, 1, __ATOMIC_RELEASE);
      cpu_work(a->work_s);
      __atomic_store_n(&sh->in_work, 0, __ATOMIC_RELEASE);
    }
    if ((rc = muster_group_barrier(g)) != 0) break;
    __atomic_store_n(&sh->rounds[rank], round + 1, __ATOMIC_RELEASE);
    if (stop) break;
  }
  report_fill(&sh->rep[rank], rc, t0);
  muster_group_leave(g);
  return 0;
}

static int rounds_of(struct stop_shared *sh, int rank) {
  return __atomic_load_n(&sh->rounds[rank], __ATOMIC_ACQUIRE);
}

/* Wait until rank 0 has completed `n` rounds, or returned (at most 20 s). */
static void wait_rounds(struct stop_shared *sh, int n) {
  double t0 = test_now();
  while (rounds_of(sh, 0) < n && !__atomic_load_n(&sh->rep[0].done, __ATOMIC_ACQUIRE)) {
    ASSERT_DBL_LT(test_now() - t0, 20.0);
    nap_ms(2);
  }
}

static struct stop_shared *shared_new(void) {
  struct stop_shared *sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE,
                                MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  ASSERT(sh != MAP_FAILED);
  memset(sh, 0, sizeof *sh);
  return sh;
}

/* The job: the ranks in a process group of their own (processes), or as
 * threads of one process; the test stops and continues -job. */
static pid_t start_job(struct stop_arg *a, int mode) {
  fflush(stderr);
  pid_t job = fork();
  ASSERT(job >= 0);
  if (job == 0) {
    setpgid(0, 0);
    _exit(run_mode(mode, R, loop_rank, a) ? 1 : 0);
  }
  setpgid(job, job); /* whichever of us runs first */
  return job;
}

static void wait_job(pid_t job) {
  int st = 0;
  ASSERT_EQ(waitpid(job, &st, 0), job);
  ASSERT(WIFEXITED(st));
  ASSERT_EQ(WEXITSTATUS(st), 0);
}

/* Stop the whole job STOPS times for STOP_S (mid-work: while WORKER
 * computes), then let it finish: every rank must have succeeded. */
static int whole_job_stopped(int mode, double work_s) {
  struct stop_shared *sh = shared_new();
  struct stop_arg a = {sh, work_s};
  pid_t job = start_job(&a, mode);
  wait_rounds(sh, 2);
  for (int i = 0; i < STOPS; i++) {
    /* stop just after WORKER starts computing (the others have gone on to
     * wait at the barrier meanwhile) */
    if (work_s > 0) {
      while (!__atomic_load_n(&sh->in_work, __ATOMIC_ACQUIRE)) sched_yield();
      nap_ms(5);
    }
    int before = rounds_of(sh, 0);
    ASSERT_EQ(kill(-job, SIGSTOP), 0);
    nap_ms((int)(STOP_S * 1000));
    ASSERT_EQ(kill(-job, SIGCONT), 0);
    wait_rounds(sh, before + 2);
  }
  __atomic_store_n(&sh->finish, 1, __ATOMIC_RELEASE);
  wait_job(job);
  for (int r = 0; r < R; r++) {
    ASSERT_EQ(sh->rep[r].done, 1);
    if (sh->rep[r].rc) fprintf(stderr, "rank %d: %s\n", r, sh->rep[r].msg);
    ASSERT_OK(sh->rep[r].rc);
  }
  munmap(sh, sizeof *sh);
  ASSERT_EQ(test_count_job_segments(test_job()), 0);
  return 0;
}

TEST_IMPL(fault_stop_whole_job_mid_work) { return whole_job_stopped(MODE_PROCS, WORK_S); }
TEST_IMPL(fault_stop_whole_job_busy) { return whole_job_stopped(MODE_PROCS, 0); }
TEST_IMPL(fault_stop_whole_process_threads) { return whole_job_stopped(MODE_THREADS, WORK_S); }

/* The one stopped rank is named, as stopped, and nobody else; the others
 * fail within the timeout (+1 s); once continued it gets the same error. */
TEST_IMPL(fault_stop_one_rank_named) {
  struct stop_shared *sh = shared_new();
  struct stop_arg a = {sh, 0};
  pid_t pids[R];
  fork_ranks(R, loop_rank, &a, pids);
  wait_rounds(sh, 3);
  double t_stop = test_now();
  ASSERT_EQ(kill(pids[WORKER], SIGSTOP), 0);
  for (int r = 0; r < R; r++) {
    double t0 = test_now();
    while (r != WORKER && !__atomic_load_n(&sh->rep[r].done, __ATOMIC_ACQUIRE)) {
      ASSERT_DBL_LT(test_now() - t0, 10.0);
      nap_ms(5);
    }
  }
  ASSERT_EQ(kill(pids[WORKER], SIGCONT), 0);
  ASSERT_EQ(wait_ranks(R, pids), 0);
  char named[96];
  snprintf(named, sizeof named, "rank %d (pid %d, device -1) is stopped (SIGSTOP?)", WORKER,
           (int)pids[WORKER]);
  for (int r = 0; r < R; r++) {
    const struct rank_report *rep = &sh->rep[r];
    if (rep->rc != MUSTER_ETIMEDOUT) fprintf(stderr, "rank %d: rc %d: %s\n", r, rep->rc, rep->msg);
    ASSERT_EQ(rep->rc, MUSTER_ETIMEDOUT);
    /* every rank gets the one message: the stopped rank is the only one
     * missing, described as stopped */
    ASSERT_STR_CONTAINS(rep->msg, "rank 1 missing after 1.0 s at barrier");
    ASSERT_STR_CONTAINS(rep->msg, named);
    ASSERT_EQ(strcmp(rep->msg, sh->rep[0].msg), 0);
    if (r == WORKER) continue;
    ASSERT_DBL_LT(rep->t_end - t_stop, TIMEOUT_S + 1.0);
    ASSERT_DBL_LT(TIMEOUT_S - 0.1, rep->t_end - t_stop);
  }
  munmap(sh, sizeof *sh);
  ASSERT_EQ(test_count_job_segments(test_job()), 0);
  return 0;
}
