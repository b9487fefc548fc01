/* providers/cusolverdn/job.c - a solve's checks, the target, A on it, and
 * the end of the call (job.h). */
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "job.h"

/* One rank's shard against the call: CUDA memory on a known device, a,
 * lda, b and w as the routine's shape wants them, then what every GPU
 * provider checks (cuc_check_shard). */
static int check_shard(dn_job_t *j, int r) {
  const muster_shard_t *s = &j->call->shards[r];
  const muster_solve_args_t *a = j->a;
  cuc_err_t *E = j->E;
  if (s->mem != MUSTER_MEM_CUDA)
    return cuc_fail(E, MUSTER_EUNSUPPORTED, "rank %d: shard memory kind %d is not CUDA device memory", r, (int)s->mem);
  if (s->device < 0 || s->device >= CUC_MAX_ORDINAL)
    return cuc_fail(E, MUSTER_EINVAL, "rank %d: device %d out of range 0..%d", r, s->device, CUC_MAX_ORDINAL - 1);
  if (!s->a && s->ncols > 0) return cuc_fail(E, MUSTER_EINVAL, "rank %d (device %d): a is NULL", r, s->device);
  if (s->lda < j->sh.a_rows)
    return cuc_fail(E, MUSTER_EINVAL, "rank %d (device %d): lda=%" PRId64 " < %s=%" PRId64, r, s->device, s->lda,
                    muster_routine_takes(a->routine) & MUSTER_TAKES_M ? "m" : "n", j->sh.a_rows);
  if ((muster_routine_takes(a->routine) & MUSTER_TAKES_M) && s->ldb != j->sh.a_rows)
    return cuc_fail(E, MUSTER_EINVAL, "rank %d (device %d): %s: ldb=%" PRId64 " but rank 0's is %" PRId64
                    " (ldb is m, the same on every rank)", r, s->device, muster_routine_str(a->routine), s->ldb,
                    j->sh.a_rows);
  return cuc_check_shard(a, &j->L, r, s, E); /* b, w: the routine's shape */
}

/* geqrf, gesvd, polar: the flags the routine takes, m and n within the
 * legacy orgqr's int (gesvd's and polar's copies are sized the same, one
 * rule), and B wide enough for the factors muster_routine_outputs puts
 * there (the runtime checks it too; a provider called directly must). */
static int check_factors(dn_job_t *j) {
  const muster_solve_args_t *a = j->a;
  const char *name = muster_routine_str(a->routine);
  int64_t m = j->sh.a_rows;
  muster_outputs_t o;
  if (m > INT_MAX || a->n > INT_MAX)
    return cuc_fail(j->E, MUSTER_EINVAL, "%s: m=%" PRId64 " n=%" PRId64 " out of range 1..%d (the legacy orgqr "
                    "takes int)", name, m, a->n, INT_MAX);
  if (muster_routine_outputs(a->routine, a->flags, m, a->n, &o) < 0)
    return cuc_fail(j->E, MUSTER_EINVAL, "%s: flags 0x%x not taken (%s)", name, a->flags,
                    a->routine == MUSTER_POLAR   ? "no flags"
                    : a->routine == MUSTER_GEQRF ? "only MUSTER_FULL_MATRICES"
                                                 : "only MUSTER_FULL_MATRICES and MUSTER_NO_VECTORS");
  if (a->nrhs < o.b_cols)
    return cuc_fail(j->E, MUSTER_EINVAL, "%s: nrhs=%" PRId64 ": B (m=%" PRId64 " rows, packed) needs %" PRId64
                    " columns for its factors (muster_routine_outputs)", name, a->nrhs, m, o.b_cols);
  return 0;
}

/* The routine and flags (what the shards hold is check_shard's): n, m,
 * nrhs within what the cusolverDn calls take. */
