/*
 * providers/common/finite.h - finding NaN/Inf in column-major matrices of a
 * muster dtype.  Shared by the CPU providers (lapack, scalapack), which
 * refuse non-finite input before their engine runs and non-finite results
 * before they write anything back.  Static inline: providers link nothing
 * of the runtime and export only their struct.
 */
#ifndef MUSTER_PROVIDERS_FINITE_H
#define MUSTER_PROVIDERS_FINITE_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "muster.h"

/* Inf and NaN are the values whose exponent bits are all ones.  Testing
 * bits with an OR over a whole column has no branch per element, so the
 * compiler vectorizes it; only a bad column is searched element by element. */
static inline int muster__bad_f32(const float *x, int64_t k) {
  uint32_t any = 0;
  for (int64_t i = 0; i < k; i++) {
    uint32_t b;
    memcpy(&b, &x[i], 4);
    any |= (uint32_t)((b & 0x7f800000u) == 0x7f800000u);
  }
  return any != 0;
}

static inline int muster__bad_f64(const double *x, int64_t k) {
  uint64_t any = 0;
  for (int64_t i = 0; i < k; i++) {
    uint64_t b;
    memcpy(&b, &x[i], 8);
    any |= (uint64_t)((b & 0x7ff0000000000000ull) == 0x7ff0000000000000ull);
  }
  return any != 0;
}

/* 1 when one of `rows` consecutive elements of type t is NaN/Inf (complex
 * numbers are checked as two reals). */
static inline int muster__col_nonfinite(muster_dtype_t t, const void *col, int64_t rows) {
  int64_t parts = muster_dtype_is_complex(t) ? 2 : 1;
  return muster_dtype_real_bytes(t) == 4 ? muster__bad_f32((const float *)col, rows * parts)
                                         : muster__bad_f64((const double *)col, rows * parts);
}

/* First NaN/Inf of a column-major rows x cols matrix (only the lower
 * triangle, row >= col, when lower_only), in column order: 1 and its
 * (row, col), or 0. */
static inline int muster__find_nonfinite(muster_dtype_t t, const void *a, int64_t ld, int64_t rows,
                                         int64_t cols, int lower_only, int64_t *row, int64_t *col) {
  int64_t parts = muster_dtype_is_complex(t) ? 2 : 1;
  int single = muster_dtype_real_bytes(t) == 4;
  for (int64_t j = 0; j < cols; j++) {
    int64_t first = lower_only ? j : 0;
    if (first >= rows) break;
    size_t at = (size_t)((j * ld + first) * parts), k = (size_t)((rows - first) * parts);
    int bad = single ? muster__bad_f32((const float *)a + at, (int64_t)k)
                     : muster__bad_f64((const double *)a + at, (int64_t)k);
    if (!bad) continue;
    for (size_t e = 0; e < k; e++) {
      int finite =
          single ? isfinite(((const float *)a)[at + e]) : isfinite(((const double *)a)[at + e]);
      if (!finite) {
        *row = first + (int64_t)(e / (size_t)parts);
        *col = j;
        return 1;
      }
    }
  }
  return 0;
}

#endif
