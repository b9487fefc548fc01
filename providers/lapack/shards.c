/* providers/lapack/shards.c - moving columns between the ranks' host shards
 * and one packed matrix, and checking what the shards claim. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "../common/err.h"
#include "lapackInt.h"

int lp_err(const muster_provider_call_t *call, int code, const char *fmt, ...) {
  if (!call) return code;
  const char *r = muster_routine_str(call->args.routine), *t = muster_dtype_str(call->args.dtype);
  char who[96];
  snprintf(who, sizeof who, "lapack (host, %s %s n=%" PRId64 ")", r ? r : "?", t ? t : "?", call->args.n);
  va_list ap;
  va_start(ap, fmt);
  muster__prov_verr(call->err, call->errlen, code, who, fmt, ap);
  va_end(ap);
  return code;
}

/* LAYOUT_BLOCK: any partition of [0, n) into contiguous column ranges, one
 * per shard (frameworks use ceil(n/R)-wide blocks, but nothing here needs
 * that), each column held exactly once. */
static int check_block_cover(const muster_provider_call_t *call) {
  int64_t n = call->args.n, total = 0;
  for (int r = 0; r < call->nshards; r++) {
    const muster_shard_t *s = &call->shards[r];
    if (s->col0 < 0 || s->ncols < 0 || s->col0 > n - s->ncols)
      return lp_err(call, MUSTER_EINVAL,
                    "rank %d holds columns [%" PRId64 ", %" PRId64 ") outside [0, %" PRId64 ")", r,
                    s->col0, s->col0 + s->ncols, n);
    total += s->ncols;
    for (int q = 0; q < r; q++) {
      const muster_shard_t *p = &call->shards[q];
      if (p->ncols && s->ncols && p->col0 < s->col0 + s->ncols && s->col0 < p->col0 + p->ncols)
        return lp_err(call, MUSTER_EINVAL, "ranks %d and %d both hold column %" PRId64, q, r,
                      p->col0 > s->col0 ? p->col0 : s->col0);
    }
  }
  if (total != n)
    return lp_err(call, MUSTER_EINVAL,
                  "shards hold %" PRId64 " columns in all, the matrix has %" PRId64, total, n);
  return 0;
}

static int check_cyclic_shape(const muster_provider_call_t *call) {
  const muster_solve_args_t *a = &call->args;
  if (!muster_layout_tile_valid(a->n, a->tile, call->nshards))
    return lp_err(call, MUSTER_ETILE, "tile %" PRId64 " invalid for n=%" PRId64 ", ranks=%d",
                  a->tile, a->n, call->nshards);
  muster_layout_geom_t L;
  if (muster_layout_geom_init(&L, a->n, a->tile, call->nshards) < 0)
    return lp_err(call, MUSTER_ETILE, "tile %" PRId64 " out of range", a->tile);
  for (int r = 0; r < call->nshards; r++)
    if (call->shards[r].ncols < L.local_cols)
      return lp_err(call, MUSTER_EINVAL,
                    "rank %d cyclic shard has %" PRId64 " columns, tile %" PRId64
                    " needs %" PRId64,
                    r, call->shards[r].ncols, a->tile, L.local_cols);
  return 0;
}

int lp_check_shards(const muster_provider_call_t *call, const muster_shape_t *sh0) {
  const muster_solve_args_t *a = &call->args;
  for (int r = 0; r < call->nshards; r++) {
    const muster_shard_t *s = &call->shards[r];
    if (s->mem != MUSTER_MEM_HOST)
      return lp_err(call, MUSTER_EUNSUPPORTED, "rank %d shard is not host memory (mem %d)", r,
                    (int)s->mem);
    int holds = a->layout == MUSTER_LAYOUT_CYCLIC || s->ncols > 0;
    muster_shape_t sh;
    if (muster_routine_shape(a->routine, a->n, a->nrhs, s->ldb, &sh) < 0)
      return lp_err(call, MUSTER_EINVAL, "rank %d: gels needs m = ldb >= n, ldb is %" PRId64, r,
                    s->ldb);
    if (sh.a_rows != sh0->a_rows)
      return lp_err(call, MUSTER_EINVAL, "rank %d: m = ldb %" PRId64 ", rank 0 has %" PRId64, r,
                    s->ldb, sh0->a_rows);
    if (holds && !s->a) return lp_err(call, MUSTER_EINVAL, "rank %d: A is null", r);
    if (holds && s->lda < sh.a_rows)
      return lp_err(call, MUSTER_EINVAL, "rank %d: lda %" PRId64 " < %s (%" PRId64 " rows)", r,
                    s->lda, sh.a_rows == a->n ? "n" : "m", sh.a_rows);
    if (sh.b_rows && (!s->b || s->ldb < sh.b_rows))
      return lp_err(call, MUSTER_EINVAL, "rank %d: B is null or ldb %" PRId64 " < n", r, s->ldb);
    if ((a->routine == MUSTER_SYEVD || (a->flags & MUSTER_LOGDET)) && !s->w)
      return lp_err(call, MUSTER_EINVAL, "rank %d: W (%s) is null", r,
                    a->routine == MUSTER_SYEVD ? "eigenvalues" : "log det");
  }
  if (a->layout == MUSTER_LAYOUT_BLOCK) return check_block_cover(call);
  if (a->layout == MUSTER_LAYOUT_CYCLIC) return check_cyclic_shape(call);
  return lp_err(call, MUSTER_EINVAL, "unknown layout %d", (int)a->layout);
}

