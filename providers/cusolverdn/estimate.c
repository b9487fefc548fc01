/*
 * providers/cusolverdn/estimate.c - the estimate hook: can this call run on
 * one GPU here, and how long would it take?  (muster/provider_v2.h)
 *
 * Refused (MUSTER_EUNSUPPORTED, the reason in est->note) when the memory
 * is not CUDA memory (0, muster_provider_choose's "any memory", is
 * answered as if it were, the leader's shard on GPU 0 and the others
 * elsewhere unless the query names devices), the ranks span nodes, an option is malformed, or the
 * target GPU cannot hold what dn_need() says the call needs: the runtime
 * then routes the call to another engine (cusolvermg spreads it over every
 * GPU).  Free memory is the target's free_bytes from the query (published
 * by a rank on that GPU) plus what this provider already holds there
 * (reused, not allocated again); 0 (unknown) skips the check.  Otherwise
 * est->seconds is the model's (model.c), est->peak_bytes dn_need's total.
 * No CUDA call: the query has everything but the m (ldb) of gels, geqrf,
 * gesvd and polar, which the provider ABI's query does not carry: the
 * estimate takes m = n (for a tall A a lower bound) and says so in its
 * note; solve() then refuses (MUSTER_ENOMEM, naming the bytes) a tall A
 * whose buffers do not fit.  geqrf, gesvd and polar get the model's time
 * from their flop counts (model.c: gesvd's and polar's rate measured on
 * an H200, geqrf's not yet).
 */
#include <limits.h>
#include <stdio.h>

#include "dnInt.h"

#define GB(x) ((double)(x) / 1e9)

static int refuse(muster_provider_estimate_t *est, const char *why) {
  snprintf(est->note, sizeof est->note, "%s", why);
  est->seconds = -1;
  return MUSTER_EUNSUPPORTED;
}

/* Free bytes of the target as published by a rank on it: the leader's own
 * when it is there; another rank's only in threads mode (ordinals of other
 * processes may name other GPUs).  0: unknown. */
static uint64_t target_free(const muster_provider_query_t *q, int target) {
  if (!q->free_bytes || !q->devices) return 0;
  if (q->devices[0] == target) return q->free_bytes[0];
  if (q->span == MUSTER_SPAN_THREADS)
    for (int r = 1; r < q->nranks; r++)
      if (q->devices[r] == target) return q->free_bytes[r];
  return 0;
}

int dn_estimate(void *vc, const muster_provider_query_t *q, muster_provider_estimate_t *est) {
  dn_ctx_t *c = vc;
  char why[120];
  int target, path = DN_POTRI_LEGACY;
  est->seconds = -1;
  est->peak_bytes = 0;
  est->note[0] = '\0';
  /* mem 0: muster_provider_choose's "any memory" (where the CLI decides
   * whether its shards go to GPUs): answered as if they were on CUDA
   * devices, the leader's GPU 0 unless the query names devices */
  const int any = q && q->mem == 0;
  if (!q || q->nranks < 1 || q->nranks > MUSTER_MAX_RANKS || (!q->devices && !any) || q->n < 1 ||
      !muster_dtype_bytes(q->dtype) || !muster_routine_str(q->routine))
    return refuse(est, "malformed query");
  const int takes_b = (muster_routine_takes(q->routine) & MUSTER_TAKES_B) != 0;
  const int factors = (muster_routine_takes(q->routine) & MUSTER_TAKES_O) != 0;
  /* the factor routines' B is output only: gesvd's values need none */
  if (takes_b && q->nrhs < (factors ? 0 : 1)) return refuse(est, "malformed query");
  if ((q->flags & MUSTER_LOGDET) && q->routine != MUSTER_POTRS) return refuse(est, "MUSTER_LOGDET is for potrs only");
  if (q->mem != MUSTER_MEM_CUDA && !any) return refuse(est, "needs CUDA device memory");
  if (q->span != MUSTER_SPAN_THREADS && q->span != MUSTER_SPAN_PROCESSES)
    return refuse(est, "one node only (threads or processes)");
  const int leader = q->devices ? q->devices[0] : 0;
  if (leader < 0 && !any) return refuse(est, "the leader holds no CUDA device");
  if (dn_target_device(leader < 0 ? 0 : leader, &target, why, sizeof why) < 0 ||
      dn_potri_path(q->n, q->dtype, &path, why, sizeof why) < 0)
    return refuse(est, why);
  if ((uint64_t)q->n > (UINT64_MAX >> 8) / (uint64_t)q->n) return refuse(est, "n too large");
  if (q->routine == MUSTER_GELS && dn_gels_ormqr_elements(q->n, q->n) > INT_MAX)
    return refuse(est, "gels: n too large for cusolverDn's ormqr (its int workspace count passes INT_MAX)");
  if (factors && q->n > INT_MAX) return refuse(est, "n too large for cusolverDn's orgqr (it takes int)");
  /* the m (= ldb) of gels, geqrf, gesvd and polar is not in the query:
   * taken as n (solve() checks the real bytes again) */
  dn_shape_t s = {q->routine, q->dtype, q->n, takes_b ? q->nrhs : 0, q->n, q->flags, q->nranks, 0, 0, path};
  for (int r = 0; r < q->nranks; r++) s.on_target += (q->devices ? q->devices[r] : r == 0 ? leader : -1) == target;
  s.in_place = dn_in_place(q->routine, q->flags, q->nranks, leader == target, path);
  dn_need_t need;
  dn_need(&s, &need);
  est->peak_bytes = need.total;
  uint64_t free_b = target_free(q, target), held = 0;
  if (c) {
    pthread_mutex_lock(&c->mu);
    held = dn_dev_held(&c->dev[target]);
    pthread_mutex_unlock(&c->mu);
  }
  if (free_b && need.total > free_b + held) {
    snprintf(why, sizeof why, "needs %.2f GB on device %d (matrix %.2f + workspace %.2f), %.2f GB free",
             GB(need.total), target, GB(need.matrix), GB(need.workspace + need.extra), GB(free_b + held));
    return refuse(est, why);
  }
  double moves = 0;
  uint64_t crossing = 0;
  est->seconds = dn_model_seconds(&s, &moves, &crossing);
  snprintf(est->note, sizeof est->note, "model: %.4f s on device %d (moves %.4f s, %.2f GB between GPUs%s)%s%s",
           est->seconds, target, moves, GB(crossing), s.in_place ? ", in place" : "",
           free_b ? "" : "; free memory unknown", (muster_routine_takes(q->routine) & MUSTER_TAKES_M) ? "; m taken as n" : "");
  return 0;
}
