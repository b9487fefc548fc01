/*
 * providers/cusolvermp/plan.h - the host arithmetic of a cusolvermp call:
 * 2-D block-cyclic layouts, the grid and tile it runs with, the
 * redistribution plan between the caller's layout and cuSOLVERMp's, and
 * the memory a call needs (plan.c).  Pure C on host numbers: no CUDA, no
 * NCCL, so all of it is unit-tested on any machine
 * (tests/unit/test_mp_plan.c links plan.c's host object and runs the plans on host
 * buffers for many layouts; test_mp_rules.c checks the grid, tile and memory rules).
 *
 * Layouts.  An m x n matrix in mb x nb blocks over a P x Q grid, the first
 * block on grid row 0 and column 0 (RSRC = CSRC = 0, the only source
 * cuSOLVERMp takes): global block (I, J) lives on grid (I % P, J % Q).  The
 * caller's layout (muster_dist_t) numbers ranks row-major over its grid;
 * cuSOLVERMp numbers them column-major (CUSOLVERMP_GRID_MAPPING_COL_MAJOR,
 * the only mapping it supports): rank = row + col * P.  The two agree when
 * P or Q is 1.
 *
 * Redistribution.  Because ownership factors into a row rule and a column
 * rule, the entries rank a holds in one layout and rank b in the other are
 * a Cartesian product of a row set and a column set.  A plan lists, for
 * every peer, the local row and column indices this rank sends (in the
 * source layout) and receives (in the destination layout), in increasing
 * global order on both sides, so sender and receiver agree on the packed
 * order without exchanging anything.  The index lists take O(m + n)
 * integers per rank whatever the number of ranks.  The transfer to one
 * peer is cut into column chunks of at most `cap` elements (bounded
 * scratch); both sides compute the same chunks.
 */
#ifndef MUSTER_MP_PLAN_H
#define MUSTER_MP_PLAN_H

#include <stdint.h>

#include "muster.h"
#include "muster/layout.h"
#include "version.h"

/* ---- layouts ------------------------------------------------------------------ */

typedef struct mp_layout {
  int64_t m, n, mb, nb;
  int nprow, npcol;
  int colmajor; /* 1: rank = row + col * P (cuSOLVERMp); 0: row * Q + col (muster_dist_t) */
} mp_layout_t;

/* The caller's layout from its muster_dist_t (row-major). */
static inline mp_layout_t mp_layout_of_dist(const muster_dist_t *d) {
  mp_layout_t L = {d->m, d->n, d->mb, d->nb, d->nprow, d->npcol, 0};
  return L;
}

/* cuSOLVERMp's layout of an m x n matrix: tile x tile blocks on P x Q. */
static inline mp_layout_t mp_layout_solver(int64_t m, int64_t n, int64_t tile, int nprow, int npcol) {
  mp_layout_t L = {m, n, tile, tile, nprow, npcol, 1};
  return L;
}

static inline void mp_coords(const mp_layout_t *L, int rank, int *row, int *col) {
  if (L->colmajor) {
    *row = rank % L->nprow;
    *col = rank / L->nprow;
  } else {
    *row = rank / L->npcol;
    *col = rank % L->npcol;
  }
}

/* The grid row (column) holding global row (column) g in blocks of b over np. */
static inline int mp_owner(int64_t g, int64_t b, int np) { return (int)((g / b) % np); }
/* Its local index there. */
static inline int64_t mp_local_index(int64_t g, int64_t b, int np) { return (g / (b * np)) * b + g % b; }

/* Local rows and columns of the rank at grid (row, col). */
static inline int64_t mp_local_rows(const mp_layout_t *L, int row) {
  return muster_layout_numroc(L->m, L->mb, row, L->nprow);
}
static inline int64_t mp_local_cols(const mp_layout_t *L, int col) {
  return muster_layout_numroc(L->n, L->nb, col, L->npcol);
}

/* The same layout (the same owner and local place for every entry: a
 * plan would copy each rank onto itself). */
MP_HIDDEN int mp_layout_same(const mp_layout_t *a, const mp_layout_t *b);

/* ---- the grid, the tile, potrs' panels ------------------------------------------- */

/* The routines the provider runs (estimate() and the solve refuse others;
 * cusolvermp.c's routine bits say the same). */
