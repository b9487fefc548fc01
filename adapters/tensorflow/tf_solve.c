/*
 * adapters/tensorflow/tf_solve.c - the muster side of one call, with no
 * TensorFlow in it: the work buffer the shard lives in, the rendezvous
 * (join group "<routine>.<key>" as rank of nranks, tell each other the
 * step and the widths, solve, leave) and the abort that makes the peers
 * fail at once.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tfInt.h"

#define ALIGN 64 /* each of a, b, w starts on a cache line */

static size_t round_up(size_t x) { return (x + ALIGN - 1) / ALIGN * ALIGN; }

void muster__tf_work_free(muster__tf_kernel_t *k) {
  if (!k->buf) return;
  if (k->shared) muster_shard_free(k->buf);
  else free(k->buf);
  k->buf = NULL;
  k->cap = 0;
}

int muster__tf_work_buffers(muster__tf_kernel_t *k, muster__tf_work_t *w) {
  size_t sa = round_up((size_t)(w->m * w->ncols) * w->esz);
  size_t sb = round_up((size_t)(w->m * w->nrhs) * w->esz);
  size_t sw = round_up((size_t)w->m * w->rsz);
  size_t need = sa + sb + sw;
  if (need > k->cap) {
    muster__tf_work_free(k);
    if (k->shared) {
      int rc = muster_shard_alloc(need, &k->buf);
      if (rc < 0) return rc;
    } else if (posix_memalign(&k->buf, ALIGN, need) != 0) {
      k->buf = NULL;
      return MUSTER_ENOMEM;
    }
    k->cap = need;
  }
  w->a = k->buf;
  w->b = w->nrhs ? (char *)k->buf + sa : NULL;
  /* syevd's n eigenvalues, or potrs's one log det */
  w->w = k->routine == MUSTER_SYEVD || k->logdet ? (char *)k->buf + sa + sb : NULL;
  return 0;
}

void muster__tf_abort_peers(const muster__tf_kernel_t *k, int code, const char *why) {
  muster_group_opts_t o = {.job = NULL, .timeout_s = k->timeout_s, .device = -1};
  muster_group_t *g = NULL;
  if (muster_group_join(k->group, k->rank, k->nranks, &o, &g) < 0) return;
  (void)muster_group_abort(g, code, why);
  (void)muster_group_leave(g);
}

/* What each participant tells the others before the solve.  step: its
 * TensorFlow step id.  Replicas of one function call share it; two
 * overlapping runs of one traced function use the same groups, and without
 * this check rank 0 of one run could solve with rank 1 of the other.
 * ncols: its block's width, from which gels learns A's n (the sum) and
 * this block's first column (the sum below it). */
typedef struct facts {
  int64_t step, ncols;
} facts_t;

/* Whether k's calls exchange facts before solving. */
static bool exchanges(const muster__tf_kernel_t *k) {
  return k->same_step || (muster_routine_takes(k->routine) & MUSTER_TAKES_M);
}

/* Every rank sees every rank's facts, so all detect a step mismatch alike
 * and abort.  0 or a MUSTER_E* code (detail says why). */
static int tell_facts(const muster__tf_kernel_t *k, muster_group_t *g, int64_t step,
                      muster__tf_work_t *w, char *detail, size_t dlen) {
  facts_t mine = {.step = step, .ncols = w->ncols};
  int64_t n = 0, col0 = 0;
  int rc = muster_group_exchange(g, &mine, sizeof mine);
  if (rc < 0) {
    snprintf(detail, dlen, "%s", muster_last_error());
    return rc;
  }
  for (int r = 0; r < k->nranks; r++) {
    const void *p = NULL;
    size_t len = 0;
    facts_t theirs;
    if ((rc = muster_group_payload(g, r, &p, &len)) < 0) {
      snprintf(detail, dlen, "%s", muster_last_error());
      return rc;
    }
    if (len != sizeof theirs) continue;
    memcpy(&theirs, p, sizeof theirs);
    if (k->same_step && theirs.step != step) {
      char why[400];
      snprintf(why, sizeof why, "rank %d is in TensorFlow step %" PRId64 " but rank %d in step %"
               PRId64 ": two runs of one traced function overlap (one trace's muster ops "
               "cannot run concurrently with themselves)", k->rank, step, r, theirs.step);
      (void)muster_group_abort(g, MUSTER_EMISMATCH, why);
      snprintf(detail, dlen, "%s", why);
      return MUSTER_EMISMATCH;
    }
    n += theirs.ncols;
    if (r < k->rank) col0 += theirs.ncols;
  }
  if (muster_routine_takes(k->routine) & MUSTER_TAKES_M) {
    w->n = n;        /* the runtime checks the widths against its block layout */
    w->col0 = col0;
  }
  return 0;
}

/* Solve with w's buffers, n and col0 known. */
static int solve(const muster__tf_kernel_t *k, muster_group_t *g, const muster__tf_work_t *w) {
  /* the work buffers are copies: providers may factor A in place */
  unsigned flags = (muster_routine_takes(k->routine) & MUSTER_TAKES_B ? MUSTER_NO_FACTOR : 0) |
                   (k->logdet ? MUSTER_LOGDET : 0);
  muster_solve_args_t args = {
      .routine = k->routine, .dtype = w->dtype, .n = w->n, .nrhs = w->nrhs, .tile = k->tile,
      .layout = MUSTER_LAYOUT_BLOCK, .flags = flags,
      .provider = k->provider[0] ? k->provider : NULL};
  muster_shard_t mine = {.mem = MUSTER_MEM_HOST, .device = -1, .a = w->a, .lda = w->m,
                         .col0 = w->col0, .ncols = w->ncols, .b = w->b, .ldb = w->m,
                         .w = w->w, .stream = NULL};
  muster_solve_result_t res;
  return muster_solve(g, &args, &mine, &res);
}

int muster__tf_rendezvous(const muster__tf_kernel_t *k, muster__tf_work_t *w, int64_t step,
                          const char **phase, char *detail, size_t len) {
  muster_group_opts_t o = {.job = NULL, .timeout_s = k->timeout_s, .device = -1};
  muster_group_t *g = NULL;
  *phase = "joining the group";
  int rc = muster_group_join(k->group, k->rank, k->nranks, &o, &g);
  if (rc < 0) {
    snprintf(detail, len, "%s", muster_last_error());
    return rc;
  }
  if (exchanges(k)) {
    *phase = "telling each other the step and the widths";
    rc = tell_facts(k, g, step, w, detail, len);
  }
  if (rc == 0) {
    *phase = "solving";
    rc = solve(k, g, w);
    if (rc < 0) snprintf(detail, len, "%s", muster_last_error());
  }
  int lrc = muster_group_leave(g);
  if (rc == 0 && lrc < 0) {
    *phase = "leaving the group";
    snprintf(detail, len, "%s", muster_last_error());
    rc = lrc;
  }
  return rc;
}
