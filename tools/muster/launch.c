/* tools/muster/launch.c - start ranks as processes and reap them, hold a
 * threads-mode group without a name, sweep the leftovers of earlier runs
 * (launch.h). */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "launch.h"
#include "muster.h"
#include "muster/parse.h"
#include "muster/segment.h"
#include "muster/clock.h"

static int test_rank(const char *var, int *rank) {
  const char *v = getenv(var);
  int64_t r;
  *rank = -1;
  if (!v) return 0;
  if (muster_parse_i64(v, 0, ML_MAX_RANKS - 1, &r) < 0) return -1;
  *rank = (int)r;
  return 0;
}

int ml_test_stop_rank(int *rank) { return test_rank("MUSTER_LAUNCH_TEST_STOP", rank); }
int ml_test_fork_fail_rank(int *rank) { return test_rank("MUSTER_LAUNCH_TEST_FORK_FAIL", rank); }

/* err = code and "what: strerror(e) (ENAME)"; -1.  ENOMEM is memory, any
 * other errno a system call that failed (EAGAIN of fork, EMFILE). */
static int fail_errno(struct ml_error *err, int e, const char *what) {
  err->code = e == ENOMEM ? MUSTER_ENOMEM : MUSTER_ESYS;
  snprintf(err->msg, sizeof err->msg, "%s: %s (%s)", what, strerror(e),
           strerrorname_np(e) ? strerrorname_np(e) : "?");
  return -1;
}

/* The child of `rank`: die with the launcher, wait for the gate, run. */
static void child_main(const struct ml_spec *sp, int rank, int gate_fd, pid_t parent,
                       int stop_rank) {
  /* Die with the launcher: nothing may outlive it.  It may have died before
   * this line, and then we were reparented already: leave. */
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) _exit(ML_NOT_STARTED);
  char go;
  ssize_t n;
  do n = read(gate_fd, &go, 1);
  while (n < 0 && errno == EINTR);
  close(gate_fd);
  if (n != 1) _exit(ML_NOT_STARTED); /* the launcher gave up before the start */
  if (rank == stop_rank) raise(SIGSTOP); /* test knob: to be killed before joining */
  int rc = sp->fn(rank, sp->arg);
  /* _exit: the launcher's stdio buffers and atexit handlers are not ours */
  _exit(rc == 0 ? 0 : 1);
}

/* How a process of no group ended (the pthread baseline). */
static void describe_end(int rank, int pid, int st, char *buf, size_t cap) {
  if (WIFEXITED(st))
    snprintf(buf, cap, "rank %d (pid %d) exited with status %d", rank, pid, WEXITSTATUS(st));
  else
    snprintf(buf, cap, "rank %d (pid %d) was killed by signal %d (%s)", rank, pid, WTERMSIG(st),
             sigdescr_np(WTERMSIG(st)) ? sigdescr_np(WTERMSIG(st)) : "unknown signal");
}

/* The fate of a rank the launcher killed, said once: how it was (stopped,
 * or still running), where (the reap's words after "was killed by signal
 * 9 (Killed) "), and why it was killed. */
static void killed_text(const struct ml_spec *sp, int r, struct ml_fate *f) {
  char head[96], where[ML_FATE];
  double grace = sp->grace_s > 0 ? sp->grace_s : ML_GRACE_S;
  size_t n = strlen(f->text);
  if (!f->stopped) {
    snprintf(f->text + n, sizeof f->text - n, "; it was still running %.0f s after the first "
             "failure; killed by the launcher", grace);
    return;
  }
  int len = snprintf(head, sizeof head, "rank %d (pid %d) was killed by signal %d (%s) ", r,
                     f->pid, SIGKILL, sigdescr_np(SIGKILL) ? sigdescr_np(SIGKILL) : "?");
  snprintf(where, sizeof where, "%s", strncmp(f->text, head, (size_t)len) ? "" : f->text + len);
  n = (size_t)snprintf(f->text, sizeof f->text, "rank %d (pid %d) was stopped (SIGSTOP or a "
                       "debugger)%s%s; killed by the launcher (SIGKILL) ", r, f->pid,
                       where[0] ? " " : "", where);
  if (n >= sizeof f->text) return;
  if (f->killed == ML_KILL_FAILED)
    snprintf(f->text + n, sizeof f->text - n, "once the run had failed: stopped, it could not "
             "end on its own");
  else if (f->killed == ML_KILL_IDLE)
    snprintf(f->text + n, sizeof f->text - n, "after it had been stopped for %.1f s while no "
             "other rank ran and none had failed (more than MUSTER_TIMEOUT)", f->stopped_s);
  else
    snprintf(f->text + n, sizeof f->text - n, "%.0f s after the first failure: stopped, it "
             "could not end on its own", grace);
}

