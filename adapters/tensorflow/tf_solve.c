/*
 * adapters/tensorflow/tf_solve.c - the muster side of one call, with no
 * TensorFlow in it: the work buffer the shard lives in, the solve by group
 * name (muster_solve_named: join group "<routine>.<key>" as rank of nranks,
 * check the step, learn gels's n, solve, leave) and the abort that makes
 * the peers fail at once (muster_abort_named).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tfInt.h"

#define ALIGN 64 /* each of a, b, w starts on a cache line */

static size_t round_up(size_t x) { return (x + ALIGN - 1) / ALIGN * ALIGN; }

void mtf_work_free(mtf_kernel_t *k) {
  if (!k->buf) return;
  if (k->shared) muster_shard_free(k->buf);
  else free(k->buf);
  k->buf = NULL;
  k->cap = 0;
}

int mtf_work_buffers(mtf_kernel_t *k, mtf_work_t *w) {
  size_t sa = round_up((size_t)(w->m * w->ncols) * w->esz);
  size_t sb = round_up((size_t)(w->m * w->nrhs) * w->esz);
  size_t sw = round_up((size_t)w->m * w->rsz);
  size_t need = sa + sb + sw;
  if (need > k->cap) {
    mtf_work_free(k);
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

/* This rank's seat in k's group (muster/named.h). */
static muster_named_t who_of(const mtf_kernel_t *k) {
  muster_named_t who = {.group = k->group, .rank = k->rank, .nranks = k->nranks, .job = NULL,
                        .timeout_s = k->timeout_s, .device = -1};
  return who;
}

void mtf_abort_peers(const mtf_kernel_t *k, int code, const char *why) {
  muster_named_t who = who_of(k);
  (void)muster_abort_named(&who, code, why);
}

/* TensorFlow's step id as the named solve's tag: replicas of one function
 * call share it; two overlapping runs of one traced function use the same
 * groups, and without this check rank 0 of one run could solve with rank 1
 * of the other.  The tag must not be 0 (no tag): the step is moved off it. */
#define STEP_TAG_SALT 0x7466737465702d31ull /* "tfstep-1" */

int mtf_rendezvous(const mtf_kernel_t *k, mtf_work_t *w, int64_t step,
                          const char **phase, char *detail, size_t len) {
  /* the work buffers are copies: providers may factor A in place */
  unsigned flags = (muster_routine_takes(k->routine) & MUSTER_TAKES_B ? MUSTER_NO_FACTOR : 0) |
                   (k->logdet ? MUSTER_LOGDET : 0);
  /* gels: n == 0, the runtime learns n and col0 from the widths */
  muster_solve_args_t args = {
      .routine = k->routine, .dtype = w->dtype, .n = w->n, .nrhs = w->nrhs, .tile = k->tile,
      .layout = MUSTER_LAYOUT_BLOCK, .flags = flags,
      .provider = k->provider[0] ? k->provider : NULL};
  muster_shard_t mine = {.mem = MUSTER_MEM_HOST, .device = -1, .a = w->a, .lda = w->m,
                         .col0 = w->col0, .ncols = w->ncols, .b = w->b, .ldb = w->m,
                         .w = w->w, .stream = NULL};
  muster_named_t who = who_of(k);
  if (k->same_step) who.tag = ((uint64_t)step ^ STEP_TAG_SALT) | (step == (int64_t)STEP_TAG_SALT);
  muster_solve_result_t res;
  *phase = "solving";
  int rc = muster_solve_named(&who, &args, &mine, &res);
  if (rc < 0) snprintf(detail, len, "%s", muster_last_error());
  else w->n = who.n;
  return rc;
}
