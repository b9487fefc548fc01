/* providers/cusolvermp/solve.c - collective_solve (mp.h): check, agree,
 * communicator, buffers, agree, A in, the routine, agree.
 *
 * Every rank returns the same code: the checks, the communicator and the
 * buffers are agreed on through the bootstrap before any NCCL traffic (the
 * lowest failing rank's code and message, "rank R: ...", on every rank),
 * and so is the outcome.  A rank failing once NCCL traffic started returns
 * at once: the runtime poisons the group and its watchdog cancels the
 * others (cancel: ncclCommAbort), who return that. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/agree.h"
#include "../common/env.h"
#include "job.h"

#define AGREE_MSG 240

typedef struct agree_msg {
  int32_t rc;
  int32_t diag_zero; /* mp_job_t's diag_bad and diag_zero (getrs) */
  int64_t diag_bad;
  int64_t info;
  double part;
  double peak; /* mp_job_t's rmax (gels: the largest |R(i,i)|) */
  int64_t params[9];
  char msg[AGREE_MSG];
} agree_msg_t;

static void params_of(const mp_job_t *j, int64_t *p) {
  const mp_shape_t *s = &j->shape;
  int64_t v[9] = {s->routine, s->dtype, s->n, s->nrhs, s->flags, s->tile, s->nprow, s->npcol, s->m};
  memcpy(p, v, sizeof v);
}

/* The earliest pivot under the singularity rule or NaN/Inf on U's
 * diagonal over the ranks (getrs), if it is under the rule: *info = its
 * 1-based index, 1.  Else 0. */
static int singular_first(const agree_msg_t *all, int size, int64_t *info) {
  int first = 0;
  for (int r = 1; r < size; r++)
    if (all[r].diag_bad < all[first].diag_bad) first = r;
  if (all[first].diag_bad == INT64_MAX || !all[first].diag_zero) return 0;
  *info = all[first].diag_bad + 1;
  return 1;
}

/* Every rank's rc (and info: the largest; sum: the sum of every rank's
 * *sum), the same result on every rank. */
int mp_agree(mp_job_t *j, int rc, const char *phase, int64_t *info, double *sum) {
  const muster_bootstrap_t *b = j->boot;
  agree_msg_t mine, *all = NULL;
  memset(&mine, 0, sizeof mine);
  mine.rc = rc;
  mine.info = info ? *info : 0;
  mine.diag_bad = j->diag_bad;
  mine.diag_zero = j->diag_zero;
  mine.part = sum ? *sum : 0.0;
  mine.peak = j->rmax;
  params_of(j, mine.params);
  if (rc < 0 && j->E->buf) snprintf(mine.msg, sizeof mine.msg, "%s", j->E->buf);
  char err[400];
  j->agreed_failure = 0;
  int got = muster__agree_gather(b, &mine, sizeof mine, (void **)&all, phase, err, sizeof err);
  if (got < 0) {
    rc = cuc_fail(j->E, got, "%s", err);
    goto out;
  }
  if (info && singular_first(all, b->size, info)) {
    rc = 0; /* the NaN/Inf the ranks deferred came from the zero pivot */
    goto out;
  }
  for (int r = 0; r < b->size; r++)
    if (all[r].rc < 0) {
      all[r].msg[AGREE_MSG - 1] = '\0';
      rc = all[r].rc;
      j->agreed_failure = 1;
      if (r != b->rank) cuc_fail(j->E, rc, "rank %d failed while %s: %s", r, phase, all[r].msg);
      goto out;
    }
  if (sum) *sum = 0.0;
  for (int r = 0; r < b->size; r++) {
    if (sum) *sum += all[r].part;
    if (all[r].peak > j->rmax) j->rmax = all[r].peak;
    if (memcmp(all[r].params, all[0].params, sizeof all[0].params) != 0) {
      j->agreed_failure = 1; /* every rank compares the same gathered params */
      rc = cuc_fail(j->E, MUSTER_EINVAL, "rank %d's call differs from rank 0's (routine, dtype, n, nrhs, flags, "
                    "tile, grid or m; MUSTER_MP_* must be the same on every rank)", r);
      goto out;
    }
    if (info && all[r].info > *info) *info = all[r].info;
  }
  rc = 0;
out:
  free(all);
  return rc;
}

