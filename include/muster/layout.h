/*
 * muster/layout.h - how the columns of an n x n (or m x n) matrix are
 * spread over R ranks, and which rows each operand of a routine has
 * (muster_routine_shape): the block layout frameworks hold and the 1-D column block-cyclic
 * layout cuSolverMg wants, and the arithmetic between them.
 *
 * This header is part of the provider ABI: a provider compiles these rules
 * in, so a change to any of them bumps MUSTER_LAYOUT_RULES_VERSION and,
 * with it, the provider ABI version (include/muster/provider.h).  Adapters,
 * tools and the runtime use the same functions; nothing re-derives them
 * (Python reaches them through the exported muster_layout_* functions of
 * muster.h).
 *
 *   block   rank r has the contiguous columns [r*S, min((r+1)*S, n)) with
 *           S = ceil(n/R) ("block width"); the last ranks may hold fewer
 *           columns, or none.
 *   cyclic  global column tile j (columns [j*T, (j+1)*T)) lives on rank
 *           j % R as local tile j / R.  Every rank stores local_tiles =
 *           ceil(ceil(n/T)/R) tiles, i.e. local_cols = local_tiles*T columns;
 *           the columns past the real ones (a suffix of each rank's buffer)
 *           are zero padding.
 * docs/layout.md draws both.
 *
 * Everything here is static inline and pure arithmetic, so a provider can
 * include it without linking the runtime (providers are built with
 * -fvisibility=hidden and export only their struct).
 *
 * Tile validity (muster_layout_tile_valid) follows jaxmg's rule for its
 * single all_to_all relayout, extended to n not divisible by R by treating
 * the block shards as R shards of S = ceil(n/R) columns (the short last ones
 * zero-padded to S):
 *     valid(T)  <=>  1 <= T <= S  and  ( T == S
 *                                        or ( S >= R and (R-1)*P <= S ) )
 *     with P = (-S) mod (T*R), the padding that makes S+P a multiple of T*R.
 * T == S is always valid: the cyclic layout is then the block layout itself.
 */
#ifndef MUSTER_LAYOUT_H
#define MUSTER_LAYOUT_H

#include <stdint.h>
#include <string.h>

#include "../muster.h"

/* Bumped whenever a rule of this header changes meaning.  A rule for a new
 * routine (geqrf, gesvd, polar) changes none: a provider built before it
 * does not declare the routine, so it never meets the new rule. */
#define MUSTER_LAYOUT_RULES_VERSION 1

/* Largest n we accept: keeps n*R*T and byte offsets far from overflow. */
#define MUSTER_LAYOUT_MAX_N (INT64_C(1) << 40)

typedef struct muster_layout_geom {
  int64_t n;           /* global order (rows = columns)                    */
  int64_t tile;        /* T                                                */
  int nranks;          /* R                                                */
  int64_t block_cols;  /* S = ceil(n/R): width of every full block shard   */
  int64_t ntiles;      /* ceil(n/T): tiles holding real columns            */
  int64_t local_tiles; /* ceil(ntiles/R): tiles per rank, padding included */
  int64_t local_cols;  /* local_tiles*T: padded width of a cyclic shard    */
} muster_layout_geom_t;

static inline int64_t muster_ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* Fill L for (n, tile, nranks).  Any tile >= 1 gives a well-defined layout;
 * validity for the all_to_all relayout is a separate question
 * (muster_layout_tile_valid).  0 or MUSTER_EINVAL (no message: callers
 * word it, and providers have no runtime to set it). */
static inline int muster_layout_geom_init(muster_layout_geom_t *L, int64_t n, int64_t tile,
                                      int nranks) {
  if (!L || n < 1 || n > MUSTER_LAYOUT_MAX_N || tile < 1 || tile > MUSTER_LAYOUT_MAX_N ||
      nranks < 1 || nranks > MUSTER_MAX_RANKS)
    return MUSTER_EINVAL;
  L->n = n;
  L->tile = tile;
  L->nranks = nranks;
  L->block_cols = muster_ceil_div(n, nranks);
  L->ntiles = muster_ceil_div(n, tile);
  L->local_tiles = muster_ceil_div(L->ntiles, nranks);
  L->local_cols = L->local_tiles * tile;
  return 0;
}

/* ---- tile validity --------------------------------------------------------- */

