/* providers/cusolvermg/plan.c - block <-> cyclic copy plans (see plan.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "muster/layout.h"
#include "plan.h"

int64_t cmg_gcd64(int64_t a, int64_t b) {
  while (b) {
    int64_t t = a % b;
    a = b;
    b = t;
  }
  return a;
}

static int push_op(cmg_plan_t *p, cmg_place_t src, cmg_place_t dst, int64_t bytes) {
  if (bytes <= 0) return 0;
  if (p->nops == p->capops) {
    int64_t cap = p->capops ? 2 * p->capops : 64;
    cmg_op_t *o = realloc(p->ops, (size_t)cap * sizeof *o);
    if (!o) return -1;
    p->ops = o;
    p->capops = cap;
  }
  p->ops[p->nops++] = (cmg_op_t){src, dst, bytes};
  if (src.buf != CMG_ZERO) p->moved_bytes += bytes;
  return 0;
}

static int open_chain(cmg_plan_t *p, int rank, int staged) {
  if (p->nchains == p->capchains) {
    int64_t cap = p->capchains ? 2 * p->capchains : 16;
    cmg_chain_t *c = realloc(p->chains, (size_t)cap * sizeof *c);
    if (!c) return -1;
    p->chains = c;
    p->capchains = cap;
  }
  p->chains[p->nchains++] = (cmg_chain_t){rank, p->nops, 0, staged};
  return 0;
}

static void close_chain(cmg_plan_t *p) {
  cmg_chain_t *c = &p->chains[p->nchains - 1];
  c->count = p->nops - c->first;
  if (c->count == 0) p->nchains--; /* nothing to do: drop it */
}

void cmg_plan_free(cmg_plan_t *p) {
  if (!p) return;
  free(p->ops);
  free(p->chains);
  memset(p, 0, sizeof *p);
}

static cmg_place_t place(int buf, int rank, int64_t col, const cmg_plan_t *p) {
  return (cmg_place_t){buf, rank, col * p->lda * (int64_t)p->esz};
}

/* ---- copy plan: one op per run, WORK buffers ------------------------------- */

static int build_copy(cmg_plan_t *p, const muster_layout_geom_t *L, int dir) {
  muster_layout_iter_t it;
  muster_layout_run_t run;
  p->kind = CMG_PLAN_COPY;
  p->work_bytes = L->local_cols * p->lda * (int64_t)p->esz;
  for (muster_layout_iter_start(&it, L); muster_layout_iter_next(&it, &run);) {
    cmg_place_t blk = place(CMG_USER, run.blk_rank, run.blk_col, p);
    cmg_place_t cyc = place(CMG_WORK, run.cyc_rank, run.cyc_col, p);
    int64_t bytes = run.ncols * p->lda * (int64_t)p->esz;
    /* the destination's device pulls: its copy engines do the work */
    int rank = dir == CMG_TO_CYCLIC ? run.cyc_rank : run.blk_rank;
    if (open_chain(p, rank, 0) < 0) return -1;
    if (dir == CMG_TO_CYCLIC ? push_op(p, blk, cyc, bytes) : push_op(p, cyc, blk, bytes)) return -1;
    close_chain(p);
  }
  if (dir == CMG_TO_CYCLIC) /* cuSolverMg sees zeros in the padding columns */
    for (int r = 0; r < L->nranks; r++) {
      int64_t real = muster_layout_cyclic_real_cols(L, r);
      if (open_chain(p, r, 0) < 0) return -1;
      if (push_op(p, place(CMG_ZERO, r, 0, p), place(CMG_WORK, r, real, p),
                  (L->local_cols - real) * p->lda * (int64_t)p->esz))
        return -1;
      close_chain(p);
    }
  return 0;
}

/* ---- in-place plan: a permutation of u-column units ------------------------ */

typedef struct perm {
  int64_t u, nunits, per_rank; /* unit width, units, cells per rank     */
  int64_t *src_cell;           /* unit -> cell in the source layout     */
  int64_t *dst_cell;           /* unit -> cell in the destination one   */
  int64_t *occupant;           /* cell -> unit there now (source), -1   */
  int64_t *wanted;             /* cell -> unit it must receive, -1      */
} perm_t;

static void perm_free(perm_t *m) {
  free(m->src_cell);
  free(m->dst_cell);
  free(m->occupant);
  free(m->wanted);
}

