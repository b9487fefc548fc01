/* providers/cusolvermp/plan.c - grid, tile, redistribution plans and the
 * memory rule (plan.h).  Pure: unit-tested by including this file. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/env.h"
#include "plan.h"

int mp_layout_same(const mp_layout_t *a, const mp_layout_t *b) {
  if (a->m != b->m || a->n != b->n || a->nprow != b->nprow || a->npcol != b->npcol) return 0;
  /* one grid row: every row is local whatever the row block */
  if (a->nprow > 1 && a->mb != b->mb) return 0;
  if (a->npcol > 1 && a->nb != b->nb) return 0;
  return a->colmajor == b->colmajor || a->nprow == 1 || a->npcol == 1;
}

/* ---- grid, tile, panels ---------------------------------------------------------- */

int mp_grid_shape(muster_routine_t routine, int nranks, const char *env, int *nprow, int *npcol, char *why,
                  size_t len) {
  if (env) return prov_env_grid_of("MUSTER_MP_GRID", env, nranks, nprow, npcol, why, len);
  int p = 1;
  for (int d = 1; routine != MUSTER_GEQRF && (int64_t)d * d <= nranks; d++)
    if (nranks % d == 0) p = d;
  *nprow = p;
  *npcol = nranks / p;
  return 0;
}

int64_t mp_default_tile(muster_routine_t routine, int64_t n) {
  (void)routine;
  if (n < 1024) return 64;
  if (n < 4096) return 256;
  if (n < 16384) return 512;
  return 1024;
}

int mp_tile_resolve(muster_routine_t routine, int64_t n, int64_t args_tile, const char *env, int64_t *tile,
                    char *why, size_t len) {
  int64_t t = args_tile, v = 0;
  const char *from = "the call's tile";
  /* checked even when the call's tile wins: a bad value is never ignored */
  if (env && prov_env_int_of("MUSTER_MP_TILE", env, 1, MUSTER_LAYOUT_MAX_N, &v, why, len) < 0)
    return MUSTER_EINVAL;
  if (t <= 0 && env) {
    t = v;
    from = "MUSTER_MP_TILE";
  }
  if (t <= 0) t = mp_default_tile(routine, n);
  if (t > MUSTER_LAYOUT_MAX_N) {
    snprintf(why, len, "%s %" PRId64 " is too large", from, t);
    return MUSTER_ETILE;
  }
  if (mp_tile_pow2(routine) && (t & (t - 1)) != 0) {
    snprintf(why, len, "%s %" PRId64 " is not a power of two, which cuSOLVERMp's eigensolver needs (%s)", from, t,
             muster_routine_str(routine));
    return MUSTER_ETILE;
  }
  *tile = t;
  return 0;
}

int mp_potrs_panel(const mp_release_t *r, const char *env, int64_t nrhs, int64_t *panel, char *why, size_t len) {
  int64_t w = r ? r->potrs_nrhs : 1;
  if (env && !strcmp(env, "all")) {
    w = nrhs;
  } else if (env && !*env) {
    return prov_env_int_of("MUSTER_MP_POTRS_NRHS", env, 1, INT64_MAX, &w, why, len); /* empty */
  } else if (env && muster_scan_i64(env, strlen(env), 1, INT64_MAX, &w) < 0) {
    return prov_env_bad("MUSTER_MP_POTRS_NRHS", env, "is not a count (1 or more) or 'all'", why, len);
  }
  *panel = w < nrhs ? w : nrhs;
  if (*panel < 1) *panel = 1;
  return 0;
}

