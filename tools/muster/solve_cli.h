/*
 * tools/muster/solve_cli.h - one `muster solve` run between its parts:
 * cmd_solve.c (options, ranks started here or by MPI) and solve_report.c
 * (the random inputs, the check, the result on stdout).
 */
#ifndef MUSTER_SOLVE_CLI_H
#define MUSTER_SOLVE_CLI_H

#include <stdint.h>

#include "check.h"
#include "solve_run.h"

#define WHO "muster solve" /* who, in messages */

/* What the options asked for. */
typedef struct cli_solve {
  sr_spec_t spec;
  uint64_t seed;
  int seeded, json;
  chk_level_t check;    /* --check: none, residual (default), full          */
  int progress;         /* -1 --quiet, 0 after 2 s (default), 1 --progress   */
  const char *mode;     /* threads, processes; "mpi" with a launcher */
  const char *launcher; /* NULL: the command starts the ranks; "mpi", "auto" */
  const char *set_ranks, *set_mode; /* given: refused with a launcher */
} cli_solve_t;

/* The matrices of one run; all NULL after a failure (printed). */
typedef struct mats {
  void *A, *B, *full, *X, *W;
} mats_t;

/* The random inputs from c->seed, the same on every rank that calls it:
 * A rows x n, B rows x nrhs (rows: sr_rows, m for gels).  0, or -1 after
 * printing why. */
int mats_make(const cli_solve_t *c, int64_t nrhs, mats_t *m);
void mats_free(mats_t *m);

/* The provider the run chose before it started (before any shard exists:
 * cli_choose_memory), and the reason the JSON shows: the runtime's whole
 * reason for the provider that ran (muster_solve_reason on rank 0;
 * res.reason is cut to MUSTER_MAX_REASON bytes), or for the pick when nothing ran. */
typedef struct pick {
  char provider[32];
  char reason[MUSTER_MAX_REASON_FULL];
} pick_t;

/* The run's outcome on stdout (text or JSON, after the check c->check
 * asks for) and its error on stderr; the exit status.  started: sr_run's
 * (or sm_run's) return, -1 when the run never started. */
int solve_report(const cli_solve_t *c, int64_t nrhs, const mats_t *m, sr_out_t *out, int started,
                 int xsame, const pick_t *pick);

#endif
