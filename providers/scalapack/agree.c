/*
 * providers/scalapack/agree.c - every rank returns the same code.
 *
 * A rank that found a problem (a bad argument, NaN in its piece, no memory)
 * must not simply return: its peers would wait in the next collective
 * forever.  So at each agreement point every rank publishes its verdict
 * through the bootstrap's allgather (a few hundred bytes, the way the
 * runtime meant it: muster_bootstrap_t), and every rank decides from the
 * same table with the same rule, so all go on or all return the same code
 * and the same words.  The first point also carries the facts the ranks
 * must share (arguments, grid, tile, layout, cache state): a rank that
 * disagrees makes every rank return MUSTER_EMISMATCH naming it.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/agree.h"
#include "slInt.h"

/* What every rank must agree on.  Fixed-size fields only: it travels. */
typedef struct facts {
  int32_t routine, dtype;
  int64_t n, nrhs, tile;
  uint32_t flags;
  int32_t nprow, npcol;     /* the provider's grid */
  int64_t dm, dn, dmb, dnb; /* the caller's layout */
  int32_t dprow, dpcol;
  int32_t size;     /* bootstrap size */
  int32_t cached;   /* communicators cached for this key */
  int32_t complete; /* arguments valid and grid chosen: a rank
                       that failed before has no facts to compare
                       (its own failure is reported instead) */
} facts_t;

typedef struct vote {
  int32_t code, order;
  int64_t row, col;
  facts_t facts;
  char what[160];
} vote_t;

static void fill_facts(const sl_call_t *s, facts_t *f) {
  const muster_solve_args_t *a = s->args;
  const muster_dist_t *d = &s->cc->dist;
  memset(f, 0, sizeof *f);
  f->routine = (int32_t)a->routine;
  f->dtype = (int32_t)a->dtype;
  f->n = a->n;
  f->nrhs = sl_takes_b(s) ? a->nrhs : 0;
  f->tile = s->tile;
  f->flags = a->flags;
  f->nprow = s->nprow;
  f->npcol = s->npcol;
  f->dm = d->m;
  f->dn = d->n;
  f->dmb = d->mb;
  f->dnb = d->nb;
  f->dprow = d->nprow;
  f->dpcol = d->npcol;
  f->size = s->size;
  f->cached = s->cached;
  f->complete = s->planned;
}

/* The first field where f differs from f0 (rank r0's), in words: 1, or 0 if none. */
static int differ(const facts_t *f0, const facts_t *f, int r0, char *out, size_t len) {
#define SL_CMP(field, name)                                                                  \
  if (f->field != f0->field) {                                                               \
    snprintf(out, len, "%s %" PRId64 " (rank %d: %" PRId64 ")", name, (int64_t)f->field, r0, \
             (int64_t)f0->field);                                                            \
    return 1;                                                                                \
  }
  SL_CMP(size, "bootstrap size")
  SL_CMP(routine, "routine")
  SL_CMP(dtype, "dtype")
  SL_CMP(n, "n")
  SL_CMP(nrhs, "nrhs")
  SL_CMP(flags, "flags")
  SL_CMP(nprow, "grid rows (MUSTER_SCALAPACK_GRID?)")
  SL_CMP(npcol, "grid columns (MUSTER_SCALAPACK_GRID?)")
  SL_CMP(tile, "tile")
  SL_CMP(dm, "dist.m")
  SL_CMP(dn, "dist.n")
  SL_CMP(dmb, "dist.mb")
  SL_CMP(dnb, "dist.nb")
  SL_CMP(dprow, "dist.nprow")
  SL_CMP(dpcol, "dist.npcol")
  SL_CMP(cached, "cached communicators (release_comms called on some ranks only?)")
#undef SL_CMP
  return 0;
}

/* Does failure b go before failure a?  Lower order first (arguments, then
 * NaN in A, in B, in the result), then the first place in column order (as
 * the lapack provider reports it), then the lower rank. */
static int before(const vote_t *b, int rb, const vote_t *a, int ra) {
  if (b->order != a->order) return b->order < a->order;
  if (b->col != a->col) return b->col < a->col;
  if (b->row != a->row) return b->row < a->row;
  return rb < ra;
}

int sl_agree(sl_call_t *s, const sl_verdict_t *mine, int first) {
  const muster_bootstrap_t *boot = s->cc->boot;
  vote_t me;
  memset(&me, 0, sizeof me);
  me.code = mine->code;
  me.order = mine->order;
  me.row = mine->code ? mine->row : -1;
  me.col = mine->code ? mine->col : -1;
  fill_facts(s, &me.facts);
  snprintf(me.what, sizeof me.what, "%s", mine->code ? mine->what : "");
  vote_t *all;
  char berr[320];
  int rc = muster__agree_gather(boot, &me, sizeof me, (void **)&all, "agreeing on the call", berr, sizeof berr);
  if (rc < 0) return sl_err(s, rc, "%s", berr);
  int bad = -1;
  char why[200];
  int ref = 0; /* compare with the first rank whose facts are complete */
  while (ref < s->size && !all[ref].facts.complete) ref++;
  for (int r = ref + 1; first && r < s->size; r++)
    if (all[r].facts.complete && all[r].facts.cached != all[ref].facts.cached) s->cache_split = 1;
  for (int r = ref + 1; first && r < s->size; r++) {
    if (all[r].facts.complete && differ(&all[ref].facts, &all[r].facts, ref, why, sizeof why)) {
      rc = sl_err(s, MUSTER_EMISMATCH, "ranks disagree: rank %d has %s", r, why);
      free(all);
      return rc;
    }
  }
  for (int r = 0; r < s->size; r++)
    if (all[r].code && (bad < 0 || before(&all[r], r, &all[bad], bad))) bad = r;
  if (bad >= 0) {
    int code = all[bad].code < 0 ? all[bad].code : MUSTER_EPROVIDER;
    all[bad].what[sizeof all[bad].what - 1] = '\0'; /* it came from another process */
    rc = sl_err(s, code, "rank %d: %s", bad, all[bad].what);
  }
  free(all);
  return bad >= 0 ? rc : 0;
}
