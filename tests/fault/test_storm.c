/*
 * tests/fault/test_storm.c - the standing fault storm (issue 11): random
 * `muster solve` runs, each hurt once at a random moment, reproducible by
 * seed.
 *
 * A round picks a routine, n, a rank count (1-24, now and then 25-64) and
 * one fault: SIGKILL or SIGSTOP of a random non-leader rank, of the leader
 * (rank 0) or of the launcher (the CLI), or the whole job stopped for 1.5 s
 * (a debugger, ^Z), 0-40 ms after all ranks exist.  Whatever happened, every round checks what a user
 * relies on:
 *   - the CLI ends: exit 0 with "ok":true (the fault came too late to
 *     matter, or a stop that the deadline does not count), or exit 1 whose
 *     output names the victim's pid; killed itself: by SIGKILL;
 *   - it ends in time: a kill within 3 s, a stopped rank within the
 *     timeout (2 s) plus the launcher's 5 s grace plus slack;
 *   - no rank process is left 5 s later, nothing of the job in /dev/shm,
 *     and this process holds no more file descriptors than before.
 * MUSTER_STORM_SEED=S replays a storm, MUSTER_STORM_ROUNDS=K sets its
 * length (default 14; the sanitizer passes scale the test's time limit,
 * not the rounds).  One summary line at the end counts each kind of fault.
 */
#include <dirent.h>
#include <time.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "integration/cli_run.h"
#include "providers/tp_util.h"
#include "task.h"

enum victim { V_RANK, V_LEADER, V_LAUNCHER, V_JOB, V_KINDS };
static const char *const victim_name[V_KINDS] = {"rank", "leader", "launcher", "whole job"};

struct round {
  const char *routine;
  int n, ranks, sig;  /* sig: SIGKILL or SIGSTOP (V_JOB: SIGSTOP) */
  enum victim who;
  int delay_us;       /* after every rank exists */
};

/* xorshift64*: the storm's only source of randomness, so a seed replays it */
static uint64_t rng;
static uint64_t next(void) { return test_rand(&rng); }
static int pick(int lo, int hi) { return lo + (int)(next() % (uint64_t)(hi - lo + 1)); }

static void draw(struct round *r) {
  static const char *const routines[] = {"potrs", "potri", "syevd"};
  r->routine = routines[pick(0, 2)];
  r->ranks = pick(0, 5) ? pick(1, 24) : pick(25, 64);
  r->n = pick(r->ranks, r->ranks + 700);
  r->who = (enum victim)pick(0, V_KINDS - 1);
  if (r->ranks == 1 && r->who == V_RANK) r->who = V_LEADER;
  r->sig = r->who == V_JOB || pick(0, 2) == 0 ? SIGSTOP : SIGKILL;
  r->delay_us = pick(0, 40000); /* most solves here take 5-100 ms */
}

static int open_fds(void) {
  DIR *d = opendir("/proc/self/fd");
  int n = 0;
  while (d && readdir(d)) n++;
  if (d) closedir(d);
  return n;
}

/* Spawn the CLI and wait until its ranks exist, or it ended first (a small
 * solve can be over in milliseconds: then the fault finds fewer ranks, or
 * none, and the round checks the run was unharmed). */
static void start(struct run *r, const char *const *argv, const char *const *env, int ranks) {
  ASSERT_EQ(tool_spawn("muster", argv, env, &r->pid, &r->out, &r->err), 0);
  double t0 = test_now();
  char st;
  while ((r->nkids = tool_children(r->pid, r->kids, NKIDS)) < ranks && test_now() - t0 < 20 &&
         (st = tool_proc_state(r->pid)) != 'Z' && st != 0)
    usleep(1000);
  if (r->nkids > NKIDS) r->nkids = NKIDS;
}

/* Stop every process of the job for 1.5 s, then let it go on. */
static void stop_job(const struct run *r) {
  kill(r->pid, SIGSTOP);
  for (int i = 0; i < r->nkids; i++) kill(r->kids[i], SIGSTOP);
  usleep(1500000);
  for (int i = 0; i < r->nkids; i++) kill(r->kids[i], SIGCONT);
  kill(r->pid, SIGCONT);
}

