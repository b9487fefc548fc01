/* tests/integration/test_pidns_util.c - see test_pidns_util.h. */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include "task.h"
#include "test_pidns_util.h"

enum { NO_PIDNS = 90, NO_PROC = 91 };

static int status_code(int st) {
  return WIFEXITED(st) ? WEXITSTATUS(st) : WIFSIGNALED(st) ? 128 + WTERMSIG(st) : 127;
}

/* pid 1 of the new namespace: its own /proc if asked (the inherited one
 * shows the parent namespace's pids), then the gate. */
static void namespace_init(int index, int own_proc, pidns_fn fn, void *arg, int gate) {
  if (own_proc && (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0 ||
                   mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) != 0)) {
    fprintf(stderr, "pid namespace %d: cannot mount /proc: %s\n", index, strerror(errno));
    _exit(NO_PROC);
  }
  char go;
  if (getpid() != 1 || read(gate, &go, 1) != 1) _exit(NO_PIDNS);
  close(gate);
  int rc = fn(index, arg);
  fflush(NULL);
  _exit(rc);
}

/* In our namespace: make the new ones, start their pid 1, pass on its status. */
static void launcher(int index, int own_proc, pidns_fn fn, void *arg, int gate) {
  if (unshare(CLONE_NEWPID | CLONE_NEWNS) != 0) {
    fprintf(stderr, "pid namespace %d: unshare(CLONE_NEWPID | CLONE_NEWNS): %s (these tests "
            "need CAP_SYS_ADMIN: run them as root)\n", index, strerror(errno));
    _exit(NO_PIDNS);
  }
  pid_t init = fork();
  if (init < 0) _exit(NO_PIDNS);
  if (init == 0) namespace_init(index, own_proc, fn, arg, gate);
  close(gate);
  int st = 0;
  while (waitpid(init, &st, 0) < 0 && errno == EINTR) {
  }
  _exit(status_code(st));
}

void pidns_spawn(int n, int own_proc, pidns_fn fn, void *arg, pid_t *pids) {
  int gate[2];
  ASSERT(n >= 1 && n <= PIDNS_MAX);
  ASSERT_EQ(pipe(gate), 0);
  fflush(NULL);
  for (int i = 0; i < n; i++) {
    pids[i] = fork();
    ASSERT(pids[i] >= 0);
    if (pids[i] == 0) {
      close(gate[1]);
      launcher(i, own_proc, fn, arg, gate[0]);
    }
  }
  close(gate[0]);
  char go[PIDNS_MAX] = {0};
  ASSERT_EQ(write(gate[1], go, (size_t)n), n);
  close(gate[1]);
}

int pidns_wait(int n, const pid_t *pids, int *codes) {
  int bad = 0;
  for (int i = 0; i < n; i++) {
    int st = 0;
    ASSERT_EQ(waitpid(pids[i], &st, 0), pids[i]);
    codes[i] = status_code(st);
    if (codes[i] != 0) {
      fprintf(stderr, "pid namespace %d ended with %d\n", i, codes[i]);
      bad++;
    }
  }
  return bad;
}

int pidns_run(int n, int own_proc, pidns_fn fn, void *arg, int *codes) {
  pid_t pids[PIDNS_MAX];
  pidns_spawn(n, own_proc, fn, arg, pids);
  return pidns_wait(n, pids, codes);
}
