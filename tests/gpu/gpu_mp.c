/* tests/gpu/gpu_mp.c - cusolvermp's cases of gpu-test (gpu_mp.h): getrs
 * and potrs with log det through muster_solve over a group, one process
 * per GPU (1 to 4; one rank also as a thread), every dtype, on an aligned
 * n (the solver's grid may hold A where the block layout does) and an odd
 * one (lda > n: relayout over NCCL), checked as cusolvermg's are
 * (gpu_case.h: residuals, A kept by getrs, log det against the lapack
 * provider on every rank); getrs with MUSTER_NO_FACTOR and from a cyclic
 * layout; an exactly singular A (MUSTER_ESINGULAR, info = the zero
 * column); NaN in A or B (MUSTER_ENONFINITE on every rank).  The provider
 * exports no counters: nothing is checked around the second solve. */
#include <stdio.h>

#include "gpu_mp.h"

static const gprov_t mp = {"cusolvermp", "muster_cusolvermp_stats", 0, NULL, 0, 0, NULL};

void mp_cases(tcase_t *cases, int *nc, int maxR) {
  static const muster_dtype_t dts[4] = {MUSTER_F32, MUSTER_F64, MUSTER_C64, MUSTER_C128};
  for (int R = 1; R <= 4 && R <= maxR; R++)
    for (int mode = M_THREADS; mode <= M_PROCS; mode++) {
      if (mode == M_THREADS && R > 1) continue; /* one process per GPU */
      int64_t n = 512 * R;
      for (int d = 0; d < 4; d++) {
        gc_add(cases, nc, &mp, MUSTER_GETRS, 0, dts[d], mode, R, n, 0, 0, "aligned");
        gc_add(cases, nc, &mp, MUSTER_GETRS, 0, dts[d], mode, R, 1000 + 7 * R, 5, 0, "unaligned");
        gc_add(cases, nc, &mp, MUSTER_POTRS, MUSTER_LOGDET, dts[d], mode, R, 1000 + 7 * R, 5, 0, "unaligned");
      }
      gc_add(cases, nc, &mp, MUSTER_POTRS, MUSTER_LOGDET, MUSTER_F64, mode, R, n, 0, 0, "aligned");
      gc_add(cases, nc, &mp, MUSTER_GETRS, MUSTER_NO_FACTOR, MUSTER_F64, mode, R, n, 0, 0, "aligned");
      gc_add(cases, nc, &mp, MUSTER_GETRS, MUSTER_NO_FACTOR, MUSTER_C128, mode, R, 1000 + 7 * R, 5, 0, "unaligned");
      gc_add_getrs_edges(cases, nc, &mp, mode, R);
    }
}
