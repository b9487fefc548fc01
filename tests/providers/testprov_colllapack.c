/*
 * tests/providers/testprov_colllapack.c - a collective provider that does
 * real linear algebra on the CPU, for the tests of the store path (the
 * adapters' distributed solve, eager and inside jax.jit), where no real
 * collective engine runs: scalapack needs MPI, cusolvermp a GPU.
 *
 * Every rank sends its piece of A (laid out as its dist says: a column
 * block or a 2-D block-cyclic piece) through the bootstrap's allgather,
 * assembles all of A (m x n: m = ldb for gels, geqrf, gesvd, polar), and
 * solves it alone with LAPACKE: potrs (posv), getrs (gesv), syevd (syevd /
 * heevd), gels (gels), geqrf (geqrf + orgqr / ungqr), gesvd (gesdd),
 * polar (from the thin SVD A = U S V^H: U_p = U V^H, H = V S V^H), f64 and
 * c128.  B and W are replicated, so every rank writes the same X, W and
 * factors; syevd writes this rank's piece of V back into its A, and the
 * factorizations the factor muster_routine_outputs puts in A (the others
 * packed into B as that rule says).  info is LAPACK's, the same on every
 * rank.  So what reaches the caller depends on every element each rank
 * passed and on where the dist says it lies: a piece read or written in
 * the wrong layout gives a wrong residual.  Not for speed (n^2 bytes
 * through the bootstrap); tests use n of a few dozen.
 */
#include <complex.h>
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

/* ---- geqrf, gesvd, polar: each factor computed into its own buffer, then
 * placed where muster_routine_outputs says (the runtime's one rule) ---- */

#define NO_MEMORY (-1000) /* an info no LAPACK routine returns: a buffer could not be had */

/* A factor's buffer: column-major, leading dimension ld. */
typedef struct src {
  void *p;
  int64_t ld;
} src_t;

/* Element i of x (real or complex) as a complex number, and back. */
static double complex get(int z, const void *x, int64_t i) {
  return z ? ((const double complex *)x)[i] : ((const double *)x)[i];
}

static void put(int z, void *x, int64_t i, double complex v) {
  if (z) ((double complex *)x)[i] = v;
  else ((double *)x)[i] = creal(v);
}

/* c (m x n, ld m) = op(x) diag(s) y, with op(x) = x (m x k, ld ldx), or x^H
 * when xh (x is then k x m); s NULL: no scaling; y is k x n (ld ldy).
 * Plain loops: the matrices here are a few dozen wide. */
static void mul(int z, int64_t m, int64_t n, int64_t k, const void *x, int64_t ldx, int xh, const double *s,
                const void *y, int64_t ldy, void *c) {
  for (int64_t j = 0; j < n; j++)
    for (int64_t i = 0; i < m; i++) {
      double complex acc = 0;
      for (int64_t l = 0; l < k; l++) {
        double complex xv = xh ? conj(get(z, x, i * ldx + l)) : get(z, x, l * ldx + i);
        acc += xv * (s ? s[l] : 1.0) * get(z, y, j * ldy + l);
      }
      put(z, c, j * m + i, acc);
    }
}

/* QR of a (m x n, ld m; overwritten): f[R] = R (m x n, zero below its
 * diagonal), f[Q] = Q's first qc columns (qc = m for the full Q, else n). */
static lapack_int qr(int z, int64_t m, int64_t n, void *a, int64_t qc, src_t *f, void **buf) {
  size_t esz = z ? 16 : 8;
  int64_t k = m < n ? m : n;
  void *tau = buf[0] = calloc((size_t)k, esz), *r = buf[1] = calloc((size_t)(m * n), esz);
  void *q = buf[2] = calloc((size_t)(m * qc), esz);
  if (!tau || !r || !q) return NO_MEMORY;
  lapack_int info = z ? LAPACKE_zgeqrf(LAPACK_COL_MAJOR, m, n, a, m, tau)
                      : LAPACKE_dgeqrf(LAPACK_COL_MAJOR, m, n, a, m, tau);
  if (info) return info;
  for (int64_t j = 0; j < n; j++)
    for (int64_t i = 0; i < m; i++) put(z, r, j * m + i, i <= j ? get(z, a, j * m + i) : 0);
  muster_copy_cols(q, m, a, m, m, k, esz); /* the reflectors */
  f[MUSTER_FACTOR_R] = (src_t){r, m};
  f[MUSTER_FACTOR_Q] = (src_t){q, m};
  return z ? LAPACKE_zungqr(LAPACK_COL_MAJOR, m, qc, k, q, m, tau)
           : LAPACKE_dorgqr(LAPACK_COL_MAJOR, m, qc, k, q, m, tau);
}

