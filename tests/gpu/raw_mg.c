/* tests/gpu/raw_mg.c - raw cuSolverMg baseline, no muster:
 *   raw-mg ROUTINE DTYPE N TILE NGPU [REPS] [NRHS]
 * e.g. raw-mg potrs f64 32768 256 2 3
 * prints "raw-mg potrs f64 n=32768 tile=256 gpus=2: median 0.6812 s (potrf 0.39 s) min ... resid ..." */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "raw.h"

int main(int argc, char **argv) {
  if (argc < 6) {
    fprintf(stderr, "usage: raw-mg potrs|potri|syevd f32|f64|c64|c128 N TILE NGPU [REPS] [NRHS]\n");
    return 2;
  }
  raw_run_t r;
  memset(&r, 0, sizeof r);
  if (raw_parse_names(argv[1], argv[2], &r) < 0) {
    fprintf(stderr, "raw-mg: unknown routine '%s' or dtype '%s'\n", argv[1], argv[2]);
    return 2;
  }
  r.n = atoll(argv[3]);
  r.tile = atoll(argv[4]);
  r.ngpu = atoi(argv[5]);
  r.reps = argc > 6 ? atoi(argv[6]) : 3;
  r.nrhs = argc > 7 ? atoll(argv[7]) : 1;
  r.seed = 12345;
  if (r.n < 1 || r.tile < 1 || r.ngpu < 1 || r.ngpu > 16 || r.reps < 1) return 2;
  if (raw_mg(&r) < 0) {
    fprintf(stderr, "raw-mg: %s\n", r.err);
    return 1;
  }
  printf("raw-mg %s %s n=%lld tile=%lld gpus=%d: median %.4f s (potrf %.4f s) min %.4f s info %d resid %.3g\n",
         argv[1], argv[2], (long long)r.n, (long long)r.tile, r.ngpu, r.t_med, r.t_fact_med, r.t_min, r.info, r.resid);
  return r.info == 0 ? 0 : 1;
}
