/*
 * tests/unit/test_runner.c - the test runner itself: killed from outside
 * (CI's time limit, ^C, `timeout`), it takes the running test's process
 * group along, so a hung test never outlives the run (it used to: a test
 * has its own process group, which a signal to the runner did not reach).
 */
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "integration/test_shmdump_util.h"
#include "task.h"

/* Sleeps while MUSTER_RUNNER_SLEEP is set (only the test below sets it). */
TEST_IMPL(runner_child_sleeps) {
  if (getenv("MUSTER_RUNNER_SLEEP")) pause();
  return 0;
}

TEST_IMPL(runner_killed_takes_test_along) {
  char self[512];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  ASSERT(n > 0);
  self[n] = '\0';
  int sig[] = {SIGTERM, SIGINT};
  for (int k = 0; k < 2; k++) {
    pid_t runner = fork();
    ASSERT(runner >= 0);
    if (runner == 0) {
      setenv("MUSTER_RUNNER_SLEEP", "1", 1);
      execl(self, self, "runner_child_sleeps", (char *)NULL);
      _exit(127);
    }
    pid_t kid[4];
    int nk = 0;
    for (double t0 = test_now(); (nk = tool_children(runner, kid, 4)) < 1 && test_now() - t0 < 10;)
      usleep(2000);
    ASSERT_EQ(nk, 1);
    ASSERT_EQ(kill(runner, sig[k]), 0);
    int st;
    ASSERT_EQ(waitpid(runner, &st, 0), runner);
    ASSERT(WIFSIGNALED(st) && WTERMSIG(st) == sig[k]);
    int left = tool_wait_gone(kid, 1, 2.0); /* the sleeping test went with it */
    if (left != 0) kill(kid[0], SIGKILL);     /* else it would hold the run's output open forever */
    ASSERT_EQ(left, 0);
  }
  return 0;
}