static inline int mp_runs(muster_routine_t r) {
  return r == MUSTER_POTRS || r == MUSTER_SYEVD || r == MUSTER_GETRS || r == MUSTER_GELS || r == MUSTER_GEQRF ||
         r == MUSTER_GESVD || r == MUSTER_POLAR;
}

/* Routines whose tile must be a power of two: syevd, and gesvd, whose
 * Gesvd ends in cuSOLVERMp's Hermitian eigensolver (cusolverMpStedc's
 * documented limitation). */
static inline int mp_tile_pow2(muster_routine_t r) { return r == MUSTER_SYEVD || r == MUSTER_GESVD; }

/* P x Q for nranks: env ("PxQ" with P * Q = nranks, from MUSTER_MP_GRID)
 * when not NULL or empty, else the most square P <= Q, except for geqrf:
 * 1 x nranks (the only grids on which cuSOLVERMp 0.8's QR was seen right,
 * mp_refused).  0, or MUSTER_EINVAL with the reason in why. */
MP_HIDDEN int mp_grid_shape(muster_routine_t routine, int nranks, const char *env, int *nprow, int *npcol,
                            char *why, size_t len);

/* The tile when neither the caller nor MUSTER_MP_TILE gives one: a power of
 * two (cuSOLVERMp's eigensolver may fail on other block sizes) growing
 * with n: 64 below n = 1024, 256 below 4096, 512 below 16384, then 1024.
 * Not measured yet: tests/gpu/run-mp-tests.sh's benchmark prints a sweep. */
MP_HIDDEN int64_t mp_default_tile(muster_routine_t routine, int64_t n);

/* The tile of a call: the caller's (args_tile > 0), else env (MUSTER_MP_TILE,
 * NULL or empty: none), else mp_default_tile.  syevd refuses a tile that is
 * not a power of two (MUSTER_ETILE: cusolverMpStedc's documented
 * limitation).  0, or a code with why. */
MP_HIDDEN int mp_tile_resolve(muster_routine_t routine, int64_t n, int64_t args_tile, const char *env,
                              int64_t *tile, char *why, size_t len);

/* Right-hand sides per cusolverMpPotrs: env (MUSTER_MP_POTRS_NRHS: a count,
 * or "all") else the release's documented limit (r NULL: 1); never more
 * than nrhs.  0, or MUSTER_EINVAL with why. */
MP_HIDDEN int mp_potrs_panel(const mp_release_t *r, const char *env, int64_t nrhs, int64_t *panel, char *why,
                             size_t len);

/* Does release r (NULL: not known yet) run `routine` on an nprow x npcol
 * grid?  0, or MUSTER_EUNSUPPORTED with the reason in why: gesvd and
 * polar anywhere unless the release has Gesvd and Polar (0.9: svd_polar;
 * "needs cuSOLVERMp 0.9.1"); gels (geqrf) on
 * more than one process where the release's QR (its Geqrf + Orgqr) was not
 * seen right there, unless qr_forced (MUSTER_MP_QR_GRIDS=1: a test of the
 * release); getrs on a P x 1 grid (P > 1) where its Getrf was not
 * (version.c's table says what was seen).  estimate() and the solve both
 * ask, so the engine choice passes over cusolvermp and a forced call is
 * refused before any NCCL traffic. */
MP_HIDDEN int mp_refused_grid(const mp_release_t *r, muster_routine_t routine, int nprow, int npcol,
                              int qr_forced, char *why, size_t len);

/* ---- getrs and log det ---------------------------------------------------------- */

/* getrs leaves the caller's A as it was unless MUSTER_NO_FACTOR (muster.h):
 * it then factors cuSOLVERMp's own copy, even when the layouts agree.
 * gels always does: the caller's A is an input (muster.h), and gels.c
 * zeroes the reflectors under R in the copy.  geqrf too: its factors are
 * made in the copy and reach the caller's A and B only once every rank
 * found them finite (qr.c), so a failure writes nothing. */
/* gesvd and polar too: Gesvd destroys its A, and both factors reach the
 * caller only once found finite (svd.c). */
