/*
 * providers/scalapack/redist.c - between the caller's layout and the
 * provider's, through ScaLAPACK's own pXgemr2d (no hand-written MPI).
 *
 *   A   caller's piece (cc->dist, any P0 x Q0 block-cyclic layout; the 1-D
 *       block and cyclic layouts are P0 = 1) <-> the provider's P x Q grid
 *       with tile x tile blocks.  pXgemr2d runs over the 1 x R "line"
 *       context (a 1-row context: with any other shape it would build and
 *       free a new one on every call).
 *   B   replicated m x nrhs on every rank (m = n but for gels): read from
 *       rank 0's copy (as the lapack provider does) through a 1 x 1 grid
 *       holding rank 0 alone,
 *       and X written back to rank 0's b the same way, then broadcast to
 *       every rank's b with BLACS (each with its own ldb).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../common/finite.h"
#include "../common/rank.h" /* muster__abs_at: the element magnitude */
#include "slInt.h"

static const sl_int ONE = 1;

static void set_desc(sl_int *d, sl_int ctxt, int64_t m, int64_t n, int64_t mb, int64_t nb,
                     int64_t lld) {
  d[SL_DT] = 1;
  d[SL_CTXT] = ctxt;
  d[SL_M] = (sl_int)m;
  d[SL_N] = (sl_int)n;
  d[SL_MB] = (sl_int)mb;
  d[SL_NB] = (sl_int)nb;
  d[SL_RSRC] = 0;
  d[SL_CSRC] = 0;
  d[SL_LLD] = (sl_int)(lld > 1 ? lld : 1);
}

void sl_caller_desc(const sl_call_t *s, sl_int *desc) {
  const muster_dist_t *d = &s->cc->dist;
  set_desc(desc, s->caller_ctxt, d->m, d->n, d->mb, d->nb, d->lld);
}

int sl_mat_alloc(sl_call_t *s, sl_mat_t *m, int64_t rows, int64_t cols) {
  m->rows = muster_layout_numroc(rows, s->tile, s->myrow, s->nprow);
  m->cols = muster_layout_numroc(cols, s->tile, s->mycol, s->npcol);
  int64_t lld = m->rows > 1 ? m->rows : 1;
  set_desc(m->desc, -1, rows, cols, s->tile, s->tile, lld);
  size_t count = (size_t)(lld * (m->cols > 1 ? m->cols : 1));
  m->a = calloc(count, s->esz);
  return m->a ? 0 : MUSTER_ENOMEM;
}

void sl_mat_free(sl_mat_t *m) {
  free(m->a);
  m->a = NULL;
}

void sl_mat_bind(const sl_call_t *s, sl_mat_t *m) {
  m->desc[SL_CTXT] = s->ctxt;
}

/* The first `rows` rows of rank 0's b as a matrix of the 1 x 1 grid;
 * CTXT_ -1 on every other rank. */
static void root_b_desc(const sl_call_t *s, int64_t rows, sl_int *desc) {
  const muster_shard_t *me = s->cc->mine;
  set_desc(desc, s->root_ctxt, rows, s->args->nrhs, rows, s->args->nrhs, me->ldb);
}

void sl_scatter_inputs(sl_call_t *s) {
  sl_int m = (sl_int)s->m, n = (sl_int)s->args->n, dc[SL_DLEN];
  sl_caller_desc(s, dc);
  s->k->gemr2d(&m, &n, s->cc->mine->a, &ONE, &ONE, dc, s->A.a, &ONE, &ONE, s->A.desc,
               &s->line_ctxt);
  if (!sl_takes_b(s)) return;
  sl_int nrhs = (sl_int)s->args->nrhs, db[SL_DLEN];
  root_b_desc(s, s->m, db);
  s->k->gemr2d(&m, &nrhs, s->cc->mine->b, &ONE, &ONE, db, s->B.a, &ONE, &ONE, s->B.desc,
               &s->line_ctxt);
}

void sl_gather_result(sl_call_t *s, const sl_mat_t *m) {
  sl_int n = (sl_int)s->args->n, dc[SL_DLEN];
  sl_caller_desc(s, dc);
  s->k->gemr2d(&n, &n, m->a, &ONE, &ONE, m->desc, s->cc->mine->a, &ONE, &ONE, dc, &s->line_ctxt);
}

void sl_gather_x(sl_call_t *s) {
  sl_int n = (sl_int)s->args->n, nrhs = (sl_int)s->args->nrhs, db[SL_DLEN];
  const muster_shard_t *me = s->cc->mine;
  root_b_desc(s, n, db);
  s->k->gemr2d(&n, &nrhs, s->B.a, &ONE, &ONE, s->B.desc, me->b, &ONE, &ONE, db, &s->line_ctxt);
  /* the line context is 1 x R with rank r at column r: rank 0 is (0, 0) */
  if (s->rank == 0)
    s->k->gebs2d(s->line_ctxt, "All", " ", n, nrhs, me->b, (sl_int)me->ldb);
  else
    s->k->gebr2d(s->line_ctxt, "All", " ", n, nrhs, me->b, (sl_int)me->ldb, 0, 0);
}

/* ---- NaN/Inf in a local piece -------------------------------------------------- */

