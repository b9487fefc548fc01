/*
 * runtime/solve/leader.c - running a leader provider (see leader.h).
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/forklock.h"
#include "solve/leader.h"
#include "muster/layout.h"
#include "base/proc.h"
#include "muster/clock.h"

void muster__leader_export(muster__provider_t *p, const muster_shard_t *mine, int process_mode,
                           muster__desc_t *d, void *blob) {
  d->bloblen = 0;
  if (d->problem || !p || !p->v->local_export) return;
  char err[200] = "";
  size_t len = 0;
  int rc = p->v->local_export(p->ctx, mine, process_mode, blob, MUSTER__BLOB_CAP, &len, err, sizeof err);
  if (rc < 0) {
    muster__desc_problem(d, rc, "provider %s local_export: %s", p->name, err);
    return;
  }
  d->bloblen = (uint32_t)(len <= MUSTER__BLOB_CAP ? len : MUSTER__BLOB_CAP);
}

static int64_t resolve_tile(muster__provider_t *p, const muster__desc_t *d0, int R) {
  if (d0->tile > 0) return d0->tile;
  int64_t t = 0;
  if (p->v->choose_tile)
    t = p->v->choose_tile(p->ctx, (muster_routine_t)d0->routine, (muster_dtype_t)d0->dtype, d0->n, R);
  if (t > 0 && muster_layout_tile_valid(d0->n, t, R)) return t;
  return muster_layout_default_tile(d0->n, R);
}

/* Make rank r's shard usable in this process; the peer mappings it uses
 * go pinned into *pins. */
static int reach_shard(muster__provider_t *p, const muster__desc_t *d, const void *blob, int r,
                       muster__shard_pins_t *pins, muster_shard_t *s) {
  memset(s, 0, sizeof *s);
  s->mem = (muster_mem_t)d->mem;
  s->device = d->device;
  s->a = (void *)(uintptr_t)d->a;
  s->b = (void *)(uintptr_t)d->b;
  s->w = (void *)(uintptr_t)d->w;
  s->lda = d->lda;
  s->ldb = d->ldb;
  s->col0 = d->col0;
  s->ncols = d->ncols;
  if (d->pid == muster__proc_self_pid()) return 0;
  int rc = 0;
  if (d->mem == MUSTER_MEM_HOST) {
    pid_t pid = (pid_t)d->pid;
    if (d->ra.fd >= 0 && (rc = muster__shard_map_peer(pid, &d->ra, pins, &s->a)) < 0) return rc;
    if (d->rb.fd >= 0 && (rc = muster__shard_map_peer(pid, &d->rb, pins, &s->b)) < 0) return rc;
    if (d->rw.fd >= 0 && (rc = muster__shard_map_peer(pid, &d->rw, pins, &s->w)) < 0) return rc;
    if (d->ra.fd < 0) s->a = NULL;
    if (d->rb.fd < 0) s->b = NULL;
    if (d->rw.fd < 0) s->w = NULL;
    return 0;
  }
  if (!p->v->leader_import)
    return muster__err(MUSTER_EUNSUPPORTED, "provider %s cannot import rank %d's device memory "
                       "from pid %" PRId64 " (no leader_import)", p->name, r, d->pid);
  char err[256] = "";
  rc = p->v->leader_import(p->ctx, r, d->pid, blob, d->bloblen, s, err, sizeof err);
  if (rc < 0)
    return muster__err(rc, "provider %s: importing rank %d (pid %" PRId64 ", device %d): %s",
                       p->name, r, d->pid, d->device, err);
  return 0;
}

/* ---- peers the leader has reached ---------------------------------------------------- */

/* Processes whose memory this leader process has mapped or imported.  A
 * peer that is gone (its job ended, it crashed) leaves behind our mapping of
 * its shards (which keeps that memory alive) and the provider's cached IPC
 * handles: drop them.  Checked only for pids not in the current solve, so
 * a group that keeps meeting pays no system call. */
MUSTER__FORKLOCK(known) /* fork-safe: forklock.h */
static pid_t *known; /* no bound: every peer ever met and still alive */
static int nknown, capknown;

/* known lock held: pid is known (grown as needed; out of memory: it is not,
 * and only its cleanup after death is lost) */
static void know(pid_t pid) {
  for (int i = 0; i < nknown; i++)
    if (known[i] == pid) return;
  if (nknown == capknown) {
    int cap = capknown ? 2 * capknown : 64;
    pid_t *k = realloc(known, (size_t)cap * sizeof *k);
    if (!k) return;
    known = k;
    capknown = cap;
  }
  known[nknown++] = pid;
}