static int check_args(dn_job_t *j) {
  const muster_solve_args_t *a = j->a;
  cuc_err_t *E = j->E;
  const char *name = muster_routine_str(a->routine);
  if (!name) return cuc_fail(E, MUSTER_EUNSUPPORTED, "routine %d", (int)a->routine);
  if (a->flags & ~MUSTER_FLAGS_KNOWN) return cuc_fail(E, MUSTER_EUNSUPPORTED, "flags 0x%x not implemented", a->flags);
  if ((a->flags & MUSTER_LOGDET) && a->routine != MUSTER_POTRS)
    return cuc_fail(E, MUSTER_EINVAL, "MUSTER_LOGDET is for potrs only (%s)", name);
  /* n*n elements must be addressable; the legacy potri and ormqr take int */
  int legacy = a->routine == MUSTER_POTRI || a->routine == MUSTER_GELS;
  int64_t nmax = legacy ? INT_MAX : INT64_C(1) << 31;
  if (a->n < 1 || a->n > nmax)
    return cuc_fail(E, MUSTER_EINVAL, "n=%" PRId64 " out of range 1..%" PRId64 " (%s)", a->n, nmax,
                    a->routine == MUSTER_POTRI ? "the legacy potri takes int"
                    : legacy                   ? "the legacy ormqr takes int"
                                               : "n*n elements on one GPU");
  if (muster_routine_shape(a->routine, a->n, a->nrhs, j->call->shards[0].ldb, &j->sh) < 0 ||
      (legacy && j->sh.a_rows > INT_MAX))
    return cuc_fail(E, MUSTER_EINVAL, "%s: m = rank 0's ldb = %" PRId64 " out of range %s%" PRId64 "..%d", name,
                    j->call->shards[0].ldb, a->routine == MUSTER_GELS ? "n=" : "", a->routine == MUSTER_GELS ? a->n : 1,
                    INT_MAX);
  if (j->sh.b_rows && (a->nrhs < 1 || a->nrhs > (legacy ? INT_MAX : INT64_C(1) << 31)))
    return cuc_fail(E, MUSTER_EINVAL, "%s: nrhs=%" PRId64 " out of range", name, a->nrhs);
  if (a->routine == MUSTER_GELS && dn_gels_ormqr_elements(j->sh.a_rows, a->n) > INT_MAX)
    return cuc_fail(E, MUSTER_EUNSUPPORTED, "gels: m=%" PRId64 " n=%" PRId64 " too large for cusolverDn's ormqr "
                    "(its workspace, about (2 m + 272) n elements, must be counted in an int)", j->sh.a_rows, a->n);
  if (muster_routine_takes(a->routine) & MUSTER_TAKES_O) return check_factors(j);
  return 0;
}

int dn_job_validate(dn_job_t *j) {
  const muster_provider_call_t *call = j->call;
  const muster_solve_args_t *a = j->a;
  cuc_err_t *E = j->E;
  char why[120];
  int rc = 0, R = call->nshards, path = DN_POTRI_LEGACY;
  if (R < 1 || R > MUSTER_MAX_RANKS || !call->shards)
    return cuc_fail(E, MUSTER_EINVAL, "%d ranks: takes 1 to %d", R, MUSTER_MAX_RANKS);
  j->esz = muster_dtype_bytes(a->dtype);
  j->rsz = muster_dtype_real_bytes(a->dtype);
  if (!j->esz) return cuc_fail(E, MUSTER_EINVAL, "unknown dtype %d", (int)a->dtype);
  CUC_CHECK(check_args(j));
  if (a->layout != MUSTER_LAYOUT_BLOCK && a->layout != MUSTER_LAYOUT_CYCLIC)
    return cuc_fail(E, MUSTER_EINVAL, "unknown layout %d", (int)a->layout);
  if (a->layout == MUSTER_LAYOUT_CYCLIC && (a->tile < 1 || a->tile > a->n))
    return cuc_fail(E, MUSTER_ETILE, "cyclic layout: tile %" PRId64 " out of range 1..n=%" PRId64, a->tile, a->n);
  /* the block layout moves whole blocks: its geometry with T = S has one
   * run per rank (cyclic == block then) */
  int64_t tile = a->layout == MUSTER_LAYOUT_BLOCK ? muster_ceil_div(a->n, R) : a->tile;
  muster_layout_geom_init(&j->L, a->n, tile, R);
  j->R = R;
  for (int r = 0; r < R; r++) CUC_CHECK(check_shard(j, r));
  if (dn_target_device(call->shards[0].device, &j->dev, why, sizeof why) < 0 ||
      dn_potri_path(a->n, a->dtype, &path, why, sizeof why) < 0)
    return cuc_fail(E, MUSTER_EINVAL, "%s", why);
  j->d = &j->c->dev[j->dev];
  j->home = -1;
  dn_shape_t s = {a->routine, a->dtype, a->n, j->sh.nrhs, j->sh.a_rows, a->flags, R, 0, 0, path};
  for (int r = R - 1; r >= 0; r--)
    if (call->shards[r].device == j->dev) {
      s.on_target++;
      j->home = r;
    }
  s.in_place = dn_in_place(a->routine, a->flags, R, call->shards[0].device == j->dev, path);
  if (s.in_place && (a->routine == MUSTER_POTRI || a->routine == MUSTER_GELS) && call->shards[0].lda > INT_MAX)
    return cuc_fail(E, MUSTER_EINVAL, "rank 0 (device %d): lda=%" PRId64 " > %d (the legacy %s takes int)",
                    call->shards[0].device, call->shards[0].lda, INT_MAX,
                    a->routine == MUSTER_POTRI ? "potri" : "ormqr");
  j->shape = s;
out:
  return rc;
}