/* One local piece of a block-cyclic m x n matrix, as its descriptor says. */
typedef struct piece {
  const void *a;
  int64_t lrows, lcols, lld;
  int64_t grows; /* only global rows below this are looked at */
  sl_int mb, nb, myrow, mycol, nprow, npcol;
} piece_t;

static int64_t global_of(sl_int local0, sl_int block, sl_int coord, sl_int nprocs) {
  sl_int l = local0 + 1, src = 0;
  return (int64_t)indxl2g_(&l, &block, &coord, &src, &nprocs) - 1;
}

/* First local row whose global row is >= g (local rows are in increasing
 * global order), by bisection. */
static int64_t first_local_row_from(const piece_t *p, int64_t g) {
  int64_t lo = 0, hi = p->lrows;
  while (lo < hi) {
    int64_t mid = lo + (hi - lo) / 2;
    if (global_of((sl_int)mid, p->mb, p->myrow, p->nprow) < g)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

/* First NaN/Inf in column order (lower triangle only when lower): local
 * columns and rows are both in increasing global order, so the first one
 * found is the first in global column order. */
static int scan_piece(muster_dtype_t t, size_t esz, const piece_t *p, int lower, int64_t *row,
                      int64_t *col) {
  for (int64_t lc = 0; lc < p->lcols; lc++) {
    int64_t gc = global_of((sl_int)lc, p->nb, p->mycol, p->npcol);
    int64_t lr0 = lower ? first_local_row_from(p, gc) : 0, lr1 = first_local_row_from(p, p->grows);
    if (lr0 >= lr1) continue;
    const char *colp = (const char *)p->a + (size_t)(lc * p->lld + lr0) * esz;
    int64_t r, c;
    if (!muster__col_nonfinite(t, colp, lr1 - lr0)) continue;
    if (muster__find_nonfinite(t, colp, p->lrows, lr1 - lr0, 1, 0, &r, &c)) {
      *row = global_of((sl_int)(lr0 + r), p->mb, p->myrow, p->nprow);
      *col = gc;
      return 1;
    }
  }
  return 0;
}

int sl_find_nonfinite(const sl_call_t *s, const sl_mat_t *m, int lower, int64_t rows,
                      int64_t *row, int64_t *col) {
  piece_t p = {m->a,     m->rows,  m->cols,  m->desc[SL_LLD], rows,    (sl_int)s->tile,
               (sl_int)s->tile, s->myrow, s->mycol, s->nprow, s->npcol};
  return scan_piece(s->t, s->esz, &p, lower, row, col);
}

int sl_caller_nonfinite(const sl_call_t *s, int lower, int64_t *row, int64_t *col) {
  const muster_dist_t *d = &s->cc->dist;
  piece_t p = {s->cc->mine->a,
               muster_layout_numroc(d->m, d->mb, d->myrow, d->nprow),
               muster_layout_numroc(d->n, d->nb, d->mycol, d->npcol),
               d->lld,
               d->m,
               (sl_int)d->mb,
               (sl_int)d->nb,
               d->myrow,
               d->mycol,
               d->nprow,
               d->npcol};
  return scan_piece(s->t, s->esz, &p, lower, row, col);
}

/* ---- the diagonal -------------------------------------------------------------------- */

void sl_diag_abs(const sl_call_t *s, const sl_mat_t *m, int64_t k, double *d) {
  sl_int nb = (sl_int)s->tile, src = 0, nprow = s->nprow, npcol = s->npcol;
  for (int64_t i = 0; i < k; i++) {
    sl_int g = (sl_int)(i + 1);
    d[i] = 0;
    if (indxg2p_(&g, &nb, &src, &src, &nprow) != s->myrow ||
        indxg2p_(&g, &nb, &src, &src, &npcol) != s->mycol)
      continue;
    int64_t lr = indxg2l_(&g, &nb, &src, &src, &nprow) - 1;
    int64_t lc = indxg2l_(&g, &nb, &src, &src, &npcol) - 1;
    d[i] = muster__abs_at(s->t, m->a, (size_t)(lc * m->desc[SL_LLD] + lr));
  }
  Cdgsum2d(s->ctxt, "All", " ", (sl_int)k, 1, d, (sl_int)(k > 1 ? k : 1), -1, -1);
}

void sl_upper_col_max(const sl_call_t *s, const sl_mat_t *m, int64_t n, double *scale) {
  sl_int nb = (sl_int)s->tile, src = 0, nprow = s->nprow, npcol = s->npcol, myrow = s->myrow,
         mycol = s->mycol;
  for (int64_t i = 0; i < n; i++) scale[i] = 0;
  for (int64_t lc = 0; lc < m->cols; lc++) {
    sl_int l1 = (sl_int)(lc + 1);
    int64_t gc = indxl2g_(&l1, &nb, &mycol, &src, &npcol) - 1;
    double big = 0;
    for (int64_t lr = 0; lr < m->rows; lr++) { /* global rows grow with local ones */
      sl_int r1 = (sl_int)(lr + 1);
      if (indxl2g_(&r1, &nb, &myrow, &src, &nprow) - 1 > gc) break;
      big = fmax(big, muster__abs_at(s->t, m->a, (size_t)(lc * m->desc[SL_LLD] + lr)));
    }
    if (gc < n) scale[gc] = big;
  }
  Cdgamx2d(s->ctxt, "All", " ", (sl_int)n, 1, scale, (sl_int)(n > 1 ? n : 1), NULL, NULL, -1, -1, -1);
}
