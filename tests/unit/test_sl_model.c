/*
 * tests/unit/test_sl_model.c - the scalapack provider's time model
 * (providers/scalapack/model.c, slModel.h; pure arithmetic, no MPI) against
 * the measurements it was fitted to, read from the docs themselves: a
 * re-measurement written there without a refit fails here.
 *   docs/performance/scalapack-cpu.md (16-core Xeon, the fit): every
 *     "scalapack, R ranks" row within FIT_TOL, times the point's run-to-run
 *     spread where it was measured twice.
 *   docs/performance/scalapack.md (the 2-core VM, loaded, Run 1): the model
 *     is below every cell with n >= 1024 by VM_LO..VM_HI: it is not a model
 *     of that VM (docs/providers/scalapack.md says why), and this pins how far off.
 */
#include <limits.h>
#include <math.h>
#include <stdlib.h>

#include "muster.h"
#include "scalapack/slModel.h"
#include "task.h"

#define FIT_TOL 1.15 /* the fit: within 1.11x of the 8 rows of the first run */
#define VM_LO 10.0
#define VM_HI 120.0

static FILE *doc(const char *name) {
  char rel[128], path[PATH_MAX];
  snprintf(rel, sizeof rel, "docs/performance/%s", name);
  test_data_path(path, sizeof path, rel);
  FILE *f = fopen(path, "r");
  if (!f) fprintf(stderr, "cannot read %s\n", path);
  return f;
}

static int routine_of(const char *s) {
  return !strcmp(s, "potrs") ? MUSTER_POTRS : !strcmp(s, "syevd") ? MUSTER_SYEVD : -1;
}

/* One call as the benchmarks ran it: f64, potrs with one right-hand side,
 * syevd with vectors. */
static double model(int routine, long n, int R) {
  return sl_model_seconds(routine, MUSTER_F64, 0, n, routine == MUSTER_POTRS, R);
}

/* One "| routine | n | scalapack, R ranks | seconds |" row of scalapack-cpu.md. */
typedef struct {
  int routine, R;
  long n;
  double t;
} xeon_row_t;

/* max/min of the measurements of row k's (routine, n, R): the run-to-run
 * spread of that point (1 when measured once) */
static double spread_of(const xeon_row_t *rows, int nrows, int k) {
  double lo = rows[k].t, hi = rows[k].t;
  for (int i = 0; i < nrows; i++)
    if (rows[i].routine == rows[k].routine && rows[i].n == rows[k].n && rows[i].R == rows[k].R) {
      lo = fmin(lo, rows[i].t);
      hi = fmax(hi, rows[i].t);
    }
  return hi / lo;
}

/* Every row within FIT_TOL of the model, widened by that point's own
 * run-to-run spread when it was measured more than once (no model can be
 * nearer to two runs than they are to each other). */
TEST_IMPL(sl_model_matches_xeon_rows) {
  FILE *f = doc("scalapack-cpu.md");
  ASSERT(f);
  char line[512], rt[16];
  xeon_row_t rows[32];
  int nrows = 0, off = 0;
  while (fgets(line, sizeof line, f) && nrows < 32) {
    xeon_row_t *x = &rows[nrows];
    if (sscanf(line, "| %15[a-z] | %ld | scalapack, %d ranks | %lf |", rt, &x->n, &x->R, &x->t) != 4) continue;
    ASSERT((x->routine = routine_of(rt)) >= 0);
    nrows++;
  }
  fclose(f);
  for (int k = 0; k < nrows; k++) {
    const xeon_row_t *x = &rows[k];
    double m = model(x->routine, x->n, x->R), ratio = m / x->t, tol = FIT_TOL * spread_of(rows, nrows, k);
    int bad = !(ratio < tol && ratio > 1 / tol);
    fprintf(stderr, "%s n=%ld %d ranks: model %.3f s, measured %.3f s (x%.2f, tolerance %.2fx)%s\n",
            x->routine == MUSTER_POTRS ? "potrs" : "syevd", x->n, x->R, m, x->t, ratio, tol,
            bad ? "  <- off" : "");
    off += bad;
  }
  /* potrs 8192/16384 on 4/8/16; syevd 8192 on 8/16, then again on 4/8/16 */
  ASSERT_EQ(nrows, 11);
  ASSERT_EQ(off, 0);
  return 0;
}

/* Run 1's tables of scalapack.md: "potrs f64:" / "syevd f64 (vectors):"
 * then rows "| n | ranks | seconds per tile... |". */
