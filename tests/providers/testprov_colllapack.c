/*
 * tests/providers/testprov_colllapack.c - a collective provider that does
 * real linear algebra on the CPU, for the tests of the store path (the
 * adapters' distributed solve, eager and inside jax.jit), where no real
 * collective engine runs: scalapack needs MPI, cusolvermp a GPU.
 *
 * Every rank sends its piece of A (laid out as its dist says: a column
 * block or a 2-D block-cyclic piece) through the bootstrap's allgather,
 * assembles all of A, and solves it alone with LAPACKE: potrs (posv),
 * getrs (gesv), syevd (syevd / heevd), f64 and c128.  B and W are
 * replicated, so every rank writes the same X and W; syevd writes this
 * rank's piece of V back into its A.  info is LAPACK's, the same on every
 * rank.  So what reaches the caller depends on every element each rank
 * passed and on where the dist says it lies: a piece read or written in
 * the wrong layout gives a wrong residual.  Not for speed (n^2 bytes
 * through the bootstrap); tests use n of a few dozen.
 */
#include <lapacke.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "muster/layout.h"
#include "muster/provider_v2.h"

/* Global row (or column) of local index l: block-cyclic, block b, P procs. */
static int64_t global_of(int64_t l, int64_t b, int coord, int nprocs) {
  return (l / b * nprocs + coord) * b + l % b;
}

/* Copy between this rank's piece (lld) and the n x n matrix `all`
 * (column-major, ld n), elements of esz bytes; to_all picks the direction. */
static void move_piece(const muster_dist_t *d, int myrow, int mycol, void *piece, int64_t lld, char *all,
                       size_t esz, int to_all) {
  int64_t rows = muster_layout_numroc(d->m, d->mb, myrow, d->nprow);
  int64_t cols = muster_layout_numroc(d->n, d->nb, mycol, d->npcol);
  for (int64_t lj = 0; lj < cols; lj++)
    for (int64_t li = 0; li < rows; li++) {
      char *g = all + (size_t)(global_of(lj, d->nb, mycol, d->npcol) * d->m +
                               global_of(li, d->mb, myrow, d->nprow)) * esz;
      char *p = (char *)piece + (size_t)(lj * lld + li) * esz;
      memcpy(to_all ? g : p, to_all ? p : g, esz);
    }
}

/* Every rank's piece into all of A (n x n, column-major). */
static int gather_a(const muster_collective_call_t *c, size_t esz, char *all) {
  const muster_dist_t *d = &c->dist;
  int size = c->boot->size;
  int64_t cap = muster_layout_numroc(d->m, d->mb, 0, d->nprow) * muster_layout_numroc(d->n, d->nb, 0, d->npcol);
  size_t len = (size_t)cap * esz; /* the largest piece (coordinate 0's), packed */
  char *mine = calloc(1, len), *every = calloc((size_t)size, len);
  int rc = mine && every ? 0 : MUSTER_ENOMEM;
  if (rc == 0) {
    /* pack: local columns of `rows` each, whatever the caller's lld */
    int64_t rows = muster_layout_numroc(d->m, d->mb, d->myrow, d->nprow);
    int64_t cols = muster_layout_numroc(d->n, d->nb, d->mycol, d->npcol);
    for (int64_t lj = 0; lj < cols; lj++)
      memcpy(mine + (size_t)(lj * rows) * esz, (char *)c->mine->a + (size_t)(lj * d->lld) * esz,
             (size_t)rows * esz);
    rc = c->boot->allgather(c->boot->ctx, mine, every, len, c->err, c->errlen);
  }
  for (int r = 0; rc == 0 && r < size; r++) {
    int row = r / d->npcol, col = r % d->npcol; /* rank = row * npcol + col (muster_dist_t) */
    int64_t rows = muster_layout_numroc(d->m, d->mb, row, d->nprow);
    move_piece(d, row, col, every + (size_t)r * len, rows > 0 ? rows : 1, all, esz, 1);
  }
  free(mine);
  free(every);
  return rc;
}

static lapack_int solve_full(const muster_collective_call_t *c, void *a, void *ipiv_space) {
  const muster_solve_args_t *x = &c->args;
  lapack_int n = (lapack_int)x->n, nrhs = (lapack_int)x->nrhs, ldb = (lapack_int)c->mine->ldb;
  int z = x->dtype == MUSTER_C128;
  void *b = c->mine->b;
  lapack_int *ipiv = ipiv_space;
  switch (x->routine) {
  case MUSTER_POTRS: return z ? LAPACKE_zposv(LAPACK_COL_MAJOR, 'L', n, nrhs, a, n, b, ldb)
                              : LAPACKE_dposv(LAPACK_COL_MAJOR, 'L', n, nrhs, a, n, b, ldb);
  case MUSTER_GETRS: return z ? LAPACKE_zgesv(LAPACK_COL_MAJOR, n, nrhs, a, n, ipiv, b, ldb)
                              : LAPACKE_dgesv(LAPACK_COL_MAJOR, n, nrhs, a, n, ipiv, b, ldb);
  default: return z ? LAPACKE_zheevd(LAPACK_COL_MAJOR, 'V', 'L', n, a, n, c->mine->w)
                    : LAPACKE_dsyevd(LAPACK_COL_MAJOR, 'V', 'L', n, a, n, c->mine->w);
  }
}

static int cl_collective(void *ctx, const muster_collective_call_t *c) {
  (void)ctx;
  size_t esz = c->args.dtype == MUSTER_C128 ? 16 : 8;
  int64_t n = c->args.n;
  char *all = calloc((size_t)(n * n), esz);
  lapack_int *ipiv = calloc((size_t)n, sizeof *ipiv);
  if (!all || !ipiv) {
    free(all);
    free(ipiv);
    snprintf(c->err, c->errlen, "colllapack: out of memory for n=%lld", (long long)n);
    return MUSTER_ENOMEM;
  }
  int rc = gather_a(c, esz, all);
  if (rc == 0) {
    lapack_int info = solve_full(c, all, ipiv);
    if (info < 0) {
      snprintf(c->err, c->errlen, "colllapack: LAPACKE argument %d refused", (int)-info);
      rc = MUSTER_EPROVIDER;
    }
    *c->info = info > 0 ? info : 0;
    if (rc == 0 && c->args.routine == MUSTER_SYEVD) /* this rank's piece of V */
      move_piece(&c->dist, c->dist.myrow, c->dist.mycol, c->mine->a, c->dist.lld, all, esz, 0);
  }
  *c->tile_used = c->dist.nb;
  free(all);
  free(ipiv);
  return rc;
}

__attribute__((visibility("default"))) const muster_provider_v2_t muster_provider_v2 = {
    .abi_version = MUSTER_PROVIDER_V2_ABI,
    .struct_size = sizeof(muster_provider_v2_t),
    .layout_rules = MUSTER_LAYOUT_RULES_VERSION,
    .kind = MUSTER_PROVIDER_COLLECTIVE,
    .name = "colllapack",
    .description = "test provider: all of A gathered on every rank, LAPACKE",
    .priority = 1,
    .routines = (1u << MUSTER_POTRS) | (1u << MUSTER_GETRS) | (1u << MUSTER_SYEVD),
    .dtypes = (1u << MUSTER_F64) | (1u << MUSTER_C128),
    .mem_kinds = 1u << MUSTER_MEM_HOST,
    .spans = MUSTER_SPAN_THREADS | MUSTER_SPAN_PROCESSES | MUSTER_SPAN_NODES,
    .max_shards = MUSTER_MAX_RANKS,
    .collective_solve = cl_collective,
};
