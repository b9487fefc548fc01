/*
 * tests/integration/test_cli_launch.c - `muster solve` and `muster
 * rendezvous` in processes mode when the ranks cannot be started: a fork
 * that fails, too few file descriptors at each step of the launch.  The
 * command's error is the cause (never "peer died"), in text and JSON, with
 * every rank's fate; nothing is left running or in /dev/shm.  A full
 * /dev/shm is tests/fault/test_full_shm.c's (it needs a mount namespace).
 */
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "muster.h"
#include "providers/tp_util.h"
#include "task.h"
#include "test_shmdump_util.h"

/* A run that failed before (or while) its ranks started: exit 1, valid
 * JSON whose error is the cause (never "peer died", never "out of memory"
 * for a lack of descriptors) and whose "fates" has every rank; the same
 * summary on stderr; no process left, nothing in /dev/shm. */
static void launch_failed(const struct tool_result *r, int ranks, const char *error) {
  char want[128];
  if (r->exit_code != 1 || !json_valid(r->out) || strstr(r->out, "peer died") ||
      strstr(r->err, "peer died") || strstr(r->out, "out of memory"))
    fprintf(stderr, "exit %d\nstdout: %s\nstderr: %s\n", r->exit_code, r->out, r->err);
  ASSERT_EQ(r->exit_code, 1);
  ASSERT(json_valid(r->out));
  snprintf(want, sizeof want, "\"error\":\"%s\"", error);
  ASSERT_STR_CONTAINS(r->out, want);
  snprintf(want, sizeof want, "\"fates\":[{\"rank\":0,");
  ASSERT_STR_CONTAINS(r->out, want);
  snprintf(want, sizeof want, "{\"rank\":%d,", ranks - 1);
  ASSERT_STR_CONTAINS(r->out, want);
  ASSERT(strstr(r->out, "peer died") == NULL && strstr(r->err, "peer died") == NULL);
  ASSERT(strstr(r->out, "out of memory") == NULL);
  snprintf(want, sizeof want, "mode=processes: %s: ", error);
  ASSERT_STR_CONTAINS(r->err, want);
  ASSERT_EQ(test_count_job_segments(test_job()), 0);
}

/* A fork that fails (the process limit: EAGAIN; as root RLIMIT_NPROC does
 * not apply, so the CLI's test knob fails the fork of rank 1): the summary
 * names the fork and its errno, in text and JSON, with "fates" (it was
 * "peer died: the ranks could not be started" with no fates, the cause
 * only on an earlier line); rank 0, forked already, never runs and is
 * reaped; rendezvous says the same. */
TEST_IMPL(cli_launch_fork_fails) {
  ASSERT_EQ(prctl(PR_SET_CHILD_SUBREAPER, 1), 0); /* an orphan would come to us */
  setenv("MUSTER_PROVIDER_PATH", tp_lapack_dir(), 1);
  const char *argv[] = {"solve", "getrs", "--n", "64", "--ranks", "3", "--mode", "processes",
                        "--provider", "lapack", "--json", NULL};
  const char *env[] = {"MUSTER_LAUNCH_TEST_FORK_FAIL=1", NULL};
  struct tool_result r;
  ASSERT_EQ(tool_run(&r, 60, env, "muster", argv), 0);
  launch_failed(&r, 3, "system call failed");
  ASSERT_STR_CONTAINS(r.out, "\"message\":\"cannot fork rank 1 of 3: Resource temporarily "
                      "unavailable (EAGAIN)\"");
  ASSERT_STR_CONTAINS(r.err, "muster solve: getrs f64 n=64 ranks=3 mode=processes: system call "
                      "failed: cannot fork rank 1 of 3: Resource temporarily unavailable (EAGAIN)\n");
  ASSERT_STR_CONTAINS(r.out, "did not run: the launch was called off\"}");
  ASSERT_STR_CONTAINS(r.out, "\"fate\":\"rank 1: not started: cannot fork rank 1 of 3: ");
  ASSERT_STR_CONTAINS(r.out, "\"fate\":\"rank 2: not started: the launch failed before its fork\"");
  ASSERT_EQ(count_substr(r.err, "Resource temporarily unavailable"), 2); /* summary, rank 1 */
  int st;
  ASSERT_EQ(waitpid(-1, &st, WNOHANG), -1); /* nothing of it was left to us */
  tool_result_free(&r);
  const char *rdv[] = {"rendezvous", "--ranks", "3", "--mode", "processes", "--rounds", "10", NULL};
  ASSERT_EQ(tool_run(&r, 60, env, "muster", rdv), 0);
  ASSERT_EQ(r.exit_code, 1);
  ASSERT_STR_CONTAINS(r.err, "muster rendezvous: system call failed: cannot fork rank 1 of 3: "
                      "Resource temporarily unavailable (EAGAIN)");
  ASSERT(strstr(r.err, "peer died") == NULL);
  ASSERT_EQ(test_count_job_segments(test_job()), 0);
  tool_result_free(&r);
  return 0;
}

/* The number above the 4 lowest free fds of this process: tool_run's two
 * pipes must fit below a limit (the run gets those numbers back free). */
static int four_free_fds(void) {
  int found = 0, fd = 3;
  for (; found < 4; fd++)
    if (fcntl(fd, F_GETFD) < 0) found++;
  return fd;
}

/* Too few file descriptors (RLIMIT_NOFILE, as `ulimit -n`), from too few
 * to start the ranks up to enough to run: every run that fails says "Too
 * many open files" (EMFILE) as its error, in text and JSON, with "fates":
 * the launcher's pipe and group (it said "peer died: the ranks could not
 * be started"), a rank's shard ("out of memory"), the leader mapping a
 * peer's shard.  Exit 0 once there are enough. */
TEST_IMPL(cli_launch_out_of_fds) {
  setenv("MUSTER_PROVIDER_PATH", tp_lapack_dir(), 1);
  const char *argv[] = {"solve", "getrs", "--n", "64", "--ranks", "2", "--mode", "processes",
                        "--provider", "lapack", "--json", NULL};
  struct rlimit old;
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &old), 0);
  int first = four_free_fds(), failed = 0, ok = 0, stages = 0;
  static const char *const stage[] = {"start gate (pipe)", "as their launcher",
                                      "cannot allocate its shard", "cannot open shard memory"};
  for (int lim = first; lim < first + 40 && !ok; lim++) {
    struct rlimit low = {(rlim_t)lim, old.rlim_max};
    struct tool_result r;
    ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &low), 0);
    int rc = tool_run(&r, 60, NULL, "muster", argv);
    ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &old), 0);
    ASSERT_EQ(rc, 0);
    if (r.exit_code == 127 && strstr(r.err, "error while loading shared libraries")) {
      tool_result_free(&r); /* too few for ld.so itself */
      continue;
    }
    if (r.exit_code == 0) {
      ok = 1;
    } else {
      launch_failed(&r, 2, "system call failed");
      ASSERT_STR_CONTAINS(r.out, "Too many open files");
      failed++;
      for (int k = 0; k < 4; k++)
        if (strstr(r.out, stage[k])) stages |= 1 << k;
    }
    fprintf(stderr, "RLIMIT_NOFILE %d: exit %d\n", lim, r.exit_code);
    tool_result_free(&r);
  }
  fprintf(stderr, "%d runs failed, steps met: 0x%x\n", failed, stages);
  ASSERT(ok);
  /* the launcher's pipe and group, and a rank's shard, each met its limit
   * (the leader's open of a peer's shard, 0x8, comes next when the fds are
   * counted as here) */
  ASSERT_EQ(stages & 7, 7);
  return 0;
}
