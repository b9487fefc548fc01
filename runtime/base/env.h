/*
 * runtime/base/env.h - the MUSTER_* environment variables.  Each is read and
 * checked here and nowhere else; docs/runtime.md ("Environment") lists the
 * values each accepts.
 *
 * Rules shared by all: a variable that is unset gets its default; one that
 * is set must be valid, and set but empty is invalid too (unset it for the
 * default).  An invalid value is MUSTER_EINVAL from the call that reads it,
 * with a message naming the variable and quoting the value, e.g.
 *     MUSTER_TIMEOUT: '1e300' is not a number of seconds in 0.001..31536000
 *     (or inf: no deadline)
 * never a silent fallback to the default.
 */
#ifndef MUSTER_ENV_H
#define MUSTER_ENV_H

#include <stddef.h>

#include "base/error.h"
#include "muster.h"
#include "muster/parse.h"

#define MUSTER_DEFAULT_JOB "default"

/* MUSTER_TIMEOUT: seconds (parse.h's range) or "inf"; *seconds = 0 means
 * no deadline.  Unset: MUSTER_DEFAULT_TIMEOUT_S. */
MUSTER_HIDDEN int muster__env_timeout(double *seconds);

/* MUSTER_LOG: error|warn|info|debug (any case, muster__log_level_of of
 * error.h, which reads it for muster__log).  MUSTER_EINVAL when invalid. */
MUSTER_HIDDEN int muster__env_check_log(void);

/* A variable: NULL when unset; MUSTER_EINVAL when set but empty. */
MUSTER_HIDDEN int muster__env_get(const char *var, const char **value);

/* MUSTER_PROVIDER: "NAME" for every routine, and/or "ROUTINE=NAME" entries,
 * comma-separated (e.g. "lapack,syevd=cusolvermg"): ROUTINE one of potrs,
 * potri, syevd, each at most once; at most one bare NAME; NAME a backend
 * name (muster_parse_backend).  The whole value is checked; then out
 * (cap >= MUSTER_MAX_BACKEND + 1) gets the backend it forces for `routine`,
 * "" when none.  Unset: "". */
MUSTER_HIDDEN int muster__env_provider_choice(const char *routine, char *out, size_t cap);

/* MUSTER_PROVIDER_PATH: 1..MUSTER_MAX_PROVIDER_DIRS folders separated by
 * ':', none empty, each at most MUSTER_MAX_PROVIDER_DIR bytes (room is left
 * for <dir>/<routine>/<file> in PATH_MAX).  *value = the checked value, or
 * NULL when unset (the default folders).  A folder that does not exist is
 * not an error (it holds no provider). */
#define MUSTER_MAX_PROVIDER_DIRS MUSTER_MAX_FOLDERS
#define MUSTER_MAX_PROVIDER_DIR MUSTER_MAX_FOLDER_LEN
MUSTER_HIDDEN int muster__env_provider_path(const char **value);

/* MUSTER_COST_PATH: folders searched first for cost tables (cost.h), by
 * MUSTER_PROVIDER_PATH's rule.  *value NULL when unset. */
MUSTER_HIDDEN int muster__env_cost_path(const char **value);

/* MUSTER_MPI_ABORT: 1 (unset: the default) or 0.  1: a collective call or
 * bootstrap exchange over a kind mpi comm has a MUSTER_TIMEOUT deadline, after
 * which the call is cancelled (the scalapack provider then aborts the job)
 * and, still stuck MUSTER__MPI_ABORT_GRACE_S later, the job is ended with
 * MPI_Abort (runtime/solve/mpi.h); 0: no deadline, the ranks wait as MPI does (the
 * launcher's or batch system's limit must end a stuck job). */
MUSTER_HIDDEN int muster__env_mpi_abort(int *on);

/* MUSTER_MPI_LIB: the libmpi the MPI bootstrap loads (runtime/solve/mpi.c), a
 * file name or path; *value NULL when unset (the default names).  Only
 * set-but-empty is refused here: whether it loads is known where MPI is
 * used, which then refuses a value that does not load or is no libmpi. */
MUSTER_HIDDEN int muster__env_mpi_lib(const char **value);
/* MUSTER_MPI_HEARTBEAT: 1 (unset: the default) or 0.  1: a process in
 * which muster initialised MPI (with MPI_THREAD_MULTIPLE) runs the
 * heartbeat (runtime/solve/mpi_beat.c): the waits on the other ranks fail when a
 * rank is silent for MUSTER_TIMEOUT, however long the work.  0: no
 * heartbeat thread (no MPI call from a muster thread while the program's
 * threads use MPI); those waits then have the MUSTER_TIMEOUT deadline. */
MUSTER_HIDDEN int muster__env_mpi_heartbeat(int *on);

/* MUSTER_COMM_TEST_FAIL_STAGE: tests only.  A rank in 0..MUSTER_MAX_RANKS-1
 * of a kind store comm whose first staging region in this process
 * (runtime/solve/comm_stage.c) fails as an allocation that finds no memory
 * does, so that tests can check what the other ranks hear.  *rank = that
 * rank, -1 when unset. */
MUSTER_HIDDEN int muster__env_comm_test_fail_stage(int *rank);

/* muster_env_check (muster/parse.h) checks every variable above at once. */


#endif