static void record(const struct ml_spec *sp, muster_launch_t *l, int r, int st,
                   struct ml_fate *f) {
  f->status = st;
  if (WIFEXITED(st) && WEXITSTATUS(st) == ML_NOT_STARTED) {
    /* the gate closed unopened: the launch failed (that is the error), this
     * rank never ran (the group hears of it all the same) */
    if (l) muster_launch_reap(l, r, st, NULL, 0);
    snprintf(f->text, sizeof f->text, "rank %d (pid %d) did not run: the launch was called off",
             r, f->pid);
    return;
  }
  if (l) {
    f->died = muster_launch_reap(l, r, st, f->text, sizeof f->text) != 0;
  } else {
    describe_end(r, f->pid, st, f->text, sizeof f->text);
    f->died = !WIFEXITED(st) || WEXITSTATUS(st) != 0;
  }
  if (f->killed) {
    killed_text(sp, r, f);
    f->died = 1;
  }
}

static int rank_of(const struct ml_fate *f, int n, pid_t pid, const pid_t *live) {
  for (int r = 0; r < n; r++)
    if (live[r] == pid && f[r].pid == pid) return r;
  return -1;
}

/* How long a stopped rank may hold up a job in which no other rank runs
 * any more: the barrier deadline of the ranks (muster_timeout's rule; its
 * 0, none, is INFINITY here: forever, e.g. under a debugger).  main
 * refused a malformed MUSTER_TIMEOUT before any rank started
 * (opt_check_env), so the call does not fail here. */
static double stop_limit(void) {
  double t = 0;
  (void)muster_timeout(0, &t);
  return t > 0 ? t : INFINITY;
}

/* The ranks still alive (live[r] > 0) are all stopped (SIGSTOP, a tracer):
 * nothing will make progress on its own. */
static int all_stopped(const struct ml_spec *sp, const pid_t *live, const double *stop_t) {
  int any = 0;
  for (int r = 0; r < sp->ranks; r++) {
    if (live[r] <= 0) continue;
    if (stop_t[r] <= 0) return 0;
    any = 1;
  }
  return any;
}

/* SIGKILL every rank still there, for reason `why` (ML_KILL_*); a rank
 * stopped since stop_t[r] says so in its fate, and for how long: since it
 * stopped, or for ML_KILL_IDLE how long no other rank ran (idle_s). */
static void kill_live(const struct ml_spec *sp, const pid_t *live, struct ml_fate *f,
                      const double *stop_t, int why, double idle_s) {
  double now = muster_clock_s();
  for (int r = 0; r < sp->ranks; r++)
    if (live[r] > 0 && kill(live[r], SIGKILL) == 0) {
      f[r].killed = why;
      f[r].stopped = stop_t[r] > 0;
      f[r].stopped_s = why == ML_KILL_IDLE ? idle_s : stop_t[r] > 0 ? now - stop_t[r] : 0;
    }
}

/* Reap every child in live[] (pid, 0 once reaped).  After the first death
 * the others get the grace, then SIGKILL; but once every rank still there
 * is stopped, nothing can end on its own any more: after a death they are
 * killed at once, and with none (the others finished) after stop_limit(),
 * so that a finished job does not wait forever for a rank someone stopped.
 * Stops and continues are seen through WUNTRACED | WCONTINUED. */