static int perm_init(perm_t *m, const muster_layout_geom_t *L, int dir) {
  memset(m, 0, sizeof *m);
  m->u = cmg_gcd64(L->tile, L->block_cols);
  m->nunits = muster_ceil_div(L->n, m->u);
  int64_t width = L->block_cols > L->local_cols ? L->block_cols : L->local_cols;
  m->per_rank = muster_ceil_div(width, m->u);
  int64_t nslots = m->per_rank * L->nranks;
  m->src_cell = malloc((size_t)m->nunits * sizeof(int64_t));
  m->dst_cell = malloc((size_t)m->nunits * sizeof(int64_t));
  m->occupant = malloc((size_t)nslots * sizeof(int64_t));
  m->wanted = malloc((size_t)nslots * sizeof(int64_t));
  if (!m->src_cell || !m->dst_cell || !m->occupant || !m->wanted) return -1;
  for (int64_t s = 0; s < nslots; s++) m->occupant[s] = m->wanted[s] = -1;
  for (int64_t i = 0; i < m->nunits; i++) {
    int br, cr;
    int64_t bc, cc;
    muster_layout_block_owner(L, i * m->u, &br, &bc);
    muster_layout_cyclic_owner(L, i * m->u, &cr, &cc);
    int64_t bslot = br * m->per_rank + bc / m->u, cslot = cr * m->per_rank + cc / m->u;
    m->src_cell[i] = dir == CMG_TO_CYCLIC ? bslot : cslot;
    m->dst_cell[i] = dir == CMG_TO_CYCLIC ? cslot : bslot;
    m->occupant[m->src_cell[i]] = i;
    m->wanted[m->dst_cell[i]] = i;
  }
  return 0;
}

static cmg_place_t cell_place(const perm_t *m, const cmg_plan_t *p, int64_t cell) {
  return place(CMG_USER, (int)(cell / m->per_rank), (cell % m->per_rank) * m->u, p);
}

static int64_t unit_bytes(const perm_t *m, const cmg_plan_t *p, int64_t unit) {
  int64_t cols = p->n - unit * m->u < m->u ? p->n - unit * m->u : m->u;
  return cols * p->lda * (int64_t)p->esz;
}

static cmg_place_t shifted(cmg_place_t pl, int64_t by) {
  pl.off += by;
  return pl;
}

/* In-place chains go round robin over the ranks' devices (any stream can
 * run any copy), so every GPU's copy engines take part. */
static int chain_rank(const cmg_plan_t *p) { return (int)(p->nchains % p->nranks); }

/* Copy every unit along a path that starts at an empty cell: fill the hole
 * from the unit's source cell, which becomes the next hole.  The same path
 * applied to different byte ranges of the units is independent work, so
 * each range of `piece` bytes is its own chain (parallel streams). */
static int emit_path(cmg_plan_t *p, const perm_t *m, int64_t start, char *seen, int64_t piece) {
  int64_t longest = 0;
  for (int64_t hole = start; hole >= 0 && m->wanted[hole] >= 0;) {
    int64_t unit = m->wanted[hole];
    seen[hole] = 1;
    if (unit_bytes(m, p, unit) > longest) longest = unit_bytes(m, p, unit);
    hole = m->src_cell[unit];
    if (seen[hole]) break;
  }
  for (int64_t lo = 0; lo < longest; lo += piece) {
    if (open_chain(p, chain_rank(p), 0) < 0) return -1;
    /* start is empty, so no unit comes from it: the walk ends at a cell
     * that only gives (wanted < 0) */
    for (int64_t hole = start; m->wanted[hole] >= 0;) {
      int64_t unit = m->wanted[hole], from = m->src_cell[unit];
      int64_t n = unit_bytes(m, p, unit) - lo;
      if (n > piece) n = piece;
      if (push_op(p, shifted(cell_place(m, p, from), lo), shifted(cell_place(m, p, hole), lo), n)) return -1;
      hole = from;
    }
    close_chain(p);
  }
  return 0;
}

/* A cycle: park the first cell's unit (one piece at a time) in staging,
 * shift the others along, put the parked piece at the end.  Each piece is
 * its own chain, with the staging buffer of the stream it runs on. */
static int emit_cycle(cmg_plan_t *p, const perm_t *m, int64_t start, char *seen,
                      int64_t stage_cap) {
  int64_t longest = 0;
  for (int64_t hole = start;;) {
    int64_t unit = m->wanted[hole];
    seen[hole] = 1;
    if (unit_bytes(m, p, unit) > longest) longest = unit_bytes(m, p, unit);
    hole = m->src_cell[unit];
    if (hole == start) break;
  }
  int64_t piece = longest < stage_cap ? longest : stage_cap;
  if (piece > p->stage_bytes) p->stage_bytes = piece;
  cmg_place_t stage = {CMG_STAGE, 0, 0};
  for (int64_t lo = 0; lo < longest; lo += piece) {
    if (open_chain(p, chain_rank(p), 1) < 0) return -1;
    int64_t parked = m->occupant[start];
    int64_t len = unit_bytes(m, p, parked) - lo;
    if (len > piece) len = piece;
    if (push_op(p, shifted(cell_place(m, p, start), lo), stage, len)) return -1;
    for (int64_t hole = start;;) {
      int64_t unit = m->wanted[hole], from = m->src_cell[unit];
      cmg_place_t dst = shifted(cell_place(m, p, hole), lo);
      int64_t n = unit_bytes(m, p, unit) - lo;
      if (n > piece) n = piece;
      if (from == start) {
        if (push_op(p, stage, dst, n)) return -1;
        break;
      }
      if (push_op(p, shifted(cell_place(m, p, from), lo), dst, n)) return -1;
      hole = from;
    }
    close_chain(p);
  }
  return 0;
}