static inline int mp_factors_a_copy(muster_routine_t routine, unsigned flags) {
  return routine == MUSTER_GELS || routine == MUSTER_GEQRF || routine == MUSTER_GESVD || routine == MUSTER_POLAR ||
         (routine == MUSTER_GETRS && !(flags & MUSTER_NO_FACTOR));
}

/* Row pivots getrf writes on grid row `row`: its local rows plus one tile
 * (ScaLAPACK's rule for IPIV, which cuSOLVERMp follows). */
static inline int64_t mp_pivot_count(const mp_layout_t *L, int row) { return mp_local_rows(L, row) + L->mb; }

/* Diagonal tile t (global rows and columns [t*mb, t*mb + w), square
 * tiles: mb == nb) of layout L: 1 when grid (row, col) holds it, with its
 * first local row and column in *li, *lj and its width in *w; else 0. */
MP_HIDDEN int mp_diag_tile(const mp_layout_t *L, int64_t t, int row, int col, int64_t *li, int64_t *lj, int64_t *w);

/* ---- redistribution plans ------------------------------------------------------ */

typedef struct mp_span {
  int64_t off, len; /* into mp_plan_t.idx */
} mp_span_t;

typedef struct mp_plan {
  int nranks, rank;
  mp_layout_t src, dst;
  int64_t *idx;   /* every index list, one allocation (uploaded as is)       */
  int64_t nidx;
  /* by peer rank: the local rows / columns of src this rank sends to it,
   * and the local rows / columns of dst it receives from it */
  mp_span_t send_rows[MUSTER_MAX_RANKS], send_cols[MUSTER_MAX_RANKS];
  mp_span_t recv_rows[MUSTER_MAX_RANKS], recv_cols[MUSTER_MAX_RANKS];
} mp_plan_t;

/* Plan rank's part of moving an m x n matrix from src to dst over nranks
 * ranks (both layouts of the same m x n, each with nprow * npcol =
 * nranks).  0, MUSTER_EINVAL for layouts that do not fit, or MUSTER_ENOMEM. */
MP_HIDDEN int mp_plan_build(mp_plan_t *p, const mp_layout_t *src, const mp_layout_t *dst, int nranks, int rank);
MP_HIDDEN void mp_plan_free(mp_plan_t *p);

/* The plan of the way back (dst to src): the same lists, send and receive
 * swapped.  Shares p's idx (do not free it). */
MP_HIDDEN void mp_plan_reverse(const mp_plan_t *p, mp_plan_t *back);

/* Columns per chunk when rows x cols elements go through cap elements of
 * scratch: at least 1, at most cols. */
static inline int64_t mp_chunk_cols(int64_t rows, int64_t cols, int64_t cap) {
  int64_t k = rows > 0 ? cap / rows : cols;
  if (k < 1) k = 1;
  return k < cols ? k : cols;
}
static inline int64_t mp_nchunks(int64_t rows, int64_t cols, int64_t cap) {
  if (rows <= 0 || cols <= 0) return 0;
  int64_t k = mp_chunk_cols(rows, cols, cap);
  return (cols + k - 1) / k;
}

/* ---- memory -------------------------------------------------------------------- */

/* One call's shape as estimate() and collective_solve() both see it. */
typedef struct mp_shape {
  muster_routine_t routine;
  muster_dtype_t dtype;
  int64_t n, nrhs;
  unsigned flags;
  int nprow, npcol;
  int64_t tile;
  int64_t scratch;  /* relayout scratch bytes (MUSTER_MP_SCRATCH_MB)        */
  int in_place;     /* A stays in the caller's buffer (no 2-D copy)         */
  int64_t m;        /* rows of A and B: gels's and geqrf's m
                       (muster_routine_shape), else n; 0 is read as n
                       (mp_rows)                                           */
  int qr_forced;    /* MUSTER_MP_QR_GRIDS=1 (mp_refused)                    */
  int nonblocking;  /* MUSTER_MP_NCCL_BLOCKING=0 (mp_refused)               */
} mp_shape_t;

/* Does release r refuse the call of shape s?  mp_refused_grid's rules on
 * s's routine and grid, then: polar of a wide A (m < n: cuSOLVERMp's
 * Polar takes m >= n; estimate() sees m = n, the solve the caller's m);
 * a non-blocking communicator
 * (s->nonblocking) on more than one process where the release's solvers
 * were seen failing on one (version.c's nonblocking_fails).  0, or
 * MUSTER_EUNSUPPORTED with the reason in why. */