static void reap_all(const struct ml_spec *sp, muster_launch_t *l, pid_t *live,
                     struct ml_fate *f) {
  double grace = sp->grace_s > 0 ? sp->grace_s : ML_GRACE_S, deadline = 0, limit = stop_limit();
  double stuck_since = 0, stop_t[ML_MAX_RANKS] = {0}; /* when each stopped, 0 running */
  int left = 0, killed = 0, seq = 0;
  for (int r = 0; r < sp->ranks; r++) left += live[r] > 0;
  while (left > 0) {
    int st, poll = !killed && (deadline > 0 || stuck_since > 0);
    pid_t w = waitpid(-1, &st, WUNTRACED | WCONTINUED | (poll ? WNOHANG : 0));
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) break; /* ECHILD: nothing left */
    if (w == 0) {
      double now = muster_clock_s();
      if (deadline > 0 && now >= deadline) {
        kill_live(sp, live, f, stop_t, ML_KILL_GRACE, 0);
        killed = 1;
      } else if (stuck_since > 0 && now - stuck_since >= limit) {
        kill_live(sp, live, f, stop_t, ML_KILL_IDLE, now - stuck_since);
        killed = 1;
      } else {
        usleep(2000);
      }
      continue;
    }
    int r = rank_of(f, sp->ranks, w, live);
    if (r < 0) continue;
    if (WIFSTOPPED(st) || WIFCONTINUED(st)) {
      stop_t[r] = WIFSTOPPED(st) ? (stop_t[r] > 0 ? stop_t[r] : muster_clock_s()) : 0;
    } else {
      live[r] = 0;
      left--;
      f[r].seq = ++seq;
      record(sp, l, r, st, &f[r]);
      if (f[r].died && deadline == 0) deadline = muster_clock_s() + grace;
    }
    int stuck = all_stopped(sp, live, stop_t);
    if (stuck && deadline > 0 && !killed) { /* the run failed: nothing to wait for */
      kill_live(sp, live, f, stop_t, ML_KILL_FAILED, 0);
      killed = 1;
    }
    if (!stuck || !isfinite(limit)) stuck_since = 0;
    else if (stuck_since == 0) stuck_since = muster_clock_s();
  }
}

/* Fork every rank behind the closed gate; 0, or -1 with err (the ones
 * started are in live[]). */
static int fork_all(const struct ml_spec *sp, muster_launch_t *l, int gate[2], pid_t *live,
                    struct ml_fate *f, struct ml_error *err) {
  pid_t parent = getpid();
  int stop_rank, fail_rank;
  ml_test_stop_rank(&stop_rank); /* checked by main: malformed is -1 */
  ml_test_fork_fail_rank(&fail_rank);
  fflush(NULL); /* children must not inherit unflushed output */
  for (int r = 0; r < sp->ranks; r++) {
    pid_t p = r == fail_rank ? (errno = EAGAIN, -1) : fork();
    if (p < 0) {
      char what[64];
      snprintf(what, sizeof what, "cannot fork rank %d of %d", r, sp->ranks);
      fail_errno(err, errno, what);
      snprintf(f[r].text, sizeof f[r].text, "rank %d: not started: %s", r, err->msg);
      return -1;
    }
    if (p == 0) {
      close(gate[1]);
      child_main(sp, r, gate[0], parent, stop_rank);
    }
    live[r] = f[r].pid = p;
    if (l && muster_launch_declare(l, r, p) < 0) {
      err->code = MUSTER_EINVAL;
      snprintf(err->msg, sizeof err->msg, "%s", muster_last_error());
      return -1;
    }
  }
  return 0;
}

/* The pid in a group name this command makes: "cli<pid>_<k>" (solve,
 * bench), "rendezvous.<pid>", "bench-gpu.<pid>.<k>"; 0 for another name. */
static int group_pid(const char *group) {
  static const struct { const char *prefix; char after; } forms[] = {
      {"cli", '_'}, {"rendezvous.", '\0'}, {"bench-gpu.", '.'}};
  for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++) {
    size_t len = strlen(forms[i].prefix);
    if (strncmp(group, forms[i].prefix, len) != 0) continue;
    char *end;
    long pid = strtol(group + len, &end, 10);
    if (end == group + len || *end != forms[i].after || pid <= 0 || pid > INT32_MAX) return 0;
    return (int)pid;
  }
  return 0;
}

/* Groups of earlier runs of this command in this job that a SIGKILL left
 * in /dev/shm (one that landed while the group was being made): a name of
 * ours (group_pid) whose pid no longer exists is removed if the runtime
 * judges it stale, as the next join of that name would; such a name is
 * never joined again (docs/cli.md "Signals"). */
static void reclaim_earlier_runs(void) {
  const char *job = getenv("MUSTER_JOB"); /* checked by main */
  const unsigned ours = MUSTER_SEGMENT_MINE | MUSTER_SEGMENT_HERE;
  int cap = muster_segment_list(NULL, ours, job ? job : "default", NULL, 0);
  muster_segment_name_t *names = cap > 0 ? calloc((size_t)cap, sizeof *names) : NULL;
  if (!names) return;
  int n = muster_segment_list(NULL, ours, job ? job : "default", names, cap);
  for (int i = 0; i < n && i < cap; i++) { /* names made since are not earlier runs' */
    int pid = group_pid(names[i].group);
    if (pid > 0 && pid != getpid() && kill(pid, 0) != 0 && errno == ESRCH)
      muster_segment_reclaim_stale(names[i].job, names[i].group);
  }
  free(names);
}

