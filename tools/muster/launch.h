/*
 * tools/muster/launch.h - how the CLI starts ranks as processes and reaps
 * them, for `muster solve` and `muster bench` (solve_run.c) and `muster
 * rendezvous` (rendezvous_run.c), and holds the group of threads-mode
 * ranks (ml_hold_threads, at the end):
 *
 *   - the group the ranks will join is opened first with
 *     muster_launch_open(..., MUSTER_LAUNCH_UNNAMED): the children find it
 *     in the cache they inherit, so its name is gone at once and nothing can
 *     be left in /dev/shm whoever dies when;
 *   - one fork per rank, behind a gate (a pipe), so that either all start or
 *     none does; each child dies with the launcher (PR_SET_PDEATHSIG, then
 *     getppid() to close the race with a launcher that died before it);
 *   - when the ranks cannot be started (the group cannot be opened: a full
 *     /dev/shm, no file descriptor left; a fork fails) none runs: the ones
 *     forked leave at the closed gate, and ml_run says why (struct
 *     ml_error: the code and the cause, for the command's own summary);
 *   - every child's pid is declared (muster_launch_declare) before the gate
 *     opens, and every child that ends is reported (muster_launch_reap):
 *     when one dies the others fail at once with its rank, pid, signal and
 *     phase;
 *   - after the first death the others get `grace_s` to end on their own
 *     (a leader inside a long provider call cannot notice), then are
 *     SIGKILLed, so the command always ends;
 *   - a stopped rank (SIGSTOP, a debugger) cannot end on its own: once a
 *     rank has died and every rank still there is stopped, they are
 *     SIGKILLed at once (a stopped rank makes the others fail within
 *     MUSTER_TIMEOUT, naming it; the command then ends, not a grace
 *     later);
 *   - a rank stopped while no other rank runs any more and none died (the
 *     others finished) is SIGKILLed once that has lasted MUSTER_TIMEOUT
 *     (never with MUSTER_TIMEOUT=inf), so a finished job does not wait for
 *     it forever.
 */
#ifndef MUSTER_CLI_LAUNCH_H
#define MUSTER_CLI_LAUNCH_H

#include <stddef.h>

#define ML_GRACE_S 5.0     /* default grace after the first death            */
#define ML_MAX_RANKS 1024  /* children one launch may start (rendezvous)     */
#define ML_NOT_STARTED 3   /* exit status of a child that never ran its rank:
                              the gate closed, or the launcher died before the
                              child armed PR_SET_PDEATHSIG                  */
#define ML_FATE 1024

/* Why the launcher killed a rank (ml_fate.killed). */
enum {
  ML_KILL_GRACE = 1, /* still there grace_s after the first death            */
  ML_KILL_FAILED,    /* stopped, after a death, with no other rank running   */
  ML_KILL_IDLE       /* stopped MUSTER_TIMEOUT while no other rank ran, none
                        having died (the others finished)                    */
};

/* How one rank's process ended. */
struct ml_fate {
  int pid;         /* 0: never started                                        */
  int status;      /* waitpid() status                                         */
  int died;        /* 1: not a clean end (signal, non-zero exit, exit while
                      seated or before joining, or killed by the launcher)     */
  int killed;      /* the launcher killed it: why, ML_KILL_*; 0 it did not   */
  int stopped;     /* killed: 1 when it was stopped then (SIGSTOP, a debugger) */
  double stopped_s;/* killed while stopped: for how long (ML_KILL_IDLE: how
                      long no other rank ran)                               */
  int seq;         /* order in which it was reaped, 1 = first; 0 never         */
  char text[ML_FATE]; /* "rank 1 (pid 4242) was killed by signal 9 (Killed)
                         while waiting at barrier 3 of group g"               */
};

/* Runs in the child of `rank`; the child exits with 0 when it returns 0,
 * else 1. */
typedef int (*ml_rank_fn)(int rank, void *arg);

struct ml_spec {
  const char *who;    /* "muster solve": prefix of messages on stderr         */
  const char *group;  /* the group the ranks join; NULL: none (the pthread
                         baseline of rendezvous)                              */
  int ranks;          /* 1..ML_MAX_RANKS                                      */
  ml_rank_fn fn;
  void *arg;
  double grace_s;     /* 0: ML_GRACE_S                                        */
};

/* Why the ranks could not be started. */
struct ml_error {
  int code;       /* MUSTER_E*: the runtime's when the group could not be
                     opened (MUSTER_ENOSPC: /dev/shm is full), MUSTER_ENOMEM
                     or MUSTER_ESYS for a system call of the launcher      */
  char msg[600];  /* e.g. "cannot fork rank 1 of 2: Resource temporarily
                     unavailable (EAGAIN)"                                  */
};

/* Start spec->ranks children and reap them all; fates[ranks] says how each
 * ended.  Returns 0 when every rank ended cleanly, 1 when one did not, -1
 * when they could not be started: *err says why (nothing is printed);
 * none is left running, and every rank's fate says it was not started
 * (one that was forked: "rank 0 (pid P) did not run: the launch was
 * called off"). */
int ml_run(const struct ml_spec *spec, struct ml_fate *fates, struct ml_error *err);

/* Threads mode: hold `group` (ranks threads of this process will join it)
 * as its launcher with MUSTER_LAUNCH_UNNAMED, so that its name is gone
 * before any thread starts: the threads find it in this process's cache,
 * and a signal that ends the command (SIGINT, SIGTERM, SIGKILL) while they
 * run leaves nothing in /dev/shm.  SIGINT, SIGTERM, SIGHUP and SIGQUIT
 * that come while the name exists (inside muster_launch_open) wait until
 * it is gone (a handler, installed at the first call where their action
 * was the default; at any other time it dies of the signal at once); a
 * SIGKILL there leaves a stale segment, which the next run removes: this
 * and ml_run first remove the groups of earlier runs in the job whose pid
 * is dead and that the runtime judges stale.  0 with *l
 * (give it back with muster_launch_close once the threads are done), or
 * the runtime's code with muster_last_error() set. */
struct muster_launch;
int ml_hold_threads(const char *group, int ranks, struct muster_launch **l);

/* Test knobs, 0..ML_MAX_RANKS-1 (*rank = -1 when unset; -1 returned,
 * message set, when malformed):
 *   $MUSTER_LAUNCH_TEST_STOP=RANK: that rank's child stops itself (SIGSTOP)
 *     before it runs, i.e. before it joins, so a test can kill it there;
 *   $MUSTER_LAUNCH_TEST_FORK_FAIL=RANK: the fork of that rank fails as a
 *     fork at the process limit does (EAGAIN), which a test cannot cause
 *     for real as root (RLIMIT_NPROC does not apply to root). */
int ml_test_stop_rank(int *rank);
int ml_test_fork_fail_rank(int *rank);

#endif
