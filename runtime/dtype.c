/* runtime/dtype.c - names and sizes of routines and element types. */
#include <string.h>

#include "error.h"

static const char *const routine_names[] = {
    [MUSTER_POTRS] = "potrs", [MUSTER_POTRI] = "potri", [MUSTER_SYEVD] = "syevd"};
static const char *const dtype_names[] = {
    [MUSTER_F32] = "f32", [MUSTER_F64] = "f64", [MUSTER_C64] = "c64", [MUSTER_C128] = "c128"};
#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

int muster_routine_from_name(const char *s, muster_routine_t *out) {
  if (!s || !out) return muster__err(MUSTER_EINVAL, "muster_routine_from_name: null argument");
  for (int r = 1; r < COUNT(routine_names); r++) {
    if (strcmp(s, routine_names[r]) == 0) {
      *out = (muster_routine_t)r;
      return 0;
    }
  }
  return muster__err(MUSTER_EINVAL, "unknown routine \"%s\" (known: potrs, potri, syevd)", s);
}

const char *muster_routine_name(muster_routine_t r) {
  if ((int)r < 1 || (int)r >= COUNT(routine_names)) return "unknown";
  return routine_names[r];
}

int muster_dtype_from_name(const char *s, muster_dtype_t *out) {
  if (!s || !out) return muster__err(MUSTER_EINVAL, "muster_dtype_from_name: null argument");
  for (int t = 1; t < COUNT(dtype_names); t++) {
    if (strcmp(s, dtype_names[t]) == 0) {
      *out = (muster_dtype_t)t;
      return 0;
    }
  }
  return muster__err(MUSTER_EINVAL, "unknown dtype \"%s\" (known: f32, f64, c64, c128)", s);
}

const char *muster_dtype_name(muster_dtype_t t) {
  if ((int)t < 1 || (int)t >= COUNT(dtype_names)) return "unknown";
  return dtype_names[t];
}

/* Bytes of one element; 0 for an unknown dtype (callers treat 0 as invalid). */
size_t muster_dtype_size(muster_dtype_t t) {
  switch (t) {
  case MUSTER_F32: return 4;
  case MUSTER_F64: return 8;
  case MUSTER_C64: return 8;
  case MUSTER_C128: return 16;
  default: return 0;
  }
}