/* SIGINT, SIGTERM, SIGHUP and SIGQUIT that come while ml_hold_threads's
 * group has a name wait until it has none.  Blocking them in this thread
 * is not enough: any thread may take a signal sent to the process, and
 * other threads exist by then (OpenBLAS's workers, loaded with lapack).
 * So a handler, installed where the signal's action was the default one:
 * outside that window it dies of the signal as the default action would;
 * inside it leaves the signal in hold_gate for ml_hold_threads. */
static const int ending_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
static atomic_int hold_gate; /* 0: no name; 1: the name exists; 2 + sig: sig came meanwhile */
static pthread_once_t handlers_once = PTHREAD_ONCE_INIT;

static void die_of(int sig) {
  struct sigaction dfl;
  memset(&dfl, 0, sizeof dfl);
  dfl.sa_handler = SIG_DFL;
  sigaction(sig, &dfl, NULL);
  raise(sig); /* in a handler: delivered (fatal) as it returns */
}

static void on_ending_signal(int sig) {
  int named = 1;
  if (!atomic_compare_exchange_strong(&hold_gate, &named, 2 + sig)) die_of(sig);
}

static void install_handlers(void) {
  for (size_t i = 0; i < sizeof ending_signals / sizeof ending_signals[0]; i++) {
    struct sigaction now, sa;
    if (sigaction(ending_signals[i], NULL, &now) != 0 || now.sa_handler != SIG_DFL) continue;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_ending_signal;
    sa.sa_flags = SA_RESTART;
    sigfillset(&sa.sa_mask);
    sigaction(ending_signals[i], &sa, NULL);
  }
}

int ml_hold_threads(const char *group, int ranks, muster_launch_t **l) {
  reclaim_earlier_runs();
  pthread_once(&handlers_once, install_handlers);
  atomic_store(&hold_gate, 1);
  int rc = muster_launch_open(group, ranks, NULL, MUSTER_LAUNCH_UNNAMED, l);
  int came = atomic_exchange(&hold_gate, 0);
  if (came >= 2) die_of(came - 2); /* the name is gone: now */
  return rc;
}

int ml_run(const struct ml_spec *sp, struct ml_fate *f, struct ml_error *err) {
  muster_launch_t *l = NULL;
  pid_t *live = calloc((size_t)sp->ranks, sizeof *live);
  int gate[2] = {-1, -1}, rc = 0, orc;
  memset(err, 0, sizeof *err);
  for (int r = 0; r < sp->ranks; r++) {
    memset(&f[r], 0, sizeof f[r]);
    snprintf(f[r].text, sizeof f[r].text, "rank %d: not started: the launch failed before its fork", r);
  }
  if (!live) return fail_errno(err, ENOMEM, "cannot prepare the ranks");
  if (pipe(gate) != 0) {
    free(live);
    return fail_errno(err, errno, "cannot make the ranks' start gate (pipe)");
  }
  if (sp->group) reclaim_earlier_runs();
  if (sp->group &&
      (orc = muster_launch_open(sp->group, sp->ranks, NULL, MUSTER_LAUNCH_UNNAMED, &l)) < 0) {
    err->code = orc; /* the runtime's: MUSTER_ENOSPC for a full /dev/shm */
    snprintf(err->msg, sizeof err->msg, "cannot open group %s for %d ranks as their launcher: %s",
             sp->group, sp->ranks, muster_last_error());
    rc = -1;
  }
  if (rc == 0) rc = fork_all(sp, l, gate, live, f, err);
  close(gate[0]);
  if (rc == 0) {
    /* one byte per rank opens the gate; closing it unwritten sends them home */
    char go[ML_MAX_RANKS];
    memset(go, 'g', sizeof go);
    errno = 0;
    if (write(gate[1], go, (size_t)sp->ranks) != sp->ranks)
      rc = fail_errno(err, errno ? errno : EIO, "cannot open the ranks' start gate (write)");
  }
  close(gate[1]);
  reap_all(sp, l, live, f);
  if (l) muster_launch_close(l);
  free(live);
  if (rc < 0) return -1;
  for (int r = 0; r < sp->ranks; r++)
    if (f[r].died) return 1;
  return 0;
}
