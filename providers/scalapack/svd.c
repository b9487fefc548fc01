/*
 * providers/scalapack/svd.c - gesvd and polar on the provider's P x Q copy
 * of A (m x n, tall or wide), through pXgesvd (thin vectors only: the full
 * forms are refused in factors.c).
 *   gesvd  values into s->w; thin vectors: the m x n one (U of a tall A,
 *          V^H of a wide one) into s->B, the square one into s->Z
 *   polar  A = U_p H from the thin SVD: U_p = U V^H (pXgemm into s->B),
 *          H = V S V^H (pXgemm into s->Z), made exactly Hermitian with two
 *          pXtradd: (H + H^H) / 2 on the upper triangle, then the lower
 *          one its conjugate transpose
 * factors.c writes them back.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "muster/layout.h"
#include "slInt.h"

static const sl_int ONE = 1, QUERY = -1;

static void call_gesvd(sl_call_t *s, const char *job, sl_mat_t *u, sl_mat_t *vt, void *w, void *work,
                       sl_int lwork, void *rwork, sl_int *info) {
  sl_int m = (sl_int)s->m, n = (sl_int)s->args->n;
  sl_mat_t *uu = u ? u : &s->A, *vv = vt ? vt : &s->A; /* not referenced with job "N" */
  if (s->k->gesvd)
    s->k->gesvd(job, job, &m, &n, s->A.a, &ONE, &ONE, s->A.desc, w, uu->a, &ONE, &ONE, uu->desc, vv->a,
                &ONE, &ONE, vv->desc, work, &lwork, info, 1, 1);
  else
    s->k->cgesvd(job, job, &m, &n, s->A.a, &ONE, &ONE, s->A.desc, w, uu->a, &ONE, &ONE, uu->desc,
                 vv->a, &ONE, &ONE, vv->desc, work, &lwork, rwork, info, 1, 1);
}

static sl_int size_of(const void *x, size_t real_bytes) {
  double v = real_bytes == 4 ? (double)*(const float *)x : *(const double *)x;
  return v > 1 ? (sl_int)v + 1 : 1;
}

/* The thin SVD (job "V") or the values (job "N") of s->A into w (k reals),
 * u (m x k) and vt (k x n).  0, or a code: the same on every rank. */
static int svd(sl_call_t *s, const char *job, sl_mat_t *u, sl_mat_t *vt, void *w) {
  size_t rb = muster_dtype_real_bytes(s->t);
  double q[2] = {0, 0}, rq[2] = {0, 0};
  sl_int info = 0, big = (sl_int)(s->m > s->args->n ? s->m : s->args->n);
  call_gesvd(s, job, u, vt, w, q, QUERY, rq, &info);
  if (info) return sl_illegal(s, "gesvd", info);
  sl_int lwork = size_of(q, rb), lrwork = size_of(rq, rb);
  if (lrwork < 1 + 4 * big) lrwork = 1 + 4 * big; /* pXgesvd's documented RWORK */
  void *work = malloc((size_t)lwork * s->esz), *rwork = s->k->cgesvd ? malloc((size_t)lrwork * rb) : NULL;
  sl_verdict_t v = {.code = 0, .order = SL_ORDER_ARGS};
  if (!work || (s->k->cgesvd && !rwork)) {
    v.code = MUSTER_ENOMEM;
    snprintf(v.what, sizeof v.what, "cannot allocate the SVD's workspace (%d + %d)", (int)lwork,
             (int)lrwork);
  }
  int rc = sl_agree(s, &v, 0);
  if (rc == 0) {
    call_gesvd(s, job, u, vt, w, work, lwork, rwork, &info);
    if (info > 0) {
      *s->info = info;
      rc = sl_err(s, MUSTER_EPROVIDER, "p%cgesvd: %s (info %d)", s->k->letter,
                  info == (sl_int)(s->m < s->args->n ? s->m : s->args->n) + 1
                      ? "the singular values differ between the processes"
                      : "did not converge",
                  (int)info);
    } else if (info < 0) {
      rc = sl_illegal(s, "gesvd", info);
    }
  }
  free(work);
  free(rwork);
  return rc;
}

int sl_run_gesvd(sl_call_t *s) {
  muster_outputs_t o;
  muster_routine_outputs(s->args->routine, s->args->flags, s->m, s->args->n, &o);
  if (!o.nparts) return svd(s, "N", NULL, NULL, s->w);
  int tall = s->m >= s->args->n;
  return svd(s, "V", tall ? &s->B : &s->Z, tall ? &s->Z : &s->B, s->w);
}