/* The jaxmg rule above.  Assumes n >= 1 and 1 <= nranks <= MUSTER_MAX_RANKS. */
static inline int muster_layout_tile_valid(int64_t n, int64_t tile, int nranks) {
  int64_t S = muster_ceil_div(n, nranks);
  if (tile < 1 || tile > S) return 0;
  if (tile == S) return 1; /* one tile per rank: cyclic == block */
  if (S < nranks) return 0; /* jaxmg: "shard_size >= ndev" for T < S */
  int64_t period = tile * nranks;
  int64_t pad = (period - S % period) % period;
  return (int64_t)(nranks - 1) * pad <= S;
}

/* Largest valid tile < tile, or 0 if none.  Any int64 tile (no overflow). */
static inline int64_t muster_layout_tile_below(int64_t n, int64_t tile, int nranks) {
  int64_t S = muster_ceil_div(n, nranks);
  if (tile <= 1) return 0;
  for (int64_t t = (tile > S ? S : tile - 1); t >= 1; t--)
    if (muster_layout_tile_valid(n, t, nranks)) return t;
  return 0;
}

/* Smallest valid tile > tile, or 0 if none (there is none only for
 * tile >= S, since S itself is always valid).  Any int64 tile. */
static inline int64_t muster_layout_tile_above(int64_t n, int64_t tile, int nranks) {
  int64_t S = muster_ceil_div(n, nranks);
  if (tile >= S) return 0;
  for (int64_t t = (tile < 1 ? 1 : tile + 1); t <= S; t++)
    if (muster_layout_tile_valid(n, t, nranks)) return t;
  return 0;
}

/* ---- the default tile ------------------------------------------------------ */

/* The tile a call gets when neither the caller nor the provider chose one:
 * the largest valid tile <= MUSTER_LAYOUT_DEFAULT_TILE_MAX (cuSolverMg's
 * sweet spot starts at 256, docs/tiles.md), else S = ceil(n/R), which is
 * always valid (no valid tile <= 256 happens, e.g. n = 4861 on 18 ranks).
 * The runtime's fallback and the lapack provider's choose_tile both return
 * this; nothing else words the rule.  0 for n < 1 or nranks outside
 * 1..MUSTER_MAX_RANKS. */
#define MUSTER_LAYOUT_DEFAULT_TILE_MAX 256

static inline int64_t muster_layout_default_tile(int64_t n, int nranks) {
  if (n < 1 || nranks < 1 || nranks > MUSTER_MAX_RANKS) return 0;
  int64_t t = muster_layout_tile_below(n, MUSTER_LAYOUT_DEFAULT_TILE_MAX + 1, nranks);
  return t ? t : muster_ceil_div(n, nranks);
}

/* ---- block layout ------------------------------------------------------------ */

static inline int64_t muster_layout_block_col0(const muster_layout_geom_t *L, int rank) {
  int64_t c = (int64_t)rank * L->block_cols;
  return c < L->n ? c : L->n;
}

/* Columns block shard `rank` holds: S, or fewer for the last ranks (maybe 0). */
static inline int64_t muster_layout_block_ncols(const muster_layout_geom_t *L, int rank) {
  int64_t left = L->n - (int64_t)rank * L->block_cols;
  if (left <= 0) return 0;
  return left < L->block_cols ? left : L->block_cols;
}

/* Global column gcol (0 <= gcol < n) -> (rank, local column) in the block layout. */
static inline void muster_layout_block_owner(const muster_layout_geom_t *L, int64_t gcol,
                                              int *rank, int64_t *lcol) {
  *rank = (int)(gcol / L->block_cols);
  *lcol = gcol % L->block_cols;
}

/* ---- cyclic layout ----------------------------------------------------------- */

/* Global column gcol (0 <= gcol < n) -> (rank, local column) in the cyclic layout. */
static inline void muster_layout_cyclic_owner(const muster_layout_geom_t *L, int64_t gcol,
                                               int *rank, int64_t *lcol) {
  int64_t j = gcol / L->tile;
  *rank = (int)(j % L->nranks);
  *lcol = (j / L->nranks) * L->tile + gcol % L->tile;
}

/* (rank, local column) of a cyclic shard -> global column, or -1 when that
 * local column is padding (or out of range). */
