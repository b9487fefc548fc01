/*
 * tests/integration/test_cli_signals.c - `muster solve` and `muster
 * rendezvous` in threads mode ended by a signal while their rank threads
 * join and run (docs/cli.md "Signals").  The command dies of the signal
 * (the shell shows 128 + signal), or had finished before it came (exit 0);
 * either way nothing of the job is left in /dev/shm.  SIGINT and SIGTERM,
 * 8 and 50 ranks, the signal 0-5 ms after the start or 0-3 ms after the
 * last rank thread exists, many times each; SIGKILL the same way.  A
 * segment a SIGKILL leaves in the moment the group has a name (inside
 * muster_launch_open, before any thread starts) is stale, and the next run
 * of the command in the job removes it (so does `shmdump --clean`).
 *
 * Before the fix: the group cli<pid>_0 had its name until every thread
 * had joined, and the signal left it behind (SIGINT, 53 ranks: 10 of 30
 * runs; SIGKILL 8 of 30; 8 ranks 14 of 40), its creator's pid in its name
 * so that nothing ever reclaimed it.
 */
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "muster.h"
#include "providers/tp_util.h"
#include "task.h"
#include "test_shmdump_util.h"

static void nap_us(long us) {
  struct timespec ts = {us / 1000000, (us % 1000000) * 1000L};
  nanosleep(&ts, NULL);
}

static int thread_count(pid_t pid) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
  return test_count_dir(path);
}

/* A provider folder with the build's lapack only: the command loads
 * nothing else, so a run is short and the signal lands in it. */
static void lapack_only(char *dir, size_t cap) {
  char path[1024];
  tp_env_fresh(dir, cap);
  snprintf(path, sizeof path, "%s/lapack.so", tp_lapack_dir());
  static const char *routines[] = {"potrs", "potri", "syevd", "getrs", "gels"};
  for (size_t i = 0; i < sizeof routines / sizeof routines[0]; i++)
    tp_link_abs(dir, routines[i], "lapack.so", path);
}

struct tally {
  int runs, hit, finished, left;
};

/* What a SIGKILL inside muster_launch_open left (the group being made,
 * before any thread started): stale, half made by a dead creator (sized,
 * no magic yet), or empty (killed between shm_open and its sizing: a
 * fresh-clone run of 2026-11-27 hit that window), and the next run of
 * the command in this job removes it (once 2 s old when half made or
 * empty: until then it cannot be told from a creation in progress). */
static void next_run_reclaims(double t_kill) {
  struct tool_result res;
  const char *dump[] = {"--job", test_job(), NULL};
  ASSERT_EQ(tool_run(&res, 30, NULL, "shmdump", dump), 0);
  fprintf(stderr, "a SIGKILL left: %s", res.out);
  ASSERT(strstr(res.out, "[stale]") || strstr(res.out, "no magic (being created") ||
         strstr(res.out, "truncated: 0 bytes, the header needs"));
  tool_result_free(&res);
  while (test_now() - t_kill < 2.2) nap_us(50000);
  const char *argv[] = {"solve", "potrs", "--n", "8", "--ranks", "2", "--mode", "threads",
                        "--provider", "lapack", NULL};
  ASSERT_EQ(tool_run(&res, 60, NULL, "muster", argv), 0);
  ASSERT_EQ(res.exit_code, 0);
  ASSERT_EQ(test_count_job_segments(test_job()), 0);
  tool_result_free(&res);
}

/* One run of `muster argv` ended by sig: after_threads 0: 0-5 ms after
 * the start; 1: 0-3 ms after `threads` threads exist.  Checks the ending
 * and that nothing of the job is left. */
static void one_run(const char *const *argv, int sig, int threads, int after_threads,
                    uint64_t *seed, struct tally *t) {
  pid_t pid;
  int out, err;
  ASSERT_EQ(tool_spawn("muster", argv, NULL, &pid, &out, &err), 0);
  if (after_threads) {
    double t0 = test_now();
    int n;
    while ((n = thread_count(pid)) >= 0 && n < threads && tool_proc_state(pid) != 'Z' &&
           test_now() - t0 < 10)
      nap_us(50);
    nap_us((long)(test_rand(seed) % 3001));
  } else {
    nap_us((long)(test_rand(seed) % 5001));
  }
  kill(pid, sig);
  double t_kill = test_now();
  struct tool_result res;
  ASSERT_EQ(tool_collect(&res, pid, out, err, 60), 0);
  int left = test_count_job_segments(test_job());
  if (left && sig == SIGKILL && !after_threads && res.signal == SIGKILL) {
    next_run_reclaims(t_kill);
    t->left++;
    left = 0;
  }
  int ok = !res.timed_out && left == 0 &&
           ((res.signal == sig && res.exit_code == -1) || (res.signal == 0 && res.exit_code == 0));
  if (!ok)
    fprintf(stderr, "signal %d (%s %d threads): exit %d, signal %d, %d segment(s) left%s\n"
            "stdout: %s\nstderr: %s\n", sig, after_threads ? "after" : "at start", threads,
            res.exit_code, res.signal, left, res.timed_out ? ", timed out" : "", res.out, res.err);
  ASSERT(ok);
  t->runs++;
  t->hit += res.signal == sig;
  t->finished += res.exit_code == 0;
  tool_result_free(&res);
}

