/* Names and sizes of routines and dtypes. */
#include "task.h"
#include "muster.h"

TEST_IMPL(dtype_names_round_trip) {
  const char *routines[] = {"potrs", "potri", "syevd"};
  for (int i = 0; i < 3; i++) {
    muster_routine_t r = 0;
    ASSERT_OK(muster_routine_from_name(routines[i], &r));
    ASSERT_EQ(r, i + 1);
    ASSERT(strcmp(muster_routine_name(r), routines[i]) == 0);
  }
  const char *dtypes[] = {"f32", "f64", "c64", "c128"};
  const size_t sizes[] = {4, 8, 8, 16};
  for (int i = 0; i < 4; i++) {
    muster_dtype_t t = 0;
    ASSERT_OK(muster_dtype_from_name(dtypes[i], &t));
    ASSERT_EQ(t, i + 1);
    ASSERT(strcmp(muster_dtype_name(t), dtypes[i]) == 0);
    ASSERT_EQ(muster_dtype_size(t), sizes[i]);
  }
  return 0;
}

TEST_IMPL(dtype_unknown_names) {
  muster_routine_t r = MUSTER_POTRS;
  ASSERT_EQ(muster_routine_from_name("getrf", &r), MUSTER_EINVAL);
  ASSERT_STR_CONTAINS(muster_last_error(), "getrf");
  ASSERT_EQ(r, MUSTER_POTRS); /* untouched on failure */
  ASSERT_EQ(muster_routine_from_name(NULL, &r), MUSTER_EINVAL);
  ASSERT_EQ(muster_routine_from_name("", &r), MUSTER_EINVAL);
  muster_dtype_t t = MUSTER_F64;
  ASSERT_EQ(muster_dtype_from_name("F64", &t), MUSTER_EINVAL); /* case matters */
  ASSERT_STR_CONTAINS(muster_last_error(), "F64");
  ASSERT_EQ(muster_dtype_from_name("f16", &t), MUSTER_EINVAL);
  ASSERT_EQ(muster_dtype_from_name("f64", NULL), MUSTER_EINVAL);
  ASSERT_EQ(t, MUSTER_F64);
  ASSERT(strcmp(muster_routine_name((muster_routine_t)0), "unknown") == 0);
  ASSERT(strcmp(muster_routine_name((muster_routine_t)99), "unknown") == 0);
  ASSERT(strcmp(muster_dtype_name((muster_dtype_t)5), "unknown") == 0);
  ASSERT_EQ(muster_dtype_size((muster_dtype_t)0), 0);
  ASSERT_EQ(muster_dtype_size((muster_dtype_t)7), 0);
  return 0;
}

/* The inline helpers providers use and the exported functions agree. */
TEST_IMPL(dtype_inline_helpers) {
  const size_t real[] = {0, 4, 8, 4, 8};
  const int cplx[] = {0, 0, 0, 1, 1};
  for (int t = 1; t < MUSTER_DTYPE_END; t++) {
    ASSERT_EQ(muster_dtype_bytes(t), muster_dtype_size((muster_dtype_t)t));
    ASSERT_EQ(muster_dtype_real_bytes(t), real[t]);
    ASSERT_EQ(muster_dtype_real_size((muster_dtype_t)t), real[t]);
    ASSERT_EQ(muster_dtype_is_complex(t), cplx[t]);
    ASSERT(strcmp(muster_dtype_str(t), muster_dtype_name((muster_dtype_t)t)) == 0);
  }
  ASSERT_EQ(MUSTER_DTYPE_END, 5);
  ASSERT_EQ(MUSTER_ROUTINE_END, 6);
  /* the provider masks generated from the maps: every dtype, the named routines */
  unsigned every = 0;
  for (int t = 1; t < MUSTER_DTYPE_END; t++) every |= 1u << t;
  ASSERT_EQ(MUSTER_ALL_DTYPES, every);
  ASSERT_EQ(MUSTER_ROUTINE_BITS(SYEVD), 1u << MUSTER_SYEVD);
  ASSERT_EQ(MUSTER_ROUTINE_BITS(POTRS, GELS), (1u << MUSTER_POTRS) | (1u << MUSTER_GELS));
  ASSERT_EQ(MUSTER_ROUTINE_BITS(POTRS, POTRI, SYEVD, GETRS, GELS), 0x3eu);
  /* the routine map's columns (muster/types.h) */
  ASSERT(muster_routine_factors(MUSTER_POTRS) && muster_routine_factors(MUSTER_GETRS) &&
         muster_routine_factors(MUSTER_GELS) && !muster_routine_factors(MUSTER_SYEVD));
  ASSERT_EQ(muster_routine_takes(MUSTER_POTRS), MUSTER_TAKES_B);
  ASSERT_EQ(muster_routine_takes(MUSTER_GETRS), MUSTER_TAKES_B);
  ASSERT_EQ(muster_routine_takes(MUSTER_GELS), MUSTER_TAKES_B | MUSTER_TAKES_M);
  ASSERT_EQ(muster_routine_takes(MUSTER_SYEVD), MUSTER_TAKES_W);
  ASSERT_EQ(muster_routine_takes(MUSTER_POTRI), 0u);
  ASSERT_EQ(muster_routine_takes(99), 0u);
  /* the nrhs a call carries: the caller's for routines with a B, else 0 */
  ASSERT_EQ(muster_routine_nrhs(MUSTER_POTRS, 3), 3);
  ASSERT_EQ(muster_routine_nrhs(MUSTER_GELS, 2), 2);
  ASSERT_EQ(muster_routine_nrhs(MUSTER_POTRI, 5), 0);
  ASSERT_EQ(muster_routine_nrhs(MUSTER_SYEVD, 1), 0);
  ASSERT(strcmp(muster_routine_str(MUSTER_GETRS), "getrs") == 0);
  ASSERT(strcmp(muster_routine_str(MUSTER_GELS), "gels") == 0);
  for (int r = 1; r < MUSTER_ROUTINE_END; r++)
    ASSERT(strcmp(muster_routine_str(r), muster_routine_name((muster_routine_t)r)) == 0);
  ASSERT(muster_routine_str(0) == NULL);
  ASSERT(muster_dtype_str(MUSTER_DTYPE_END) == NULL);
  ASSERT_EQ(muster_dtype_real_size((muster_dtype_t)0), 0);
  return 0;
}