static inline int64_t muster_layout_cyclic_global(const muster_layout_geom_t *L, int rank,
                                                   int64_t lcol) {
  if (rank < 0 || rank >= L->nranks || lcol < 0 || lcol >= L->local_cols) return -1;
  int64_t j = (lcol / L->tile) * L->nranks + rank;
  int64_t g = j * L->tile + lcol % L->tile;
  return g < L->n ? g : -1;
}

/* Real (non-padding) columns of cyclic shard `rank`.  Because a rank's
 * tiles are in increasing global order they form a prefix: local columns
 * [real, local_cols) are padding. */
static inline int64_t muster_layout_cyclic_real_cols(const muster_layout_geom_t *L, int rank) {
  if (L->ntiles <= rank) return 0;
  int64_t count = (L->ntiles - 1 - rank) / L->nranks + 1; /* tiles of this rank */
  int64_t last = L->ntiles - 1;
  if (last % L->nranks != rank) return count * L->tile;
  return (count - 1) * L->tile + (L->n - last * L->tile);
}

/* ---- runs: the unit of copying between the two layouts ------------------------ */

/* A run: columns contiguous in the global matrix, in one block shard and in
 * one cyclic shard (a tile cut at block boundaries). */
typedef struct muster_layout_run {
  int64_t gcol;    /* first global column                 */
  int64_t ncols;   /* columns in the run, >= 1            */
  int blk_rank;    /* block shard holding it              */
  int64_t blk_col; /* its first local column there        */
  int cyc_rank;    /* cyclic shard holding it             */
  int64_t cyc_col; /* its first local column there        */
} muster_layout_run_t;

typedef struct muster_layout_iter {
  const muster_layout_geom_t *L;
  int64_t next; /* next global column */
} muster_layout_iter_t;

static inline void muster_layout_iter_start(muster_layout_iter_t *it,
                                             const muster_layout_geom_t *L) {
  it->L = L;
  it->next = 0;
}

/* Next run in increasing global order: 1 and *run filled, or 0 at the end.
 *     muster_layout_iter_t it; muster_layout_run_t run;
 *     for (muster_layout_iter_start(&it, &L); muster_layout_iter_next(&it, &run);)
 *       copy run.ncols columns ...                                              */
static inline int muster_layout_iter_next(muster_layout_iter_t *it,
                                           muster_layout_run_t *run) {
  const muster_layout_geom_t *L = it->L;
  int64_t g = it->next;
  if (g >= L->n) return 0;
  int64_t end = (g / L->tile + 1) * L->tile;             /* end of this tile  */
  int64_t bend = (g / L->block_cols + 1) * L->block_cols; /* end of this block */
  if (bend < end) end = bend;
  if (L->n < end) end = L->n;
  run->gcol = g;
  run->ncols = end - g;
  muster_layout_block_owner(L, g, &run->blk_rank, &run->blk_col);
  muster_layout_cyclic_owner(L, g, &run->cyc_rank, &run->cyc_col);
  it->next = end;
  return 1;
}

/* ---- the shapes of a routine's operands ------------------------------------------ */

/* Rows and columns of A, B and X for one call.  The one rule for a
 * non-square A: every routine spreads A's n COLUMNS over the ranks by the
 * layouts above (block or cyclic, exactly as for a square A) and every rank
 * holds all a_rows rows of its columns (lda >= a_rows).  B is replicated:
 * b_rows x nrhs on input (ldb >= b_rows); the solution X, x_rows x nrhs,
 * comes back in B's first x_rows rows on every rank.
 *   potrs, getrs  A n x n, B n x nrhs, X n x nrhs
 *   gels          A m x n, B m x nrhs, X n x nrhs, with m = ldb >= n
 *                 (muster.h says why m is ldb)
 *   potri, syevd  A n x n, no B (b_rows = x_rows = nrhs = 0)
 *   geqrf, gesvd, polar (MUSTER_TAKES_O)  A m x n with m = ldb >= 1, tall
 *                 or wide; B m x nrhs is output only (b_rows = x_rows = m,
 *                 or 0 when nrhs = 0); what lands in A and B:
 *                 muster_routine_outputs below */
typedef struct muster_shape {
  int64_t a_rows, a_cols; /* A: rows (the bound for lda), columns = n     */
  int64_t b_rows;         /* B on input, 0: the routine takes no B        */
  int64_t x_rows;         /* X written into B's first rows                */
  int64_t nrhs;           /* columns of B and X                           */
} muster_shape_t;