/* Row i of x (a k x n grid matrix) *= w[i] (reals of the dtype's precision). */
static void scale_rows(const sl_call_t *s, sl_mat_t *x, const void *w) {
  sl_int nb = (sl_int)s->tile, src = 0, myrow = s->myrow, nprow = s->nprow;
  int parts = muster_dtype_is_complex(s->t) ? 2 : 1, single = muster_dtype_real_bytes(s->t) == 4;
  int64_t lld = x->desc[SL_LLD];
  for (int64_t lr = 0; lr < x->rows; lr++) {
    sl_int l1 = (sl_int)(lr + 1);
    int64_t g = indxl2g_(&l1, &nb, &myrow, &src, &nprow) - 1;
    double f = single ? (double)((const float *)w)[g] : ((const double *)w)[g];
    for (int64_t lc = 0; lc < x->cols; lc++)
      for (int p = 0; p < parts; p++) {
        size_t at = (size_t)((lc * lld + lr) * parts + p);
        if (single) ((float *)x->a)[at] = (float)(f * ((float *)x->a)[at]);
        else ((double *)x->a)[at] *= f;
      }
  }
}

/* 1/2 in the dtype (the real part of a complex one). */
static void half(muster_dtype_t t, double buf[2]) {
  buf[0] = buf[1] = 0;
  if (muster_dtype_real_bytes(t) == 4) ((float *)buf)[0] = 0.5f;
  else buf[0] = 0.5;
}

/* U_p = U V^H into s->B, H = V (S V^H) into s->Z, exactly Hermitian. */
static void form_polar(sl_call_t *s, sl_mat_t *u, sl_mat_t *vt, sl_mat_t *svt, sl_mat_t *t, const void *w) {
  sl_int m = (sl_int)s->m, n = (sl_int)s->args->n, k = (sl_int)(s->m < s->args->n ? s->m : s->args->n);
  const void *one = s->k->one, *zero = s->k->zero;
  double h[2];
  half(s->t, h);
  s->k->gemm("N", "N", &m, &n, &k, one, u->a, &ONE, &ONE, u->desc, vt->a, &ONE, &ONE, vt->desc, zero,
             s->B.a, &ONE, &ONE, s->B.desc, 1, 1);
  s->k->lacpy("A", &k, &n, vt->a, &ONE, &ONE, vt->desc, svt->a, &ONE, &ONE, svt->desc, 1);
  scale_rows(s, svt, w);
  s->k->gemm("C", "N", &n, &n, &k, one, vt->a, &ONE, &ONE, vt->desc, svt->a, &ONE, &ONE, svt->desc, zero,
             s->Z.a, &ONE, &ONE, s->Z.desc, 1, 1);
  s->k->lacpy("A", &n, &n, s->Z.a, &ONE, &ONE, s->Z.desc, t->a, &ONE, &ONE, t->desc, 1);
  s->k->tradd("U", "C", &n, &n, h, t->a, &ONE, &ONE, t->desc, h, s->Z.a, &ONE, &ONE, s->Z.desc, 1, 1);
  s->k->lacpy("A", &n, &n, s->Z.a, &ONE, &ONE, s->Z.desc, t->a, &ONE, &ONE, t->desc, 1);
  s->k->tradd("L", "C", &n, &n, one, t->a, &ONE, &ONE, t->desc, zero, s->Z.a, &ONE, &ONE, s->Z.desc, 1,
              1);
}

int sl_run_polar(sl_call_t *s) {
  int64_t m = s->m, n = s->args->n, k = m < n ? m : n;
  sl_mat_t u = {.a = NULL}, vt = {.a = NULL}, svt = {.a = NULL}, t = {.a = NULL};
  double *w = calloc((size_t)k, sizeof *w);
  sl_verdict_t v = {.code = 0, .order = SL_ORDER_ARGS};
  if (!w || sl_mat_alloc(s, &u, m, k) < 0 || sl_mat_alloc(s, &vt, k, n) < 0 ||
      sl_mat_alloc(s, &svt, k, n) < 0 || sl_mat_alloc(s, &t, n, n) < 0) {
    v.code = MUSTER_ENOMEM;
    snprintf(v.what, sizeof v.what, "cannot allocate the polar factors' scratch (%" PRId64 " x %" PRId64
             ")", m, n);
  }
  int rc = sl_agree(s, &v, 0);
  if (rc == 0) {
    sl_mat_bind(s, &u);
    sl_mat_bind(s, &vt);
    sl_mat_bind(s, &svt);
    sl_mat_bind(s, &t);
    rc = svd(s, "V", &u, &vt, w);
  }
  if (rc == 0) form_polar(s, &u, &vt, &svt, &t, w);
  sl_mat_free(&u);
  sl_mat_free(&vt);
  sl_mat_free(&svt);
  sl_mat_free(&t);
  free(w);
  return rc;
}
