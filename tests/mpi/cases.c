/*
 * tests/mpi/cases.c - "solve": every routine x dtype x n x caller layout
 * through the scalapack provider on this job's ranks: through
 * muster_solve_comm (name "comm ...") unless the case asks the provider for
 * a tile of its own ("direct ...": the runtime passes args.tile only as the
 * caller's layout tile).  Each case is checked
 * by residuals on the whole result (every rank's copy of X and W) and
 * against the lapack provider on the same input: the same numbers in the
 * same places (the factor in the lower triangle with the upper one
 * untouched, the full Hermitian inverse, eigenvalues ascending everywhere,
 * eigenvectors as columns in their order).
 */
#include <complex.h>
#include <math.h>
#include "mpi/driver.h"

static const muster_dtype_t dtypes[] = {MUSTER_F32, MUSTER_F64, MUSTER_C64, MUSTER_C128};

/* A 1-D cyclic tile for the caller's layout that differs from the block
 * layout when (n, R) allows one. */
static int64_t cyclic_tile(int64_t n, int R, int k) {
  int64_t tiles[512];
  int64_t c = muster_layout_valid_tiles(n, R, tiles, 512);
  ASSERT_GE(c, 1);
  if (c > 512) c = 512;
  return c == 1 ? tiles[0] : tiles[(k * 7919) % (c - 1)]; /* the last one is S: block */
}

static double max_abs(const zd *m, int64_t k) {
  double s = 0;
  for (int64_t i = 0; i < k; i++) s = fmax(s, cabs(m[i]));
  return s;
}

void drv_compare_x(const lfx_t *fx, const lfx_t *ref, double tol, char *why, size_t len) {
  for (int r = 0; r < fx->R; r++) {
    for (int64_t c = 0; c < fx->nrhs; c++) {
      for (int64_t i = 0; i < fx->n; i++) {
        zd x = lfx_get(fx, fx->shards[r].b, fx->ldb, i, c);
        zd y = lfx_get(ref, ref->shards[0].b, ref->ldb, i, c);
        if (cabs(x - y) > tol * (1 + cabs(y)))
          drv_say(why, len, "X on rank %d differs from lapack's at (%" PRId64 ", %" PRId64 ")",
                  r, i, c);
      }
    }
  }
}

/* The result matrix against lapack's: lower triangle within tol, and the
 * upper one within tol or (factor) exactly the input. */
static void compare_a(const lfx_t *fx, const lfx_t *ref, double tol, int upper_is_input, char *why,
                      size_t len) {
  int64_t n = fx->n;
  zd *F = lfx_read_a((lfx_t *)fx), *G = lfx_read_a((lfx_t *)ref);
  double scale = max_abs(G, n * n);
  for (int64_t j = 0; j < n; j++) {
    for (int64_t i = 0; i < n; i++) {
      zd f = F[j * n + i], g = G[j * n + i];
      int differs = (i < j && upper_is_input) ? f != fx->A[j * n + i] : cabs(f - g) > tol * scale;
      if (differs)
        drv_say(why, len,
            "A's result differs from lapack's at (%" PRId64 ", %" PRId64
            "): %g%+gi vs "
            "%g%+gi",
            i, j, creal(f), cimag(f), creal(g), cimag(g));
    }
  }
  free(F);
  free(G);
}

static double w_of(const lfx_t *fx, int r, int64_t i) {
  return muster_dtype_real_size(fx->t) == 4 ? ((float *)fx->shards[r].w)[i]
                                            : ((double *)fx->shards[r].w)[i];
}

static void compare_syevd(const lfx_t *fx, const lfx_t *ref, double tol, char *why, size_t len) {
  int64_t n = fx->n;
  double scale = 0;
  for (int64_t i = 0; i < n; i++) scale = fmax(scale, fabs(w_of(ref, 0, i)));
  for (int r = 0; r < fx->R; r++)
    for (int64_t i = 0; i < n; i++)
      if (fabs(w_of(fx, r, i) - w_of(ref, 0, i)) > tol * scale)
        drv_say(why, len, "eigenvalue %" PRId64 " on rank %d differs from lapack's", i, r);
  zd *V = lfx_read_a((lfx_t *)fx);
  if (fx->flags & MUSTER_NO_VECTORS) { /* A must be untouched */
    for (int64_t k = 0; k < n * n; k++)
      if (V[k] != fx->A[k]) drv_say(why, len, "NO_VECTORS changed A at element %" PRId64, k);
    free(V);
    return;
  }
  zd *U = lfx_read_a((lfx_t *)ref);
  for (int64_t j = 0; j < n; j++) { /* the same vector up to a phase: |u^H v| = 1 */
    zd p = 0;
    for (int64_t i = 0; i < n; i++) p += conj(U[j * n + i]) * V[j * n + i];
    if (fabs(cabs(p) - 1) > 0.1)
      drv_say(why, len, "eigenvector %" PRId64 " is not lapack's (|u^H v| = %g)", j, cabs(p));
  }
  free(U);
  free(V);
}