static void signals_against(const char *const *(*argv_of)(int ranks), int sig, int reps,
                            uint64_t *seed) {
  static const int ranks[] = {8, 50};
  for (size_t i = 0; i < 2; i++) {
    struct tally t = {0, 0, 0, 0};
    const char *const *argv = argv_of(ranks[i]);
    for (int k = 0; k < reps; k++) one_run(argv, sig, ranks[i] + 1, k % 2, seed, &t);
    fprintf(stderr, "signal %d, %d ranks: %d runs, %d ended by it, %d finished first, %d left a "
            "segment the next run removed\n", sig, ranks[i], t.runs, t.hit, t.finished, t.left);
    ASSERT_GT(t.hit, 0); /* the signal did land while the threads ran */
  }
}

static char ranks_arg[16];

static const char *const *solve_argv(int ranks) {
  static const char *argv[] = {"solve", "potrs", "--n", "64", "--ranks", ranks_arg, "--mode",
                               "threads", "--provider", "lapack", NULL};
  snprintf(ranks_arg, sizeof ranks_arg, "%d", ranks);
  return argv;
}

static const char *const *rendezvous_argv(int ranks) {
  static const char *argv[] = {"rendezvous", "--ranks", ranks_arg, "--mode", "threads",
                               "--rounds", "200", "--cycles", "20", NULL};
  snprintf(ranks_arg, sizeof ranks_arg, "%d", ranks);
  return argv;
}

/* the test process passes default dispositions, nothing blocked */
static void plain_signals(void) {
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, NULL);
  signal(SIGINT, SIG_DFL);
  signal(SIGTERM, SIG_DFL);
}

TEST_IMPL(cli_solve_threads_sigint_sigterm) {
  char dir[256];
  lapack_only(dir, sizeof dir);
  plain_signals();
  uint64_t seed = test_seed("MUSTER_SIG_SEED");
  fprintf(stderr, "seed %" PRIu64 " (MUSTER_SIG_SEED to replay)\n", seed);
  signals_against(solve_argv, SIGINT, 20, &seed);
  signals_against(solve_argv, SIGTERM, 20, &seed);
  test_remove_tree(dir);
  return 0;
}

TEST_IMPL(cli_rendezvous_threads_sigterm) {
  plain_signals();
  uint64_t seed = test_seed("MUSTER_SIG_SEED");
  fprintf(stderr, "seed %" PRIu64 " (MUSTER_SIG_SEED to replay)\n", seed);
  signals_against(rendezvous_argv, SIGTERM, 10, &seed);
  signals_against(rendezvous_argv, SIGINT, 6, &seed);
  return 0;
}

/* SIGKILL cannot be caught: the group has a name only inside
 * muster_launch_open, before any rank thread starts, so a kill while the
 * ranks join or solve leaves nothing; what a kill inside that call leaves
 * is stale (its creator dead, no member), and the next run of the command
 * in the job removes it (next_run_reclaims), as does shmdump --clean. */
TEST_IMPL(cli_solve_threads_sigkill) {
  char dir[256];
  lapack_only(dir, sizeof dir);
  plain_signals();
  uint64_t seed = test_seed("MUSTER_SIG_SEED");
  fprintf(stderr, "seed %" PRIu64 " (MUSTER_SIG_SEED to replay)\n", seed);
  signals_against(solve_argv, SIGKILL, 20, &seed);
  /* such leftovers made by hand: groups of dead runs of solve/bench and
   * rendezvous; a group of another name, and one of a live pid, stay */
  char dead[3][64], other[64], live[64], path[512];
  snprintf(dead[0], sizeof dead[0], "cli%d_0", (int)dead_pid());
  snprintf(dead[1], sizeof dead[1], "cli%d_3", (int)dead_pid());
  snprintf(dead[2], sizeof dead[2], "rendezvous.%d", (int)dead_pid());
  snprintf(other, sizeof other, "mine.%d", (int)dead_pid());
  snprintf(live, sizeof live, "cli%d_0", (int)getppid());
  for (int i = 0; i < 3; i++)
    ASSERT_EQ(craft_segment(test_job(), dead[i], 8, dead_pid(), 0, 0, NULL, NULL, 0), 0);
  ASSERT_EQ(craft_segment(test_job(), other, 2, dead_pid(), 0, 0, NULL, NULL, 0), 0);
  ASSERT_EQ(craft_segment(test_job(), live, 2, getppid(), 0, 0, NULL, NULL, 0), 0);
  ASSERT_EQ(test_count_job_segments(test_job()), 5);
  struct tool_result res;
  const char *run[] = {"solve", "potrs", "--n", "8", "--ranks", "2", "--mode", "threads",
                       "--provider", "lapack", NULL};
  ASSERT_EQ(tool_run(&res, 60, NULL, "muster", run), 0);
  ASSERT_EQ(res.exit_code, 0);
  tool_result_free(&res);
  for (int i = 0; i < 3; i++) {
    segment_path(path, sizeof path, test_job(), dead[i]);
    ASSERT(access(path, F_OK) != 0);
  }
  ASSERT_EQ(test_count_job_segments(test_job()), 2); /* the other name, the live pid's */
  const char *clean[] = {"--job", test_job(), "--clean", NULL};
  ASSERT_EQ(tool_run(&res, 30, NULL, "shmdump", clean), 0);
  ASSERT_EQ(res.exit_code, 0);
  ASSERT_STR_CONTAINS(res.out, "clean: removed 1 segment"); /* the other name's: stale */
  tool_result_free(&res);
  segment_path(path, sizeof path, test_job(), live);
  ASSERT_EQ(unlink(path), 0); /* its creator is alive: only we may remove it */
  test_remove_tree(dir);
  return 0;
}