/* geqrf's, gesvd's and polar's flags, B and W against
 * muster_routine_outputs (A m x n): B packed (ldb = m, muster_routine_shape's
 * rule) with the columns its factors fill, w where singular values go.
 * 0, or MUSTER_EINVAL with the message in E. */
static int check_outputs(mp_job_t *j, int64_t m) {
  muster_outputs_t o;
  const char *r = muster_routine_str(j->a->routine);
  if (muster_routine_outputs(j->a->routine, j->a->flags, m, j->a->n, &o) < 0)
    return cuc_fail(j->E, MUSTER_EINVAL, "rank %d: %s takes %s, not flags 0x%x", j->boot->rank, r,
                    j->a->routine == MUSTER_GEQRF   ? "MUSTER_FULL_MATRICES only"
                    : j->a->routine == MUSTER_GESVD ? "MUSTER_FULL_MATRICES and MUSTER_NO_VECTORS only"
                                                    : "no flags",
                    j->a->flags);
  if (o.b_cols > 0 && (j->a->nrhs < o.b_cols || !j->s->b))
    return cuc_fail(j->E, MUSTER_EINVAL, "rank %d: %s's B needs %lld columns of m = %lld rows (ldb = m) for its "
                    "factor; nrhs %lld, b %s", j->boot->rank, r, (long long)o.b_cols, (long long)m,
                    (long long)j->a->nrhs, j->s->b ? "given" : "NULL");
  if (o.w_count > 0 && !j->s->w)
    return cuc_fail(j->E, MUSTER_EINVAL, "rank %d: %s needs w (%lld reals) on every rank", j->boot->rank, r,
                    (long long)o.w_count);
  return 0;
}