/* SVD of a (destroyed): s the k values; jobz 'N', 'S' (thin) or 'A'
 * (full): f[U] = U (m x m or m x k), f[VH] = V^H (n x n or k x n). */
static lapack_int svd(int z, int64_t m, int64_t n, void *a, char jobz, double *s, src_t *f, void **buf) {
  size_t esz = z ? 16 : 8;
  int64_t k = m < n ? m : n, ucols = jobz == 'A' ? m : k, vrows = jobz == 'A' ? n : k;
  void *u = buf[0] = calloc((size_t)(m * ucols), esz), *vt = buf[1] = calloc((size_t)(vrows * n), esz);
  if (!u || !vt) return NO_MEMORY;
  f[MUSTER_FACTOR_U] = (src_t){u, m};
  f[MUSTER_FACTOR_VH] = (src_t){vt, vrows};
  return z ? LAPACKE_zgesdd(LAPACK_COL_MAJOR, jobz, m, n, a, m, s, u, m, vt, vrows)
           : LAPACKE_dgesdd(LAPACK_COL_MAJOR, jobz, m, n, a, m, s, u, m, vt, vrows);
}

/* Polar from the thin SVD: f[UP] = U V^H (m x n), f[H] = V S V^H (n x n). */
static lapack_int polar(int z, int64_t m, int64_t n, void *a, double *s, src_t *f, void **buf) {
  size_t esz = z ? 16 : 8;
  int64_t k = m < n ? m : n;
  lapack_int info = svd(z, m, n, a, 'S', s, f, buf);
  void *up = buf[2] = calloc((size_t)(m * n), esz), *h = buf[3] = calloc((size_t)(n * n), esz);
  if (info || !up || !h) return info ? info : NO_MEMORY;
  mul(z, m, n, k, f[MUSTER_FACTOR_U].p, m, 0, NULL, f[MUSTER_FACTOR_VH].p, k, up);
  mul(z, n, n, k, f[MUSTER_FACTOR_VH].p, k, 1, s, f[MUSTER_FACTOR_VH].p, k, h);
  f[MUSTER_FACTOR_UP] = (src_t){up, m};
  f[MUSTER_FACTOR_H] = (src_t){h, n};
  return 0;
}

/* geqrf, gesvd or polar of all (m x n, ld m): the factor of A's shape into
 * `all` (cl_collective moves this rank's piece back), the others packed
 * into B, the singular values into W; LAPACK's info into *info. */
static int factor(const muster_collective_call_t *c, void *all, lapack_int *info) {
  int z = c->args.dtype == MUSTER_C128, routine = c->args.routine;
  size_t esz = z ? 16 : 8;
  int64_t m = c->dist.m, n = c->args.n, k = m < n ? m : n;
  muster_outputs_t o;
  muster_routine_outputs(routine, c->args.flags, m, n, &o); /* the runtime checked the call against it */
  src_t f[MUSTER_FACTOR_H + 1];
  memset(f, 0, sizeof f);
  void *buf[4] = {0};
  double *s = calloc((size_t)k, sizeof *s);
  char jobz = (c->args.flags & MUSTER_NO_VECTORS) ? 'N' : (c->args.flags & MUSTER_FULL_MATRICES) ? 'A' : 'S';
  *info = !s ? NO_MEMORY
          : routine == MUSTER_GEQRF ? qr(z, m, n, all, o.a_holds == MUSTER_FACTOR_R ? m : n, f, buf)
          : routine == MUSTER_GESVD ? svd(z, m, n, all, jobz, s, f, buf)
                                    : polar(z, m, n, all, s, f, buf);
  if (*info == 0) {
    if (o.a_holds) muster_copy_cols(all, m, f[o.a_holds].p, f[o.a_holds].ld, m, n, esz);
    for (int i = 0; i < o.nparts; i++) {
      const muster_part_t *p = &o.part[i];
      muster_copy_cols((char *)c->mine->b + (size_t)p->offset * esz, p->rows, f[p->what].p, f[p->what].ld,
                       p->rows, p->cols, esz);
    }
    if (o.w_count) memcpy(c->mine->w, s, (size_t)o.w_count * sizeof *s);
  }
  for (int i = 0; i < 4; i++) free(buf[i]);
  free(s);
  if (*info == NO_MEMORY) {
    snprintf(c->err, c->errlen, "colllapack: out of memory for %s of %lld x %lld", muster_routine_str(routine),
             (long long)m, (long long)n);
    return MUSTER_ENOMEM;
  }
  return 0;
}