static void prune_peers(muster__provider_t *p, const muster__desc_t *const *ds, int R) {
  pid_t self = muster__proc_self_pid(), *dead = NULL;
  int ndead = 0;
  known_lock();
  for (int i = nknown - 1; i >= 0; i--) {
    int here = 0;
    for (int r = 0; r < R && !here; r++) here = ds[r]->pid == known[i];
    if (here || muster__proc_alive(known[i], 0)) continue;
    if (!dead && !(dead = malloc((size_t)nknown * sizeof *dead))) break; /* next time */
    dead[ndead++] = known[i];
    known[i] = known[--nknown];
  }
  for (int r = 0; r < R; r++)
    if (ds[r]->pid != self) know((pid_t)ds[r]->pid);
  known_unlock();
  for (int i = 0; i < ndead; i++) {
    muster__shard_forget(dead[i]);
    if (p->v->forget_peer) p->v->forget_peer(p->ctx, dead[i]);
  }
  free(dead);
}

/* ---- the leader's call ------------------------------------------------------------------ */

/* info > 0 as muster/types.h's `info` column words it for each routine,
 * with the provider's detail (where, the numbers) after it in
 * parentheses.  Its sentences use k once or twice: passed through a
 * variable, the format gets k twice without a warning about the unused
 * one. */
static int info_positive(const char *provider, int routine, int64_t info, const char *detail) {
  char what[200];
  long long k = (long long)info;
  const char *fmt, *open = detail && detail[0] ? " (" : "", *close = open[0] ? ")" : "";
  detail = open[0] ? detail : "";
  switch (routine) {
#define INFO_CASE(NAME, value, name, factors, takes, code, sentence)                           \
  case (value):                                                                                \
    fmt = sentence;                                                                            \
    snprintf(what, sizeof what, fmt, k, k);                                                    \
    return muster__err(MUSTER_##code, "provider %s: %s: %s%s%s%s", provider, name, what, open, \
                       detail, close);
    MUSTER_ROUTINE_MAP(INFO_CASE)
#undef INFO_CASE
  default:
    return muster__err(MUSTER_EPROVIDER, "provider %s: routine %d: info %lld", provider, routine, k);
  }
}

int muster__info_verdict(int routine, int rc, int64_t info) {
  if (info <= 0) return 0;
  if (rc == 0) return 1;
  switch (routine) {
#define INFO_CODE(NAME, value, name, factors, takes, code, sentence) \
  case (value): return rc == MUSTER_##code;
    MUSTER_ROUTINE_MAP(INFO_CODE)
#undef INFO_CODE
  default: return 0;
  }
}

int muster__info_rc(const char *provider, int routine, int64_t info, const char *detail) {
  const char *rname = muster_routine_str(routine);
  if (info > 0) return info_positive(provider, routine, info, detail);
  if (info < 0)
    return muster__err(MUSTER_EPROVIDER, "provider %s: %s rejected argument %" PRId64, provider,
                       rname, -info);
  return 0;
}

int muster__leader_run(muster__provider_t *p, const muster__desc_t *const *ds,
                       const void *const *blobs, int R, muster_shard_t *shards,
                       muster__outcome_t *out) {
  const muster__desc_t *d0 = ds[0];
  int rc = 0, process_mode = 0;
  for (int r = 0; r < R; r++) process_mode |= ds[r]->pid != d0->pid;
  if (process_mode) prune_peers(p, ds, R);
  /* the peers' memory stays mapped until the provider is done with it */
  muster__shard_pins_t pins;
  pins.n = 0;
  for (int r = 0; r < R; r++) {
    if ((rc = reach_shard(p, ds[r], blobs ? blobs[r] : NULL, r, &pins, &shards[r])) < 0) {
      muster__shard_unpin_all(&pins);
      return rc;
    }
  }
  muster_provider_call_t call;
  memset(&call, 0, sizeof call);
  call.args.routine = (muster_routine_t)d0->routine;
  call.args.dtype = (muster_dtype_t)d0->dtype;
  call.args.n = d0->n;
  call.args.nrhs = d0->nrhs;
  call.args.layout = (muster_layout_t)d0->layout;
  call.args.flags = d0->flags;
  call.args.tile = resolve_tile(p, d0, R);
  call.args.provider = p->name;
  call.nshards = R;
  call.shards = shards;
  call.process_mode = process_mode;
  int64_t info = 0;
  char err[512] = "";
  call.info = &info;
  call.err = err;
  call.errlen = sizeof err;
  out->tile = call.args.tile;
  snprintf(out->provider, sizeof out->provider, "%s", p->name);
  double t0 = muster_clock_s();
  rc = p->v->solve(p->ctx, &call);
  out->seconds = muster_clock_s() - t0;
  muster__shard_unpin_all(&pins);
  out->info = info;
  err[sizeof err - 1] = '\0';
  if (rc < 0 && !muster__info_verdict(d0->routine, rc, info))
    return muster__err(rc, "provider %s (%s) failed in %s: %s", p->name, p->path,
                       muster_routine_name(call.args.routine), err[0] ? err : muster_strerror(rc));
  return muster__info_rc(p->name, d0->routine, info, err);
}

void muster__outcome_result(const muster__outcome_t *o, muster_solve_result_t *res) {
  if (!res) return;
  res->info = o->info;
  res->tile = o->tile;
  res->seconds = o->seconds;
  snprintf(res->provider, sizeof res->provider, "%s", o->provider);
  snprintf(res->reason, sizeof res->reason, "%s", o->reason);
}
