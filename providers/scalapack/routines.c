/*
 * providers/scalapack/routines.c - the routines on the provider's P x Q
 * copy of A (lower triangle, as the lapack provider and cuSolverMg read it).
 *
 *   potrs  pXpotrf + pXpotrs: the factor in A, X in B; with MUSTER_LOGDET
 *          also log det A from the factor's diagonal (put_logdet)
 *   potri  pXpotrf + pXpotri, then the strictly upper triangle set to the
 *          conjugate transpose of the strictly lower one (pXtradd from a
 *          copy), so A holds the full Hermitian inverse as the other
 *          providers return it
 *   syevd  pXsyevd / pXheevd with jobz = 'V' (ScaLAPACK has no values-only
 *          mode): vectors in Z, values in w, then w sent from grid process
 *          (0, 0) to every rank (share_w says why)
 *   getrs, gels  general.c
 * ScaLAPACK's info is global (the same on every process of the grid), so
 * these return the same code and message on every rank without an
 * agreement; only the workspace allocation of syevd needs one.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "slInt.h"

static const sl_int ONE = 1, TWO = 2, QUERY = -1;

int sl_needs_z(const muster_solve_args_t *a) {
  return a->routine == MUSTER_SYEVD || a->routine == MUSTER_POTRI;
}

int sl_illegal(const sl_call_t *s, const char *what, sl_int info) {
  return sl_err(s, MUSTER_EPROVIDER, "p%c%s: illegal argument (info %d)", s->k->letter, what,
                (int)info);
}

static int factor(sl_call_t *s) {
  sl_int n = (sl_int)s->args->n, info = 0;
  s->k->potrf("L", &n, s->A.a, &ONE, &ONE, s->A.desc, &info, 1);
  if (info > 0) {
    *s->info = info;
    return sl_err(s, MUSTER_ENOTPD, "p%cpotrf", s->k->letter); /* detail */
  }
  return info < 0 ? sl_illegal(s, "potrf", info) : 0;
}

/* log det A = 2 sum log L(i,i) from the factor's diagonal: n doubles
 * summed over the grid (sl_diag_abs), no pass over A.  Every rank then adds
 * the same n logs in the same order as the lapack provider, so all ranks
 * hold the same value.  L(i,i) is real and positive, so |L(i,i)| is it. */
static int put_logdet(sl_call_t *s) {
  int64_t n = s->args->n;
  double *d = malloc((size_t)n * sizeof *d);
  sl_verdict_t v = {.code = 0, .order = SL_ORDER_ARGS};
  if (!d) {
    v.code = MUSTER_ENOMEM;
    snprintf(v.what, sizeof v.what, "cannot allocate %" PRId64 " diagonal entries", n);
  }
  int rc = sl_agree(s, &v, 0);
  if (rc == 0) {
    sl_diag_abs(s, &s->A, n, d);
    double sum = 0;
    for (int64_t i = 0; i < n; i++) sum += log(d[i]);
    s->logdet = 2 * sum;
  }
  free(d);
  return rc;
}

static int run_potrs(sl_call_t *s) {
  int rc = factor(s);
  if (rc < 0) return rc;
  if ((s->args->flags & MUSTER_LOGDET) && (rc = put_logdet(s)) < 0) return rc;
  sl_int n = (sl_int)s->args->n, nrhs = (sl_int)s->args->nrhs, info = 0;
  s->k->potrs("L", &n, &nrhs, s->A.a, &ONE, &ONE, s->A.desc, s->B.a, &ONE, &ONE, s->B.desc, &info,
              1);
  return info ? sl_illegal(s, "potrs", info) : 0;
}

/* A's strictly upper triangle := conj(strictly lower)^T, read from a copy
 * in Z (pXtradd may not read and write the same matrix).  Z has A's
 * descriptor shape, so the copy is a local memcpy. */
static void mirror_lower(sl_call_t *s) {
  sl_int m = (sl_int)s->args->n - 1;
  if (m < 1) return;
  memcpy(s->Z.a, s->A.a, (size_t)(s->A.desc[SL_LLD] * s->A.cols) * s->esz);
  const char *trans = muster_dtype_is_complex(s->t) ? "C" : "T";
  /* A(1:n-1, 2:n) upper := op(Z(2:n, 1:n-1)): A(i, j+1) = conj(Z(j+1, i)) */
  s->k->tradd("U", trans, &m, &m, s->k->one, s->Z.a, &TWO, &ONE, s->Z.desc, s->k->zero, s->A.a,
              &ONE, &TWO, s->A.desc, 1, 1);
}

static int run_potri(sl_call_t *s) {
  int rc = factor(s);
  if (rc < 0) return rc;
  sl_int n = (sl_int)s->args->n, info = 0;
  s->k->potri("L", &n, s->A.a, &ONE, &ONE, s->A.desc, &info, 1);
  if (info > 0) {
    *s->info = info;
    return sl_err(s, MUSTER_EPROVIDER, "p%cpotri: factor singular at diagonal %d", s->k->letter,
                  (int)info);
  }
  if (info < 0) return sl_illegal(s, "potri", info);
  mirror_lower(s);
  return 0;
}

