/*
 * runtime/solve/comm_stage.c - staging a rank's pieces for the one-node
 * route's leader (see comm_stage.h).
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "solve/comm_stage.h"
#include "base/devices.h"
#include "base/env.h"
#include "muster/layout.h"

/* Tests only: MUSTER_COMM_TEST_FAIL_STAGE (env.h), read once; it fails the
 * first region of that rank in this process, once. */
static pthread_once_t fault_once = PTHREAD_ONCE_INIT;
static int fault_rank = -1, fault_bad, fault_fired;
static void fault_read(void) { fault_bad = muster__env_comm_test_fail_stage(&fault_rank) < 0; }

static int test_fault(int rank) {
  pthread_once(&fault_once, fault_read);
  if (fault_bad) return muster__env_comm_test_fail_stage(&rank); /* its message again */
  if (rank != fault_rank || __atomic_exchange_n(&fault_fired, 1, __ATOMIC_ACQ_REL)) return 0;
  return muster__err(MUSTER_ENOMEM, "no memory for it (a test's fault: MUSTER_COMM_TEST_FAIL_STAGE=%d)", rank);
}

/* Bytes from a piece's pointer on for `cols` columns of `rows` at ld. */
static size_t extent(int64_t ld, int64_t rows, int64_t cols, size_t esz) {
  return rows > 0 && cols > 0 ? (size_t)((cols - 1) * ld + rows) * esz : 0;
}

/* 1 when the leader can reach p as it is (host: muster_shard_alloc memory,
 * whose ref desc.c found; CUDA: an allocation CUDA IPC opens), 0 when it
 * must be staged, or an error. */
static int reachable(muster__stage_t *s, const muster__desc_t *d, const void *p, const muster__shard_ref_t *ref) {
  if (d->mem == MUSTER_MEM_HOST) return ref->fd >= 0;
  return muster__cuda_shareable(d->device, p, &s->seen);
}

/* The bytes of a, b and w to stage (0: as they are). */
static int stage_sizes(muster__stage_t *s, const muster__desc_t *d, const muster_shard_t *mine,
                       size_t len[MUSTER__NSTAGE]) {
  size_t esz = muster_dtype_size(d->dtype);
  muster_shape_t sh;
  muster_routine_shape(d->routine, d->n, d->nrhs, d->ldb, &sh); /* validated */
  const void *p[MUSTER__NSTAGE] = {mine->a, mine->b, mine->w};
  const muster__shard_ref_t *ref[MUSTER__NSTAGE] = {&d->ra, &d->rb, &d->rw};
  size_t need[MUSTER__NSTAGE] = {
      extent(d->lda, sh.a_rows, d->ncols, esz), mine->b ? extent(d->ldb, sh.b_rows, sh.nrhs, esz) : 0,
      mine->w ? (size_t)muster__desc_w_count(d) * muster_dtype_real_size(d->dtype) : 0};
  /* A goes back only where the caller reads it after the call */
  s->a_back = muster_routine_writes_a(d->routine, d->flags, sh.a_rows, d->n);
  for (int k = 0; k < MUSTER__NSTAGE; k++) {
    len[k] = 0;
    if (!p[k] || !need[k]) continue;
    int rc = reachable(s, d, p[k], ref[k]);
    if (rc < 0) return rc;
    len[k] = rc ? 0 : need[k];
  }
  return 0;
}

static void region_free(muster__stage_t *s) {
  if (s->region && s->mem == MUSTER_MEM_HOST) muster_shard_free(s->region);
  else if (s->region) muster__cuda_free(s->device, s->region);
  s->region = NULL;
  s->cap = 0;
}

/* A region of at least total bytes where the pieces' memory is. */
static int region(muster__stage_t *s, int mem, int device, size_t total) {
  if (s->region && s->cap >= total && s->mem == mem && s->device == device) return 0;
  region_free(s);
  int rc = test_fault(s->rank);
  if (rc == 0)
    rc = mem == MUSTER_MEM_HOST ? muster_shard_alloc(total, &s->region) : muster__cuda_alloc(device, total, &s->region);
  if (rc < 0) {
    s->region = NULL;
    return muster__err_prefix(rc, "muster_solve_comm: staging %zu bytes of this rank's pieces for the one-node "
                              "engine's leader", total);
  }
  s->cap = total;
  s->mem = mem;
  s->device = device;
  return 0;
}

static int copy(const muster__stage_t *s, void *dst, const void *src, size_t bytes, void *stream) {
  if (s->mem == MUSTER_MEM_HOST) {
    memcpy(dst, src, bytes);
    return 0;
  }
  return muster__cuda_copy(s->device, dst, src, bytes, stream);
}

int muster__stage_in(muster__stage_t *s, const muster__desc_t *d, const muster_shard_t *mine,
                     muster_shard_t *use) {
  *use = *mine;
  int rc = stage_sizes(s, d, mine, s->len);
  if (rc < 0) {
    memset(s->len, 0, sizeof s->len);
    return rc;
  }
  size_t total = 0;
  for (int k = 0; k < MUSTER__NSTAGE; k++) {
    s->off[k] = total;
    total += (s->len[k] + 255) & ~(size_t)255; /* each piece aligned as an allocation would be */
  }
  if (total == 0) return 0;
  if ((rc = region(s, mine->mem, mine->mem == MUSTER_MEM_CUDA ? mine->device : -1, total)) < 0) {
    memset(s->len, 0, sizeof s->len);
    return rc;
  }
  void **to[MUSTER__NSTAGE] = {&use->a, &use->b, &use->w};
  const void *from[MUSTER__NSTAGE] = {mine->a, mine->b, mine->w};
  for (int k = 0; k < MUSTER__NSTAGE && rc == 0; k++) {
    if (!s->len[k]) continue;
    *to[k] = (char *)s->region + s->off[k];
    rc = copy(s, *to[k], from[k], s->len[k], mine->stream); /* w too: a routine may keep some of it */
  }
  if (rc < 0) memset(s->len, 0, sizeof s->len);
  return rc;
}

int muster__stage_out(muster__stage_t *s, const muster_shard_t *mine) {
  void *to[MUSTER__NSTAGE] = {mine->a, mine->b, mine->w};
  int rc = 0;
  for (int k = 0; k < MUSTER__NSTAGE; k++) {
    int back = s->len[k] && rc == 0 && (k != MUSTER__STAGE_A || s->a_back);
    if (back) rc = copy(s, to[k], (const char *)s->region + s->off[k], s->len[k], mine->stream);
    s->len[k] = 0;
  }
  return rc;
}

void muster__stage_free(muster__stage_t *s) {
  region_free(s);
  memset(&s->seen, 0, sizeof s->seen);
}
