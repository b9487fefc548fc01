/*
 * providers/scalapack/slModel.h - the scalapack provider's time model: the
 * seconds its estimate() gives for a call (estimate.c), pure arithmetic
 * (no MPI), so a CPU unit test pins it to the measured rows
 * (tests/unit/test_sl_model.c).
 *
 *   seconds = flops / (R * SL_MODEL_RATE * eff)
 *           + n^2 * mats * bytes * (SL_MODEL_MOVE_S / R + SL_MODEL_COMM_S * R)
 *
 * flops: LAPACK Working Note 41's counts (real flops; complex x4), eff: the
 * routine's share of the potrf-shaped rate (syevd's reduction is half
 * BLAS-2), mats: the n x n matrices the provider moves between the caller's
 * column blocks and its 2-D block-cyclic copy (pXgemr2d; A in, and A or Z
 * back out for potri and syevd with vectors).  The second term: that
 * redistribution (shared by the ranks) and the traffic that grows with the
 * number of ranks (panel broadcasts; on one node, ranks contending for the
 * memory bus).  Fitted to docs/performance/scalapack-cpu.md (16-core Xeon,
 * f64, one rank per core): within 1.11x of the 8 rows of its first run
 * (a second syevd run: 1.01x, 1.10x and 0.73x on 4, 8, 16 ranks, the last
 * 1.24x slower than the first run's).  docs/providers/scalapack.md
 * says what it is not fitted to.
 */
#ifndef SL_MODEL_H
#define SL_MODEL_H

#include <stdint.h>

/* flop/s of one rank in the potrf-shaped routines (potrs 8192 and 16384 on
 * 4 ranks run at 21 Gflop/s per rank; the fit puts the rest in the terms
 * below) */
#define SL_MODEL_RATE 24e9
/* syevd's rate as a share of that (pdsyevd 8192 on 8 and 16 ranks) */
#define SL_MODEL_SYEVD_EFF 0.58
/* seconds per byte moved by the redistribution, divided over the ranks
 * (about 4 GB/s of one rank's pXgemr2d) */
#define SL_MODEL_MOVE_S 0.25e-9
/* seconds per byte of A and per rank: the cost that grows with R (potrs
 * 8192: 1.14 s on 8 ranks, 1.00 s on 16, not the 0.57 s of linear scaling) */
#define SL_MODEL_COMM_S 0.069e-9

/* Real flops of one call (routine, dtype, flags as muster.h; gels with
 * m = n: the query carries no m). */
double sl_model_flops(int routine, int dtype, unsigned flags, int64_t n, int64_t nrhs);

/* Expected wall seconds of one call on R ranks (R < 1 counts as 1); < 0
 * for a routine the model does not know. */
double sl_model_seconds(int routine, int dtype, unsigned flags, int64_t n, int64_t nrhs, int R);

#endif
