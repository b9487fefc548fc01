/* runtime/base/dtype.c - names and sizes of routines and element types, the
 * exported side of MUSTER_ROUTINE_MAP and MUSTER_DTYPE_MAP (muster/types.h). */
#include <string.h>

#include "base/error.h"

#define CHECK_VALUE(NAME, value, ...) \
  _Static_assert((value) > 0 && (value) < 32, #NAME ": values index 32-bit masks");
MUSTER_ROUTINE_MAP(CHECK_VALUE)
MUSTER_DTYPE_MAP(CHECK_VALUE)
#undef CHECK_VALUE

/* "potrs, potri, syevd" and "f32, f64, c64, c128", for messages */
#define ROUTINE_LIST(NAME, value, name, ...) ", " name
#define DTYPE_LIST(NAME, value, name, ...) ", " name
static const char routine_list[] = MUSTER_ROUTINE_MAP(ROUTINE_LIST);
static const char dtype_list[] = MUSTER_DTYPE_MAP(DTYPE_LIST);

int muster_routine_from_name(const char *s, muster_routine_t *out) {
  if (!s || !out) return muster__err(MUSTER_EINVAL, "muster_routine_from_name: null argument");
  for (int r = 1; r < MUSTER_ROUTINE_END; r++) {
    const char *name = muster_routine_str(r);
    if (name && strcmp(s, name) == 0) {
      *out = (muster_routine_t)r;
      return 0;
    }
  }
  return muster__err(MUSTER_EINVAL, "unknown routine \"%.64s\" (known: %s)", s, routine_list + 2);
}

const char *muster_routine_name(muster_routine_t r) {
  const char *name = muster_routine_str((int)r);
  return name ? name : "unknown";
}

int muster_dtype_from_name(const char *s, muster_dtype_t *out) {
  if (!s || !out) return muster__err(MUSTER_EINVAL, "muster_dtype_from_name: null argument");
  for (int t = 1; t < MUSTER_DTYPE_END; t++) {
    const char *name = muster_dtype_str(t);
    if (name && strcmp(s, name) == 0) {
      *out = (muster_dtype_t)t;
      return 0;
    }
  }
  return muster__err(MUSTER_EINVAL, "unknown dtype \"%.64s\" (known: %s)", s, dtype_list + 2);
}

const char *muster_dtype_name(muster_dtype_t t) {
  const char *name = muster_dtype_str((int)t);
  return name ? name : "unknown";
}

/* Bytes of one element; 0 for an unknown dtype (callers treat 0 as invalid). */
size_t muster_dtype_size(muster_dtype_t t) { return muster_dtype_bytes((int)t); }

size_t muster_dtype_real_size(muster_dtype_t t) { return muster_dtype_real_bytes((int)t); }
