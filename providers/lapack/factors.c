/*
 * providers/lapack/factors.c - what geqrf, gesvd and polar share: the
 * gathered A, the typed LAPACKE calls they all use, and writing the factors
 * where muster_routine_outputs (muster/layout.h) says they go: the m x n
 * one over A's shards, the others packed into every shard's B, singular
 * values into every shard's W.  Nothing is written before every factor is
 * computed and checked finite, so an error leaves the shards as they were.
 */
#include <inttypes.h>
#include <lapacke.h>
#include <stdlib.h>
#include <string.h>

#include "lapackInt.h"

#define LAYOUT LAPACK_COL_MAJOR

lapack_int lp_geqrf(muster_dtype_t t, lapack_int m, lapack_int n, void *a, void *tau) {
  switch (t) {
  case MUSTER_F32: return LAPACKE_sgeqrf(LAYOUT, m, n, a, m, tau);
  case MUSTER_F64: return LAPACKE_dgeqrf(LAYOUT, m, n, a, m, tau);
  case MUSTER_C64: return LAPACKE_cgeqrf(LAYOUT, m, n, a, m, tau);
  default: return LAPACKE_zgeqrf(LAYOUT, m, n, a, m, tau);
  }
}

int lp_factor_begin(const muster_provider_call_t *call, const muster_outputs_t *o, void **full) {
  const muster_solve_args_t *a = &call->args;
  size_t esz = muster_dtype_bytes(a->dtype);
  int64_t i, j;
  *full = lp_alloc((size_t)(o->m * o->n) * esz);
  if (!*full)
    return lp_err(call, MUSTER_ENOMEM, "cannot allocate the %" PRId64 " x %" PRId64 " matrix", o->m, o->n);
  if (lp_gather_full(call, *full, o->m, esz, &i, &j))
    return lp_err(call, MUSTER_ENONFINITE, "NaN/Inf in A at row %" PRId64 ", column %" PRId64
                  " (rank %d's shard)", i, j, lp_owner(call, j));
  return 0;
}

static int factor_check(const muster_provider_call_t *call, const muster_outputs_t *o,
                    const lp_factors_t *f) {
  muster_dtype_t t = call->args.dtype, real = muster_dtype_real_bytes(t) == 4 ? MUSTER_F32 : MUSTER_F64;
  int rc = 0;
  if (o->w_count) rc = lp_check_result(call, real, "singular values", f->w, o->w_count, 1);
  if (rc == 0 && o->a_holds) rc = lp_check_result(call, t, "factor in A", f->a, o->m, o->n);
  for (int p = 0; rc == 0 && p < o->nparts; p++)
    rc = lp_check_result(call, t, "factor in B", f->b[p], o->part[p].rows, o->part[p].cols);
  return rc;
}

static void factor_put(const muster_provider_call_t *call, const muster_outputs_t *o,
                   const lp_factors_t *f) {
  muster_dtype_t t = call->args.dtype;
  size_t esz = muster_dtype_bytes(t), wsz = muster_dtype_real_bytes(t);
  if (o->a_holds) lp_scatter_rows(call, f->a, o->m, esz);
  for (int r = 0; r < call->nshards; r++) {
    const muster_shard_t *s = &call->shards[r];
    for (int p = 0; p < o->nparts; p++)
      memcpy((char *)s->b + (size_t)o->part[p].offset * esz, f->b[p],
             (size_t)(o->part[p].rows * o->part[p].cols) * esz);
    if (o->w_count) memcpy(s->w, f->w, (size_t)o->w_count * wsz);
  }
}

int lp_factor_end(const muster_provider_call_t *call, const muster_outputs_t *o, const lp_factors_t *f,
                  int rc) {
  if (rc == 0) rc = factor_check(call, o, f);
  if (rc == 0) factor_put(call, o, f);
  return rc;
}
