/* providers/cusolvermg/relayout.c - run a block <-> cyclic plan (plan.h) on
 * the GPUs: every chain on one stream of its rank's device, chains spread
 * round-robin over that device's CMG_STREAMS streams, all devices at once.
 * Copies are flat cudaMemcpyAsync (cudaMemcpyDefault: same-device or
 * peer-to-peer over NVLink), never one per column. */
#include <string.h>

#include "cmgInt.h"

static char *resolve(const cmg_place_t *pl, void *const *user, void *const *work, void *stage) {
  switch (pl->buf) {
  case CMG_USER: return (char *)user[pl->rank] + pl->off;
  case CMG_WORK: return (char *)work[pl->rank] + pl->off;
  case CMG_STAGE: return (char *)stage + pl->off;
  default: return NULL;
  }
}

int cmg_plan_run(cmg_ctx_t *c, const cmg_plan_t *p, const int *ids, void *const *user,
                 void *const *work, cuc_err_t *E) {
  int rc = 0;
  int next[CMG_MAX_DEV] = {0};
  if (p->nchains == 0) return 0;
  for (int r = 0; r < p->nranks; r++) {
    CUC_CHECK(cmg_dev_ready(c, ids[r], E));
    if (p->stage_bytes > 0)
      for (int s = 0; s < CMG_STREAMS; s++)
        CUC_CHECK(cuc_grow(ids[r], &c->dev[ids[r]].stage[s], &c->dev[ids[r]].stage_bytes[s],
                           (size_t)p->stage_bytes, E));
  }
  for (int64_t k = 0; k < p->nchains; k++) {
    const cmg_chain_t *ch = &p->chains[k];
    int dev = ids[ch->rank];
    int s = next[ch->rank]++ % CMG_STREAMS;
    cmg_dev_t *d = &c->dev[dev];
    CUC_CU(dev, cudaSetDevice(dev));
    for (int64_t i = ch->first; i < ch->first + ch->count; i++) {
      const cmg_op_t *op = &p->ops[i];
      char *dst = resolve(&op->dst, user, work, d->stage[s]);
      if (op->src.buf == CMG_ZERO) {
        CUC_CU(dev, cudaMemsetAsync(dst, 0, (size_t)op->bytes, d->streams[s]));
      } else {
        const char *src = resolve(&op->src, user, work, d->stage[s]);
        CUC_CU(dev, cudaMemcpyAsync(dst, src, (size_t)op->bytes, cudaMemcpyDefault, d->streams[s]));
      }
    }
    cmg_stat_add(CMG_STAT_PLAN_OPS, (uint64_t)ch->count);
  }
out:
  /* always drain what was issued, so no copy outlives the call */
  for (int r = 0; r < p->nranks; r++) {
    cmg_dev_t *d = &c->dev[ids[r]];
    if (!d->ready) continue;
    for (int s = 0; s < CMG_STREAMS; s++) {
      cudaError_t st = cudaStreamSynchronize(d->streams[s]);
      if (st != cudaSuccess && rc == 0) rc = cuc_cuda(E, ids[r], "cudaStreamSynchronize(relayout)", st);
    }
  }
  return rc;
}