int dn_job_prepare(dn_job_t *j) {
  int rc = 0;
  cuc_err_t *E = j->E;
  const muster_shard_t *sh = j->call->shards;
  CUC_CHECK(dn_dev_ready(j->c, j->dev, E));
  for (int r = 0; r < j->R; r++) { /* copies both ways run over NVLink */
    CUC_CHECK(cuc_peer_enable(&j->c->peers, j->dev, sh[r].device, E));
    CUC_CHECK(cuc_peer_enable(&j->c->peers, sh[r].device, j->dev, E));
  }
  CUC_CU(j->dev, cudaSetDevice(j->dev)); /* everything below runs on the target */
  CUC_CHECK(cuc_grow_checked(j->dev, &j->d->scan, &j->d->scan_bytes, 64, "the info buffer", E));
  CUC_CHECK(cuc_grow_checked(-1, &j->d->hscan, &j->d->hscan_bytes, 64, "the info buffer", E));
  if (j->shape.in_place) {
    j->A = sh[0].a;
    j->lda = sh[0].lda;
    dn_stat_add(DN_STAT_IN_PLACE, 1);
    return 0;
  }
  j->lda = j->sh.a_rows;
  CUC_CHECK(cuc_grow_checked(j->dev, &j->d->mat, &j->d->mat_bytes, (size_t)(j->sh.a_rows * j->a->n) * j->esz,
                             "the gathered matrix", E));
  j->A = j->d->mat;
  CUC_CHECK(dn_move_cols(j, 0, j->A, j->lda, 0, j->a->n));
out:
  return rc;
}

int dn_job_finish(dn_job_t *j, int rc) {
  dn_dev_t *d = j->d;
  if (d && d->ready) { /* drain what was issued, keeping the first failure's message */
    char keep[512] = "";
    if (rc < 0 && j->call->err) snprintf(keep, sizeof keep, "%s", j->call->err);
    cudaStream_t all[DN_COPY_STREAMS + 1] = {d->stream};
    memcpy(all + 1, d->copy, sizeof d->copy);
    cudaSetDevice(j->dev);
    for (int i = 0; i < DN_COPY_STREAMS + 1; i++) {
      cudaError_t st = cudaStreamSynchronize(all[i]);
      if (st != cudaSuccess && rc == 0) rc = cuc_cuda(j->E, j->dev, "cudaStreamSynchronize", st);
    }
    if (keep[0]) snprintf(j->call->err, j->call->errlen, "%s", keep);
    dn_stat_set(DN_STAT_TARGET_BYTES, dn_dev_held(d));
  }
  return rc;
}
