/*
 * docs/examples/example_provider.c - a minimal provider: the shared object
 * "example.so" that solves potrs (A X = B, A symmetric positive definite)
 * for f64 matrices in host memory held as column blocks, with a textbook
 * Cholesky factorization.  It shows the whole contract of a leader
 * provider of ABI v2 (muster/provider_v2.h; muster/provider.h has the info
 * > 0 contract: it returns 0 with info = k and the runtime words "not
 * positive definite"); providers/lapack is the real one.
 *
 * The runtime finds it by routine: a folder on MUSTER_PROVIDER_PATH holds
 *     example.so                the provider
 *     potrs/example.so   ->     ../example.so (one link per routine)
 * and dlopen()s it on first use.  docs/examples/SConscript builds that
 * folder (<build>/examples/providers); provider.c calls it.
 *
 * A provider links nothing of the runtime (it may be loaded where
 * libmuster.so was opened RTLD_LOCAL): it compiles the public headers in
 * and exports exactly one symbol, the struct below.  It never prints or
 * exits: a failure is a negative MUSTER_E* code and a message in call->err.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "muster/layout.h" /* muster_copy_cols */
#include "muster/provider.h"

/* Fail the call with code and a message saying who and what. */
static int fail(const muster_provider_call_t *call, int code, const char *what) {
  snprintf(call->err, call->errlen, "example (host, n=%lld): %s", (long long)call->args.n, what);
  return code;
}

/* Nothing to look for: plain C runs everywhere. */
static int ex_probe(char *why, size_t whylen) {
  (void)why;
  (void)whylen;
  return 0;
}

/* A = L L^T in place (lower triangle, column-major, ld n).  0, or the order
 * k of the leading minor that is not positive definite (LAPACK's info). */
static int64_t cholesky(double *m, int64_t n) {
  for (int64_t j = 0; j < n; j++) {
    double d = m[j * n + j];
    for (int64_t k = 0; k < j; k++) d -= m[k * n + j] * m[k * n + j];
    if (!(d > 0)) return j + 1;
    m[j * n + j] = sqrt(d);
    for (int64_t i = j + 1; i < n; i++) {
      double s = m[j * n + i];
      for (int64_t k = 0; k < j; k++) s -= m[k * n + i] * m[k * n + j];
      m[j * n + i] = s / m[j * n + j];
    }
  }
  return 0;
}

/* x = (L L^T)^-1 x for one right-hand side: L y = x, then L^T x = y. */
static void cholesky_solve(const double *l, int64_t n, double *x) {
  for (int64_t i = 0; i < n; i++) {
    for (int64_t k = 0; k < i; k++) x[i] -= l[k * n + i] * x[k];
    x[i] /= l[i * n + i];
  }
  for (int64_t i = n - 1; i >= 0; i--) {
    for (int64_t k = i + 1; k < n; k++) x[i] -= l[i * n + k] * x[k];
    x[i] /= l[i * n + i];
  }
}

/* Called on the leader only, with every rank's shard (in process mode the
 * runtime has already mapped the peers' memory).  The runtime has checked
 * that the block shards cover the columns of A, that lda and ldb are >= n,
 * and that routine, dtype and memory are among those declared below. */
static int ex_solve(void *ctx, const muster_provider_call_t *call) {
  const muster_solve_args_t *args = &call->args;
  int64_t n = args->n, nrhs = args->nrhs;
  const size_t esz = sizeof(double);
  (void)ctx;
  if (args->layout != MUSTER_LAYOUT_BLOCK)
    return fail(call, MUSTER_EUNSUPPORTED, "only block shards (MUSTER_LAYOUT_BLOCK)");
  double *m = malloc(esz * (size_t)(n * n)), *x = malloc(esz * (size_t)(n * nrhs));
  if (!m || !x) {
    free(m);
    free(x);
    return fail(call, MUSTER_ENOMEM, "no memory for the gathered matrix");
  }
  /* Gather A from the shards: shard r holds columns [col0, col0 + ncols). */
  for (int r = 0; r < call->nshards; r++) {
    const muster_shard_t *s = &call->shards[r];
    muster_copy_cols(m + s->col0 * n, n, s->a, s->lda, n, s->ncols, esz);
  }
  *call->info = cholesky(m, n);
  if (*call->info == 0) { /* else the runtime reports MUSTER_ENOTPD with info */
    /* Every rank holds all of B; solve rank 0's copy, give X to every rank. */
    muster_copy_cols(x, n, call->shards[0].b, call->shards[0].ldb, n, nrhs, esz);
    for (int64_t k = 0; k < nrhs; k++) cholesky_solve(m, n, x + k * n);
    for (int r = 0; r < call->nshards; r++) {
      const muster_shard_t *s = &call->shards[r];
      muster_copy_cols(s->b, s->ldb, x, n, n, nrhs, esz);
      /* A becomes its factor, as potrs promises, unless the caller said no */
      if (!(args->flags & MUSTER_NO_FACTOR))
        muster_copy_cols(s->a, s->lda, m + s->col0 * n, n, n, s->ncols, esz);
    }
  }
  free(m);
  free(x);
  return 0;
}

/* The one exported symbol.  Every hook not given (NULL) is optional. */
__attribute__((visibility("default"))) const muster_provider_v2_t muster_provider_v2 = {
    .abi_version = MUSTER_PROVIDER_V2_ABI,
    .struct_size = sizeof(muster_provider_v2_t),
    .layout_rules = MUSTER_LAYOUT_RULES_VERSION, /* the muster/layout.h it was built with */
    .kind = MUSTER_PROVIDER_LEADER,               /* the leader gets every rank's shard */
    .name = "example",
    .description = "docs/examples: textbook Cholesky, potrs f64 on the host",
    .priority = 1, /* below lapack: chosen only when asked for by name */
    .routines = MUSTER_ROUTINE_BITS(POTRS),
    .dtypes = 1u << MUSTER_F64,
    .mem_kinds = 1u << MUSTER_MEM_HOST,
    .spans = MUSTER_SPAN_THREADS | MUSTER_SPAN_PROCESSES, /* host memory: one node */
    .max_shards = MUSTER_MAX_RANKS,
    .probe = ex_probe,
    .solve = ex_solve,
};
