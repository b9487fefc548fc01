/* tests/gpu/gpu_mp_qr.c - cusolvermp's geqrf cases of gpu-test (gpu_mp.h),
 * each named "... [mp-qr]" (run-mp-qr.sh runs just these: gpu-test
 * --provider cusolvermp --only '[mp-qr]').
 *
 * One process per GPU (1, 2 and 4), thin (A <- Q m x n, B <- R) and full
 * (A <- R, B <- Q m x m) on tall A, and a wide A (always A <- R, B <- Q),
 * every dtype at each process count but 4 (three there), the cyclic layout
 * with lda > m, a rank-deficient A and a larger one (several tiles each way).
 * Each case is gpu_dn_factors.c's (gd_factor_case): A made on the host,
 * solved twice through muster_solve over a group, every rank's B the same,
 * chk_factors below 64 max(m, n) eps: ||A - Q R||_F / ||A||_F, ||Q^H Q -
 * I||_max and R upper triangular.  NaN in A: MUSTER_ENONFINITE on every
 * rank naming it, A and B as they were.
 * On 2 and 4 processes the default grid is 1 x R, where the release table
 * (providers/cusolvermp/version.c) lets 0.8's Geqrf + Orgqr run since these
 * cases passed there (4 x H200, 2026-11-27); a 2x1 grid is refused
 * (MUSTER_EUNSUPPORTED on every rank, nothing written; one case). */
#include <stdio.h>

#include "gpu_dn.h" /* gd_factor_case */
#include "gpu_mp.h"

/* One geqrf case on R processes, A m x n. */
static tcase_t *add(tcase_t *cases, int *nc, const gprov_t *mp, unsigned flags, muster_dtype_t dt, int R, int64_t m,
                    int64_t n, const char *what) {
  tcase_t *c = gc_add(cases, nc, mp, MUSTER_GEQRF, flags, dt, M_PROCS, R, n, 0, 0, "");
  c->m = m;
  c->shift = 0; /* full rank */
  c->special = gd_factor_case;
  snprintf(c->name, sizeof c->name, "geqrf(%s) %s processes R=%d m=%lld n=%lld%s%s [mp-qr]",
           flags & MUSTER_FULL_MATRICES ? "full" : "thin", muster_dtype_name(dt), R, (long long)m, (long long)n,
           *what ? " " : "", what);
  return c;
}

static tcase_t *nan_case(tcase_t *cases, int *nc, const gprov_t *mp, int R) {
  tcase_t *c = add(cases, nc, mp, 0, MUSTER_F64, R, 90, 60, "NaN-in-A");
  c->nan_in = 'a';
  c->expect = MUSTER_ENONFINITE;
  c->reps = 1;
  return c;
}

void mp_qr_cases(tcase_t *cases, int *nc, const gprov_t *mp, int maxR) {
  static const muster_dtype_t dts[4] = {MUSTER_F32, MUSTER_F64, MUSTER_C64, MUSTER_C128};
  const unsigned FULL = MUSTER_FULL_MATRICES;
  tcase_t *c;
  for (int d = 0; d < 4; d++) add(cases, nc, mp, 0, dts[d], 1, 301, 137, "");
  add(cases, nc, mp, FULL, MUSTER_F64, 1, 301, 137, "");
  add(cases, nc, mp, 0, MUSTER_C128, 1, 137, 301, "wide");
  c = add(cases, nc, mp, 0, MUSTER_F64, 1, 200, 120, "rank-deficient (rank 60)");
  c->shift = 60;
  add(cases, nc, mp, 0, MUSTER_F64, 1, 1000, 400, "larger");
  nan_case(cases, nc, mp, 1);
  if (maxR >= 2) {
    add(cases, nc, mp, 0, MUSTER_C128, 2, 301, 137, "");
    add(cases, nc, mp, FULL, MUSTER_F32, 2, 301, 137, "");
    add(cases, nc, mp, 0, MUSTER_F64, 2, 137, 301, "wide");
    c = add(cases, nc, mp, 0, MUSTER_C64, 2, 211, 97, "cyclic tile 16 lda+5");
    c->layout = MUSTER_LAYOUT_CYCLIC;
    c->tile = 16;
    c->lda_extra = 5;
    nan_case(cases, nc, mp, 2);
    c = add(cases, nc, mp, 0, MUSTER_F64, 2, 301, 137, "2x1 grid refused");
    c->env = "MUSTER_MP_GRID=2x1";
    c->expect = MUSTER_EUNSUPPORTED;
    c->reps = 1;
  }
  if (maxR >= 4) {
    add(cases, nc, mp, 0, MUSTER_F64, 4, 301, 137, "");
    add(cases, nc, mp, FULL, MUSTER_C64, 4, 173, 173, "");
    add(cases, nc, mp, 0, MUSTER_F32, 4, 137, 301, "wide");
  }
}
