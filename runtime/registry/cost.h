/*
 * runtime/registry/cost.h - cost tables: measured wall times of a provider, read
 * from <backend>.cost, and the expected time of a call interpolated from
 * them.  docs/choice.md documents the format; `muster bench --calibrate`
 * writes it.
 *
 * Format (text, one row per measured point; '#' starts a comment, blank
 * lines are ignored):
 *     # routine dtype ndevices n nrhs seconds [nnodes]
 *     potrs     f64   2        8192 1  0.0098
 * routine and dtype by name; ndevices as muster_provider_query_t counts
 * them (GPUs for CUDA memory, ranks for host memory); nrhs 0 for routines
 * without a right-hand side; nnodes (optional, default 1) the hosts the
 * ranks ran on.  A line "version MAJOR.MINOR[.PATCH...]" says which
 * version of the engine library the rows after it (up to the next such
 * line) were measured with; rows before any have no version.  A table that
 * holds no measurement yet (no GPU was there to measure it) says so in a
 * line "unmeasured WHY" and has no row: it is read, and the provider then
 * has no table, with that reason.  A row (or version line) that does not
 * parse refuses the whole file (the message names the line): a half-read
 * table would choose wrong without saying so.  Rows with the same
 * (routine, dtype, ndevices, n, nrhs, nnodes, version): the last one
 * counts, so a re-measured point can be appended.
 *
 * Lookup of (routine, dtype, ndevices, nnodes, n, nrhs) (cost_lookup.c),
 * for an engine of version V (the provider's muster_provider_engine_version,
 * muster/provider.h; unknown when it has none):
 *   1. the rows of (routine, dtype); none: no estimate (MUSTER_ENOENT);
 *   1b. of one version: V's major.minor, else those with no version, else
 *      the other versions, nearest V first (V unknown: the newest first;
 *      ties: the newer); the first of these whose rows are near the call
 *      (its ndevices measured, or two counts to model it from: 2b), else
 *      the first that has rows.  The note says so when the rows are not
 *      V's (and V's exist, or the rows have a version);
 *   2. of those, the nnodes nearest the call's (ties: the smaller: more
 *      nodes than measured are not modelled, the note says so), then the
 *      nrhs nearest the call's (ties: the smaller);
 *   2b. ndevices: a measured count is used as it is; between two measured
 *      counts, log-log interpolation in ndevices of their times at n;
 *      beyond them, the log-log slope of the two nearest counts, clamped
 *      to [-1, 0] (never better than linear scaling, never slower with
 *      more devices); one count measured: its time (the note says so);
 *   3. log-log linear interpolation in n between the two measured n around
 *      the call's (within one ndevices);
 *   4. below the smallest measured n: that point's time (per-call costs
 *      dominate small n; no extrapolation downwards);
 *      above the largest: the last segment's log-log slope, clamped to
 *      [2, 3] (dense factorizations grow as n^3, less while a device is
 *      not yet saturated); one point only: slope 3.
 * The note says which of these happened.
 */
#ifndef MUSTER_COST_H
#define MUSTER_COST_H

#include <stddef.h>
#include <stdint.h>

#include "base/error.h"

#define MUSTER__COST_MAX_ROWS 4096

typedef struct muster__cost_row {
  int routine, dtype, ndevices;
  int64_t n, nrhs;
  double seconds;
  int nnodes;
  int version;               /* MUSTER__COST_VERSION of the "version" line
                                above it, -1: none                     */
} muster__cost_row_t;

/* A version as rows and lookups compare it: MAJOR * 1000 + MINOR. */
#define MUSTER__COST_VERSION(major, minor) ((major) * 1000 + (minor))

typedef struct muster__cost {
  char path[512];
  int unmeasured;            /* the "unmeasured" line: no rows        */
  char unmeasured_why[200];  /* its words                             */
  int nrows;
  muster__cost_row_t rows[]; /* in file order */
} muster__cost_t;

/* Parse a table from text (NUL-terminated); `path` is only used in
 * messages.  0 with *out (free with muster__cost_free), or MUSTER_EINVAL
 * with "path:line: what" in why, or MUSTER_ENOMEM. */
MUSTER_HIDDEN int muster__cost_parse(const char *text, const char *path, muster__cost_t **out,
                                     char *why, size_t cap);

/* Read and parse file `path`.  MUSTER_ENOENT when there is no such file
 * (why says so), else as muster__cost_parse. */
MUSTER_HIDDEN int muster__cost_read(const char *path, muster__cost_t **out, char *why, size_t cap);

MUSTER_HIDDEN void muster__cost_free(muster__cost_t *t);

/* "MAJOR.MINOR[.PATCH...]" (decimal; MINOR < 1000) as MUSTER__COST_VERSION,
 * or -1 when s is NULL or not that. */
MUSTER_HIDDEN int muster__cost_version(const char *s);

/* The table file of a provider: the first <backend>.cost found in the
 * folders of $MUSTER_COST_PATH (':'-separated), then in `listed_dir` (the
 * provider path folder it was found in), then beside the real .so file
 * `real_so`.  1 with the path in out, 0 when there is none. */
MUSTER_HIDDEN int muster__cost_find(const char *backend, const char *listed_dir, const char *real_so,
                                    char *out, size_t cap);

/* Expected seconds of a call from table t (see the rules above) for an
 * engine of version `engine` ("0.9.1"; NULL or not a version: unknown).
 * 0 with *seconds and a note of how it was found, or MUSTER_ENOENT when t
 * has no row of (routine, dtype).  muster__cost_lookup_at: version
 * unknown; muster__cost_lookup: that on one node. */
MUSTER_HIDDEN int muster__cost_lookup_ver(const muster__cost_t *t, const char *engine, int routine, int dtype,
                                          int ndevices, int nnodes, int64_t n, int64_t nrhs, double *seconds,
                                          char *note, size_t cap);
MUSTER_HIDDEN int muster__cost_lookup_at(const muster__cost_t *t, int routine, int dtype, int ndevices,
                                         int nnodes, int64_t n, int64_t nrhs, double *seconds, char *note,
                                         size_t cap);
MUSTER_HIDDEN int muster__cost_lookup(const muster__cost_t *t, int routine, int dtype, int ndevices,
                                      int64_t n, int64_t nrhs, double *seconds, char *note,
                                      size_t cap);

#endif
