/* providers/cusolverdn/factplan.c - the factor buffer's plan (factplan.h). */
#include <string.h>

#include "factplan.h"

/* The next part of rows x cols elements: its offset. */
static int64_t take(dn_fplan_t *p, int64_t rows, int64_t cols) {
  int64_t at = p->fac_elems;
  p->fac_elems += rows * cols;
  return at;
}

/* gesvd and polar: the SVD's parts, then (wide) T, U', V'^H. */
static void plan_svd(dn_fplan_t *p, int vectors, int full) {
  int64_t m = p->o.m, n = p->o.n, k = p->o.k;
  p->wide = m < n;
  p->sm = p->wide ? n : m;
  p->sn = p->wide ? m : n;
  p->jobu = p->jobvt = !vectors ? 'N' : full ? 'A' : 'S';
  p->ucols = !vectors ? 0 : full ? m : k;
  p->vrows = !vectors ? 0 : full ? n : k;
  if (vectors) {
    p->u_at = take(p, m, p->ucols);
    p->vt_at = take(p, p->vrows, n);
  }
  if (p->o.a_holds == MUSTER_FACTOR_UP) { /* polar: H and S V^H after them */
    p->h_at = take(p, n, n);
    p->sv_at = take(p, k, n);
  }
  if (!p->wide) return;
  p->t_at = take(p, n, m);
  if (vectors) {
    /* A^H is n x m, tall: its U' has the rows of A's V^H as columns (n x
     * vrows), its V'^H is ucols x m (always m x m: ucols is m either way) */
    p->x1_at = take(p, n, p->vrows);
    p->x2_at = take(p, p->ucols, m);
  }
}

int dn_factor_plan(int routine, unsigned flags, int64_t m, int64_t n, dn_fplan_t *p) {
  memset(p, 0, sizeof *p);
  p->u_at = p->vt_at = p->h_at = p->sv_at = p->t_at = p->x1_at = p->x2_at = -1;
  if (muster_routine_outputs(routine, flags, m, n, &p->o) < 0) return MUSTER_EINVAL;
  p->a_ld = m;
  if (routine == MUSTER_GEQRF) { /* fac: B's one factor; A's is made in mat */
    p->b_at = take(p, p->o.part[0].rows, p->o.part[0].cols);
    return 0;
  }
  plan_svd(p, p->o.a_holds != MUSTER_FACTOR_NONE || p->o.nparts > 0, p->o.nparts == 2);
  switch (p->o.a_holds) {
  case MUSTER_FACTOR_U: /* thin, tall: U (m x n) is A's, V^H (n x n) B's */
    p->a_in_fac = 1;
    p->a_at = p->u_at;
    p->b_at = p->vt_at;
    break;
  case MUSTER_FACTOR_VH: /* thin, wide: V^H (m x n, ld k = m) is A's, U (m x m) B's */
    p->a_in_fac = 1;
    p->a_at = p->vt_at;
    p->b_at = p->u_at;
    break;
  case MUSTER_FACTOR_UP: /* polar: U_p in mat, H in B */
    p->b_at = p->h_at;
    break;
  default: /* full vectors: U then V^H, B's two parts; values only: none */
    p->b_at = p->o.nparts ? p->u_at : 0;
    break;
  }
  return 0;
}
