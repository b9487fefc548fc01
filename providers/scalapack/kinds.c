/* providers/scalapack/kinds.c - ScaLAPACK's entry points per precision. */
#include <complex.h>

#include "slInt.h"

static const float one_s = 1.0f, zero_s = 0.0f;
static const double one_d = 1.0, zero_d = 0.0;
static const float complex one_c = 1.0f, zero_c = 0.0f;
static const double complex one_z = 1.0, zero_z = 0.0;

static const sl_kind_t kinds[] = {
    {'s', psgemr2d_, pstradd_, pspotrf_, pspotri_, pspotrs_, pssyevd_, NULL, psormtr_, Csgebs2d, Csgebs2d, Csgebr2d, Csgebr2d,
     &one_s, &zero_s},
    {'d', pdgemr2d_, pdtradd_, pdpotrf_, pdpotri_, pdpotrs_, pdsyevd_, NULL, pdormtr_, Cdgebs2d, Cdgebs2d, Cdgebr2d, Cdgebr2d,
     &one_d, &zero_d},
    {'c', pcgemr2d_, pctradd_, pcpotrf_, pcpotri_, pcpotrs_, NULL, pcheevd_, pcunmtr_, Ccgebs2d, Csgebs2d, Ccgebr2d, Csgebr2d,
     &one_c, &zero_c},
    {'z', pzgemr2d_, pztradd_, pzpotrf_, pzpotri_, pzpotrs_, NULL, pzheevd_, pzunmtr_, Czgebs2d, Cdgebs2d, Czgebr2d, Cdgebr2d,
     &one_z, &zero_z},
};

const sl_kind_t *sl_kind(muster_dtype_t t) {
  switch (t) {
  case MUSTER_F32: return &kinds[0];
  case MUSTER_F64: return &kinds[1];
  case MUSTER_C64: return &kinds[2];
  default: return &kinds[3];
  }
}
