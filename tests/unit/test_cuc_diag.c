/* tests/unit/test_cuc_diag.c - what the GPU providers read from a
 * factor's diagonal (providers/cudacommon/diag.h): the first zero pivot of
 * U (cusolvermg's getrs: MUSTER_ESINGULAR and its info), the first NaN/Inf, the first
 * non-positive pivot of L, and log det A from L's diagonal, for every
 * dtype, on random diagonals.  Host-only C, linked in (tests/SConscript). */
#include <float.h>
#include <math.h>

#include "cudacommon/diag.h"
#include "task.h"

/* Put (re, im) at entry k of a diagonal of dtype t. */
static void put(muster_dtype_t t, void *d, int64_t k, double re, double im) {
  switch (t) {
  case MUSTER_F32: ((float *)d)[k] = (float)re; break;
  case MUSTER_F64: ((double *)d)[k] = re; break;
  case MUSTER_C64:
    ((float *)d)[2 * k] = (float)re;
    ((float *)d)[2 * k + 1] = (float)im;
    break;
  default:
    ((double *)d)[2 * k] = re;
    ((double *)d)[2 * k + 1] = im;
  }
}

static double unit(uint64_t *s) { return (double)(test_rand(s) >> 11) / 9007199254740992.0; }

TEST_IMPL(cuc_diag_pivots_and_logdet) {
  uint64_t s = test_seed("CUC_DIAG_SEED");
  double d[2 * 300];
  for (int t = MUSTER_F32; t <= MUSTER_C128; t++)
    for (int trial = 0; trial < 50; trial++) {
      muster_dtype_t dt = (muster_dtype_t)t;
      int cplx = muster_dtype_is_complex(dt);
      int64_t n = 1 + (int64_t)(test_rand(&s) % 300);
      /* positive real diagonal (L's: Hermitian A has a real one), exact sum */
      double want = 0.0;
      for (int64_t k = 0; k < n; k++) {
        double v = 0.25 + 4.0 * unit(&s);
        if (muster_dtype_real_bytes(dt) == 4) v = (float)v; /* what the entry holds */
        put(dt, d, k, v, 0.0);
        want += 2.0 * log(v);
      }
      double got = cuc_diag_chol_logdet(dt, d, n);
      ASSERT_DBL_LT(fabs(got - want), 1e-12 * (1.0 + fabs(want)) * (double)n);
      ASSERT_EQ(cuc_diag_first(dt, d, n, CUC_DIAG_NOT_POSITIVE), -1);
      ASSERT_EQ(cuc_diag_first(dt, d, n, CUC_DIAG_ZERO), -1);
      ASSERT_EQ(cuc_diag_first(dt, d, n, CUC_DIAG_NONFINITE), -1);
      /* a zero pivot at k, a later one, and a NaN after: the first of each kind */
      int64_t k = (int64_t)(test_rand(&s) % (uint64_t)n);
      put(dt, d, k, 0.0, 0.0);
      if (k + 1 < n) put(dt, d, k + 1, 0.0, 0.0);
      ASSERT_EQ(cuc_diag_first(dt, d, n, CUC_DIAG_ZERO), k);
      ASSERT_EQ(cuc_diag_first(dt, d, n, CUC_DIAG_NOT_POSITIVE), k);
      ASSERT_EQ(cuc_diag_first(dt, d, n, CUC_DIAG_NONFINITE), -1);
      if (cplx) { /* a complex pivot with a non-zero imaginary part is no zero */
        put(dt, d, k, 0.0, FLT_MIN);
        ASSERT_NE(cuc_diag_first(dt, d, n, CUC_DIAG_ZERO), k);
        put(dt, d, k, 0.0, 0.0);
      }
      if (k + 2 < n) {
        put(dt, d, k + 2, cplx ? 1.0 : NAN, cplx ? INFINITY : 0.0);
        ASSERT_EQ(cuc_diag_first(dt, d, n, CUC_DIAG_NONFINITE), k + 2);
      }
      put(dt, d, 0, -1e-30, 0.0); /* tiny negative: not positive, not zero */
      ASSERT_EQ(cuc_diag_first(dt, d, n, CUC_DIAG_NOT_POSITIVE), 0);
      if (k > 0) ASSERT_EQ(cuc_diag_first(dt, d, n, CUC_DIAG_ZERO), k);
      put(dt, d, 0, NAN, 0.0); /* NaN is not positive */
      ASSERT_EQ(cuc_diag_first(dt, d, n, CUC_DIAG_NOT_POSITIVE), 0);
    }
  return 0;
}