/* One pXsyevd / pXheevd call; work sizes -1 ask for the sizes. */
static void call_syevd(sl_call_t *s, void *work, sl_int lwork, void *rwork, sl_int lrwork,
                       sl_int *iwork, sl_int liwork, sl_int *info) {
  sl_int n = (sl_int)s->args->n;
  if (s->k->syevd)
    s->k->syevd("V", "L", &n, s->A.a, &ONE, &ONE, s->A.desc, s->w, s->Z.a, &ONE, &ONE, s->Z.desc,
                work, &lwork, iwork, &liwork, info, 1, 1);
  else
    s->k->heevd("V", "L", &n, s->A.a, &ONE, &ONE, s->A.desc, s->w, s->Z.a, &ONE, &ONE, s->Z.desc,
                work, &lwork, rwork, &lrwork, iwork, &liwork, info, 1, 1);
}

/* A size ScaLAPACK returned in the first element of a real array of
 * real_bytes: rounded up, with a margin (a float holds integers exactly
 * only up to 2^24). */
static sl_int size_from(const void *p, size_t real_bytes) {
  double v = real_bytes == 4 ? (double)*(const float *)p : *(const double *)p;
  return (sl_int)(v * (1.0 + 1e-6)) + 1;
}

/* pXsyevd's workspace query can answer too little: its last step,
 * pXormtr (Z = Q Z), gets WORK(2n+1:) and needs (MpC0 + NqC0 + nb) * nb,
 * more than pXsyevd's 1 + 6n + 2 NP NQ when the tile is large next to the
 * local piece (n = 37, tile 32 on one rank: 3392 > 2961).  pXormtr then
 * refuses (PXERBLA prints "parameter number 16 had an illegal value") and
 * pXsyevd returns info = 0 with vectors never back-transformed: a wrong
 * answer reported as success.  So ask pXormtr (pXunmtr) what it needs too
 * and give the larger: its offset in WORK is 2n (real) or n (complex). */
static sl_int ormtr_need(sl_call_t *s, sl_int *need) {
  sl_int n = (sl_int)s->args->n, info = 0;
  double q[2] = {0, 0}, tau[2] = {0, 0};
  s->k->ormtr("L", "L", "N", &n, &n, s->A.a, &ONE, &ONE, s->A.desc, tau, s->Z.a, &ONE, &ONE,
              s->Z.desc, q, &QUERY, &info, 1, 1, 1);
  *need = info ? 0 : size_from(q, muster_dtype_real_bytes(s->t)) + (s->k->syevd ? 2 : 1) * n;
  return info;
}

/* W from grid process (0, 0) to every rank.  pXsyevd documents W as
 * global output, but its eigenvalues are right only on (0, 0) in some
 * paths: pXstedc solves n <= nb on that process alone, and small merges of
 * pXlaed0 (n = 2, tile 1 on 2 x 2) leave the other processes holding the
 * tridiagonal's diagonal instead.  n reals: nothing next to the solve. */
static void share_w(sl_call_t *s) {
  sl_int n = (sl_int)s->args->n;
  if (s->myrow == 0 && s->mycol == 0)
    s->k->real_gebs2d(s->ctxt, "All", " ", n, 1, s->w, n);
  else
    s->k->real_gebr2d(s->ctxt, "All", " ", n, 1, s->w, n, 0, 0);
}

static int run_syevd(sl_call_t *s) {
  size_t rb = muster_dtype_real_bytes(s->t);
  double wq[2] = {0, 0}, rq = 0; /* room for one complex double */
  sl_int iq = 0, info = 0;
  call_syevd(s, wq, QUERY, &rq, QUERY, &iq, QUERY, &info);
  if (info) return sl_illegal(s, s->k->syevd ? "syevd" : "heevd", info);
  sl_int lwork = size_from(wq, rb), lrwork = size_from(&rq, rb), liwork = iq > 1 ? iq : 1;
  sl_int more = 0;
  if ((info = ormtr_need(s, &more)) != 0)
    return sl_illegal(s, s->k->syevd ? "ormtr" : "unmtr", info);
  if (more > lwork) lwork = more;
  void *work = malloc((size_t)lwork * s->esz);
  void *rwork = s->k->heevd ? malloc((size_t)lrwork * rb) : NULL;
  sl_int *iwork = malloc((size_t)liwork * sizeof *iwork);
  sl_verdict_t v = {.code = 0, .order = SL_ORDER_ARGS};
  if (!work || !iwork || (s->k->heevd && !rwork)) {
    v.code = MUSTER_ENOMEM;
    snprintf(v.what, sizeof v.what, "cannot allocate the eigensolver's workspace (%d + %d + %d)",
             (int)lwork, (int)lrwork, (int)liwork);
  }
  int rc = sl_agree(s, &v, 0);
  if (rc == 0) {
    call_syevd(s, work, lwork, rwork, lrwork, iwork, liwork, &info);
    if (info > 0) {
      *s->info = info;
      rc = sl_err(s, MUSTER_EPROVIDER, "p%c%s", s->k->letter, s->k->syevd ? "syevd" : "heevd"); /* detail */
    } else if (info < 0) {
      rc = sl_illegal(s, s->k->syevd ? "syevd" : "heevd", info);
    } else {
      share_w(s);
    }
  }
  free(work);
  free(rwork);
  free(iwork);
  return rc;
}

int sl_run(sl_call_t *s) {
  switch (s->args->routine) {
  case MUSTER_POTRS: return run_potrs(s);
  case MUSTER_POTRI: return run_potri(s);
  case MUSTER_GETRS: return sl_run_getrs(s);
  case MUSTER_GELS: return sl_run_gels(s);
  default: return run_syevd(s);
  }
}