/* Rank 0: residuals of the shared result, then lapack on the same input. */
static void check(drv_t *d, lfx_t *fx, uint64_t seed, char *why, size_t len) {
  double res = 0, orth = 0, tol = DRV_TOL * (double)fx->n * lfx_eps(fx->t);
  unsigned f = fx->flags;
  if (fx->routine == MUSTER_POTRS) {
    if ((res = lfx_potrs_residual(fx)) > DRV_TOL) drv_say(why, len, "potrs residual %.3g", res);
    if (!(f & MUSTER_NO_FACTOR) && (res = lfx_factor_residual(fx)) > DRV_TOL)
      drv_say(why, len, "factor residual %.3g", res);
  } else if (fx->routine == MUSTER_POTRI) {
    if ((res = lfx_potri_residual(fx)) > DRV_TOL) drv_say(why, len, "potri residual %.3g", res);
  } else if (!(f & MUSTER_NO_VECTORS)) {
    res = lfx_syevd_residual(fx, &orth);
    if (res > DRV_TOL || orth > DRV_TOL)
      drv_say(why, len, "syevd residual %.3g, orth %.3g", res, orth);
  }
  lfx_t ref = {.routine = fx->routine,
               .t = fx->t,
               .n = fx->n,
               .nrhs = fx->nrhs,
               .R = fx->R,
               .layout = fx->layout,
               .tile = fx->tile,
               .lda = fx->lda,
               .ldb = fx->ldb,
               .flags = f};
  lfx_seed(seed);
  lfx_setup(&ref);
  int rc = lfx_solve(d->lp, d->lp_ctx, &ref);
  if (rc != 0) {
    drv_say(why, len, "lapack failed on the same input: %s", ref.err);
  } else if (fx->routine == MUSTER_POTRS) {
    drv_compare_x(fx, &ref, tol, why, len);
    if (!(f & MUSTER_NO_FACTOR)) compare_a(fx, &ref, tol, 1, why, len);
  } else if (fx->routine == MUSTER_POTRI) {
    compare_a(fx, &ref, tol, 0, why, len);
  } else {
    compare_syevd(fx, &ref, tol, why, len);
  }
  lfx_free(&ref);
}

static void run_case(drv_t *d, muster_routine_t routine, muster_dtype_t t, int64_t n, int cyclic,
                     unsigned flags, int64_t ptile, int k) {
  uint64_t seed = d->seed + (uint64_t)k * 7 + 1000u * (unsigned)routine;
  lfx_seed(seed);
  lfx_t fx = {.routine = routine,
              .t = t,
              .n = n,
              .nrhs = 1 + k % 3,
              .R = d->size,
              .layout = cyclic ? MUSTER_LAYOUT_CYCLIC : MUSTER_LAYOUT_BLOCK,
              .flags = flags,
              .lda = n + k % 3,
              .ldb = n + (k / 3) % 2};
  fx.tile = cyclic ? cyclic_tile(n, d->size, k) : 0;
  lfx_setup(&fx);
  d->tile = ptile;
  double t0 = MPI_Wtime();
  int rc = drv_solve(d, &fx);
  double dt = MPI_Wtime() - t0;
  char why[700] = "";
  if (rc != 0 || fx.info != 0)
    snprintf(why, sizeof why, "rc %d info %" PRId64 ": %s", rc, fx.info, fx.err);
  drv_share(d, &fx);
  if (d->rank == 0 && !why[0]) check(d, &fx, seed, why, sizeof why);
  char lay[32] = "block", tile[24] = "auto";
  if (cyclic) snprintf(lay, sizeof lay, "cyclic(%" PRId64 ")", fx.tile);
  if (ptile) snprintf(tile, sizeof tile, "%" PRId64, ptile);
  drv_case(d, !why[0], why, "%s %s %s n=%" PRId64 " %s%s%s tile=%s (%.3f s)",
           d->via_comm && !ptile ? "comm" : "direct", muster_routine_str(routine),
           muster_dtype_str(t), n, lay, flags & MUSTER_NO_FACTOR ? " NO_FACTOR" : "",
           flags & MUSTER_NO_VECTORS ? " NO_VECTORS" : "", tile, dt);
  lfx_free(&fx);
}

void drv_mode_solve(drv_t *d, const int64_t *ns, int nns, int quick) {
  static const muster_routine_t routines[] = {MUSTER_POTRS, MUSTER_POTRI, MUSTER_SYEVD};
  int k = 0;
  for (int ri = 0; ri < 3; ri++) {
    if (d->routines && !(d->routines & (1u << routines[ri]))) continue;
    for (int di = 0; di < 4; di++) {
      if (quick && dtypes[di] != MUSTER_F64) continue;
      if (d->dtypes && !(d->dtypes & (1u << dtypes[di]))) continue;
      for (int ni = 0; ni < nns; ni++) {
        for (int cyc = 0; cyc < (quick ? 1 : 2); cyc++, k++) {
          int64_t ptile = k % 3 == 2 ? 7 : 0; /* an explicit tile dividing nothing, or auto */
          run_case(d, routines[ri], dtypes[di], ns[ni], cyc, 0, ptile, k);
        }
      }
      if (quick) continue;
      /* one tile larger than the matrix: a single block on grid process (0, 0) */
      run_case(d, routines[ri], dtypes[di], ns[0], 0, 0, ns[0] + 5, k++);
      /* the flags that skip writing A back */
      if (routines[ri] == MUSTER_POTRS)
        run_case(d, MUSTER_POTRS, dtypes[di], ns[0], 0, MUSTER_NO_FACTOR, 0, k++);
      if (routines[ri] == MUSTER_SYEVD)
        run_case(d, MUSTER_SYEVD, dtypes[di], ns[0], 1, MUSTER_NO_VECTORS, 0, k++);
    }
  }
}
