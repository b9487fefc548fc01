/* tests/gpu/gpu_proc.c - the GPU test command's processes (gpu_case.h):
 * a rank SIGKILLed mid-solve, waiting with a time limit, counting GPUs
 * without initializing CUDA here. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

#include "gpu_case.h"
#include "muster/segment.h"

/* ---- kill a rank in the middle of a solve -------------------------------------------- */

/* Segments of job and our uid, of any pid namespace (the runtime's parser:
 * include/muster/segment.h, exported by libmuster.so). */
static int count_job_segments(const char *job) {
  return muster_segment_list(MUSTER_SEGMENT_DIR, MUSTER_SEGMENT_MINE, job, NULL, 0);
}

int gc_kill(const tcase_t *c, int ndev) {
  int fd[2];
  pid_t pids[2];
  (void)ndev;
  if (c->R != 2 || pipe(fd) < 0) return 1;
  char group[64];
  snprintf(group, sizeof group, "gpukill.%d", (int)getpid());
  gc_fork_ranks(c, group, fd[1], fd[0], pids);
  close(fd[1]);
  char x[2];
  int got = 0;
  while (got < 2) { /* both ranks are about to call muster_solve */
    ssize_t k = read(fd[0], x, (size_t)(2 - got));
    if (k <= 0) break;
    got += (int)k;
  }
  close(fd[0]);
  usleep(1000 * 1000); /* the leader is inside the engine's syevd (2-4 s) by now */
  double t0 = gc_now();
  kill(pids[c->victim], SIGKILL);
  int survivor = 1 - c->victim, st = 0, fail = 0;
  waitpid(pids[c->victim], &st, 0);
  if (gc_wait_limited(pids[survivor], 60.0, &st) < 0) {
    fprintf(stderr, "    %s: survivor still waiting 60 s after the kill\n", c->name);
    return 1;
  }
  double dt = gc_now() - t0;
  int code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  printf("    killed rank %d; survivor rank %d exited %d after %.2f s\n", c->victim, survivor, code, dt);
  /* The leader dead: the survivor must fail (EPEERDEAD) in time.  A
   * non-leader killed while it waits at the final barrier has already
   * arrived there: the runtime then lets the leader finish, which must
   * return either an error or results that check out. */
  if (c->victim == 0 && code != 100 + (-MUSTER_EPEERDEAD)) {
    fprintf(stderr, "    %s: survivor exit %d, expected %d (EPEERDEAD)\n", c->name, code, 100 - MUSTER_EPEERDEAD);
    fail = 1;
  }
  if (c->victim == 0 && dt > c->survive_s) {
    fprintf(stderr, "    %s: survivor took %.2f s (limit %.1f s)\n", c->name, dt, c->survive_s);
    fail = 1;
  }
  if (c->victim != 0 && code != 0 && code < 100) {
    fprintf(stderr, "    %s: leader exit %d (wrong results or crash)\n", c->name, code);
    fail = 1;
  }
  const char *job = getenv("MUSTER_JOB");
  int left = count_job_segments(job ? job : "default");
  if (left != 0) {
    fprintf(stderr, "    %s: %d segment(s) of job %s left in /dev/shm\n", c->name, left, job ? job : "default");
    fail = 1;
  }
  return fail;
}

/* ---- processes ------------------------------------------------------------------------ */

int gc_wait_limited(pid_t pid, double secs, int *status) {
  double t0 = gc_now();
  for (;;) {
    pid_t r = waitpid(pid, status, WNOHANG);
    if (r == pid) return 0;
    if (r < 0 && errno != EINTR) return -1;
    if (gc_now() - t0 > secs) {
      kill(-pid, SIGKILL);
      kill(pid, SIGKILL);
      waitpid(pid, status, 0);
      return -1;
    }
    usleep(20 * 1000);
  }
}

int gc_gpu_count(void) {
  int fd[2], n = 0;
  if (pipe(fd) < 0) return 0;
  pid_t p = fork();
  if (p == 0) {
    int k = 0;
    if (cudaGetDeviceCount(&k) != cudaSuccess) k = 0;
    if (write(fd[1], &k, sizeof k) != sizeof k) _exit(1);
    _exit(0);
  }
  close(fd[1]);
  if (read(fd[0], &n, sizeof n) != sizeof n) n = 0;
  close(fd[0]);
  waitpid(p, NULL, 0);
  return n;
}
