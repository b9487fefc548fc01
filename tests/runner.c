/*
 * tests/runner.c - runs every test of tests/test-list.h in its own process.
 *
 *   run-tests [--list] [SUBSTRING...]
 *
 * Runs the tests whose name contains any SUBSTRING (all without one), one
 * after another in list order; --list prints their names instead (other
 * arguments that start with - are ignored).
 *
 * Each test: fork, setpgid (so a test's own forked ranks die with it),
 * MUSTER_JOB=t<runner pid>_<index>, a deadline of TIMEOUT * $MUSTER_TEST_SCALE
 * (sanitizers and valgrind set it), SIGKILL of the whole group at the
 * deadline, TMPDIR a fresh folder of its own (muster-<job>.XXXXXX in
 * test_tmp_base(); tests name files there with test_tmp_path()).  After the test, a segment of its
 * job left in /dev/shm (by a process of any pid namespace) fails it, and
 * so does anything left in its folder; both are removed.
 * Prints "ok"/"not ok" per test and ends with "N passed, N failed".
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "muster/segment.h"
#include "task.h"

#define TEST_ENTRY(name, timeout) int run_test_##name(void);
#include "test-list.h"
#undef TEST_ENTRY

struct entry {
  const char *name;
  int (*fn)(void);
  double timeout;
};

static const struct entry tests[] = {
#define TEST_ENTRY(name, timeout) {#name, run_test_##name, timeout},
#include "test-list.h"
#undef TEST_ENTRY
    {NULL, NULL, 0}};

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int selected(const char *name, int argc, char **argv) {
  int any = 0;
  for (int i = 1; i < argc; i++) {
    if (argv[i][0] == '-') continue;
    any = 1;
    if (strstr(name, argv[i])) return 1;
  }
  return !any;
}

/* Remove (and count) segments a test left behind, so one leak fails one test. */
static int sweep_job(const char *job) {
  DIR *d = opendir("/dev/shm");
  if (!d) return 0;
  int n = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    /* the runtime's own parser: a name of any pid namespace, any group */
    if (muster_segment_name_match(e->d_name, MUSTER_SEGMENT_MINE, job)) {
      char path[512];
      snprintf(path, sizeof path, "/dev/shm/%s", e->d_name);
      fprintf(stderr, "  leaked segment: %s\n", path);
      unlink(path);
      n++;
    }
  }
  closedir(d);
  return n;
}

/* A fresh folder for the test's temporary files, into dir[cap]. */
static int make_tmpdir(const char *job, char *dir, size_t cap) {
  const char *base = test_tmp_base();
  if ((size_t)snprintf(dir, cap, "%s/muster-%s.XXXXXX", base, job) >= cap || !mkdtemp(dir)) {
    fprintf(stderr, "run-tests: cannot make a temporary folder under %s: %s\n", base, strerror(errno));
    return -1;
  }
  return 0;
}

/* TSan's runtime, starting a process, makes TMPDIR/tsan.rodata.<pid> and
 * unlinks it a moment later (it maps the file as shadow of read-only
 * data); a process killed by a signal in that moment leaves it.  TSan's,
 * not the test's: the signal tests (test_cli_signals.c) kill commands
 * milliseconds after they start. */
static int tsan_own(const char *name) {
#if defined(__SANITIZE_THREAD__)
  const char *p = name + strlen("tsan.rodata.");
  if (strncmp(name, "tsan.rodata.", strlen("tsan.rodata.")) != 0 || !*p) return 0;
  for (; *p; p++)
    if (*p < '0' || *p > '9') return 0;
  return 1;
#else
  (void)name;
  return 0;
#endif
}

/* Name (and count) what a test left in its folder, then remove the folder:
 * one leak fails one test. */
static int sweep_tmpdir(const char *dir) {
  DIR *d = opendir(dir);
  int n = 0;
  struct dirent *e;
  while (d && (e = readdir(d)) != NULL) {
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") || tsan_own(e->d_name)) continue;
    fprintf(stderr, "  leaked temporary file: %s/%s\n", dir, e->d_name);
    n++;
  }
  if (d) closedir(d);
  test_remove_tree(dir);
  return n;
}