MP_HIDDEN int mp_refused(const mp_release_t *r, const mp_shape_t *s, char *why, size_t len);

/* The rows of the call's A (gels: m >= n; geqrf: m, tall or wide; every
 * other routine: n). */
static inline int64_t mp_rows(const mp_shape_t *s) { return s->m > 0 ? s->m : s->n; }

/* geqrf's second factor, the one B gets (muster_routine_outputs' part 0:
 * thin with m >= n, R n x n; else Q m x m), as cuSOLVERMp's layout holds it
 * on grid (row, col) (qr.c keeps it in the communicator's MP_BUF_Q): its
 * local rows and columns; 0, 0 for flags geqrf does not take. */
static inline void mp_qr_piece(const mp_shape_t *s, int row, int col, int64_t *rows, int64_t *cols) {
  muster_outputs_t o;
  *rows = *cols = 0;
  if (muster_routine_outputs(MUSTER_GEQRF, s->flags, mp_rows(s), s->n, &o) < 0) return;
  *rows = muster_layout_numroc(o.part[0].rows, s->tile, row, s->nprow);
  *cols = muster_layout_numroc(o.part[0].cols, s->tile, col, s->npcol);
}

/* gesvd's U (m x k thin, m x m full) and V^H (k x n, n x n), polar's H
 * (n x n, in the V^H slot; U_p overwrites cuSOLVERMp's copy of A): their
 * global rows and columns (svd.c keeps U in MP_BUF_Q, V^H or H in
 * MP_BUF_B), 0 x 0 where none is computed (values only, polar's U). */
typedef struct mp_svd_dims {
  int64_t urows, ucols, vrows, vcols;
} mp_svd_dims_t;
static inline mp_svd_dims_t mp_svd_dims(const mp_shape_t *s) {
  mp_svd_dims_t d = {0, 0, 0, 0};
  int64_t m = mp_rows(s), n = s->n, k = m < n ? m : n;
  if (s->routine == MUSTER_POLAR) {
    d.vrows = d.vcols = n;
  } else if (s->routine == MUSTER_GESVD && !(s->flags & MUSTER_NO_VECTORS)) {
    int full = (s->flags & MUSTER_FULL_MATRICES) != 0;
    d.urows = m;
    d.ucols = full ? m : k;
    d.vrows = full ? n : k;
    d.vcols = n;
  }
  return d;
}

/* Device bytes the call needs on grid (row, col), beyond the caller's own
 * buffers: cuSOLVERMp's copy of A (m x n: gels's and geqrf's m rows), the
 * eigenvectors (syevd), geqrf's second factor (mp_qr_piece), gesvd's U and
 * V^H or polar's H (mp_svd_dims) and gesvd's singular values, this rank's
 * piece of B (potrs, getrs: n x nrhs; gels: m x nrhs), getrs's pivots,
 * gels's and geqrf's Householder scalars, the relayout scratch, the eigenvalues, the
 * workspace bound and MP_FIXED_BYTES for NCCL's and cuSOLVERMp's own
 * allocations. */
typedef struct mp_need {
  uint64_t matrix, vectors, rhs, scratch, workspace, total;
  uint64_t pivots; /* getrs: this rank's row pivots (int64)               */
  uint64_t tau;    /* gels, geqrf: this rank's Householder scalars (one a
                      local column of A, or of Q m x m)                   */
} mp_need_t;
MP_HIDDEN void mp_need(const mp_shape_t *s, int row, int col, mp_need_t *need);
#define MP_FIXED_BYTES (512ull << 20)

/* Upper bound of cuSOLVERMp's device workspace for the routine on a local
 * piece of lrows x lcols (checked against its _bufferSize on the GPUs by
 * tests/gpu/mp_test.c). */
MP_HIDDEN uint64_t mp_workspace_bound(const mp_shape_t *s, int64_t lrows, int64_t lcols);

/* Scratch bytes a relayout and potrs' X exchange use: the setting, but at
 * least two columns of the matrix (m rows: one chunk each way). */
MP_HIDDEN uint64_t mp_scratch_bytes(const mp_shape_t *s);

#endif