/* The call against what the provider runs; fills the job's shape and layouts. */
static int check(mp_job_t *j) {
  const mp_libs_t *L = j->c->libs;
  const muster_solve_args_t *a = j->a;
  const muster_dist_t *d = &j->call->dist;
  const muster_bootstrap_t *b = j->boot;
  char why[256];
  muster_shape_t rows; /* gels, geqrf: A has m = ldb rows */
  if (L->rc < 0) return cuc_fail(j->E, L->rc, "%s", L->why + strlen(MP_NAME ": "));
  if (!mp_runs(a->routine))
    return cuc_fail(j->E, MUSTER_EUNSUPPORTED, "runs potrs, getrs, gels, geqrf, syevd, gesvd and polar, not %s",
                    muster_routine_str(a->routine));
  if (muster_routine_shape(a->routine, a->n, a->nrhs, j->s->ldb, &rows) < 0)
    return cuc_fail(j->E, MUSTER_EINVAL, "rank %d: no shape from n %lld, ldb %lld (gels: m = ldb >= n; geqrf, "
                    "gesvd, polar: m = ldb >= 1)", b->rank, (long long)a->n, (long long)j->s->ldb);
  int takes_o = (muster_routine_takes(a->routine) & MUSTER_TAKES_O) != 0; /* geqrf, gesvd, polar */
  if (takes_o && check_outputs(j, rows.a_rows) < 0) return MUSTER_EINVAL;
  if ((a->flags & MUSTER_LOGDET) && a->routine != MUSTER_POTRS)
    return cuc_fail(j->E, MUSTER_EINVAL, "MUSTER_LOGDET is for potrs, not %s", muster_routine_str(a->routine));
  if (j->s->mem != MUSTER_MEM_CUDA || j->s->device < 0)
    return cuc_fail(j->E, MUSTER_EUNSUPPORTED, "rank %d: needs CUDA device memory", b->rank);
  if (d->m != rows.a_rows || d->n != a->n || d->nprow < 1 || d->npcol < 1 || (int64_t)d->nprow * d->npcol != b->size ||
      d->myrow * d->npcol + d->mycol != b->rank || d->mb < 1 || d->nb < 1)
    return cuc_fail(j->E, MUSTER_EINVAL, "rank %d: its layout (%dx%d grid at %d,%d) does not fit %d ranks of %lld x %lld",
                    b->rank, d->nprow, d->npcol, d->myrow, d->mycol, b->size, (long long)rows.a_rows, (long long)a->n);
  j->user = mp_layout_of_dist(d);
  int64_t ulr = mp_local_rows(&j->user, d->myrow), ulc = mp_local_cols(&j->user, d->mycol);
  if (d->lld < (ulr > 1 ? ulr : 1) || (ulr * ulc > 0 && !j->s->a))
    return cuc_fail(j->E, MUSTER_EINVAL, "rank %d: a is %s with lld %lld for %lld local rows", b->rank,
                    j->s->a ? "set" : "NULL", (long long)d->lld, (long long)ulr);
  /* geqrf's, gesvd's and polar's B is their output (check_outputs), the
   * others' right-hand sides */
  int takes_b = !takes_o && (muster_routine_takes(a->routine) & MUSTER_TAKES_B) != 0;
  if (takes_b && (a->nrhs < 1 || !j->s->b || j->s->ldb < rows.b_rows))
    return cuc_fail(j->E, MUSTER_EINVAL, "rank %d: %s needs b (%lld x nrhs, ldb >= %lld) on every rank", b->rank,
                    muster_routine_str(a->routine), (long long)rows.b_rows, (long long)rows.b_rows);
  if ((a->flags & MUSTER_LOGDET) && !j->s->w)
    return cuc_fail(j->E, MUSTER_EINVAL, "rank %d: potrs with MUSTER_LOGDET needs w (one real) on every rank",
                    b->rank);
  if (a->routine == MUSTER_SYEVD && !j->s->w)
    return cuc_fail(j->E, MUSTER_EINVAL, "rank %d: syevd needs w on every rank", b->rank);
  int rc = mp_shape_of(a, b->size, NULL, &j->shape, why, sizeof why);
  j->shape.m = rows.a_rows; /* mp_refused reads it (polar: m >= n) */
  if (rc == 0) rc = mp_refused(L->rel, &j->shape, why, sizeof why);
  if (rc < 0) return cuc_fail(j->E, rc, "%s", why);
  j->esz = muster_dtype_bytes(a->dtype);
  j->solver = mp_layout_solver(rows.a_rows, a->n, j->shape.tile, j->shape.nprow, j->shape.npcol);
  mp_coords(&j->solver, b->rank, &j->myrow, &j->mycol);
  j->lr = mp_local_rows(&j->solver, j->myrow);
  j->lc = mp_local_cols(&j->solver, j->mycol);
  int copy = 0; /* checked by mp_shape_of above */
  prov_env_switch("MUSTER_MP_COPY", 0, &copy, why, sizeof why);
  j->in_place = mp_layout_same(&j->user, &j->solver) && !copy &&
                !mp_factors_a_copy(a->routine, a->flags);
  j->shape.in_place = j->in_place;
  j->lld = j->in_place ? d->lld : (j->lr > 1 ? j->lr : 1);
  int64_t cap = (int64_t)(mp_scratch_bytes(&j->shape) / 2 / j->esz);
  j->cap = cap > 0 ? cap : 1;
  /* getrs, and gels's triangular solve: potrs's limit (cuSOLVERMp
   * documents none of its own for cusolverMpGetrs) */
  if (takes_b &&
      (rc = mp_potrs_panel(L->rel, getenv("MUSTER_MP_POTRS_NRHS"), a->nrhs, &j->panel, why, sizeof why)) < 0)
    return cuc_fail(j->E, rc, "%s", why);
  if (a->routine == MUSTER_GELS) { /* Q^H B on all of B in one call (gels.c) */
    j->tri_panel = j->panel;
    j->panel = a->nrhs;
  }
  return 0;
}

/* The communicator, the caller's work on its data finished, the buffers. */
static int setup(mp_job_t *j) {
  cuc_err_t *E = j->E;
  int rc = 0;
  CUC_CHECK(mp_comm_get(j->c, j->run, j->boot, j->shape.nprow, j->shape.npcol, j->s->device, &j->m, j->E));
  if (j->s->stream)
    CUC_CU(j->s->device, cudaStreamSynchronize((cudaStream_t)j->s->stream));
  else
    CUC_CU(j->s->device, cudaDeviceSynchronize());
  if (!j->m->rel) j->m->rel = j->c->libs->rel;
  CUC_CHECK(mp_routine_prepare(j));
out:
  return rc;
}