/* The test running now (its process group), so that a runner killed from
 * outside (CI's time limit, ^C, `timeout`) takes it and its ranks along:
 * each test has its own process group, which a signal to the runner's
 * group alone would not reach, and a hung test would outlive the run.
 * With a test running, the handler only kills it and records the signal:
 * run_one then removes what the test left (its job's segments, its
 * TMPDIR) and dies of that signal; between tests it dies at once. */
static volatile sig_atomic_t running_pgid, stopped_by;

static void die_with_test(int sig) {
  if (running_pgid > 0) {
    kill(-running_pgid, SIGKILL);
    stopped_by = sig;
    return;
  }
  signal(sig, SIG_DFL);
  raise(sig);
}

/* The signals a runner killed from outside gets (set_handlers, run_one). */
static const int stop_signals[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT};

static void set_handlers(void (*handler)(int)) {
  for (size_t i = 0; i < sizeof stop_signals / sizeof stop_signals[0]; i++) signal(stop_signals[i], handler);
}

/* Block the stop signals (old mask into *old), so that none lands between
 * making something of a test's and recording it (or removing it). */
static void block_stops(sigset_t *old) {
  sigset_t stop_sigs;
  sigemptyset(&stop_sigs);
  for (size_t i = 0; i < sizeof stop_signals / sizeof stop_signals[0]; i++) sigaddset(&stop_sigs, stop_signals[i]);
  sigprocmask(SIG_BLOCK, &stop_sigs, old);
}

/* The runner was told to stop while a test ran, and has cleaned up after
 * it: die of the same signal. */
static void die_of(int sig) {
  fflush(stdout);
  signal(sig, SIG_DFL);
  sigset_t only;
  sigemptyset(&only);
  sigaddset(&only, sig);
  sigprocmask(SIG_UNBLOCK, &only, NULL);
  raise(sig);
  _exit(128 + sig);
}

/* Wait for the test (pid) until it exits or its time limit; 1 if it timed
 * out (killed), 0 if it ended or the runner was told to stop. */
static int wait_test(pid_t pid, double t0, double limit, int *status) {
  for (;;) {
    pid_t w = waitpid(pid, status, WNOHANG);
    if (w == pid) return 0;
    if (stopped_by) { /* the handler killed it */
      waitpid(pid, status, 0);
      return 0;
    }
    if (now() - t0 > limit) {
      kill(-pid, SIGKILL);
      waitpid(pid, status, 0);
      return 1;
    }
    usleep(2000);
  }
}

/* The parent of pid from /proc/<pid>/stat, or -1 (gone, unreadable). */
static pid_t parent_of(pid_t pid) {
  char path[64], buf[512];
  snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
  FILE *f = fopen(path, "r");
  if (!f) return -1;
  size_t k = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[k] = '\0';
  const char *p = strrchr(buf, ')'); /* the name may hold spaces and ')' */
  int ppid;
  char state;
  return p && sscanf(p + 1, " %c %d", &state, &ppid) == 2 ? (pid_t)ppid : -1;
}

/* SIGKILL every child of the runner; the number signalled. */
static int kill_children(void) {
  DIR *d = opendir("/proc");
  struct dirent *e;
  int n = 0;
  pid_t self = getpid();
  while (d && (e = readdir(d)) != NULL) {
    char *end;
    long pid = strtol(e->d_name, &end, 10);
    if (*end || pid <= 0 || parent_of((pid_t)pid) != self) continue;
    kill((pid_t)pid, SIGKILL);
    n++;
  }
  if (d) closedir(d);
  return n;
}

/* Kill and reap every process a test left, whatever its process group (a
 * rank in a group of its own, a process whose parent died first): the
 * runner is the subreaper of all of them (main), so each becomes its child
 * once its parent is gone.  Only then is the test's TMPDIR swept: a CI run
 * under TSan left fault_storm's TMPDIR behind, a process still alive after
 * the group kill having made a file in it while it was being removed. */
