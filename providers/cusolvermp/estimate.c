/* providers/cusolvermp/estimate.c - estimate(): can this call run here?
 * The libraries, one GPU per rank, and the memory rule (plan.h: mp_need)
 * against each rank's free bytes (gels, geqrf, gesvd, polar: the query carries no m,
 * their rows, so the rule counts m = n; for a tall A a lower bound).  No
 * time model yet (seconds < 0): the runtime ranks this provider by its cost
 * table's time (cusolvermp.cost) against the others' estimates and tables,
 * by its priority where the table has no row of the routine and dtype
 * (docs/choice.md "Ranking"). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "mp.h"

#define NOPE(code, ...) (snprintf(est->note, sizeof est->note, __VA_ARGS__), (code))

int mp_estimate(void *ctx, const muster_provider_query_t *q, muster_provider_estimate_t *est) {
  (void)ctx;
  memset(est, 0, sizeof *est);
  est->seconds = -1;
  const mp_libs_t *L = mp_libs_get();
  if (L->rc < 0) return NOPE(L->rc, "%s", L->brief);
  if (!mp_runs(q->routine)) return NOPE(MUSTER_EUNSUPPORTED, "potrs, syevd, getrs, gels, geqrf, gesvd, polar only");
  char why[200];
  int rc = 0;
  if (q->nranks > 1 && q->span == MUSTER_SPAN_THREADS)
    return NOPE(MUSTER_EUNSUPPORTED, "one process per GPU: %d ranks are threads of one process", q->nranks);
  if (q->mem == MUSTER_MEM_CUDA && q->ndevices > 0 && q->ndevices < q->nranks)
    return NOPE(MUSTER_EUNSUPPORTED, "one GPU per rank: %d ranks on %d GPUs", q->nranks, q->ndevices);
  muster_solve_args_t a = {.routine = q->routine, .dtype = q->dtype, .n = q->n, .nrhs = q->nrhs, .tile = q->tile,
                           .layout = q->layout, .flags = q->flags};
  mp_shape_t s;
  rc = mp_shape_of(&a, q->nranks, NULL, &s, why, sizeof why);
  if (rc < 0) return NOPE(rc, "%.110s", why);
  if ((rc = mp_refused(L->rel, &s, why, sizeof why)) < 0) return NOPE(rc, "%.119s", why);
  mp_layout_t solver = mp_layout_solver(q->n, q->n, s.tile, s.nprow, s.npcol);
  for (int r = 0; r < q->nranks; r++) {
    muster_dist_t d = q->layout == MUSTER_LAYOUT_CYCLIC && q->tile > 0
                          ? muster_layout_cyclic_dist(q->n, q->tile, q->nranks, r, q->n)
                          : muster_layout_block_dist(q->n, q->nranks, r, q->n);
    mp_layout_t user = mp_layout_of_dist(&d);
    s.in_place = mp_layout_same(&user, &solver) && !mp_factors_a_copy(q->routine, q->flags);
    int row, col;
    mp_coords(&solver, r, &row, &col);
    mp_need_t need;
    mp_need(&s, row, col, &need);
    if (need.total > est->peak_bytes) est->peak_bytes = need.total;
    if (q->free_bytes && q->free_bytes[r] && need.total > q->free_bytes[r])
      return NOPE(MUSTER_EUNSUPPORTED, "rank %d needs %" PRIu64 " MiB on its GPU, %" PRIu64 " MiB free", r,
                  need.total >> 20, q->free_bytes[r] >> 20);
  }
  snprintf(est->note, sizeof est->note, "memory rule, %dx%d grid, tile %" PRId64 "; no time model", s.nprow, s.npcol,
           s.tile);
  return 0;
}