TEST_IMPL(sl_model_vs_two_core_vm) {
  FILE *f = doc("scalapack.md");
  ASSERT(f);
  char line[512];
  int routine = -1, checked = 0, off = 0;
  while (fgets(line, sizeof line, f)) {
    if (!strncmp(line, "potrs f64:", 10)) routine = MUSTER_POTRS;
    else if (!strncmp(line, "syevd f64 (vectors):", 20)) routine = MUSTER_SYEVD;
    else if (!strncmp(line, "## ", 3)) routine = -1; /* Run 2 and on: another layout */
    long n;
    int R, k;
    if (routine < 0 || sscanf(line, "| %ld | %d |%n", &n, &R, &k) != 2 || n < 1024) continue;
    double m = model(routine, n, R);
    for (char *s = line + k, *e; (strtod(s, &e), e != s); s = e + strspn(e, " |")) {
      double t = strtod(s, NULL), under = t / m;
      int bad = !(under >= VM_LO && under <= VM_HI);
      fprintf(stderr, "%s n=%ld %d ranks: model %.4f s, measured %.3f s (%.0fx under)%s\n",
              routine == MUSTER_POTRS ? "potrs" : "syevd", n, R, m, t, under, bad ? "  <- off" : "");
      off += bad;
      checked++;
    }
  }
  fclose(f);
  ASSERT_EQ(checked, 4 * 4 + 2 * 5); /* potrs 1024/2048 x 2/4 ranks x 4 tiles; syevd 1024 x 2/4 x 5 */
  ASSERT_EQ(off, 0);
  return 0;
}

/* The flop counts (LAWN 41) and what the model does with dtype, flags and
 * ranks, so a change of one is a change of this test too. */
TEST_IMPL(sl_model_flops_and_scaling) {
  const double n = 1000, n3 = n * n * n;
  ASSERT(fabs(sl_model_flops(MUSTER_POTRS, MUSTER_F64, 0, 1000, 1) - (n3 / 3 + 2 * n * n)) < 1);
  ASSERT(fabs(sl_model_flops(MUSTER_POTRI, MUSTER_F64, 0, 1000, 0) - n3) < 1);
  ASSERT(fabs(sl_model_flops(MUSTER_GETRS, MUSTER_F64, 0, 1000, 2) - (2 * n3 / 3 + 4 * n * n)) < 1);
  ASSERT(fabs(sl_model_flops(MUSTER_GELS, MUSTER_F64, 0, 1000, 1) - (4 * n3 / 3 + 3 * n * n)) < 1);
  ASSERT(fabs(sl_model_flops(MUSTER_SYEVD, MUSTER_F64, 0, 1000, 0) - 14 * n3 / 3) < 1);
  ASSERT(fabs(sl_model_flops(MUSTER_SYEVD, MUSTER_F64, MUSTER_NO_VECTORS, 1000, 0) - 4 * n3 / 3) < 1);
  /* complex: 4x the real flops; f32 counts as f64 (unmeasured: the longer time) */
  ASSERT(fabs(sl_model_flops(MUSTER_POTRS, MUSTER_C128, 0, 1000, 1) -
              4 * sl_model_flops(MUSTER_POTRS, MUSTER_F64, 0, 1000, 1)) < 1);
  ASSERT(sl_model_flops(MUSTER_POTRS, MUSTER_F32, 0, 8192, 1) == sl_model_flops(MUSTER_POTRS, MUSTER_F64, 0, 8192, 1));
  ASSERT(sl_model_seconds(MUSTER_POTRS, MUSTER_F32, 0, 8192, 1, 8) > 0.8 * model(MUSTER_POTRS, 8192, 8));
  ASSERT(sl_model_flops(99, MUSTER_F64, 0, 1000, 1) < 0);
  ASSERT(sl_model_seconds(99, MUSTER_F64, 0, 1000, 1, 4) < 0);
  /* 0 or negative ranks count as one (no division by zero) */
  ASSERT(sl_model_seconds(MUSTER_POTRS, MUSTER_F64, 0, 512, 1, 0) ==
         sl_model_seconds(MUSTER_POTRS, MUSTER_F64, 0, 512, 1, 1));
  /* the case the deadline is for: syevd at 32768 on 16 ranks, minutes */
  double big = model(MUSTER_SYEVD, 32768, 16);
  fprintf(stderr, "syevd n=32768 on 16 ranks: model %.0f s\n", big);
  ASSERT(big > 300 && big < 2000);
  return 0;
}
