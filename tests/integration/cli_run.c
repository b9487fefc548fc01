/* tests/integration/cli_run.c - a muster CLI run a fault test can hurt (cli_run.h). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli_run.h"
#include "../../tools/muster/launch.h" /* ML_NOT_STARTED */
#include "task.h"

int cli_run_quiet;

void cli_start(struct run *r, const char *const *argv, const char *const *env, int ranks) {
  setenv("MUSTER_TIMEOUT", "60", 1); /* an env entry overrides it */
  ASSERT_EQ(tool_spawn("muster", argv, env, &r->pid, &r->out, &r->err), 0);
  double t0 = test_now();
  while ((r->nkids = tool_children(r->pid, r->kids, NKIDS)) < ranks && test_now() - t0 < 20)
    usleep(2000);
  ASSERT_EQ(r->nkids, ranks);
}

/* the rank stopped by MUSTER_LAUNCH_TEST_STOP, once it has stopped */
pid_t cli_stopped_kid(const struct run *r) {
  for (double t0 = test_now(); test_now() - t0 < 20; usleep(2000))
    for (int i = 0; i < r->nkids; i++)
      if (tool_proc_state(r->kids[i]) == 'T') return r->kids[i];
  ASSERT(0);
  return 0;
}

/* Collect the CLI after a kill at t_kill: its output, how long it took; no
 * rank may be left after 5 s; nothing of this job in /dev/shm. */
double cli_finish(struct run *r, struct tool_result *res, double t_kill) {
  ASSERT_EQ(tool_collect(res, r->pid, r->out, r->err, 60), 0);
  double took = test_now() - t_kill;
  int gone = tool_wait_gone(r->kids, r->nkids, 5.0) == 0, segs = test_count_job_segments(test_job());
  int bad = res->timed_out || !gone || segs != 0;
  fprintf(stderr, "ended %.2f s after the fault, exit %d signal %d\n", took, res->exit_code, res->signal);
  if (!cli_run_quiet || bad) fprintf(stderr, "stdout: %s\nstderr: %s\n", res->out, res->err);
  ASSERT_EQ(res->timed_out, 0);
  ASSERT(gone);     /* no rank left 5 s later */
  ASSERT_EQ(segs, 0); /* nothing of the job in /dev/shm */
  return took;
}

/* SIGKILL the CLI (the test is a subreaper): every rank must die with it
 * (PR_SET_PDEATHSIG), none may run on.  A child that had not yet armed
 * PR_SET_PDEATHSIG when the CLI died (not scheduled since its fork: seen on
 * a loaded machine) sees its new parent and leaves with ML_NOT_STARTED
 * before doing anything: also "did not run on". */
void cli_kill(struct run *r) {
  struct tool_result res;
  double t_kill = test_now();
  ASSERT_EQ(kill(r->pid, SIGKILL), 0);
  cli_finish(r, &res, t_kill);
  ASSERT_EQ(res.signal, SIGKILL);
  for (int i = 0; i < r->nkids; i++) { /* the orphans came to us */
    int st;
    ASSERT_EQ(waitpid(r->kids[i], &st, 0), r->kids[i]);
    ASSERT((WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL) ||
           (WIFEXITED(st) && WEXITSTATUS(st) == ML_NOT_STARTED));
  }
  tool_result_free(&res);
}