/* One round; returns 1 when the fault changed the outcome (exit 1). */
static int run_round(int k, const struct round *rd) {
  char n[16], ranks[16];
  snprintf(n, sizeof n, "%d", rd->n);
  snprintf(ranks, sizeof ranks, "%d", rd->ranks);
  const char *argv[] = {"solve", rd->routine, "--n", n, "--ranks", ranks, "--mode", "processes",
                        "--provider", "lapack", "--json", NULL};
  const char *env[] = {"OPENBLAS_NUM_THREADS=1", NULL};
  struct run r;
  struct tool_result res;
  setenv("MUSTER_TIMEOUT", "2", 1);
  start(&r, argv, env, rd->ranks);
  usleep((useconds_t)rd->delay_us);
  int idx = rd->who == V_LEADER ? 0 : rd->who == V_RANK ? pick(1, rd->ranks - 1) : -1;
  pid_t victim = rd->who == V_LAUNCHER ? r.pid : idx >= 0 && idx < r.nkids ? r.kids[idx] : 0;
  if (rd->who != V_JOB && victim == 0) { /* that rank had come and gone before the fault */
    struct tool_result done;
    cli_finish(&r, &done, test_now());
    ASSERT_EQ(done.exit_code, 0);
    tool_result_free(&done);
    return 0;
  }
  double t_fault = test_now();
  if (rd->who == V_JOB) stop_job(&r);
  else kill(victim, rd->sig);
  if (rd->sig == SIGSTOP && rd->who == V_LAUNCHER) { /* a stopped launcher resumes later */
    usleep(1000000);
    kill(r.pid, SIGCONT);
  }
  double took = cli_finish(&r, &res, t_fault);
  if (rd->who == V_LAUNCHER && rd->sig == SIGKILL && res.signal != 0) { /* else it had ended */
    ASSERT_EQ(res.signal, SIGKILL);
    for (int i = 0; i < r.nkids; i++) waitpid(r.kids[i], NULL, 0); /* reparented to us */
  } else if (res.exit_code == 0) {
    ASSERT_STR_CONTAINS(res.out, "\"ok\":true");
  } else if (!(rd->who == V_RANK || rd->who == V_LEADER) || res.exit_code != 1) {
    fprintf(stderr, "round %d: a %s fault of the %s failed the run (exit %d, signal %d):\n%s\n", k,
            rd->sig == SIGKILL ? "SIGKILL" : "SIGSTOP", victim_name[rd->who], res.exit_code,
            res.signal, res.err);
    ASSERT(0);
  } else {
    /* only a hurt rank may fail a run, and the output must say which */
    char pid[32];
    snprintf(pid, sizeof pid, "(pid %d", (int)victim);
    if (!strstr(res.err, pid) && !strstr(res.out, pid))
      fprintf(stderr, "round %d: the victim pid %d is not named:\n%s\n", k, (int)victim, res.err);
    ASSERT(strstr(res.err, pid) || strstr(res.out, pid));
  }
  double limit = rd->sig == SIGKILL ? 3.0 : 2.0 + 5.0 + 4.0;
  if (rd->who == V_JOB || rd->who == V_LAUNCHER) limit += 1.5; /* the stop itself */
  if (!(took < limit)) fprintf(stderr, "round %d took %.2f s, limit %.1f s\n", k, took, limit);
  ASSERT_DBL_LT(took, limit);
  int failed = res.exit_code != 0 || res.signal != 0;
  tool_result_free(&res);
  return failed;
}

TEST_IMPL(fault_storm) {
  ASSERT_EQ(prctl(PR_SET_CHILD_SUBREAPER, 1), 0); /* a killed launcher's ranks come to us */
  cli_run_quiet = 1; /* 64 ranks' fates per round: shown only when a check fails */
  setenv("MUSTER_PROVIDER_PATH", tp_lapack_dir(), 1);
  unsetenv("MUSTER_PROVIDER");
  const char *k = getenv("MUSTER_STORM_ROUNDS");
  uint64_t seed = test_seed("MUSTER_STORM_SEED");
  int rounds = k ? atoi(k) : 14;
  rng = seed;
  fprintf(stderr, "storm seed %llu, %d rounds (MUSTER_STORM_SEED=%llu to replay)\n",
          (unsigned long long)seed, rounds, (unsigned long long)seed);
  int fds = open_fds(), count[V_KINDS][2] = {{0}}, failed = 0;
  for (int i = 0; i < rounds; i++) {
    struct round rd;
    draw(&rd);
    fprintf(stderr, "round %d: %s n=%d ranks=%d, %s of the %s after %d ms\n", i, rd.routine, rd.n,
            rd.ranks, rd.sig == SIGKILL ? "SIGKILL" : "SIGSTOP", victim_name[rd.who],
            rd.delay_us / 1000);
    failed += run_round(i, &rd);
    count[rd.who][rd.sig == SIGKILL]++;
    ASSERT_EQ(open_fds(), fds);
  }
  fprintf(stderr, "storm: %d rounds, %d failed as they should, every check held; killed: rank %d, "
          "leader %d, launcher %d; stopped: rank %d, leader %d, launcher %d, whole job %d\n", rounds,
          failed, count[V_RANK][1], count[V_LEADER][1], count[V_LAUNCHER][1], count[V_RANK][0],
          count[V_LEADER][0], count[V_LAUNCHER][0], count[V_JOB][0]);
  return 0;
}
