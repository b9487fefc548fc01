/*
 * providers/scalapack/factors.c - what geqrf, gesvd and polar share (their
 * plan, result check and write-back), and geqrf itself on the provider's
 * P x Q copy of A (m x n, tall or wide): pXgeqrf, then Q explicitly with
 * pXorgqr / pXungqr.  Where the factors go is muster_routine_outputs
 * (muster/layout.h): for geqrf thin and m >= n, Q over A and R (n x n)
 * into B; else R (m x n, zero below its diagonal) over A and Q (m x m)
 * into B.  On the grid, A's factor is in s->A (geqrf) or s->B (gesvd,
 * polar: svd.c), B's in s->Z; B's reaches every rank's b through rank 0
 * (pXgemr2d into rank 0's b, then a BLACS broadcast), as X does
 * (redist.c).  pXgesvd computes thin vectors only, so gesvd with
 * MUSTER_FULL_MATRICES is refused here (lapack runs it).  A rank-deficient
 * A is no error.  ScaLAPACK's info is global, so no agreement is needed
 * after the calls (routines.c says why).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/finite.h"
#include "muster/layout.h"
#include "slInt.h"

static const sl_int ONE = 1, TWO = 2, QUERY = -1;

int sl_factors(const sl_call_t *s) {
  return (muster_routine_takes(s->args->routine) & MUSTER_TAKES_O) != 0;
}

static void outputs(const sl_call_t *s, muster_outputs_t *o) {
  muster_routine_outputs(s->args->routine, s->args->flags, s->m, s->args->n, o); /* checked in plan */
}

int sl_factors_plan(sl_call_t *s, sl_verdict_t *v) {
  const muster_shard_t *me = s->cc->mine;
  muster_outputs_t o;
  v->order = SL_ORDER_ARGS;
  if (muster_routine_outputs(s->args->routine, s->args->flags, s->m, s->args->n, &o) < 0) {
    snprintf(v->what, sizeof v->what, "flags 0x%x not taken by %s", s->args->flags,
             muster_routine_str(s->args->routine));
    return v->code = MUSTER_EINVAL;
  }
  if (s->args->nrhs < o.b_cols || (o.b_cols && (!me->b || me->ldb != s->m))) {
    snprintf(v->what, sizeof v->what, "B needs %" PRId64 " columns of m=%" PRId64 " rows (packed, "
             "ldb = m) for its factors; nrhs=%" PRId64 ", b %s", o.b_cols, s->m, s->args->nrhs,
             me->b ? "given" : "NULL");
    return v->code = MUSTER_EINVAL;
  }
  if (o.nparts > 1) {
    snprintf(v->what, sizeof v->what, "pXgesvd computes thin vectors only: the full U and V^H "
             "(MUSTER_FULL_MATRICES) are the lapack provider's");
    return v->code = MUSTER_EUNSUPPORTED;
  }
  int own_a = o.a_holds && s->args->routine != MUSTER_GEQRF;
  if ((o.nparts && sl_mat_alloc(s, &s->Z, o.part[0].rows, o.part[0].cols) < 0) ||
      (own_a && sl_mat_alloc(s, &s->B, s->m, s->args->n) < 0) ||
      (o.w_count && !(s->w = calloc((size_t)o.w_count, sizeof(double))))) {
    snprintf(v->what, sizeof v->what, "cannot allocate the factors (%" PRId64 " x %" PRId64 ")",
             s->m, s->args->n);
    return v->code = MUSTER_ENOMEM;
  }
  return 0;
}

/* The grid matrix of A's factor. */
static const sl_mat_t *a_factor(const sl_call_t *s) {
  return s->args->routine == MUSTER_GEQRF ? &s->A : &s->B;
}

/* The larger of what pXgeqrf and pXorgqr ask for on this grid. */
static sl_int work_size(const sl_call_t *s, const void *w) {
  double x = muster_dtype_real_bytes(s->t) == 4 ? (double)*(const float *)w : *(const double *)w;
  return x > 1 ? (sl_int)x + 1 : 1;
}

static int query(sl_call_t *s, const muster_outputs_t *o, sl_int *lwork) {
  sl_int m = (sl_int)s->m, n = (sl_int)s->args->n, k = (sl_int)o->k, info = 0;
  double q[2] = {0, 0}, tau[2] = {0, 0};
  s->k->geqrf(&m, &n, s->A.a, &ONE, &ONE, s->A.desc, tau, q, &QUERY, &info);
  if (info) return sl_illegal(s, "geqrf", info);
  *lwork = work_size(s, q);
  sl_mat_t *qm = o->a_holds == MUSTER_FACTOR_Q ? &s->A : &s->Z;
  sl_int qcols = o->a_holds == MUSTER_FACTOR_Q ? n : m;
  s->k->orgqr(&m, &qcols, &k, qm->a, &ONE, &ONE, qm->desc, tau, q, &QUERY, &info);
  if (info) return sl_illegal(s, muster_dtype_is_complex(s->t) ? "ungqr" : "orgqr", info);
  if (work_size(s, q) > *lwork) *lwork = work_size(s, q);
  return 0;
}