static int build_inplace(cmg_plan_t *p, const muster_layout_geom_t *L, int dir, int64_t stage_cap) {
  perm_t m;
  char *seen = NULL;
  int rc = -1;
  if (perm_init(&m, L, dir) < 0) goto out;
  int64_t nslots = m.per_rank * L->nranks;
  seen = calloc((size_t)nslots, 1);
  if (!seen) goto out;
  p->kind = CMG_PLAN_INPLACE;
  for (int64_t s = 0; s < nslots; s++) /* paths: start at cells empty now */
    if (m.occupant[s] < 0 && m.wanted[s] >= 0 && emit_path(p, &m, s, seen, stage_cap) < 0) goto out;
  for (int64_t s = 0; s < nslots; s++) {
    if (seen[s] || m.wanted[s] < 0 || m.wanted[s] == m.occupant[s]) continue;
    if (emit_cycle(p, &m, s, seen, stage_cap) < 0) goto out;
  }
  if (p->nops == 0) p->kind = CMG_PLAN_IDENTITY;
  rc = 0;
out:
  free(seen);
  perm_free(&m);
  return rc;
}

int cmg_plan_build(cmg_plan_t *p, const cmg_plan_req_t *req, char *why, size_t whylen) {
  muster_layout_geom_t L;
  memset(p, 0, sizeof *p);
  if (muster_layout_geom_init(&L, req->n, req->tile, req->nranks) < 0 || req->lda < req->n ||
      req->esz == 0 || !req->cap_cols) {
    snprintf(why, whylen, "relayout plan: bad shape n=%lld lda=%lld tile=%lld ranks=%d",
             (long long)req->n, (long long)req->lda, (long long)req->tile, req->nranks);
    return -1;
  }
  p->n = req->n;
  p->lda = req->lda;
  p->tile = req->tile;
  p->nranks = req->nranks;
  p->esz = req->esz;
  p->local_cols = L.local_cols;
  for (int r = 0; r < req->nranks; r++)
    if (req->cap_cols[r] < muster_layout_block_ncols(&L, r)) {
      snprintf(why, whylen, "relayout plan: rank %d holds %lld columns, block layout needs %lld",
               r, (long long)req->cap_cols[r], (long long)muster_layout_block_ncols(&L, r));
      return -1;
    }
  /* In place needs every rank's real cyclic columns to fit its buffer; the
   * padding columns past them are never touched by cuSolverMg (it bounds
   * every access by n), so they need no memory. */
  int fits = 1, identity = 1;
  for (int r = 0; r < req->nranks; r++)
    if (req->cap_cols[r] < muster_layout_cyclic_real_cols(&L, r)) fits = 0;
  muster_layout_iter_t it;
  muster_layout_run_t run;
  for (muster_layout_iter_start(&it, &L); muster_layout_iter_next(&it, &run);)
    if (run.blk_rank != run.cyc_rank || run.blk_col != run.cyc_col) identity = 0;
  int rc;
  if (identity) {
    p->kind = CMG_PLAN_IDENTITY;
    rc = 0;
  } else if (fits && req->force != CMG_PLAN_COPY) {
    rc = build_inplace(p, &L, req->direction, req->stage_cap > 0 ? req->stage_cap : (64 << 20));
  } else {
    rc = build_copy(p, &L, req->direction);
  }
  if (rc < 0) {
    cmg_plan_free(p);
    snprintf(why, whylen, "relayout plan: out of host memory");
    return -1;
  }
  return 0;
}

static char *host_place(const cmg_place_t *pl, void *const *user, void *const *work, void *stage) {
  switch (pl->buf) {
  case CMG_USER: return (char *)user[pl->rank] + pl->off;
  case CMG_WORK: return (char *)work[pl->rank] + pl->off;
  case CMG_STAGE: return (char *)stage + pl->off;
  default: return NULL;
  }
}

void cmg_plan_run_host(const cmg_plan_t *p, void *const *user, void *const *work, void *stage) {
  for (int64_t c = 0; c < p->nchains; c++)
    for (int64_t i = p->chains[c].first; i < p->chains[c].first + p->chains[c].count; i++) {
      const cmg_op_t *op = &p->ops[i];
      char *dst = host_place(&op->dst, user, work, stage);
      if (op->src.buf == CMG_ZERO)
        memset(dst, 0, (size_t)op->bytes);
      else
        memmove(dst, host_place(&op->src, user, work, stage), (size_t)op->bytes);
    }
}
