/*
 * providers/cusolverdn/move.c - copies between the ranks' buffers and the
 * target GPU (job.h).  Every copy is one cudaMemcpy2DAsync (same GPU, a
 * peer over NVLink, or a peer process's IPC mapping: cudaMemcpyDefault
 * resolves each pointer) issued on a copy stream of the target, the stream
 * picked by rank so that copies over different links run at once.  Where
 * a rank's columns are is muster/layout.h's business: the job's geometry
 * and its runs, never re-derived here.
 */
#include <string.h>

#include "job.h"

static cudaStream_t stream_of(const dn_job_t *j, int rank) { return j->d->copy[rank % DN_COPY_STREAMS]; }

static int sync_copies(dn_job_t *j) {
  int rc = 0;
  cuc_err_t *E = j->E;
  for (int i = 0; i < DN_COPY_STREAMS; i++) CUC_CU(j->dev, cudaStreamSynchronize(j->d->copy[i]));
out:
  return rc;
}

int dn_sync_solver(dn_job_t *j) {
  int rc = 0;
  cuc_err_t *E = j->E;
  CUC_CU(j->dev, cudaStreamSynchronize(j->d->stream));
out:
  return rc;
}

/* Columns: `rows` elements of esz bytes, `cols` of them, between two
 * column-major buffers of their own leading dimensions. */
static int copy_cols(dn_job_t *j, int rank, void *dst, int64_t ldd, const void *src, int64_t lds, int64_t rows,
                     int64_t cols, size_t esz) {
  int rc = 0;
  cuc_err_t *E = j->E;
  CUC_CU(j->dev, cudaMemcpy2DAsync(dst, (size_t)ldd * esz, src, (size_t)lds * esz, (size_t)rows * esz, (size_t)cols,
                                   cudaMemcpyDefault, stream_of(j, rank)));
  dn_stat_add(DN_STAT_COPIES, 1);
out:
  return rc;
}

int dn_move_cols(dn_job_t *j, int to_ranks, void *buf, int64_t ld, int64_t c0, int64_t c1) {
  int rc = 0;
  const int cyclic = j->a->layout == MUSTER_LAYOUT_CYCLIC;
  muster_layout_iter_t it;
  muster_layout_run_t run;
  for (muster_layout_iter_start(&it, &j->L); muster_layout_iter_next(&it, &run);) {
    int64_t g0 = run.gcol > c0 ? run.gcol : c0, g1 = run.gcol + run.ncols < c1 ? run.gcol + run.ncols : c1;
    if (g0 >= g1) continue;
    int r = cyclic ? run.cyc_rank : run.blk_rank;
    int64_t lcol = (cyclic ? run.cyc_col : run.blk_col) + (g0 - run.gcol);
    const muster_shard_t *s = &j->call->shards[r];
    char *mine = (char *)s->a + (size_t)(lcol * s->lda) * j->esz;
    char *there = (char *)buf + (size_t)((g0 - c0) * ld) * j->esz;
    if (to_ranks)
      CUC_CHECK(copy_cols(j, r, mine, s->lda, there, ld, j->sh.a_rows, g1 - g0, j->esz));
    else
      CUC_CHECK(copy_cols(j, r, there, ld, mine, s->lda, j->sh.a_rows, g1 - g0, j->esz));
  }
out:
  if (rc == 0) rc = sync_copies(j);
  return rc;
}

int dn_fetch_rhs(dn_job_t *j, void *dst, int64_t ldd) {
  int rc = 0;
  const muster_shard_t *s = &j->call->shards[0];
  CUC_CHECK(copy_cols(j, 0, dst, ldd, s->b, s->ldb, j->sh.b_rows, j->a->nrhs, j->esz));
  rc = sync_copies(j);
out:
  return rc;
}

int dn_replicate_x(dn_job_t *j, const void *src, int64_t lds) {
  int rc = 0;
  for (int r = 0; r < j->R; r++) {
    const muster_shard_t *s = &j->call->shards[r];
    if (s->b != src) CUC_CHECK(copy_cols(j, r, s->b, s->ldb, src, lds, j->sh.x_rows, j->a->nrhs, j->esz));
  }
out:
  if (rc == 0) rc = sync_copies(j);
  return rc;
}

/* count packed items of esz bytes from src into the start of every rank's
 * w (to_w) or b, but the one that is src. */
static int replicate_packed(dn_job_t *j, int to_w, const void *src, int64_t count, size_t esz) {
  int rc = 0;
  for (int r = 0; r < j->R; r++) {
    void *dst = to_w ? j->call->shards[r].w : j->call->shards[r].b;
    if (dst != src) CUC_CHECK(copy_cols(j, r, dst, count, src, count, count, 1, esz));
  }
out:
  if (rc == 0) rc = sync_copies(j);
  return rc;
}

int dn_replicate_w(dn_job_t *j, const void *src, int64_t count) { return replicate_packed(j, 1, src, count, j->rsz); }

int dn_replicate_b(dn_job_t *j, const void *src, int64_t count) { return replicate_packed(j, 0, src, count, j->esz); }

int dn_rhs_on_target(dn_job_t *j, void **b, int64_t *ldb) {
  int rc = 0;
  const muster_shard_t *sh = j->call->shards;
  if (j->home >= 0) {
    *b = sh[j->home].b;
    *ldb = sh[j->home].ldb;
    if (j->home > 0) rc = dn_fetch_rhs(j, *b, *ldb);
    return rc;
  }
  CUC_CHECK(cuc_grow_checked(j->dev, &j->d->rhs, &j->d->rhs_bytes, (size_t)(j->sh.b_rows * j->a->nrhs) * j->esz,
                             "the right-hand sides", j->E));
  *b = j->d->rhs;
  *ldb = j->sh.b_rows;
  rc = dn_fetch_rhs(j, *b, *ldb);
out:
  return rc;
}
