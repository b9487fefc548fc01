/*
 * providers/cusolvermg/estimate.c - the estimate() hook the engine choice
 * asks (muster/provider_v2.h, docs/choice.md).  Pure arithmetic on the
 * query, no CUDA: it runs before anything is exported.
 *
 * Refusal: cuSolverMg needs one GPU per rank, so a call whose ranks share
 * a GPU (the query's device facts known: ndevices < nranks) is refused
 * here, before the choice settles on this provider, rather than in solve().
 *
 * Time.  potrs, potri and syevd have measured rows in cusolvermg.cost (the
 * cost table beside the .so): for them this answers seconds < 0 and the
 * table decides.  getrs has no row (and measuring every new routine on
 * every GPU count before it can be chosen would keep it out), so it gets a
 * model scaled from the potrs rows, not from a getrs measurement:
 *   potrs(n) = T_FIX + K n^2 (n + H)   fitted to the table's f64 2-GPU potrs
 *              rows, n = 8192 .. 65536 (within 7% of each; the fit includes
 *              the relayout and the solve the table measured)
 *   getrs(n) = T_FIX + LU_FLOPS * dtype * (2 / ndevices) * K n^2 (n + H)
 * LU_FLOPS = 2: getrf does 2n^3/3 flops where potrf does n^3/3, through the
 * same tiled kernels, and the getrs solve costs what the potrs solve costs
 * (2 n^2 nrhs); the private copy of A that getrs makes replaces the two
 * relayouts potrs pays.  dtype: complex arithmetic is 4 real flops per
 * flop; f32 runs at f64's rate (an H200's f32 and f64 peaks are the same;
 * unmeasured for cuSolverMg).  2 / ndevices: the rows are of 2 GPUs, and
 * the flops spread over the GPUs (an assumption: never measured on 1 or
 * 4).  The test cmg_estimate_scales_potrs_rows holds the model to the
 * table.
 */
#include <stdio.h>

#include "leader_solve.h"

#define T_FIX 0.002      /* s per call (launches, syncs)                       */
#define K_POTRS 2.89e-15 /* s per n^2 (n + H), f64, 2 GPUs (fit above)          */
#define H_POTRS 35200.0  /* the rate grows with n towards its peak              */
#define LU_FLOPS 2.0     /* getrf / potrf flops                                 */
#define FIT_GPUS 2.0     /* the rows' GPU count                                 */

static double dtype_flops(muster_dtype_t t) { return muster_dtype_is_complex(t) ? 4.0 : 1.0; }

double cmg_model_seconds(muster_routine_t routine, muster_dtype_t dtype, int64_t n, int ndevices) {
  if (routine != MUSTER_GETRS || n < 1 || ndevices < 1) return -1.0;
  double x = (double)n;
  return T_FIX + LU_FLOPS * dtype_flops(dtype) * (FIT_GPUS / ndevices) * K_POTRS * x * x * (x + H_POTRS);
}

int cmg_estimate(void *ctx, const muster_provider_query_t *q, muster_provider_estimate_t *est) {
  (void)ctx;
  est->seconds = -1.0;
  est->peak_bytes = 0;
  if (q->devices && q->mem == MUSTER_MEM_CUDA && q->ndevices < q->nranks) {
    snprintf(est->note, sizeof est->note, "%d ranks on %d GPU(s): cuSolverMg needs one GPU per rank", q->nranks,
             q->ndevices);
    return MUSTER_EUNSUPPORTED;
  }
  int gpus = q->ndevices > 0 ? q->ndevices : q->nranks;
  est->seconds = cmg_model_seconds(q->routine, q->dtype, q->n, gpus);
  if (est->seconds >= 0)
    snprintf(est->note, sizeof est->note, "getrs model: 2x the potrs rows' fit (LU flops), %s, %d GPU(s)",
             muster_dtype_str(q->dtype), gpus);
  else
    snprintf(est->note, sizeof est->note, "no model for %s: the cost table decides", muster_routine_str(q->routine));
  return 0;
}