static char *col_at(void *base, int64_t col, int64_t ld, size_t esz) {
  return (char *)base + (size_t)(col * ld) * esz;
}

/* One direction of one move; `check` set: look for NaN/Inf in each column
 * right after copying it (still in cache), stop at the first one. */
typedef struct move {
  int64_t n;              /* columns of A                                 */
  int64_t rows;           /* rows of A, and the leading dimension of full */
  size_t esz;
  int lower;              /* only rows [g, n) of global column g          */
  muster_dtype_t check;   /* 0: no check                                  */
  int64_t bad_row, bad_col; /* first NaN/Inf found, bad_col -1 if none    */
} move_t;

/* Copy `cols` columns whose first is global column g0: whole columns (one
 * memcpy per run when packed), or with m->lower the part LAPACK reads or
 * writes with uplo = 'L' (one memcpy per column).  0, or 1 when the check
 * found a NaN/Inf. */
static int copy_range(move_t *m, void *dst, int64_t ldd, const void *src, int64_t lds, int64_t g0,
                      int64_t cols) {
  if (!m->lower) {
    muster_copy_cols(dst, ldd, src, lds, m->rows, cols, m->esz);
    return 0;
  }
  for (int64_t c = 0; c < cols && g0 + c < m->n; c++) {
    int64_t first = g0 + c;
    char *d = (char *)dst + (size_t)(c * ldd + first) * m->esz;
    memcpy(d, (const char *)src + (size_t)(c * lds + first) * m->esz,
           (size_t)(m->n - first) * m->esz);
    if (m->check && muster__col_nonfinite(m->check, d, m->n - first)) {
      muster__find_nonfinite(m->check, d, m->n, m->n - first, 1, 0, &m->bad_row, &m->bad_col);
      m->bad_row += first;
      m->bad_col = first;
      return 1;
    }
  }
  return 0;
}

/* Copy between shards and full in direction to_full; cyclic padding
 * columns are neither read nor written. */
static int move_columns(const muster_provider_call_t *call, void *full, int to_full, move_t *m) {
  int64_t n = call->args.n, ldf = m->rows;
  size_t esz = m->esz;
  m->bad_col = -1;
  if (call->args.layout == MUSTER_LAYOUT_BLOCK) {
    for (int r = 0; r < call->nshards; r++) {
      const muster_shard_t *s = &call->shards[r];
      char *f = col_at(full, s->col0, ldf, esz);
      if (to_full ? copy_range(m, f, ldf, s->a, s->lda, s->col0, s->ncols)
                  : copy_range(m, s->a, s->lda, f, ldf, s->col0, s->ncols))
        return 1;
    }
    return 0;
  }
  muster_layout_geom_t L;
  if (muster_layout_geom_init(&L, n, call->args.tile, call->nshards) < 0) return 0; /* checked before */
  muster_layout_iter_t it;
  muster_layout_run_t run;
  for (muster_layout_iter_start(&it, &L); muster_layout_iter_next(&it, &run);) {
    const muster_shard_t *s = &call->shards[run.cyc_rank];
    char *f = col_at(full, run.gcol, ldf, esz), *c = col_at(s->a, run.cyc_col, s->lda, esz);
    if (to_full ? copy_range(m, f, ldf, c, s->lda, run.gcol, run.ncols)
                : copy_range(m, c, s->lda, f, ldf, run.gcol, run.ncols))
      return 1;
  }
  return 0;
}

int lp_gather_lower(const muster_provider_call_t *call, void *full, size_t esz, int64_t *row,
                    int64_t *col) {
  move_t m = {.n = call->args.n, .rows = call->args.n, .esz = esz, .lower = 1, .check = call->args.dtype};
  int bad = move_columns(call, full, 1, &m);
  *row = m.bad_row;
  *col = m.bad_col;
  return bad;
}

int lp_gather_full(const muster_provider_call_t *call, void *full, int64_t rows, size_t esz,
                   int64_t *row, int64_t *col) {
  move_t m = {.n = call->args.n, .rows = rows, .esz = esz};
  move_columns(call, full, 1, &m);
  return muster__find_nonfinite(call->args.dtype, full, rows, rows, call->args.n, 0, row, col);
}

void lp_scatter(const muster_provider_call_t *call, const void *full, size_t esz, int lower) {
  move_t m = {.n = call->args.n, .rows = call->args.n, .esz = esz, .lower = lower};
  move_columns(call, (void *)full, 0, &m);
}

int lp_owner(const muster_provider_call_t *call, int64_t gcol) {
  if (call->args.layout == MUSTER_LAYOUT_CYCLIC) {
    muster_layout_geom_t L;
    int rank;
    int64_t lcol;
    if (muster_layout_geom_init(&L, call->args.n, call->args.tile, call->nshards) < 0) return -1;
    muster_layout_cyclic_owner(&L, gcol, &rank, &lcol);
    return rank;
  }
  for (int r = 0; r < call->nshards; r++) {
    const muster_shard_t *s = &call->shards[r];
    if (gcol >= s->col0 && gcol < s->col0 + s->ncols) return r;
  }
  return -1;
}
