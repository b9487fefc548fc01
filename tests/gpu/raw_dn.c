/* tests/gpu/raw_dn.c - raw cusolverDn baseline on GPU 0, no muster:
 *   raw-dn ROUTINE DTYPE N [REPS] [NRHS]
 * e.g. raw-dn potrs f64 32768 3 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "raw.h"

int main(int argc, char **argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: raw-dn potrs|potri|syevd|getrs f32|f64|c64|c128 N [REPS] [NRHS]\n");
    return 2;
  }
  raw_run_t r;
  memset(&r, 0, sizeof r);
  if (raw_parse_names(argv[1], argv[2], &r) < 0) {
    fprintf(stderr, "raw-dn: unknown routine '%s' or dtype '%s'\n", argv[1], argv[2]);
    return 2;
  }
  r.n = atoll(argv[3]);
  r.reps = argc > 4 ? atoi(argv[4]) : 3;
  r.nrhs = argc > 5 ? atoll(argv[5]) : 1;
  r.ngpu = 1;
  r.seed = 12345;
  if (r.n < 1 || r.reps < 1) return 2;
  if (raw_dn(&r) < 0) {
    fprintf(stderr, "raw-dn: %s\n", r.err);
    return 1;
  }
  printf("raw-dn %s %s n=%lld: median %.4f s (factor %.4f s) min %.4f s info %d resid %.3g\n", argv[1], argv[2],
         (long long)r.n, r.t_med, r.t_fact_med, r.t_min, r.info, r.resid);
  return r.info == 0 ? 0 : 1;
}