/* Fill *s for routine (muster_routine_t value) with n, nrhs and ldb as the
 * caller passed them.  0, or MUSTER_EINVAL when they make no shape: gels
 * with m = ldb < n (a wide A; not supported), a TAKES_O routine with
 * m = ldb < 1, or n < 1.  nrhs is not checked here (callers word that;
 * for TAKES_O routines against muster_routine_outputs' b_cols). */
static inline int muster_routine_shape(int routine, int64_t n, int64_t nrhs, int64_t ldb,
                                       muster_shape_t *s) {
  unsigned takes = muster_routine_takes(routine);
  s->a_rows = s->a_cols = n;
  s->b_rows = s->x_rows = s->nrhs = 0;
  if (n < 1) return MUSTER_EINVAL;
  if (!(takes & MUSTER_TAKES_B)) return 0;
  s->b_rows = s->x_rows = n;
  s->nrhs = nrhs;
  if (takes & MUSTER_TAKES_O) {
    if (ldb < 1 || ldb > MUSTER_LAYOUT_MAX_N) return MUSTER_EINVAL;
    s->a_rows = ldb;
    s->b_rows = s->x_rows = nrhs > 0 ? ldb : 0;
    return 0;
  }
  if (takes & MUSTER_TAKES_M) {
    if (ldb < n) return MUSTER_EINVAL;
    s->a_rows = s->b_rows = ldb;
  }
  return 0;
}

/* ---- where the factors of geqrf, gesvd and polar go ------------------------------- */

/* The factors a MUSTER_TAKES_O routine returns (docs/factorizations.md). */
typedef enum muster_factor {
  MUSTER_FACTOR_NONE = 0,
  MUSTER_FACTOR_Q,  /* geqrf: Q, orthonormal columns                      */
  MUSTER_FACTOR_R,  /* geqrf: R, upper triangular (trapezoidal), zeros below */
  MUSTER_FACTOR_U,  /* gesvd: left singular vectors (columns)             */
  MUSTER_FACTOR_VH, /* gesvd: right singular vectors, as the rows of V^H  */
  MUSTER_FACTOR_UP, /* polar: the unitary factor U_p of A = U_p H          */
  MUSTER_FACTOR_H   /* polar: the Hermitian positive semidefinite factor H */
} muster_factor_t;

/* One factor written into B: column-major with leading dimension `rows`
 * (packed), starting at element `offset` of B (B itself is packed: ldb = m,
 * so B is one array of m * nrhs elements). */
typedef struct muster_part {
  int what;        /* muster_factor_t */
  int64_t rows, cols, offset;
} muster_part_t;

typedef struct muster_outputs {
  int64_t m, n, k;       /* A is m x n; k = min(m, n)                      */
  int a_holds;           /* factor that overwrites A (m x n, distributed
                            exactly as A), or NONE: A is left as it was    */
  int nparts;            /* factors in B, 0..2, in this order              */
  muster_part_t part[2];
  int64_t b_elems;       /* elements of B they fill                        */
  int64_t b_cols;        /* ceil(b_elems / m): the least nrhs (columns of B,
                            m rows each) the caller must give; 0: B unused */
  int64_t w_count;       /* reals written into W on every rank (gesvd: the
                            k singular values, descending), else 0         */
} muster_outputs_t;

static inline void muster__outputs_add(muster_outputs_t *o, int what, int64_t rows, int64_t cols) {
  muster_part_t *p = &o->part[o->nparts++];
  p->what = what;
  p->rows = rows;
  p->cols = cols;
  p->offset = o->b_elems;
  o->b_elems += rows * cols;
}

/* The one rule: the factor that has A's shape (m x n) overwrites A, where
 * it is distributed as A was; the others, small or square, are replicated
 * into B on every rank.
 *   geqrf         thin (default) and m >= n: A <- Q (m x n), B <- R (n x n)
 *                 m < n, or MUSTER_FULL_MATRICES: A <- R (m x n, zero below
 *                 its diagonal), B <- Q (m x m)
 *   gesvd         W <- the k singular values, descending
 *                 MUSTER_NO_VECTORS: nothing else (A left as it was, B unused)
 *                 thin, m >= n: A <- U (m x n), B <- V^H (n x n)
 *                 thin, m < n:  A <- V^H (m x n), B <- U (m x m)
 *                 MUSTER_FULL_MATRICES: A left as it was, B <- U (m x m)
 *                 then V^H (n x n)
 *   polar         A = U_p H: A <- U_p (m x n), B <- H (n x n)
 * 0, or MUSTER_EINVAL for another routine, m or n out of range, or a flag
 * the routine does not take (geqrf: FULL_MATRICES; gesvd: FULL_MATRICES,
 * NO_VECTORS; polar: none). */
