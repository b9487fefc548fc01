/*
 * adapters/jax/staging.c - process-mode staging regions.
 *
 * In process mode the leader must reach every rank's shard, and XLA's
 * buffers cannot be reached from another process: host shards are private
 * memory, and CUDA IPC refuses XLA's own device allocations (jax 0.11.2,
 * every allocator).  So each call copies its shard into a region the leader
 * can map: muster_shard_alloc memory on the host, cuMemAlloc memory on a
 * GPU.  Regions are kept per process and reused (one per concurrent call,
 * MJ_STAGES at most), grown when a call needs more.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "cudrv.h"
#include "mjInt.h"
#include "muster/parse.h"

enum { MJ_STAGES = 16 };

struct mj_stage {
  void *p;
  size_t size;
  int busy;
  int device; /* CUDA ordinal of a device region, -1 for host memory */
};
static mj_stage_t stages[MJ_STAGES];
static pthread_mutex_t stage_lock = PTHREAD_MUTEX_INITIALIZER;

/* A free region on `device`, preferring one already large enough; else an
 * empty one or one of that device to grow.  Marked busy; NULL if none. */
static mj_stage_t *stage_pick(int device, size_t bytes) {
  mj_stage_t *pick = NULL;
  pthread_mutex_lock(&stage_lock);
  for (int i = 0; i < MJ_STAGES && !pick; i++)
    if (!stages[i].busy && stages[i].p && stages[i].device == device && stages[i].size >= bytes)
      pick = &stages[i];
  for (int i = 0; i < MJ_STAGES && !pick; i++)
    if (!stages[i].busy && (!stages[i].p || stages[i].device == device)) pick = &stages[i];
  if (pick) pick->busy = 1;
  pthread_mutex_unlock(&stage_lock);
  return pick;
}

/* Replace s's memory by `bytes` on `device` (-1: host).  s is busy, so it
 * is ours alone. */
static int stage_grow(mj_call_t *c, mj_stage_t *s, int device, size_t bytes) {
  if (s->p) {
    if (device < 0)
      muster_shard_free(s->p);
    else
      mj_cuda_free(c->stream, s->p);
  }
  s->p = NULL;
  s->size = 0;
  int rc = device < 0 ? muster_shard_alloc(bytes, &s->p)
                      : mj_cuda_alloc(c->stream, bytes, &s->p, c->err, sizeof c->err);
  if (rc < 0 && device < 0) return mj_set_err(c, rc, "%s", muster_last_error());
  if (rc < 0) return rc;
  s->size = bytes;
  s->device = device;
  return 0;
}

/* Tests only: MUSTER_JAX_TEST_FAIL_STAGE=K (a rank, 0..63) makes the first
 * staging of rank K in this process fail as an allocation that finds no
 * memory does, so that tests can check what its peers hear and that the
 * next call works (docs/jax.md, Environment).  Read once. */
static pthread_once_t fault_once = PTHREAD_ONCE_INIT;
static int fault_rank = -1; /* -1: unset, -2: malformed */
static int fault_fired;
static void fault_read(void) {
  const char *v = getenv("MUSTER_JAX_TEST_FAIL_STAGE");
  int64_t k;
  if (v) fault_rank = muster_scan_i64(v, strlen(v), 0, MUSTER_MAX_RANKS - 1, &k) == 0 ? (int)k : -2;
}

static int test_fault(mj_call_t *c) {
  pthread_once(&fault_once, fault_read);
  if (fault_rank == -2) {
    char q[96];
    const char *v = getenv("MUSTER_JAX_TEST_FAIL_STAGE");
    return mj_set_err(c, MUSTER_EINVAL, "MUSTER_JAX_TEST_FAIL_STAGE: %s is not a rank in 0..%d",
                      muster_quote(v ? v : "", v ? strlen(v) : 0, q, sizeof q), MUSTER_MAX_RANKS - 1);
  }
  if (fault_rank != c->rank || __atomic_exchange_n(&fault_fired, 1, __ATOMIC_ACQ_REL)) return 0;
  return mj_set_err(c, MUSTER_ENOMEM, "no memory for the staging region (a test's fault: "
                    "MUSTER_JAX_TEST_FAIL_STAGE=%d)", fault_rank);
}

int mj_stage_get(mj_call_t *c, size_t bytes, mj_stage_t **out) {
  int rc = test_fault(c);
  if (rc < 0) return rc;
  int device = c->cuda ? c->device : -1;
  mj_stage_t *pick = stage_pick(device, bytes);
  if (!pick) return mj_set_err(c, MUSTER_EBUSY, "more than %d calls at once in this process", MJ_STAGES);
  if (pick->size < bytes) {
    rc = stage_grow(c, pick, device, bytes);
    if (rc < 0) {
      mj_stage_put(pick);
      return rc;
    }
  }
  *out = pick;
  return 0;
}

void *mj_stage_ptr(const mj_stage_t *s) { return s->p; }

void mj_stage_put(mj_stage_t *s) {
  pthread_mutex_lock(&stage_lock);
  s->busy = 0;
  pthread_mutex_unlock(&stage_lock);
}
