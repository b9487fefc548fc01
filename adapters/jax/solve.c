/*
 * adapters/jax/solve.c - one rank's part of the solve: its shard and
 * muster_solve_named (join, solve, leave), staged in process mode
 * (staging.c), and what the last solve took (muster_jax_last_solve).
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "mjInt.h"
#include "muster/clock.h"

/* ---- what the last solve of rank 0 took (benchmarks read it) ---------------- */

static pthread_mutex_t stats_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
  double solve_s;    /* muster_solve_named on rank 0: join + rendezvous + provider
                        + results + leave (the join and leave of a cached group
                        make no system call) */
  double provider_s; /* the provider alone (muster_solve_result.seconds)        */
  int64_t tile;
  char provider[32];
  uint64_t calls;
} stats;

static void stats_record(const mj_call_t *c, double t, const muster_solve_result_t *res) {
  if (c->rank != 0) return;
  pthread_mutex_lock(&stats_lock);
  stats.solve_s = t;
  stats.provider_s = res->seconds;
  stats.tile = res->tile;
  snprintf(stats.provider, sizeof stats.provider, "%s", res->provider);
  stats.calls++;
  pthread_mutex_unlock(&stats_lock);
}

/* The last successful solve seen by a rank 0 of this process: seconds in
 * muster_solve (what the C path of the same call costs), seconds in the
 * provider, the tile and provider used, and how many solves so far. */
MJ_EXPORT int muster_jax_last_solve(double *solve_s, double *provider_s, int64_t *tile,
                                    char *provider, size_t cap, uint64_t *calls) {
  pthread_mutex_lock(&stats_lock);
  if (solve_s) *solve_s = stats.solve_s;
  if (provider_s) *provider_s = stats.provider_s;
  if (tile) *tile = stats.tile;
  if (provider && cap) snprintf(provider, cap, "%s", stats.provider);
  if (calls) *calls = stats.calls;
  pthread_mutex_unlock(&stats_lock);
  return 0;
}

/* ---- the shard ------------------------------------------------------------------ */

/* Bytes of the outputs the solve writes, and where each sits in a stage:
 * a, then b and w each at a 64-byte boundary. */
typedef struct out_sizes {
  size_t a, b, w;
  size_t b_at, w_at, total;
} out_sizes_t;

static size_t align64(size_t x) { return (x + 63) & ~(size_t)63; }

static out_sizes_t out_sizes(const mj_call_t *c) {
  out_sizes_t z;
  z.a = mj_bytes_of(c, c->a_out);
  z.b = c->b_out ? mj_bytes_of(c, c->b_out) : 0;
  z.w = c->w_out ? mj_bytes_of(c, c->w_out) : 0;
  z.b_at = align64(z.a);
  z.w_at = z.b_at + align64(z.b);
  z.total = z.w_at + z.w;
  return z;
}

/* This rank's shard: XLA's buffers, or the stage at base. */
static void fill_shard(mj_call_t *c, muster_shard_t *s, char *base) {
  out_sizes_t z = out_sizes(c);
  memset(s, 0, sizeof *s);
  s->mem = c->cuda ? MUSTER_MEM_CUDA : MUSTER_MEM_HOST;
  s->device = c->cuda ? c->device : -1;
  s->lda = c->a_out->dims[0];
  s->ncols = c->a_out->dims[1];
  if (c->at.layout == MUSTER_LAYOUT_BLOCK) {
    /* the last block shards may be short: their buffers keep S columns,
     * and the columns past n are not touched */
    s->col0 = muster_layout_block_col0(&c->geom, c->rank);
    s->ncols = muster_layout_block_ncols(&c->geom, c->rank);
  }
  s->a = base ? base : c->a_out->data;
  if (c->b_out) {
    s->b = base ? base + z.b_at : c->b_out->data;
    s->ldb = c->b_out->dims[0];
  }
  if (c->w_out) s->w = base ? base + z.w_at : c->w_out->data;
  s->stream = c->stream;
}

/* ---- the solve ----------------------------------------------------------------- */

static muster_solve_args_t solve_args(const mj_call_t *c) {
  muster_solve_args_t args;
  memset(&args, 0, sizeof args);
  args.routine = (muster_routine_t)c->at.routine;
  args.dtype = c->dtype;
  args.n = c->at.n;
  args.nrhs = c->at.nrhs;
  args.tile = c->at.tile;
  args.layout = (muster_layout_t)c->at.layout;
  args.flags = (unsigned)c->at.flags;
  args.provider = c->at.provider[0] ? c->at.provider : NULL;
  return args;
}

