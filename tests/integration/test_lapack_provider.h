/*
 * tests/integration/test_lapack_provider.h - shared by the lapack provider tests:
 * load build-X/lib/muster/providers/lapack.so next to the test binary, make
 * random SPD/Hermitian matrices, spread them over host shards (block or
 * cyclic), call solve() directly and read the result back.
 */
#ifndef MUSTER_TEST_LAPACK_FIXTURE_H
#define MUSTER_TEST_LAPACK_FIXTURE_H

#include <complex.h>
#include "task.h"
#include "muster/provider.h"

typedef double complex zd;

typedef struct lfx {
  muster_routine_t routine;
  muster_dtype_t t;
  size_t esz;
  int64_t n, nrhs, lda, ldb, tile;
  int R;
  muster_layout_t layout;
  unsigned flags;
  zd *A;                          /* the input, n x n, lda n              */
  zd *B;                          /* potrs right-hand sides, n x nrhs      */
  void *blk[MUSTER_MAX_RANKS];    /* block shards (dtype storage)          */
  void *cyc[MUSTER_MAX_RANKS];    /* cyclic shards when layout is cyclic   */
  muster_shard_t shards[MUSTER_MAX_RANKS];
  int64_t info;
  char err[512];
} lfx_t;

/* dlopen the lapack provider built next to this test binary; init its context. */
const muster_provider_v2_t *lfx_provider(void **ctx);
/* The same with OpenBLAS on one thread and the kernels of `core`
 * (OPENBLAS_CORETYPE, e.g. "Prescott"), checked where OpenBLAS can pick. */
const muster_provider_v2_t *lfx_provider_on_core(const char *core, void **ctx);
void lfx_seed(uint64_t seed);
double lfx_eps(muster_dtype_t t);
int lfx_is_complex(muster_dtype_t t);

/* Fill and shard a fresh random input for fx->routine (SPD for potrs/potri,
 * Hermitian for syevd); fields routine..flags must be set before. */
void lfx_setup(lfx_t *fx);
/* Put fx->A (after the caller changed it) into the shards again. */
void lfx_reshard(lfx_t *fx);
int lfx_solve(const muster_provider_v2_t *p, void *ctx, lfx_t *fx);
/* Result of A's shards, n x n, lda n (caller frees). */
zd *lfx_read_a(lfx_t *fx);
zd lfx_get(const lfx_t *fx, const void *base, int64_t ld, int64_t i, int64_t j);
void lfx_set(const lfx_t *fx, void *base, int64_t ld, int64_t i, int64_t j, zd v);
void lfx_free(lfx_t *fx);

/* Residual checks, each normalized by n*eps of the dtype (so ~1 is good). */
double lfx_potrs_residual(const lfx_t *fx);   /* ||AX-B|| / (||A|| ||X|| n eps), every rank */
double lfx_factor_residual(const lfx_t *fx);  /* ||L L^H - A|| / (||A|| n eps)             */
double lfx_potri_residual(const lfx_t *fx);   /* ||A inv - I|| / (||A|| ||inv|| n eps)     */
double lfx_syevd_residual(const lfx_t *fx, double *orth); /* ||AV-VL||/(||A|| n eps), orth */

#endif