int mp_refused_grid(const mp_release_t *r, muster_routine_t routine, int nprow, int npcol, int qr_forced, char *why,
                    size_t len) {
  const char *rel = r ? r->label : "(version not known yet)";
  if ((routine == MUSTER_GESVD || routine == MUSTER_POLAR) && !(r && r->svd_polar)) {
    snprintf(why, len, "%s needs cuSOLVERMp 0.9.1 (cusolverMp%s); the one loaded is %s", muster_routine_str(routine),
             routine == MUSTER_GESVD ? "Gesvd" : "Polar", r ? r->label : "of a version not known yet");
    return MUSTER_EUNSUPPORTED;
  }
  if (routine == MUSTER_GEQRF && nprow * npcol > 1 && !(r && r->geqrf_grids) && !qr_forced) {
    snprintf(why, len, "geqrf on %d processes: cuSOLVERMp %s's Geqrf + Orgqr not yet seen right there "
             "(MUSTER_MP_QR_GRIDS=1 runs it to test them)", nprow * npcol, rel);
    return MUSTER_EUNSUPPORTED;
  }
  if (routine == MUSTER_GEQRF && nprow > 1 && !qr_forced) {
    snprintf(why, len, "geqrf on a %dx%d grid: cuSOLVERMp %s's QR was seen right on 1 x Q grids only (its Ormqr "
             "failed on 2x1); leave MUSTER_MP_GRID unset (geqrf's default grid is 1 x P), or set it to 1x%d "
             "(MUSTER_MP_QR_GRIDS=1 runs it to test)",
             nprow, npcol, rel, nprow * npcol);
    return MUSTER_EUNSUPPORTED;
  }
  if (routine == MUSTER_GELS && nprow * npcol > 1 && !(r && r->qr_grids) && !qr_forced) {
    snprintf(why, len, "gels on %d processes: cuSOLVERMp %s's QR is not known right there (0.8.0: wrong X)",
             nprow * npcol, rel);
    return MUSTER_EUNSUPPORTED;
  }
  if (routine == MUSTER_GETRS && nprow > 1 && npcol == 1 && !(r && r->lu_columns)) {
    snprintf(why, len, "getrs on a %dx1 grid: cuSOLVERMp %s's Getrf failed there (0.8.0); set MUSTER_MP_GRID to PxQ, "
             "Q > 1", nprow, rel);
    return MUSTER_EUNSUPPORTED;
  }
  return 0;
}

int mp_refused(const mp_release_t *r, const mp_shape_t *s, char *why, size_t len) {
  int rc = mp_refused_grid(r, s->routine, s->nprow, s->npcol, s->qr_forced, why, len);
  if (rc < 0) return rc;
  if (s->routine == MUSTER_POLAR && mp_rows(s) < s->n) {
    snprintf(why, len, "polar of a wide A (m %" PRId64 " < n %" PRId64 "): cuSOLVERMp's Polar takes m >= n only",
             mp_rows(s), s->n);
    return MUSTER_EUNSUPPORTED;
  }
  if (s->nonblocking && s->nprow * s->npcol > 1 && r && r->nonblocking_fails) {
    snprintf(why, len, "a non-blocking NCCL communicator (MUSTER_MP_NCCL_BLOCKING=0) on %d processes: cuSOLVERMp %s's "
             "solvers fail on one (CUSOLVER_STATUS_INTERNAL_ERROR); unset MUSTER_MP_NCCL_BLOCKING",
             s->nprow * s->npcol, r->label);
    return MUSTER_EUNSUPPORTED;
  }
  return 0;
}

/* ---- plans --------------------------------------------------------------------- */

/* Index lists of one dimension (rows or columns) of rank (src coordinate
 * sc, dst coordinate dc): for every peer coordinate, the local indices
 * sent (src side, bucketed by the destination coordinate) and received
 * (dst side, bucketed by the source coordinate).  Two passes: count, then
 * fill into pool at *off. */
typedef struct dim_lists {
  int64_t send_off[MUSTER_MAX_RANKS], send_len[MUSTER_MAX_RANKS];
  int64_t recv_off[MUSTER_MAX_RANKS], recv_len[MUSTER_MAX_RANKS];
} dim_lists_t;

static int64_t dim_count(int64_t extent, int64_t sb, int sp, int sc, int64_t db, int dp, int dc, dim_lists_t *d) {
  memset(d, 0, sizeof *d);
  for (int64_t g = 0; g < extent; g++) {
    int so = mp_owner(g, sb, sp), dow = mp_owner(g, db, dp);
    if (so == sc) d->send_len[dow]++;
    if (dow == dc) d->recv_len[so]++;
  }
  int64_t total = 0;
  for (int k = 0; k < MUSTER_MAX_RANKS; k++) total += d->send_len[k] + d->recv_len[k];
  return total;
}

