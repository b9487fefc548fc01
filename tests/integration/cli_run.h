/*
 * tests/integration/cli_run.h - a `muster` CLI run whose ranks a test can
 * see and hurt: start it, find its rank processes, collect it after a fault
 * with the checks every fault test makes (no rank left after 5 s, nothing
 * of the job in /dev/shm).  Used by test_cli_faults.c and the storm
 * (tests/fault/test_storm.c).
 */
#ifndef MUSTER_TEST_CLI_RUN_H
#define MUSTER_TEST_CLI_RUN_H

#include <sys/types.h>

#include "test_shmdump_util.h"

#define NKIDS 64

struct run {
  pid_t pid;          /* the CLI */
  int out, err;
  pid_t kids[NKIDS];  /* its ranks, in fork (= rank) order */
  int nkids;
};

/* 1: cli_finish prints the run's output only when its own checks fail. */
extern int cli_run_quiet;

/* Spawn `muster argv...` with env entries added (MUSTER_TIMEOUT=60 unless
 * env sets it) and wait until it has forked `ranks` children. */
void cli_start(struct run *r, const char *const *argv, const char *const *env, int ranks);
/* The rank stopped by MUSTER_LAUNCH_TEST_STOP, once it has stopped. */
pid_t cli_stopped_kid(const struct run *r);
/* Collect the CLI after a fault at t_kill: its output and how long it took
 * since t_kill; asserts it ended within 60 s, no rank is left after 5 s and
 * nothing of this test's job is in /dev/shm. */
double cli_finish(struct run *r, struct tool_result *res, double t_kill);
/* SIGKILL the CLI (the caller is a subreaper): every rank must die with it
 * (PR_SET_PDEATHSIG) by SIGKILL, and be reaped here. */
void cli_kill(struct run *r);

#endif