static void reap_descendants(void) {
  for (;;) {
    kill_children();
    pid_t w = waitpid(-1, NULL, 0);
    if (w < 0 && errno != EINTR) return; /* ECHILD: none left */
  }
}

static int run_one(const struct entry *t, int index, double scale) {
  char job[64], tmpdir[PATH_MAX];
  snprintf(job, sizeof job, "t%d_%d", (int)getpid(), index);
  fflush(stdout);
  fflush(stderr);
  double t0 = now();
  /* No signal between the folder, the fork and running_pgid: one delivered
   * there would leave the new test behind (seen under ASan at load 10). */
  sigset_t old_mask;
  block_stops(&old_mask);
  if (make_tmpdir(job, tmpdir, sizeof tmpdir) < 0) {
    sigprocmask(SIG_SETMASK, &old_mask, NULL);
    return 1;
  }
  pid_t pid = fork();
  if (pid < 0) {
    perror("fork");
    sweep_tmpdir(tmpdir);
    sigprocmask(SIG_SETMASK, &old_mask, NULL);
    return 1;
  }
  if (pid == 0) {
    set_handlers(SIG_DFL); /* the test gets the default dispositions */
    sigprocmask(SIG_SETMASK, &old_mask, NULL);
    setpgid(0, 0);
    setenv("MUSTER_JOB", job, 1);
    setenv("TMPDIR", tmpdir, 1);
    int rc = t->fn();
    fflush(stdout);
    fflush(stderr);
    _exit(rc == 0 ? 0 : (rc & 0x7f) | 1);
  }
  setpgid(pid, pid);
  running_pgid = pid;
  sigprocmask(SIG_SETMASK, &old_mask, NULL);
  int status = 0, timed_out = wait_test(pid, t0, t->timeout * scale, &status);
  /* Kill stragglers the test forked (ranks) before judging /dev/shm; no
   * stop signal until what it left is gone. */
  block_stops(&old_mask);
  kill(-pid, SIGKILL);
  running_pgid = 0;
  reap_descendants();
  double dt = now() - t0;
  int leaked = sweep_job(job), leaked_tmp = sweep_tmpdir(tmpdir);
  if (stopped_by) die_of(stopped_by);
  sigprocmask(SIG_SETMASK, &old_mask, NULL);
  int ok = !timed_out && WIFEXITED(status) && WEXITSTATUS(status) == 0 && !leaked && !leaked_tmp;
  if (ok) {
    printf("ok %d - %s (%.2fs)\n", index + 1, t->name, dt);
  } else {
    const char *why = timed_out ? "timed out" : leaked ? "leaked /dev/shm segment"
                      : leaked_tmp ? "leaked temporary file"
                      : WIFSIGNALED(status) ? strsignal(WTERMSIG(status)) : "failed";
    printf("not ok %d - %s (%.2fs): %s (exit %d)\n", index + 1, t->name, dt, why,
           WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  }
  fflush(stdout);
  return ok ? 0 : 1;
}

int main(int argc, char **argv) {
  set_handlers(die_with_test);
  /* what a test leaves, orphans included, comes back to the runner to be
   * killed and reaped before the sweep (reap_descendants) */
  if (prctl(PR_SET_CHILD_SUBREAPER, 1) != 0) perror("run-tests: prctl(PR_SET_CHILD_SUBREAPER)");
  const char *s = getenv("MUSTER_TEST_SCALE");
  double scale = s ? atof(s) : 1.0;
  if (scale <= 0) scale = 1.0;
  int list = 0;
  for (int i = 1; i < argc; i++)
    if (strcmp(argv[i], "--list") == 0) list = 1;
  int passed = 0, failed = 0, n = 0;
  for (int i = 0; tests[i].name; i++) {
    if (!selected(tests[i].name, argc, argv)) continue;
    if (list) {
      printf("%s\n", tests[i].name);
      continue;
    }
    n++;
    if (run_one(&tests[i], i, scale) == 0) passed++;
    else failed++;
  }
  if (list) return 0;
  if (n == 0) {
    fprintf(stderr, "run-tests: no test matched\n");
    return 2;
  }
  printf("%d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
