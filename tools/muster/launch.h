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
 *   - every child's pid is declared (muster_launch_declare) before the gate
 *     opens, and every child that ends is reported (muster_launch_reap):
 *     when one dies the others fail at once with its rank, pid, signal and
 *     phase;
 *   - after the first death the others get `grace_s` to end on their own
 *     (a leader inside a long provider call cannot notice), then are
 *     SIGKILLed, so the command always ends;
 *   - a rank stopped (SIGSTOP, a debugger) while no other rank runs any
 *     more is SIGKILLed once that has lasted MUSTER_TIMEOUT (never with
 *     MUSTER_TIMEOUT=inf), so a finished job does not wait for it forever.
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

/* How one rank's process ended. */
struct ml_fate {
  int pid;         /* 0: never started                                        */
  int status;      /* waitpid() status                                         */
  int died;        /* 1: not a clean end (signal, non-zero exit, exit while
                      seated or before joining, or killed by the launcher)     */
  int killed;      /* 1: the launcher killed it after the grace, or after it
                      had been stopped longer than MUSTER_TIMEOUT while no
                      other rank ran                                        */
  double stopped_s;/* killed while stopped: for how long, else 0           */
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

/* Start spec->ranks children and reap them all; fates[ranks] says how each
 * ended.  Returns 0 when every rank ended cleanly, 1 when one did not, -1
 * when they could not be started (the reason on stderr; none is left
 * running, and fates say "not started"). */
int ml_run(const struct ml_spec *spec, struct ml_fate *fates);

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

/* Test knob $MUSTER_LAUNCH_TEST_STOP=RANK: that rank's child stops itself
 * (SIGSTOP) before it runs, i.e. before it joins, so a test can kill it
 * there.  *rank = -1 when unset; -1 returned (message set) when malformed. */
int ml_test_stop_rank(int *rank);

#endif