static void dim_fill(int64_t extent, int64_t sb, int sp, int sc, int64_t db, int dp, int dc, dim_lists_t *d,
                     int64_t *pool, int64_t *off) {
  int64_t fill_s[MUSTER_MAX_RANKS], fill_r[MUSTER_MAX_RANKS];
  for (int k = 0; k < MUSTER_MAX_RANKS; k++) {
    d->send_off[k] = *off;
    *off += d->send_len[k];
    d->recv_off[k] = *off;
    *off += d->recv_len[k];
    fill_s[k] = fill_r[k] = 0;
  }
  for (int64_t g = 0; g < extent; g++) {
    int so = mp_owner(g, sb, sp), dow = mp_owner(g, db, dp);
    if (so == sc) pool[d->send_off[dow] + fill_s[dow]++] = mp_local_index(g, sb, sp);
    if (dow == dc) pool[d->recv_off[so] + fill_r[so]++] = mp_local_index(g, db, dp);
  }
}

static int layout_ok(const mp_layout_t *L, int nranks) {
  return L->m >= 1 && L->n >= 1 && L->mb >= 1 && L->nb >= 1 && L->nprow >= 1 && L->npcol >= 1 &&
         (int64_t)L->nprow * L->npcol == nranks && L->m <= MUSTER_LAYOUT_MAX_N && L->n <= MUSTER_LAYOUT_MAX_N;
}

int mp_plan_build(mp_plan_t *p, const mp_layout_t *src, const mp_layout_t *dst, int nranks, int rank) {
  memset(p, 0, sizeof *p);
  if (nranks < 1 || nranks > MUSTER_MAX_RANKS || rank < 0 || rank >= nranks || !layout_ok(src, nranks) ||
      !layout_ok(dst, nranks) || src->m != dst->m || src->n != dst->n)
    return MUSTER_EINVAL;
  p->nranks = nranks;
  p->rank = rank;
  p->src = *src;
  p->dst = *dst;
  int sr, sc, dr, dc;
  mp_coords(src, rank, &sr, &sc);
  mp_coords(dst, rank, &dr, &dc);
  dim_lists_t rows, cols;
  int64_t total = dim_count(src->m, src->mb, src->nprow, sr, dst->mb, dst->nprow, dr, &rows) +
                  dim_count(src->n, src->nb, src->npcol, sc, dst->nb, dst->npcol, dc, &cols);
  p->idx = malloc((size_t)(total > 0 ? total : 1) * sizeof(int64_t));
  if (!p->idx) return MUSTER_ENOMEM;
  p->nidx = total;
  int64_t off = 0;
  dim_fill(src->m, src->mb, src->nprow, sr, dst->mb, dst->nprow, dr, &rows, p->idx, &off);
  dim_fill(src->n, src->nb, src->npcol, sc, dst->nb, dst->npcol, dc, &cols, p->idx, &off);
  for (int q = 0; q < nranks; q++) {
    int qsr, qsc, qdr, qdc;
    mp_coords(src, q, &qsr, &qsc);
    mp_coords(dst, q, &qdr, &qdc);
    p->send_rows[q] = (mp_span_t){rows.send_off[qdr], rows.send_len[qdr]};
    p->send_cols[q] = (mp_span_t){cols.send_off[qdc], cols.send_len[qdc]};
    p->recv_rows[q] = (mp_span_t){rows.recv_off[qsr], rows.recv_len[qsr]};
    p->recv_cols[q] = (mp_span_t){cols.recv_off[qsc], cols.recv_len[qsc]};
  }
  return 0;
}

void mp_plan_free(mp_plan_t *p) {
  free(p->idx);
  p->idx = NULL;
  p->nidx = 0;
}

void mp_plan_reverse(const mp_plan_t *p, mp_plan_t *back) {
  *back = *p;
  back->src = p->dst;
  back->dst = p->src;
  memcpy(back->send_rows, p->recv_rows, sizeof back->send_rows);
  memcpy(back->send_cols, p->recv_cols, sizeof back->send_cols);
  memcpy(back->recv_rows, p->send_rows, sizeof back->recv_rows);
  memcpy(back->recv_cols, p->send_cols, sizeof back->recv_cols);
}

/* ---- memory -------------------------------------------------------------------- */

uint64_t mp_scratch_bytes(const mp_shape_t *s) {
  uint64_t col = (uint64_t)mp_rows(s) * muster_dtype_bytes(s->dtype);
  uint64_t want = s->scratch > 0 ? (uint64_t)s->scratch : 0;
  return want > 2 * col ? want : 2 * col;
}

