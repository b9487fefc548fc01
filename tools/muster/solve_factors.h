/*
 * tools/muster/solve_factors.h - what `muster solve` does differently for
 * geqrf, gesvd and polar (MUSTER_TAKES_O): their shape and flags, their
 * random A, and their check (check_qr.h).
 */
#ifndef MUSTER_SOLVE_FACTORS_H
#define MUSTER_SOLVE_FACTORS_H

#include "check_qr.h"
#include "solve_run.h"

/* --m defaults to --n (a square A); the flags must be the routine's
 * (muster_routine_outputs); nrhs := the columns of m rows B needs (at
 * least 1).  0, or -1 after printing why (usage error). */
int sf_shape(const char *who, sr_spec_t *spec);

/* 1 for geqrf, gesvd, polar. */
int sf_is_factor(muster_routine_t r);

#endif