static inline int muster_routine_outputs(int routine, unsigned flags, int64_t m, int64_t n,
                                         muster_outputs_t *o) {
  memset(o, 0, sizeof *o);
  if (!(muster_routine_takes(routine) & MUSTER_TAKES_O) || m < 1 || n < 1 ||
      m > MUSTER_LAYOUT_MAX_N || n > MUSTER_LAYOUT_MAX_N)
    return MUSTER_EINVAL;
  o->m = m;
  o->n = n;
  o->k = m < n ? m : n;
  int full = (flags & MUSTER_FULL_MATRICES) != 0;
  unsigned allowed = routine == MUSTER_GEQRF   ? MUSTER_FULL_MATRICES
                     : routine == MUSTER_GESVD ? MUSTER_FULL_MATRICES | MUSTER_NO_VECTORS
                                               : 0u;
  if (flags & ~allowed) return MUSTER_EINVAL;
  if (routine == MUSTER_GEQRF && !full && m >= n) {
    o->a_holds = MUSTER_FACTOR_Q;
    muster__outputs_add(o, MUSTER_FACTOR_R, n, n);
  } else if (routine == MUSTER_GEQRF) {
    o->a_holds = MUSTER_FACTOR_R;
    muster__outputs_add(o, MUSTER_FACTOR_Q, m, m);
  } else if (routine == MUSTER_POLAR) {
    o->a_holds = MUSTER_FACTOR_UP;
    muster__outputs_add(o, MUSTER_FACTOR_H, n, n);
  } else {
    o->w_count = o->k;
    if (flags & MUSTER_NO_VECTORS) {
    } else if (full) {
      muster__outputs_add(o, MUSTER_FACTOR_U, m, m);
      muster__outputs_add(o, MUSTER_FACTOR_VH, n, n);
    } else if (m >= n) {
      o->a_holds = MUSTER_FACTOR_U;
      muster__outputs_add(o, MUSTER_FACTOR_VH, n, n);
    } else {
      o->a_holds = MUSTER_FACTOR_VH;
      muster__outputs_add(o, MUSTER_FACTOR_U, m, m);
    }
  }
  o->b_cols = muster_ceil_div(o->b_elems, m);
  return 0;
}

/* 1 when the caller's A holds an output after the call: potrs's factor
 * (unless MUSTER_NO_FACTOR), potri's inverse, syevd's eigenvectors (unless
 * MUSTER_NO_VECTORS), the factor of geqrf, gesvd or polar that
 * muster_routine_outputs puts there; 0 when the routine leaves A as it was
 * (getrs, gels; gesvd with MUSTER_NO_VECTORS) or unspecified
 * (MUSTER_NO_FACTOR, syevd's MUSTER_NO_VECTORS), so nothing needs to
 * travel back into it (the one-node route's staging, a provider's
 * scatter).  m: A's rows (the factor routines'), else n. */
static inline int muster_routine_writes_a(int routine, unsigned flags, int64_t m, int64_t n) {
  muster_outputs_t o;
  switch (routine) {
  case MUSTER_POTRS: return !(flags & MUSTER_NO_FACTOR);
  case MUSTER_POTRI: return 1;
  case MUSTER_SYEVD: return !(flags & MUSTER_NO_VECTORS);
  case MUSTER_GETRS:
  case MUSTER_GELS: return 0;
  default: return muster_routine_outputs(routine, flags, m, n, &o) == 0 && o.a_holds != MUSTER_FACTOR_NONE;
  }
}

/* muster_routine_outputs for callers that cannot use an inline function
 * (ctypes): out[MUSTER_OUTPUTS_FLAT] gets a_holds, nparts, then part 0's and
 * part 1's what, rows, cols, offset, then b_cols, w_count.  Its return. */
#define MUSTER_OUTPUTS_FLAT 12
MUSTER_EXTERN int muster_routine_outputs_flat(int routine, unsigned flags, int64_t m, int64_t n,
                                              int64_t *out);