uint64_t mp_workspace_bound(const mp_shape_t *s, int64_t lrows, int64_t lcols) {
  uint64_t esz = muster_dtype_bytes(s->dtype), T = (uint64_t)s->tile;
  uint64_t local = (uint64_t)lrows * (uint64_t)lcols * esz;
  uint64_t panel = (uint64_t)mp_rows(s) * T * esz; /* one block column of the matrix */
  uint64_t hn = (uint64_t)muster_layout_numroc(s->n, s->tile, 0, s->nprow) *
                (uint64_t)muster_layout_numroc(s->n, s->tile, 0, s->npcol) * esz; /* an n x n piece, at most */
  switch (s->routine) {
  case MUSTER_SYEVD: return 2 * local + 4 * panel + (64ull << 20);
  /* QDWH: QR of the stacked [A; I] ((m + n) x n) and its Q each iteration,
   * then (gesvd) syevd's on H */
  case MUSTER_POLAR: return 3 * (local + hn) + 4 * panel + (64ull << 20);
  case MUSTER_GESVD: return 3 * (local + hn) + 2 * hn + 8 * panel + (64ull << 20);
  default: return 2 * panel + (64ull << 20); /* potrf/s, getrf/s, geqrf, gels: panel buffers */
  }
}

void mp_need(const mp_shape_t *s, int row, int col, mp_need_t *need) {
  mp_layout_t L = mp_layout_solver(mp_rows(s), s->n, s->tile, s->nprow, s->npcol);
  uint64_t esz = muster_dtype_bytes(s->dtype);
  int64_t lr = mp_local_rows(&L, row), lc = mp_local_cols(&L, col);
  memset(need, 0, sizeof *need);
  uint64_t piece = (uint64_t)lr * (uint64_t)lc * esz;
  need->matrix = s->in_place ? 0 : piece;
  if (s->routine == MUSTER_SYEVD) need->vectors = piece + (uint64_t)s->n * muster_dtype_real_bytes(s->dtype);
  if (s->routine == MUSTER_GEQRF) { /* B's factor's piece; tau for A's or Q's columns */
    int64_t fr, fc;
    mp_qr_piece(s, row, col, &fr, &fc);
    need->vectors = (uint64_t)fr * (uint64_t)fc * esz;
    need->tau = (uint64_t)(fc > lc ? fc : lc) * esz;
  }
  if (s->routine == MUSTER_POTRS || s->routine == MUSTER_GETRS || s->routine == MUSTER_GELS) {
    mp_layout_t B = mp_layout_solver(mp_rows(s), s->nrhs, s->tile, s->nprow, s->npcol);
    need->rhs = (uint64_t)lr * (uint64_t)mp_local_cols(&B, col) * esz;
  }
  if (s->routine == MUSTER_GESVD || s->routine == MUSTER_POLAR) { /* U, V^H or H; S */
    mp_svd_dims_t d = mp_svd_dims(s);
    need->vectors = ((uint64_t)muster_layout_numroc(d.urows, s->tile, row, s->nprow) *
                         (uint64_t)muster_layout_numroc(d.ucols, s->tile, col, s->npcol) +
                     (uint64_t)muster_layout_numroc(d.vrows, s->tile, row, s->nprow) *
                         (uint64_t)muster_layout_numroc(d.vcols, s->tile, col, s->npcol)) * esz;
    if (s->routine == MUSTER_GESVD)
      need->vectors += (uint64_t)(mp_rows(s) < s->n ? mp_rows(s) : s->n) * muster_dtype_real_bytes(s->dtype);
  }
  if (s->routine == MUSTER_GETRS) need->pivots = (uint64_t)mp_pivot_count(&L, row) * sizeof(int64_t);
  if (s->routine == MUSTER_GELS) need->tau = (uint64_t)lc * esz;
  need->scratch = mp_scratch_bytes(s);
  need->workspace = mp_workspace_bound(s, lr, lc);
  need->total = need->matrix + need->vectors + need->rhs + need->pivots + need->tau + need->scratch +
                need->workspace + MP_FIXED_BYTES;
}

int mp_diag_tile(const mp_layout_t *L, int64_t t, int row, int col, int64_t *li, int64_t *lj, int64_t *w) {
  int64_t g = t * L->mb, n = L->m < L->n ? L->m : L->n;
  if (t < 0 || g >= n || mp_owner(g, L->mb, L->nprow) != row || mp_owner(g, L->nb, L->npcol) != col) return 0;
  *li = mp_local_index(g, L->mb, L->nprow);
  *lj = mp_local_index(g, L->nb, L->npcol);
  *w = n - g < L->mb ? n - g : L->mb;
  return 1;
}
