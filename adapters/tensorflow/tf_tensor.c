/*
 * adapters/tensorflow/tf_tensor.c - TensorFlow tensors as muster sees them:
 * the element types the ops take (sizes come from muster's dtype table,
 * muster/types.h) and the copies between row-major tensors and column-major
 * shards.
 */
#include <stdio.h>

#include "tfInt.h"

/* Every element type the ops take, in the order the attribute T lists them. */
static const mtf_type_t types[] = {
    {TF_FLOAT, MUSTER_F32, "float"},
    {TF_DOUBLE, MUSTER_F64, "double"},
    {TF_COMPLEX64, MUSTER_C64, "complex64"},
    {TF_COMPLEX128, MUSTER_C128, "complex128"},
};
#define NTYPES (sizeof types / sizeof types[0])

const mtf_type_t *mtf_type_at(size_t i) { return i < NTYPES ? &types[i] : NULL; }

const mtf_type_t *mtf_type_of(TF_DataType t) {
  for (size_t i = 0; i < NTYPES; i++)
    if (types[i].tf == t) return &types[i];
  return NULL;
}

const mtf_type_t *mtf_real_type(const mtf_type_t *t) {
  size_t real = muster_dtype_real_bytes(t->dtype);
  for (size_t i = 0; i < NTYPES; i++)
    if (!muster_dtype_is_complex(types[i].dtype) && muster_dtype_bytes(types[i].dtype) == real)
      return &types[i];
  return NULL; /* not reached: every complex type's real part is listed */
}

void mtf_type_names(char *buf, size_t cap) {
  size_t off = 0;
  buf[0] = '\0';
  for (size_t i = 0; i < NTYPES && off < cap; i++) {
    int k = snprintf(buf + off, cap - off, "%s%s", i ? ", " : "", types[i].name);
    if (k < 0) break;
    off += (size_t)k;
  }
}

/* ---- row-major tensors <-> column-major shards ------------------------------ */

#define TILE 32 /* elements per side of the cache tiles the copy walks */
#define DEFINE_TRANSPOSE(name, type)                                                   \
  static void name(int64_t rows, int64_t cols, const type *src, type *dst) {          \
    for (int64_t i0 = 0; i0 < rows; i0 += TILE)                                        \
      for (int64_t j0 = 0; j0 < cols; j0 += TILE) {                                    \
        int64_t i1 = i0 + TILE < rows ? i0 + TILE : rows;                              \
        int64_t j1 = j0 + TILE < cols ? j0 + TILE : cols;                              \
        for (int64_t i = i0; i < i1; i++)                                              \
          for (int64_t j = j0; j < j1; j++) dst[j * rows + i] = src[i * cols + j];     \
      }                                                                                \
  }
/* Elements are moved as bits of their size: no arithmetic touches them. */
typedef struct { uint64_t re, im; } c128_bits_t;
DEFINE_TRANSPOSE(transpose4, uint32_t)
DEFINE_TRANSPOSE(transpose8, uint64_t)
DEFINE_TRANSPOSE(transpose16, c128_bits_t)

void mtf_transpose(size_t esz, int64_t rows, int64_t cols, const void *src, void *dst) {
  if (rows <= 0 || cols <= 0) return;
  if (esz == 4) transpose4(rows, cols, src, dst);
  else if (esz == 8) transpose8(rows, cols, src, dst);
  else transpose16(rows, cols, src, dst);
}
