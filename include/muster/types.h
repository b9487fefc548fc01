/*
 * muster/types.h - routines and element types, each in one table (included
 * by muster.h; do not include it alone).
 *
 * MUSTER_ROUTINE_MAP(X) calls X(NAME, value, "name") per routine and
 * MUSTER_DTYPE_MAP(X) calls X(NAME, value, "name", element bytes, real
 * bytes, complex).  The enums, the exported name/size functions of
 * muster.h and the static inline helpers below are generated from them, so
 * providers (which must not depend on libmuster's symbols: they may be
 * loaded where libmuster was opened RTLD_LOCAL) and the runtime share one
 * definition.  Values are part of the ABI: never renumber, only append.
 */
#ifndef MUSTER_TYPES_H
#define MUSTER_TYPES_H

#include <stddef.h>

/* X(NAME, value, name) */
#define MUSTER_ROUTINE_MAP(X)                                                                \
  X(POTRS, 1, "potrs")                                                                       \
  X(POTRI, 2, "potri")                                                                       \
  X(SYEVD, 3, "syevd")

/* X(NAME, value, name, element bytes, real part bytes, is complex) */
#define MUSTER_DTYPE_MAP(X)                                                                  \
  X(F32, 1, "f32", 4, 4, 0)                                                                  \
  X(F64, 2, "f64", 8, 8, 0)                                                                  \
  X(C64, 3, "c64", 8, 4, 1)                                                                  \
  X(C128, 4, "c128", 16, 8, 1)

typedef enum muster_routine {
#define MUSTER__ROUTINE_ENUM(NAME, value, name) MUSTER_##NAME = (value),
  MUSTER_ROUTINE_MAP(MUSTER__ROUTINE_ENUM)
#undef MUSTER__ROUTINE_ENUM
} muster_routine_t;
/* What each routine does to its arguments is documented at muster_solve_args
 * in muster.h and in docs/solve.md. */

typedef enum muster_dtype {
#define MUSTER__DTYPE_ENUM(NAME, value, name, size, real, cplx) MUSTER_##NAME = (value),
  MUSTER_DTYPE_MAP(MUSTER__DTYPE_ENUM)
#undef MUSTER__DTYPE_ENUM
} muster_dtype_t;

/* One more than the largest routine / dtype value: sizes tables indexed by
 * them, and bit masks (1u << value) fit below it. */
#define MUSTER__COUNT_ONE(...) +1
#define MUSTER_ROUTINE_END (1 MUSTER_ROUTINE_MAP(MUSTER__COUNT_ONE))
#define MUSTER_DTYPE_END (1 MUSTER_DTYPE_MAP(MUSTER__COUNT_ONE))

/* "potrs", or NULL for a value that is no routine. */
static inline const char *muster_routine_str(int r) {
  switch (r) {
#define MUSTER__ROUTINE_CASE(NAME, value, name) case (value): return name;
    MUSTER_ROUTINE_MAP(MUSTER__ROUTINE_CASE)
#undef MUSTER__ROUTINE_CASE
  default: return NULL;
  }
}

/* "f64", or NULL for a value that is no dtype. */
static inline const char *muster_dtype_str(int t) {
  switch (t) {
#define MUSTER__DTYPE_NAME(NAME, value, name, size, real, cplx) case (value): return name;
    MUSTER_DTYPE_MAP(MUSTER__DTYPE_NAME)
#undef MUSTER__DTYPE_NAME
  default: return NULL;
  }
}

/* Bytes of one element; 0 for a value that is no dtype. */
static inline size_t muster_dtype_bytes(int t) {
  switch (t) {
#define MUSTER__DTYPE_SIZE(NAME, value, name, size, real, cplx) case (value): return size;
    MUSTER_DTYPE_MAP(MUSTER__DTYPE_SIZE)
#undef MUSTER__DTYPE_SIZE
  default: return 0;
  }
}

/* Bytes of the real type of an element (float for f32 and c64, double for
 * f64 and c128): the type of syevd's eigenvalues.  0 for no dtype. */
static inline size_t muster_dtype_real_bytes(int t) {
  switch (t) {
#define MUSTER__DTYPE_REAL(NAME, value, name, size, real, cplx) case (value): return real;
    MUSTER_DTYPE_MAP(MUSTER__DTYPE_REAL)
#undef MUSTER__DTYPE_REAL
  default: return 0;
  }
}

/* 1 for c64 and c128, else 0. */
static inline int muster_dtype_is_complex(int t) {
  switch (t) {
#define MUSTER__DTYPE_CPLX(NAME, value, name, size, real, cplx) case (value): return cplx;
    MUSTER_DTYPE_MAP(MUSTER__DTYPE_CPLX)
#undef MUSTER__DTYPE_CPLX
  default: return 0;
  }
}

#endif /* MUSTER_TYPES_H */
