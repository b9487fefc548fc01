/*
 * tests/gpu/gpu_select.h - which of gpu-test's cases one run runs
 * (gpu_select.c): the smoke subset (--smoke) and one of N parts of the
 * list (--part K/N), balanced by each case's estimated seconds.
 */
#ifndef MUSTER_GPU_SELECT_H
#define MUSTER_GPU_SELECT_H

#include "gpu_case.h"

/* Threads and all-mode cases (not special) run one after another in one
 * child of gpu-test: no process or CUDA start-up of their own.  The others
 * run each in a child of its own. */
int gs_batched(const tcase_t *c);

/* A case's estimated wall time on an H200 in seconds (start-up of its
 * process(es) and provider, plus the solves), from the runs recorded in
 * docs/gpu-testing.md and docs/gpu-runs.md.  Used only to balance the parts: a wrong estimate
 * makes a part longer, never a case wrong. */
double gs_cost(const tcase_t *c);

/* Keep, in list order, the smoke subset of cases[0..n): for every
 * (routine, mode, GPU count 1, 2 or 4) of the list the first case that
 * succeeds (no error expected) in the next dtype of a rotation over f32,
 * f64, c64, c128 that the key has, cusolvermp's in processes mode only;
 * and the first kill of a leader.
 * Each kept case solves once (reps = 1; a kill keeps its warm-up).
 * Returns how many are kept. */
int gs_smoke(tcase_t *cases, int n);

/* Keep, in list order, part k (1..parts) of cases[0..n): the cases are
 * dealt, longest estimate first (list order among equals), each to the
 * part with the least estimated time so far (the lowest-numbered among
 * equals), so the parts are deterministic for a given list and their
 * estimates close.  *est_s: the kept part's estimated seconds.  Returns
 * how many are kept. */
int gs_part(tcase_t *cases, int n, int k, int parts, double *est_s);

#endif