static lapack_int solve_full(const muster_collective_call_t *c, void *a, void *ipiv_space) {
  const muster_solve_args_t *x = &c->args;
  lapack_int n = (lapack_int)x->n, nrhs = (lapack_int)x->nrhs, ldb = (lapack_int)c->mine->ldb;
  lapack_int m = (lapack_int)c->dist.m;
  int z = x->dtype == MUSTER_C128;
  void *b = c->mine->b;
  lapack_int *ipiv = ipiv_space;
  switch (x->routine) {
  case MUSTER_POTRS: return z ? LAPACKE_zposv(LAPACK_COL_MAJOR, 'L', n, nrhs, a, n, b, ldb)
                              : LAPACKE_dposv(LAPACK_COL_MAJOR, 'L', n, nrhs, a, n, b, ldb);
  case MUSTER_GETRS: return z ? LAPACKE_zgesv(LAPACK_COL_MAJOR, n, nrhs, a, n, ipiv, b, ldb)
                              : LAPACKE_dgesv(LAPACK_COL_MAJOR, n, nrhs, a, n, ipiv, b, ldb);
  case MUSTER_GELS: return z ? LAPACKE_zgels(LAPACK_COL_MAJOR, 'N', m, n, nrhs, a, m, b, ldb)
                             : LAPACKE_dgels(LAPACK_COL_MAJOR, 'N', m, n, nrhs, a, m, b, ldb);
  default: return z ? LAPACKE_zheevd(LAPACK_COL_MAJOR, 'V', 'L', n, a, n, c->mine->w)
                    : LAPACKE_dsyevd(LAPACK_COL_MAJOR, 'V', 'L', n, a, n, c->mine->w);
  }
}

/* COLLLAPACK_REFUSE=alike: every rank refuses the call before any
 * exchange, as an agreed check does (provider_v2.h: *info =
 * MUSTER_PROVIDER_REFUSED_ALIKE); =alone: every rank fails the same way but
 * says nothing of the others (info 0), as a provider whose check is not
 * agreed.  For test_comm_refusal.c. */
static int refused(const muster_collective_call_t *c) {
  const char *how = getenv("COLLLAPACK_REFUSE");
  if (!how || !how[0]) return 0;
  snprintf(c->err, c->errlen, "colllapack: refused by COLLLAPACK_REFUSE=%s", how);
  *c->info = strcmp(how, "alike") == 0 ? MUSTER_PROVIDER_REFUSED_ALIKE : 0;
  return MUSTER_EUNSUPPORTED;
}

static int cl_collective(void *ctx, const muster_collective_call_t *c) {
  (void)ctx;
  if (refused(c)) return MUSTER_EUNSUPPORTED;
  size_t esz = c->args.dtype == MUSTER_C128 ? 16 : 8;
  int64_t n = c->args.n, m = c->dist.m; /* m: A's rows (n, or ldb for gels and the factorizations) */
  int takes_o = (muster_routine_takes(c->args.routine) & MUSTER_TAKES_O) != 0;
  char *all = calloc((size_t)(m * n), esz);
  lapack_int *ipiv = calloc((size_t)n, sizeof *ipiv);
  if (!all || !ipiv) {
    free(all);
    free(ipiv);
    snprintf(c->err, c->errlen, "colllapack: out of memory for n=%lld", (long long)n);
    return MUSTER_ENOMEM;
  }
  int rc = gather_a(c, esz, all);
  if (rc == 0) {
    lapack_int info = 0;
    if (takes_o) rc = factor(c, all, &info);
    else info = solve_full(c, all, ipiv);
    if (rc == 0 && info < 0) {
      snprintf(c->err, c->errlen, "colllapack: LAPACKE argument %d refused", (int)-info);
      rc = MUSTER_EPROVIDER;
    }
    *c->info = info > 0 ? info : 0;
    muster_outputs_t o = {0};
    if (takes_o) muster_routine_outputs(c->args.routine, c->args.flags, m, n, &o);
    if (rc == 0 && (c->args.routine == MUSTER_SYEVD || (info == 0 && o.a_holds))) /* this rank's piece of V,
                                                                                     or of A's factor */
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
    .routines = (1u << MUSTER_POTRS) | (1u << MUSTER_GETRS) | (1u << MUSTER_SYEVD) | (1u << MUSTER_GELS) |
                (1u << MUSTER_GEQRF) | (1u << MUSTER_GESVD) | (1u << MUSTER_POLAR),
    .dtypes = (1u << MUSTER_F64) | (1u << MUSTER_C128),
    .mem_kinds = 1u << MUSTER_MEM_HOST,
    .spans = MUSTER_SPAN_THREADS | MUSTER_SPAN_PROCESSES | MUSTER_SPAN_NODES,
    .max_shards = MUSTER_MAX_RANKS,
    .collective_solve = cl_collective,
};
