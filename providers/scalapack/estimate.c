/*
 * providers/scalapack/estimate.c - the estimate hook (the runtime's engine
 * choice, docs/choice.md): whether a call can run here, and the memory it
 * needs on one rank, and across nodes its time (slModel.h).
 */
#include <stdio.h>
#include <string.h>

#include "slInt.h"
#include "slModel.h"

/* n x n matrices one rank holds 1/R of: A, and Z (syevd, potri; geqrf's
 * Q or R), gesvd's two vectors, polar's vectors and scratch. */
static int copies_of_a(int routine) {
  switch (routine) {
  case MUSTER_SYEVD: case MUSTER_POTRI: case MUSTER_GEQRF: return 2;
  case MUSTER_GESVD: return 3;
  case MUSTER_POLAR: return 6;
  default: return 1;
  }
}

/* Most bytes one rank allocates: its 1/R of the provider's copy of A, again
 * of the others (copies_of_a), its part of B, and (getrs, gels) the pivots or the
 * QR's tau and workspace, each about one tile-wide panel of A (tile <= n;
 * 128 when the call leaves it to us, the largest of sl_auto_tile's table).  The
 * query carries no m (the rows of a gels, geqrf, gesvd or polar A:
 * muster_provider_query_t is frozen), so they count m = n. */
static uint64_t sl_peak_bytes(const muster_provider_query_t *q) {
  double R = q->nranks > 0 ? q->nranks : 1, n = (double)q->n, nrhs = q->nrhs > 0 ? q->nrhs : 0;
  double tile = q->tile > 0 ? (double)q->tile : 128, share = n * n / R;
  int mats = copies_of_a(q->routine);
  double panel = (q->routine == MUSTER_GETRS || q->routine == MUSTER_GELS) ? (n / R + tile) * tile
                                                                            : 0;
  return (uint64_t)((share * mats + n * nrhs + panel) * (double)muster_dtype_bytes(q->dtype));
}

/* Can this call run here?  Only with MPI running in this process (the MPI
 * bootstrap), on host memory, and one rank per process (a 1-rank call's
 * span is "threads").  Across nodes (the CPU engine that can run there at
 * all) the seconds of slModel.h: the runtime extends a kind mpi call's
 * deadline by them (docs/bootstrap.md).  On one node no time (seconds < 0),
 * and the note says why the lapack provider should run it instead: lapack
 * has no time either, and a provider with one outranks a provider without
 * (docs/choice.md), so a time here would move one node's potrs to
 * scalapack, which measured 1.4-1.6x slower (performance/scalapack-cpu.md).
 * The runtime shows this note in the choice's reason. */
int sl_estimate(void *ctx, const muster_provider_query_t *q,
                       muster_provider_estimate_t *est) {
  (void)ctx;
  memset(est, 0, sizeof *est);
  est->seconds = -1;
  if (!q) return MUSTER_EINVAL;
  if (q->span == MUSTER_SPAN_THREADS && q->nranks > 1) {
    snprintf(est->note, sizeof est->note,
             "ranks are threads of one process: ScaLAPACK needs "
             "one MPI rank per process");
    return MUSTER_EUNSUPPORTED;
  }
  if (q->routine == MUSTER_GESVD && (q->flags & MUSTER_FULL_MATRICES)) {
    snprintf(est->note, sizeof est->note, "pXgesvd computes thin vectors only (the full U and V^H: "
             "lapack)");
    return MUSTER_EUNSUPPORTED;
  }
  if (q->mem && q->mem != MUSTER_MEM_HOST) {
    snprintf(est->note, sizeof est->note, "the matrix is not in host memory");
    return MUSTER_EUNSUPPORTED;
  }
  int world = 0;
  if (!sl_mpi_usable() || (MPI_Comm_size(MPI_COMM_WORLD, &world), world < q->nranks)) {
    snprintf(est->note, sizeof est->note,
             "no MPI job of %d ranks in this process (start them "
             "with mpirun and the MPI bootstrap)",
             q->nranks);
    return MUSTER_EUNSUPPORTED;
  }
  est->peak_bytes = sl_peak_bytes(q);
  if (q->nnodes <= 1)
    snprintf(est->note, sizeof est->note,
             "one node: lapack measured faster (potrs n=1024: 0.05 s vs 0.2-0.3 s on 2 ranks, "
             "performance/scalapack.md)");
  else {
    est->seconds = sl_model_seconds(q->routine, q->dtype, q->flags, q->n, q->nrhs, q->nranks);
    snprintf(est->note, sizeof est->note, "%d nodes: flops model (fit: 16-core Xeon, "
             "performance/scalapack-cpu.md); about %.0f MiB per rank",
             q->nnodes, (double)est->peak_bytes / 1048576.0);
  }
  return 0;
}
