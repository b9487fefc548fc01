/*
 * muster/types.h - routines and element types, each in one table (included
 * by muster.h; do not include it alone).
 *
 * MUSTER_ROUTINE_MAP(X) calls X(NAME, value, "name", factors, takes, info)
 * per routine (the columns are explained above the map) and
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
#include <stdint.h>

/* What a routine takes besides A (muster_solve_args_t / muster_shard_t
 * fields it reads), the `takes` column of MUSTER_ROUTINE_MAP:
 *   MUSTER_TAKES_B  b, ldb, nrhs: right-hand sides in, solution out
 *   MUSTER_TAKES_W  w: real outputs written on every rank
 *   MUSTER_TAKES_M  gels: A and B have m = ldb rows (m >= n); muster.h
 *                   says why m travels in ldb
 * W is also taken by potrs with MUSTER_LOGDET (one real, log det A). */
#define MUSTER_TAKES_B 0x1u
#define MUSTER_TAKES_W 0x2u
#define MUSTER_TAKES_M 0x4u

/* X(NAME, value, name, factors, takes, info)
 *   factors  1 when the routine factors A (LU, Cholesky, QR): it may
 *            overwrite A with the factor (unless MUSTER_NO_FACTOR)
 *   takes    MUSTER_TAKES_* bits
 *   info     what LAPACK's info = k > 0 means: the MUSTER_E* name the
 *            runtime returns for it and the sentence it words it with
 *            (one %lld: k).  k is also res->info. */
#define MUSTER_ROUTINE_MAP(X)                                                                \
  X(POTRS, 1, "potrs", 1, MUSTER_TAKES_B, ENOTPD,                                            \
    "not positive definite (leading minor %lld)")                                            \
  X(POTRI, 2, "potri", 1, 0, ENOTPD, "not positive definite (leading minor %lld)")           \
  X(SYEVD, 3, "syevd", 0, MUSTER_TAKES_W, EPROVIDER, "did not converge (info %lld)")        \
  X(GETRS, 4, "getrs", 1, MUSTER_TAKES_B, ESINGULAR,                                         \
    "singular: U(%lld,%lld) of the LU factorization is zero or under the singularity "       \
    "threshold 2 n eps max_{i<=k} |U(i,k)|")                                                 \
  X(GELS, 5, "gels", 1, MUSTER_TAKES_B | MUSTER_TAKES_M, ESINGULAR,                          \
    "rank deficient: R(%lld,%lld) of the QR factorization is zero or below the rank "        \
    "threshold m * eps * max|R(i,i)|")

/* X(NAME, value, name, element bytes, real part bytes, is complex) */
#define MUSTER_DTYPE_MAP(X)                                                                  \
  X(F32, 1, "f32", 4, 4, 0)                                                                  \
  X(F64, 2, "f64", 8, 8, 0)                                                                  \
  X(C64, 3, "c64", 8, 4, 1)                                                                  \
  X(C128, 4, "c128", 16, 8, 1)

typedef enum muster_routine {
#define MUSTER__ROUTINE_ENUM(NAME, value, name, ...) MUSTER_##NAME = (value),
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

/* Bit masks of muster_provider_v*_t's routines and dtypes, generated from
 * the maps so a provider never spells the list out:
 *     .dtypes   = MUSTER_ALL_DTYPES,
 *     .routines = MUSTER_ROUTINE_BITS(POTRS, POTRI, SYEVD) | MUSTER_CAP_LOGDET,
 * Routines stay a list per provider (a routine appended to the map is not
 * one a provider already has); every dtype of the map is one every
 * provider's engine has. */
#define MUSTER__DTYPE_BIT(NAME, value, ...) | (1u << (value))
#define MUSTER_ALL_DTYPES (0u MUSTER_DTYPE_MAP(MUSTER__DTYPE_BIT))
#define MUSTER_ROUTINE_BIT(NAME) (1u << MUSTER_##NAME)
#define MUSTER__RB1(a) MUSTER_ROUTINE_BIT(a)
#define MUSTER__RB2(a, ...) (MUSTER_ROUTINE_BIT(a) | MUSTER__RB1(__VA_ARGS__))
#define MUSTER__RB3(a, ...) (MUSTER_ROUTINE_BIT(a) | MUSTER__RB2(__VA_ARGS__))
#define MUSTER__RB4(a, ...) (MUSTER_ROUTINE_BIT(a) | MUSTER__RB3(__VA_ARGS__))
#define MUSTER__RB5(a, ...) (MUSTER_ROUTINE_BIT(a) | MUSTER__RB4(__VA_ARGS__))
#define MUSTER__RB6(a, ...) (MUSTER_ROUTINE_BIT(a) | MUSTER__RB5(__VA_ARGS__))
#define MUSTER__RB7(a, ...) (MUSTER_ROUTINE_BIT(a) | MUSTER__RB6(__VA_ARGS__))
#define MUSTER__RB8(a, ...) (MUSTER_ROUTINE_BIT(a) | MUSTER__RB7(__VA_ARGS__))
#define MUSTER__RB_PICK(_1, _2, _3, _4, _5, _6, _7, _8, name, ...) name
#define MUSTER_ROUTINE_BITS(...)                                                                   \
  MUSTER__RB_PICK(__VA_ARGS__, MUSTER__RB8, MUSTER__RB7, MUSTER__RB6, MUSTER__RB5, MUSTER__RB4,    \
                  MUSTER__RB3, MUSTER__RB2, MUSTER__RB1, )(__VA_ARGS__)

/* "potrs", or NULL for a value that is no routine. */
static inline const char *muster_routine_str(int r) {
  switch (r) {
#define MUSTER__ROUTINE_CASE(NAME, value, name, ...) case (value): return name;
    MUSTER_ROUTINE_MAP(MUSTER__ROUTINE_CASE)
#undef MUSTER__ROUTINE_CASE
  default: return NULL;
  }
}

/* 1 when routine r factors A (the `factors` column), 0 otherwise. */
static inline int muster_routine_factors(int r) {
  switch (r) {
#define MUSTER__ROUTINE_FACTORS(NAME, value, name, factors, ...) case (value): return factors;
    MUSTER_ROUTINE_MAP(MUSTER__ROUTINE_FACTORS)
#undef MUSTER__ROUTINE_FACTORS
  default: return 0;
  }
}

/* The MUSTER_TAKES_* bits of routine r; 0 for a value that is no routine. */
static inline unsigned muster_routine_takes(int r) {
  switch (r) {
#define MUSTER__ROUTINE_TAKES(NAME, value, name, factors, takes, ...) case (value): return takes;
    MUSTER_ROUTINE_MAP(MUSTER__ROUTINE_TAKES)
#undef MUSTER__ROUTINE_TAKES
  default: return 0;
  }
}

/* The nrhs a call of routine r carries: nrhs as the caller gave it when r
 * takes B, 0 when it does not (its nrhs argument means nothing then).  The
 * runtime's descriptors and the provider queries of its choice hold this
 * value; anything that builds a query itself (the CLI, a test) uses this so
 * that its query is the one the runtime would send. */
static inline int64_t muster_routine_nrhs(int r, int64_t nrhs) {
  return (muster_routine_takes(r) & MUSTER_TAKES_B) ? nrhs : 0;
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