/* ---- copying ----------------------------------------------------------------- */

/* Copy `cols` columns of `rows` elements of `esz` bytes between column-major
 * buffers: one memcpy when both are packed (ld == rows), else one per column. */
static inline void muster_copy_cols(void *dst, int64_t ldd, const void *src, int64_t lds,
                                     int64_t rows, int64_t cols, size_t esz) {
  if (cols <= 0 || rows <= 0) return;
  if (ldd == rows && lds == rows) {
    memcpy(dst, src, (size_t)(rows * cols) * esz);
    return;
  }
  for (int64_t c = 0; c < cols; c++)
    memcpy((char *)dst + (size_t)(c * ldd) * esz, (const char *)src + (size_t)(c * lds) * esz,
           (size_t)rows * esz);
}

/* Zero rows [0, rows) of `cols` columns (rows past `rows` are left alone:
 * they may belong to the caller). */
static inline void muster_zero_cols(void *dst, int64_t ldd, int64_t rows, int64_t cols,
                                     size_t esz) {
  if (cols <= 0 || rows <= 0) return;
  if (ldd == rows) {
    memset(dst, 0, (size_t)(rows * cols) * esz);
    return;
  }
  for (int64_t c = 0; c < cols; c++)
    memset((char *)dst + (size_t)(c * ldd) * esz, 0, (size_t)rows * esz);
}

/* ---- 2-D block-cyclic: what collective providers see ---------------------------- */

/* How one rank holds its piece of an m x n matrix distributed 2-D
 * block-cyclically over a P x Q grid (ScaLAPACK's descriptor rules with the
 * first block on grid row 0 and column 0, RSRC = CSRC = 0): global block
 * (I, J) of mb x nb elements lives on grid row I % P, column J % Q, at local
 * block (I / P, J / Q), column-major with leading dimension lld.  Ranks are
 * numbered row-major over the grid: rank = myrow * Q + mycol.
 *
 * The 1-D layouts above are special cases: the block layout of R ranks is
 * P = 1, Q = R, mb >= m, nb = ceil(n/R); the 1-D cyclic layout with tile T
 * is P = 1, Q = R, mb >= m, nb = T. */
typedef struct muster_dist {
  int64_t m, n;        /* global rows and columns                          */
  int64_t mb, nb;      /* rows and columns of one block                    */
  int nprow, npcol;    /* grid P x Q                                       */
  int myrow, mycol;    /* this rank's place in the grid                    */
  int64_t lld;         /* local leading dimension, >= max(1, local rows)   */
} muster_dist_t;

/* Rows (or columns) of a dimension of `extent` elements in blocks of
 * `block` that grid row (column) `coord` of `nprocs` holds: ScaLAPACK's
 * NUMROC with the source at 0.  Assumes extent >= 0, block >= 1,
 * 0 <= coord < nprocs. */
static inline int64_t muster_layout_numroc(int64_t extent, int64_t block, int coord, int nprocs) {
  int64_t nblocks = extent / block;            /* whole blocks               */
  int64_t mine = (nblocks / nprocs) * block;   /* every coordinate's share   */
  int64_t extra = nblocks % nprocs;            /* one more whole block each  */
  if (coord < extra) mine += block;
  else if (coord == extra) mine += extent % block; /* the partial last block */
  return mine;
}

/* The dist of rank `rank` of nranks for the block layout of an n x n
 * matrix with leading dimension lda (P = 1, Q = nranks). */
static inline muster_dist_t muster_layout_block_dist(int64_t n, int nranks, int rank, int64_t lda) {
  muster_dist_t d;
  d.m = n;
  d.n = n;
  d.mb = n > 0 ? n : 1;
  d.nb = n > 0 ? muster_ceil_div(n, nranks) : 1;
  d.nprow = 1;
  d.npcol = nranks;
  d.myrow = 0;
  d.mycol = rank;
  d.lld = lda;
  return d;
}

/* The dist of rank `rank` for the 1-D cyclic layout with tile `tile`
 * (P = 1, Q = nranks, nb = tile). */
static inline muster_dist_t muster_layout_cyclic_dist(int64_t n, int64_t tile, int nranks, int rank,
                                                      int64_t lda) {
  muster_dist_t d = muster_layout_block_dist(n, nranks, rank, lda);
  d.nb = tile;
  return d;
}

#endif
