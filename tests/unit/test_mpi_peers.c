/*
 * tests/unit/test_mpi_peers.c - the watch of this node that covers the MPI
 * waits no message can watch, MPI_Init and MPI_Finalize (runtime/
 * mpi_peers.c: muster__mpi_local_scan, muster__mpi_local_check), without
 * MPI: this process plays rank 0 of an Open MPI job (its launcher's
 * variables set here), and forked children exec `sleep` with the
 * variables of ranks 1 and 2 of the same job (the job's id, their rank),
 * as mpirun's ranks have them.  A child of another job and a wrapper of a
 * rank (the same variables, not stopped) are there too.  The job under MPI
 * is tests/mpi/stop.sh.
 */
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "solve/mpiInt.h"
#include "base/proc.h"
#include "task.h"

#define JOB "4242001"

/* A `sleep 60` with the variables of rank `rank` of job `job`. */
static pid_t spawn(const char *job, int rank) {
  pid_t pid = fork();
  if (pid == 0) {
    char r[64], j[64];
    snprintf(r, sizeof r, "OMPI_COMM_WORLD_RANK=%d", rank);
    snprintf(j, sizeof j, "OMPI_MCA_ess_base_jobid=%s", job);
    char *envp[] = {r, j, "OMPI_COMM_WORLD_SIZE=9", NULL};
    char *argv[] = {"sleep", "60", NULL};
    execve("/bin/sleep", argv, envp);
    _exit(127);
  }
  return pid;
}

static void reap(pid_t pid) {
  kill(pid, SIGKILL);
  waitpid(pid, NULL, 0);
}

/* Wait (at most 5 s) until pid's environment shows it exec'ed. */
static int execed(pid_t pid) {
  for (int i = 0; i < 500; i++) {
    muster__mpi_local_t l;
    memset(&l, 0, sizeof l);
    muster__mpi_local_scan(&l);
    for (int k = 0; k < l.n; k++)
      if (l.p[k].pid == pid) return 1;
    usleep(10000);
  }
  return 0;
}

/* check() until it fails or `secs` pass: its code; *took the seconds. */
static int check_for(muster__mpi_local_t *l, double timeout, double secs, double *took) {
  uint64_t t0 = muster__now_mono_ns();
  int rc = 0;
  while (rc == 0 && (muster__now_mono_ns() - t0) * 1e-9 < secs) {
    rc = muster__mpi_local_check(l, "MPI_Init_thread", (muster__now_mono_ns() - t0) * 1e-9, timeout);
    usleep(20000);
  }
  *took = (muster__now_mono_ns() - t0) * 1e-9;
  return rc;
}

TEST_IMPL(mpi_node_watch_names_stopped_rank) {
  setenv("OMPI_COMM_WORLD_RANK", "0", 1);
  setenv("OMPI_COMM_WORLD_SIZE", "3", 1);
  setenv("OMPI_MCA_ess_base_jobid", JOB, 1);
  /* rank 2's wrapper (a script that runs it) is older than rank 2 */
  pid_t other = spawn("4242999", 1), r1 = spawn(JOB, 1), wrap2 = spawn(JOB, 2);
  usleep(30000);
  pid_t r2 = spawn(JOB, 2);
  ASSERT(execed(r1) && execed(r2));
  muster__mpi_local_t l;
  memset(&l, 0, sizeof l);
  muster__mpi_local_scan(&l);
  ASSERT_EQ(l.me, 0);
  ASSERT_EQ(l.world, 3);
  ASSERT_EQ(l.n, 2); /* ranks 1 and 2, one process each; not the other job's rank 1 */
  for (int k = 0; k < l.n; k++) ASSERT(l.p[k].pid == (l.p[k].rank == 1 ? r1 : r2));
  /* every rank here and running: waited for past the timeout */
  double took;
  ASSERT_EQ(check_for(&l, 0.2, 0.6, &took), 0);
  /* rank 2 stopped (its wrapper is not): named once stopped longer than the timeout */
  kill(r2, SIGSTOP);
  int rc = check_for(&l, 0.3, 5, &took);
  ASSERT_EQ(rc, MUSTER_ETIMEDOUT);
  char want[128];
  snprintf(want, sizeof want, "rank 2 (pid %d on ", (int)r2);
  ASSERT_STR_CONTAINS(muster_last_error(), want);
  ASSERT_STR_CONTAINS(muster_last_error(), "has been stopped (SIGSTOP or a debugger) for 0.");
  ASSERT_STR_CONTAINS(muster_last_error(), "more than MUSTER_TIMEOUT (0.3 s), while rank 0 (pid ");
  ASSERT_STR_CONTAINS(muster_last_error(), "waited in MPI_Init_thread");
  ASSERT(took >= 0.3 && took < 2.5);
  /* continued: waited for again; and MUSTER_TIMEOUT=inf (0) never gives up */
  kill(r2, SIGCONT);
  ASSERT_EQ(check_for(&l, 0.2, 0.5, &took), 0);
  kill(r2, SIGSTOP);
  ASSERT_EQ(check_for(&l, 0, 0.5, &took), 0);
  kill(r2, SIGCONT);
  /* a job of 5: ranks 3 and 4 are on no process here, out of sight: the
   * timeout, naming them */
  setenv("OMPI_COMM_WORLD_SIZE", "5", 1);
  memset(&l, 0, sizeof l);
  rc = check_for(&l, 0.3, 5, &took);
  ASSERT_EQ(rc, MUSTER_ETIMEDOUT);
  ASSERT_STR_CONTAINS(muster_last_error(), "has waited 0.3 s (MUSTER_TIMEOUT) in MPI_Init_thread: ranks 3,4 "
                      "are not on this node (out of its sight: stopped, stuck or never started); the "
                      "others, on this node, are running");
  reap(r1);
  reap(r2);
  reap(wrap2);
  reap(other);
  unsetenv("OMPI_COMM_WORLD_RANK");
  unsetenv("OMPI_COMM_WORLD_SIZE");
  unsetenv("OMPI_MCA_ess_base_jobid");
  return 0;
}
