/*
 * tests/gpu/bench_sweep.c - muster-gpu-bench --sweep: raw cuSolverMg f64 at
 * every tile from 256 to the shard width, the measurements behind the
 * cusolvermg provider's tile rule (docs/tiles.md).
 */
#include <stdio.h>
#include <string.h>

#include "bench.h"
#include "raw.h"

void bench_sweep(int R) {
  static const int64_t ns[] = {8192, 16384, 32768};
  static const int64_t ts[] = {256, 512, 1024, 2048, 4096, 8192};
  printf("# tile sweep: raw cuSolverMg f64, %d GPU(s), medians (s)\n", R);
  for (int rt = 1; rt <= 3; rt++)
    for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++) {
      int64_t n = ns[i];
      if (rt == 3 && n > 8192) continue;   /* syevd: 8192 only (seconds each) */
      if (rt == 2 && n > 16384) continue;
      for (size_t k = 0; k < sizeof ts / sizeof ts[0] + 1; k++) {
        int64_t T = k < sizeof ts / sizeof ts[0] ? ts[k] : (n + R - 1) / R; /* last: T = S, no relayout */
        if (T > (n + R - 1) / R) continue;
        if (rt == 3 && T > 1024) continue;
        raw_run_t r;
        memset(&r, 0, sizeof r);
        r.routine = rt;
        r.dtype = MUSTER_F64;
        r.n = n;
        r.nrhs = 1;
        r.tile = T;
        r.ngpu = R;
        r.reps = rt == 3 ? 1 : 3;
        r.seed = 5;
        int rc = raw_mg(&r);
        printf("sweep %s n=%lld gpus=%d tile=%lld: %s %.4f s (potrf %.4f s)\n", rt == 1 ? "potrs" : rt == 2 ? "potri" : "syevd",
               (long long)n, R, (long long)T, rc == 0 && r.info == 0 ? "median" : "FAILED", r.t_med, r.t_fact_med);
        fflush(stdout);
      }
    }
}
