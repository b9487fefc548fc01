/* providers/cudacommon/diag.c - a factor's diagonal on the host (diag.h). */
#include <math.h>

#include "diag.h"

/* Entry k's real and imaginary parts as doubles. */
static void entry(muster_dtype_t t, const void *d, int64_t k, double *re, double *im) {
  const size_t at = (size_t)k;
  *im = 0.0;
  switch (t) {
  case MUSTER_F32: *re = ((const float *)d)[at]; break;
  case MUSTER_F64: *re = ((const double *)d)[at]; break;
  case MUSTER_C64:
    *re = ((const float *)d)[2 * at];
    *im = ((const float *)d)[2 * at + 1];
    break;
  default:
    *re = ((const double *)d)[2 * at];
    *im = ((const double *)d)[2 * at + 1];
  }
}

static int is(double re, double im, int what) {
  switch (what) {
  case CUC_DIAG_NOT_POSITIVE: return !(re > 0.0);
  case CUC_DIAG_ZERO: return re == 0.0 && im == 0.0;
  default: return !isfinite(re) || !isfinite(im);
  }
}

int64_t cuc_diag_first(muster_dtype_t t, const void *d, int64_t n, int what) {
  for (int64_t k = 0; k < n; k++) {
    double re, im;
    entry(t, d, k, &re, &im);
    if (is(re, im, what)) return k;
  }
  return -1;
}

double cuc_diag_chol_logdet(muster_dtype_t t, const void *d, int64_t n) {
  double sum = 0.0;
  for (int64_t k = 0; k < n; k++) {
    double re, im;
    entry(t, d, k, &re, &im);
    sum += log(re);
  }
  return 2.0 * sum;
}
