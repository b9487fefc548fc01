/* tools/muster/solve_piece.c - see solve_piece.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_dl.h"
#include "solve_piece.h"

/* The GPU of local rank `local`, made current for this thread.  0, or
 * MUSTER_ECUDA with why. */
static int piece_gpu(const sr_spec_t *spec, int local, const char *who, int *device, char *why, size_t len) {
  char e[400];
  int count = 0;
  *device = -1;
  if (cudl_device_count(&count, e, sizeof e) < 0 || sr_device_of(spec, local, count, device, e, sizeof e) < 0) {
    if (count < 1) *device = -1; /* else the one --devices named, which is not there */
    snprintf(why, len, "%s: no GPU for it (local rank %d): %s", who, local, e);
    return MUSTER_ECUDA;
  }
  if (cudl_set_device(*device, e, sizeof e) < 0) {
    snprintf(why, len, "%s: cannot use GPU %d: %s", who, *device, e);
    return MUSTER_ECUDA;
  }
  return 0;
}

/* n bytes on the GPU (at least one, so a rank with no columns still holds
 * a valid pointer) into *d; 0 or MUSTER_ECUDA with why. */
static int dev_alloc(void **d, size_t n, const char *who, int device, char *why, size_t len) {
  char e[400];
  if (cudl_malloc(d, n ? n : 1, e, sizeof e) == 0) return 0;
  snprintf(why, len, "%s, GPU %d: cannot allocate its piece: %s", who, device, e);
  return MUSTER_ECUDA;
}

int piece_alloc(const sr_spec_t *spec, int64_t nrhs, int rank, int size, int local, const char *who, piece_t *p,
                char *why, size_t len) {
  int64_t n = spec->n, rows = sr_rows(spec);
  size_t esz = muster_dtype_size(spec->dtype);
  muster_layout_geom_t *L = &p->L;
  memset(p, 0, sizeof *p);
  p->s.device = -1;
  if (muster_layout_geom_init(L, n, 1, size) != 0) {
    snprintf(why, len, "%s: n %lld over %d ranks makes no layout", who, (long long)n, size);
    return MUSTER_EINVAL;
  }
  p->s.lda = p->s.ldb = rows; /* gels: m travels in ldb (muster.h) */
  p->s.col0 = muster_layout_block_col0(L, rank);
  p->s.ncols = muster_layout_block_ncols(L, rank);
  p->a_bytes = (size_t)(rows * L->block_cols) * esz; /* every rank's the same: one allgather */
  p->b_bytes = muster_routine_takes(spec->routine) & MUSTER_TAKES_B ? (size_t)(rows * nrhs) * esz : 0;
  /* the reals the solve writes (syevd's eigenvalues, potrs's log det): what is hashed */
  p->w_bytes = (size_t)(spec->routine == MUSTER_SYEVD ? n : (spec->flags & MUSTER_LOGDET) ? 1 : 0) *
               muster_dtype_real_size(spec->dtype);
  p->a = calloc(1, p->a_bytes);
  p->b = p->b_bytes ? malloc(p->b_bytes) : NULL;
  p->w = p->w_bytes ? calloc(1, p->w_bytes) : NULL;
  if (!p->a || (p->b_bytes && !p->b) || (p->w_bytes && !p->w)) {
    snprintf(why, len, "%s: cannot allocate its piece (%zu bytes of A)", who, p->a_bytes);
    return MUSTER_ENOMEM;
  }
  if (!spec->cuda) {
    p->s.mem = MUSTER_MEM_HOST;
    p->s.a = p->a, p->s.b = p->b, p->s.w = p->w;
    return 0;
  }
  p->cuda = 1;
  p->s.mem = MUSTER_MEM_CUDA;
  int rc = piece_gpu(spec, local, who, &p->s.device, why, len);
  if (rc == 0) rc = dev_alloc(&p->s.a, p->a_bytes, who, p->s.device, why, len);
  if (rc == 0 && p->b_bytes) rc = dev_alloc(&p->s.b, p->b_bytes, who, p->s.device, why, len);
  if (rc == 0 && p->w_bytes) rc = dev_alloc(&p->s.w, p->w_bytes, who, p->s.device, why, len);
  return rc;
}

/* dst <- src, n bytes, host or GPU; 0 or MUSTER_ECUDA with why */
static int copy(const piece_t *p, void *dst, const void *src, size_t n, const char *who, const char *what,
                char *why, size_t len) {
  char e[400];
  if (!p->cuda) {
    memcpy(dst, src, n);
    return 0;
  }
  if (cudl_copy(dst, src, n, e, sizeof e) == 0) return 0;
  snprintf(why, len, "%s, GPU %d: %s: %s", who, p->s.device, what, e);
  return MUSTER_ECUDA;
}

int piece_fill(const sr_spec_t *spec, piece_t *p, const void *A, const void *B, const char *who, char *why,
               size_t len) {
  size_t esz = muster_dtype_size(spec->dtype);
  int64_t rows = sr_rows(spec);
  const char *what = "copying its piece to the GPU";
  int rc = copy(p, p->s.a, (const char *)A + (size_t)(p->s.col0 * rows) * esz, (size_t)(p->s.ncols * rows) * esz,
                who, what, why, len);
  if (rc == 0 && p->b_bytes) rc = copy(p, p->s.b, B, p->b_bytes, who, what, why, len);
  return rc;
}

int piece_collect(piece_t *p, const char *who, char *why, size_t len) {
  if (!p->cuda) return 0;
  const char *what = "copying its results from the GPU";
  int rc = copy(p, p->a, p->s.a, p->a_bytes, who, what, why, len);
  if (rc == 0 && p->b_bytes) rc = copy(p, p->b, p->s.b, p->b_bytes, who, what, why, len);
  if (rc == 0 && p->w_bytes) rc = copy(p, p->w, p->s.w, p->w_bytes, who, what, why, len);
  return rc;
}

void piece_free(piece_t *p) {
  if (p->cuda) {
    cudl_free(p->s.a);
    cudl_free(p->s.b);
    cudl_free(p->s.w);
  }
  free(p->a);
  free(p->b);
  free(p->w);
  memset(p, 0, sizeof *p);
}