int mp_job_move(mp_job_t *j, int to_solver, const void *from) {
  mp_plan_t p, back;
  int rc = mp_plan_build(&p, &j->user, &j->solver, j->boot->size, j->boot->rank);
  if (rc < 0) return cuc_fail(j->E, rc, "cannot plan the redistribution (code %d)", rc);
  if (to_solver) {
    rc = mp_redist(j, &p, j->s->a, j->call->dist.lld, j->A, j->lld);
  } else {
    mp_plan_reverse(&p, &back);
    rc = mp_redist(j, &back, from, j->lld, j->s->a, j->call->dist.lld);
  }
  mp_plan_free(&p);
  return rc;
}

int mp_job_info(mp_job_t *j, int *info) {
  cuc_err_t *E = j->E;
  int rc = 0;
  CUC_CU(j->m->device, cudaMemcpy(info, j->m->buf[MP_BUF_INFO], sizeof *info, cudaMemcpyDeviceToHost));
out:
  return rc;
}

/* log det A (the agreed sum) into this rank's w: one real of the dtype's
 * real type. */
static int put_logdet(mp_job_t *j) {
  cuc_err_t *E = j->E;
  int rc = 0;
  float f = (float)j->logdet;
  const void *v = muster_dtype_real_bytes(j->a->dtype) == 4 ? (const void *)&f : (const void *)&j->logdet;
  CUC_CU(j->s->device, cudaMemcpy(j->s->w, v, muster_dtype_real_bytes(j->a->dtype), cudaMemcpyDefault));
out:
  return rc;
}

static int solve_locked(mp_ctx_t *c, mp_run_t *run, const muster_collective_call_t *call, cuc_err_t *E) {
  mp_job_t j = {.c = c, .call = call, .a = &call->args, .s = call->mine, .boot = call->boot, .E = E, .run = run,
                .api = &c->libs->api, .diag_bad = INT64_MAX};
  int64_t info = 0;
  int rc = check(&j);
  if (rc == 0 && (rc = cudaSetDevice(j.s->device)) != cudaSuccess) rc = cuc_cuda(E, j.s->device, "cudaSetDevice", rc);
  rc = mp_agree(&j, rc, "checking the call", NULL, NULL);
  if (rc < 0) { /* refused before any NCCL traffic: alike on every rank when they all saw it (provider_v2.h) */
    if (j.agreed_failure) *call->info = MUSTER_PROVIDER_REFUSED_ALIKE;
    goto out;
  }
  rc = setup(&j);
  CUC_CHECK(mp_agree(&j, rc, "making the communicator and the buffers", NULL, NULL));
  if (call->tile_used) *call->tile_used = j.shape.tile;
  /* NCCL traffic from here: a failure returns at once (see the top) */
  if (!j.in_place) CUC_CHECK(mp_job_move(&j, 1, NULL));
  else j.A = j.s->a;
  CUC_CHECK(mp_routine_run(&j));
  info = *call->info;
  int logdet = (j.a->flags & MUSTER_LOGDET) != 0;
  CUC_CHECK(mp_agree(&j, j.deferred, "finishing", &info, logdet ? &j.logdet : NULL));
  *call->info = info;
  if (logdet && info == 0) CUC_CHECK(put_logdet(&j));
out:
  mp_routine_done(&j);
  if (rc < 0 && j.m) j.m->broken = 1;
  return rc;
}

int mp_collective_solve(mp_ctx_t *c, const muster_collective_call_t *call) {
  cuc_err_t err = MP_ERR(call->err, call->errlen);
  if (call->err && call->errlen) call->err[0] = '\0';
  *call->info = 0;
  if (call->tile_used) *call->tile_used = 0;
  mp_run_t run = {.call = call};
  pthread_mutex_lock(&c->run_mu);
  run.next = c->running;
  c->running = &run;
  pthread_mutex_unlock(&c->run_mu);
  pthread_mutex_lock(&c->mu);
  int saved = cuc_device_save();
  int rc = solve_locked(c, &run, call, &err);
  cuc_device_restore(saved);
  pthread_mutex_unlock(&c->mu);
  pthread_mutex_lock(&c->run_mu);
  for (mp_run_t **pp = &c->running; *pp; pp = &(*pp)->next)
    if (*pp == &run) {
      *pp = run.next;
      break;
    }
  pthread_mutex_unlock(&c->run_mu);
  return rc;
}