/* Join this launch's group, solve, leave (muster_solve_named). */
static int run_solve(mj_call_t *c, const muster_shard_t *mine, muster_solve_result_t *res) {
  const char *routine = muster_routine_name((muster_routine_t)c->at.routine);
  char name[MUSTER_MAX_NAME + 1];
  int pooled;
  int rc = mj_group_name(c, name, sizeof name, &pooled);
  if (rc < 0) return rc;
  muster_named_t who = {.group = name, .rank = c->rank, .nranks = c->at.nranks, .job = NULL,
                        .timeout_s = 0.0, .device = c->device};
  muster_solve_args_t args = solve_args(c);
  double t0 = muster_clock_s();
  rc = muster_solve_named(&who, &args, mine, res);
  if (rc == 0) stats_record(c, muster_clock_s() - t0, res);
  else
    mj_set_err(c, rc, "muster_jax %s rank %d/%d (device %d, group %s): %s", routine, c->rank,
               c->at.nranks, c->device, name, muster_last_error());
  mj_group_name_release(pooled, rc < 0, c->at.local_ranks);
  return rc;
}

void mj_abort_peers(mj_call_t *c, int code) {
  char why[MJ_ERRLEN], name[MUSTER_MAX_NAME + 1];
  int pooled;
  memcpy(why, c->err, sizeof why);
  /* on cuda the rank operand is read on XLA's stream */
  if ((!c->rank_known && ((c->cuda && !c->stream) || mj_read_rank(c) < 0)) ||
      mj_group_name(c, name, sizeof name, &pooled) < 0) {
    memcpy(c->err, why, sizeof why);
    return;
  }
  muster_named_t who = {.group = name, .rank = c->rank, .nranks = c->at.nranks, .job = NULL,
                        .timeout_s = 0.0, .device = c->device >= 0 ? c->device : -1};
  (void)muster_abort_named(&who, code < 0 ? code : MUSTER_EINVAL, why);
  mj_group_name_release(pooled, 1, c->at.local_ranks);
  memcpy(c->err, why, sizeof why);
}

/* The staged solve: XLA's buffers into the stage, the solve, the results
 * back (staging.c says why).  A stage that cannot be had or filled fails
 * this rank before it joins: the peers are told. */
static int solve_staged(mj_call_t *c, muster_solve_result_t *res) {
  out_sizes_t z = out_sizes(c);
  mj_stage_t *st = NULL;
  int rc = mj_stage_get(c, z.total, &st);
  if (rc < 0) {
    mj_set_err(c, rc, "muster_jax: staging buffer of %zu bytes: %s", z.a + z.b + z.w, c->err);
    mj_abort_peers(c, rc);
    return rc;
  }
  muster_shard_t mine;
  fill_shard(c, &mine, mj_stage_ptr(st));
  if ((rc = mj_mem_copy(c, mine.a, c->a_out->data, z.a)) < 0 ||
      (rc = mj_mem_copy(c, mine.b, z.b ? c->b_out->data : NULL, z.b)) < 0) {
    mj_stage_put(st);
    mj_set_err(c, rc, "muster_jax: staging the shard: %s", c->err);
    mj_abort_peers(c, rc);
    return rc;
  }
  rc = run_solve(c, &mine, res);
  if (rc == 0) {
    int crc = mj_mem_copy(c, c->a_out->data, mine.a, z.a);
    if (crc == 0) crc = mj_mem_copy(c, z.b ? c->b_out->data : NULL, mine.b, z.b);
    if (crc == 0) crc = mj_mem_copy(c, z.w ? c->w_out->data : NULL, mine.w, z.w);
    if (crc < 0) rc = mj_set_err(c, crc, "muster_jax: copying the result back: %s", c->err);
  }
  mj_stage_put(st);
  return rc;
}

int mj_solve(mj_call_t *c, muster_solve_result_t *res) {
  if (c->at.process_mode) return solve_staged(c, res);
  muster_shard_t mine;
  fill_shard(c, &mine, NULL);
  return run_solve(c, &mine, res);
}