/* After pXgeqrf: Q and R into their places (A and Z). */
static int form(sl_call_t *s, const muster_outputs_t *o, const void *tau, void *work, sl_int lwork) {
  sl_int m = (sl_int)s->m, n = (sl_int)s->args->n, k = (sl_int)o->k, info = 0;
  if (o->a_holds == MUSTER_FACTOR_Q) { /* R (n x n) out, then Q over A */
    s->k->lacpy("U", &n, &n, s->A.a, &ONE, &ONE, s->A.desc, s->Z.a, &ONE, &ONE, s->Z.desc, 1);
    s->k->orgqr(&m, &n, &n, s->A.a, &ONE, &ONE, s->A.desc, tau, work, &lwork, &info);
  } else { /* the reflectors into Z (m x m) and Q there, then R: A below its diagonal zeroed */
    s->k->lacpy("A", &m, &k, s->A.a, &ONE, &ONE, s->A.desc, s->Z.a, &ONE, &ONE, s->Z.desc, 1);
    s->k->orgqr(&m, &m, &k, s->Z.a, &ONE, &ONE, s->Z.desc, tau, work, &lwork, &info);
    sl_int below = m - 1, cols = n < m - 1 ? n : m - 1;
    if (below > 0 && cols > 0)
      s->k->laset("L", &below, &cols, s->k->zero, s->k->zero, s->A.a, &TWO, &ONE, s->A.desc, 1);
  }
  return info ? sl_illegal(s, muster_dtype_is_complex(s->t) ? "ungqr" : "orgqr", info) : 0;
}

int sl_run_geqrf(sl_call_t *s) {
  muster_outputs_t o;
  outputs(s, &o);
  sl_int lwork = 0, m = (sl_int)s->m, n = (sl_int)s->args->n, info = 0;
  int rc = query(s, &o, &lwork);
  if (rc < 0) return rc; /* ScaLAPACK's argument checks are global: every rank is here */
  size_t ntau = (size_t)(s->A.cols > 1 ? s->A.cols : 1);
  void *tau = malloc(ntau * s->esz), *work = malloc((size_t)lwork * s->esz);
  sl_verdict_t v = {.code = 0, .order = SL_ORDER_ARGS};
  if (!tau || !work) {
    v.code = MUSTER_ENOMEM;
    snprintf(v.what, sizeof v.what, "cannot allocate the QR's workspace (%d + %zu)", (int)lwork, ntau);
  }
  rc = sl_agree(s, &v, 0);
  if (rc == 0) {
    s->k->geqrf(&m, &n, s->A.a, &ONE, &ONE, s->A.desc, tau, work, &lwork, &info);
    rc = info ? sl_illegal(s, "geqrf", info) : form(s, &o, tau, work, lwork);
  }
  free(tau);
  free(work);
  return rc;
}

const char *sl_factors_nonfinite(const sl_call_t *s, int64_t *row, int64_t *col) {
  muster_outputs_t o;
  outputs(s, &o);
  muster_dtype_t real = muster_dtype_real_bytes(s->t) == 4 ? MUSTER_F32 : MUSTER_F64;
  if (o.w_count && muster__find_nonfinite(real, s->w, o.w_count, o.w_count, 1, 0, row, col))
    return "singular values";
  if (o.a_holds && sl_find_nonfinite(s, a_factor(s), 0, s->m, row, col)) return "factor in A";
  if (o.nparts && sl_find_nonfinite(s, &s->Z, 0, o.part[0].rows, row, col)) return "factor in B";
  return NULL;
}

void sl_factors_write_back(sl_call_t *s) {
  muster_outputs_t o;
  outputs(s, &o);
  const muster_shard_t *me = s->cc->mine;
  sl_int m = (sl_int)s->m, n = (sl_int)s->args->n, dc[SL_DLEN];
  if (o.a_holds) {
    sl_caller_desc(s, dc);
    const sl_mat_t *f = a_factor(s);
    s->k->gemr2d(&m, &n, f->a, &ONE, &ONE, f->desc, me->a, &ONE, &ONE, dc, &s->line_ctxt);
  }
  if (o.w_count) memcpy(me->w, s->w, (size_t)o.w_count * muster_dtype_real_bytes(s->t));
  if (o.nparts) {
    const muster_part_t *p = &o.part[0];
    void *at = (char *)me->b + (size_t)p->offset * s->esz;
    sl_int rows = (sl_int)p->rows, cols = (sl_int)p->cols, db[SL_DLEN] = {
        1, s->root_ctxt, rows, cols, rows, cols, 0, 0, rows};
    s->k->gemr2d(&rows, &cols, s->Z.a, &ONE, &ONE, s->Z.desc, at, &ONE, &ONE, db, &s->line_ctxt);
    if (s->rank == 0) /* the line context is 1 x R: rank 0 is (0, 0) */
      s->k->gebs2d(s->line_ctxt, "All", " ", rows, cols, at, rows);
    else
      s->k->gebr2d(s->line_ctxt, "All", " ", rows, cols, at, rows, 0, 0);
  }
}
