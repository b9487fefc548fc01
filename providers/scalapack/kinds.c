/* providers/scalapack/kinds.c - ScaLAPACK's entry points per precision. */
#include <complex.h>

#include "slInt.h"

static const float one_s = 1.0f, zero_s = 0.0f;
static const double one_d = 1.0, zero_d = 0.0;
static const float complex one_c = 1.0f, zero_c = 0.0f;
static const double complex one_z = 1.0, zero_z = 0.0;

/* X is the dtype's letter (L as a char), R its real type's (W's). */
#define SL_KIND(X, L, R, syevd_, heevd_, ormtr_, ormqr_, orgqr_, gesvd_, cgesvd_, one_, zero_)     \
  {                                                                                               \
    .letter = L, .gemr2d = p##X##gemr2d_, .tradd = p##X##tradd_, .potrf = p##X##potrf_,           \
    .potri = p##X##potri_, .potrs = p##X##potrs_, .syevd = syevd_, .heevd = heevd_,               \
    .ormtr = ormtr_, .getrf = p##X##getrf_, .getrs = p##X##getrs_, .geqrf = p##X##geqrf_,         \
    .ormqr = ormqr_, .trtrs = p##X##trtrs_, .orgqr = orgqr_, .lacpy = p##X##lacpy_,               \
    .laset = p##X##laset_, .gesvd = gesvd_, .cgesvd = cgesvd_, .gemm = p##X##gemm_,               \
    .gebs2d = C##X##gebs2d, .real_gebs2d = C##R##gebs2d,                                          \
    .gebr2d = C##X##gebr2d, .real_gebr2d = C##R##gebr2d, .one = one_, .zero = zero_               \
  }

static const sl_kind_t kinds[] = {
    SL_KIND(s, 's', s, pssyevd_, NULL, psormtr_, psormqr_, psorgqr_, psgesvd_, NULL, &one_s, &zero_s),
    SL_KIND(d, 'd', d, pdsyevd_, NULL, pdormtr_, pdormqr_, pdorgqr_, pdgesvd_, NULL, &one_d, &zero_d),
    SL_KIND(c, 'c', s, NULL, pcheevd_, pcunmtr_, pcunmqr_, pcungqr_, NULL, pcgesvd_, &one_c, &zero_c),
    SL_KIND(z, 'z', d, NULL, pzheevd_, pzunmtr_, pzunmqr_, pzungqr_, NULL, pzgesvd_, &one_z, &zero_z),
};

const sl_kind_t *sl_kind(muster_dtype_t t) {
  switch (t) {
  case MUSTER_F32: return &kinds[0];
  case MUSTER_F64: return &kinds[1];
  case MUSTER_C64: return &kinds[2];
  default: return &kinds[3];
  }
}
