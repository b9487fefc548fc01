/*
 * runtime/solve.c - muster_solve (collective) and muster_solve_all (one
 * caller).  See solve.h for the protocol.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "group.h"
#include "layout.h"
#include "proc.h"
#include "registry.h"
#include "shard.h"
#include "solve.h"

#define DESC_MAGIC UINT64_C(0x31435344524d534d) /* "MSMRDSC1" */

/* What one rank publishes.  Fixed layout; the provider's export blob
 * follows it in the same payload. */
typedef struct desc {
  uint64_t magic;
  int32_t problem; /* 0, or the code of what this rank found wrong alone */
  int32_t routine, dtype, layout, mem, device;
  uint32_t flags, bloblen;
  int64_t n, nrhs, tile, col0, ncols, lda, ldb, pid;
  uint64_t a, b, w; /* addresses in the publisher's process */
  muster__shard_ref_t ra, rb, rw;
  char want[32];     /* provider asked for ("" none)          */
  char provider[32]; /* provider this rank resolved           */
  char msg[200];     /* the problem, when problem != 0        */
} desc_t;

#define BLOB_CAP (MUSTER_MAX_PAYLOAD - sizeof(desc_t))
_Static_assert(sizeof(desc_t) + 256 <= MUSTER_MAX_PAYLOAD, "descriptor too large");

/* What the leader publishes with the status. */
typedef struct outcome {
  int64_t info, tile;
  double seconds;
  char provider[32];
  char msg[512];
} outcome_t;

/* ---- small helpers ------------------------------------------------------- */

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static size_t real_size(muster_dtype_t t) {
  return (t == MUSTER_F32 || t == MUSTER_C64) ? 4 : 8;
}

static int problem(desc_t *d, int code, const char *fmt, ...) MUSTER_PRINTF(3, 4);
static int problem(desc_t *d, int code, const char *fmt, ...) {
  if (d->problem) return d->problem; /* keep the first */
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(d->msg, sizeof d->msg, fmt, ap);
  va_end(ap);
  d->problem = code;
  return code;
}

int64_t muster__solve_default_tile(int64_t n, int nranks) {
  int64_t best = 0;
  for (int64_t t = 1; t <= 256 && t <= muster__ceil_div(n, nranks); t++)
    if (muster__layout_tile_valid(n, t, nranks)) best = t;
  return best ? best : muster__ceil_div(n, nranks);
}

/* Bytes a region must hold from the pointer on for `cols` columns of ld. */
static uint64_t extent(int64_t ld, int64_t rows, int64_t cols, size_t esz) {
  if (cols <= 0 || rows <= 0) return 0;
  return (uint64_t)((cols - 1) * ld + rows) * esz;
}

static void check_ref(desc_t *d, const char *what, const muster__shard_ref_t *r, uint64_t need) {
  if (r->fd >= 0 && need > r->size - r->offset)
    problem(d, MUSTER_EINVAL, "shard %s is short: needs %" PRIu64 " bytes, its muster_shard_alloc "
            "region has %" PRIu64 " from there", what, need, r->size - r->offset);
}

/* ---- step 1: describe what this rank holds --------------------------------- */

/* Fill d from (args, mine) and resolve the provider (*prov referenced on
 * success).  A problem goes into d, it is not returned: every rank must
 * still publish so that all can report it. */
static void describe(const muster_solve_args_t *args, const muster_shard_t *mine, int nranks,
                     desc_t *d, muster__provider_t **prov) {
  memset(d, 0, sizeof *d);
  d->magic = DESC_MAGIC;
  d->pid = muster__proc_self_pid();
  d->ra.fd = d->rb.fd = d->rw.fd = -1;
  *prov = NULL;
  if (!args) {
    problem(d, MUSTER_EINVAL, "args is NULL");
    return;
  }
  if (!mine) {
    problem(d, MUSTER_EINVAL, "shard is NULL");
    return;
  }
  d->routine = args->routine;
  d->dtype = args->dtype;
  d->layout = args->layout;
  d->flags = args->flags;
  d->n = args->n;
  d->nrhs = args->routine == MUSTER_POTRS ? args->nrhs : 0;
  d->tile = args->tile;
  d->mem = mine->mem;
  d->device = mine->device;
  d->col0 = mine->col0;
  d->ncols = mine->ncols;
  d->lda = mine->lda;
  d->ldb = mine->ldb;
  d->a = (uint64_t)(uintptr_t)mine->a;
  d->b = (uint64_t)(uintptr_t)mine->b;
  d->w = (uint64_t)(uintptr_t)mine->w;
  if (args->provider && strlen(args->provider) >= sizeof d->want)
    problem(d, MUSTER_EINVAL, "provider name '%.40s...' too long", args->provider);
  else if (args->provider)
    snprintf(d->want, sizeof d->want, "%s", args->provider);
  if (args->routine < MUSTER_POTRS || args->routine > MUSTER_SYEVD)
    problem(d, MUSTER_EINVAL, "unknown routine %d (known: potrs, potri, syevd)", (int)args->routine);
  if (muster_dtype_size(args->dtype) == 0)
    problem(d, MUSTER_EINVAL, "unknown dtype %d (known: f32, f64, c64, c128)", (int)args->dtype);
  if (args->n <= 0 || args->n > MUSTER__LAYOUT_MAX_N)
    problem(d, MUSTER_EINVAL, "n=%" PRId64 ": must be > 0", args->n);
  if (args->routine == MUSTER_POTRS && args->nrhs < 1)
    problem(d, MUSTER_EINVAL, "nrhs=%" PRId64 ": potrs needs nrhs >= 1", args->nrhs);
  if (args->layout != MUSTER_LAYOUT_BLOCK && args->layout != MUSTER_LAYOUT_CYCLIC)
    problem(d, MUSTER_EINVAL, "unknown layout %d", (int)args->layout);
  if (mine->mem != MUSTER_MEM_HOST && mine->mem != MUSTER_MEM_CUDA)
    problem(d, MUSTER_EINVAL, "unknown memory kind %d", (int)mine->mem);
  if (d->problem) return;

  int rc = muster__provider_acquire(args->routine, args->dtype, mine->mem, args->provider, prov);
  if (rc < 0) {
    problem(d, rc, "%s", muster_last_error());
    return;
  }
  snprintf(d->provider, sizeof d->provider, "%s", (*prov)->name);
  if ((*prov)->v->max_shards > 0 && nranks > (*prov)->v->max_shards)
    problem(d, MUSTER_EUNSUPPORTED, "provider %s takes at most %d ranks, the call has %d",
            (*prov)->name, (*prov)->v->max_shards, nranks);

  if (mine->mem == MUSTER_MEM_HOST) {
    size_t esz = muster_dtype_size(args->dtype);
    muster__shard_find(mine->a, &d->ra);
    muster__shard_find(mine->b, &d->rb);
    muster__shard_find(mine->w, &d->rw);
    check_ref(d, "a", &d->ra, extent(mine->lda, args->n, mine->ncols, esz));
    if (args->routine == MUSTER_POTRS)
      check_ref(d, "b", &d->rb, extent(mine->ldb, args->n, args->nrhs, esz));
    if (args->routine == MUSTER_SYEVD)
      check_ref(d, "w", &d->rw, (uint64_t)args->n * real_size(args->dtype));
  }
}

/* The provider's local_export (CUDA: sync the stream, IPC handles). */
static void export_blob(muster__provider_t *p, const muster_shard_t *mine, int process_mode,
                        desc_t *d, void *blob) {
  if (d->problem || !p || !p->v->local_export) return;
  char err[200] = "";
  size_t len = 0;
  int rc = p->v->local_export(p->ctx, mine, process_mode, blob, BLOB_CAP, &len, err, sizeof err);
  if (rc < 0) {
    problem(d, rc, "provider %s local_export: %s", p->name, err);
    return;
  }
  d->bloblen = (uint32_t)(len <= BLOB_CAP ? len : BLOB_CAP);
}

/* ---- step 2: the same verdict on every rank ----------------------------------- */

#define DIFFER(field, fmt)                                                                  \
  if (d->field != d0->field)                                                                \
    return muster__err(MUSTER_EMISMATCH, "rank %d has " #field "=" fmt ", rank 0 has " #field \
                       "=" fmt, r, d->field, d0->field)

static int validate_shard(const desc_t *d, int r, const desc_t *d0) {
  if (d->ncols < 0)
    return muster__err(MUSTER_EINVAL, "rank %d: ncols=%" PRId64 " < 0", r, d->ncols);
  if (d->ncols > 0 && !d->a)
    return muster__err(MUSTER_EINVAL, "rank %d (pid %" PRId64 "): shard a is NULL with %" PRId64
                       " columns", r, d->pid, d->ncols);
  if (d->lda < d->n)
    return muster__err(MUSTER_EINVAL, "rank %d: lda=%" PRId64 " < n=%" PRId64, r, d->lda, d->n);
  if (d->routine == MUSTER_POTRS && !d->b)
    return muster__err(MUSTER_EINVAL, "rank %d (pid %" PRId64 "): potrs needs b (n x nrhs), got NULL",
                       r, d->pid);
  if (d->routine == MUSTER_POTRS && d->ldb < d->n)
    return muster__err(MUSTER_EINVAL, "rank %d: ldb=%" PRId64 " < n=%" PRId64, r, d->ldb, d->n);
  if (d->routine == MUSTER_SYEVD && !d->w)
    return muster__err(MUSTER_EINVAL, "rank %d (pid %" PRId64 "): syevd needs w (n eigenvalues), got NULL",
                       r, d->pid);
  /* another process's host memory must be reachable by the leader */
  if (d->mem == MUSTER_MEM_HOST && d->pid != d0->pid) {
    const char *bad = (d->ncols > 0 && d->ra.fd < 0) ? "a"
                      : (d->routine == MUSTER_POTRS && d->rb.fd < 0) ? "b"
                      : (d->routine == MUSTER_SYEVD && d->rw.fd < 0) ? "w" : NULL;
    if (bad)
      return muster__err(MUSTER_EINVAL, "rank %d (pid %" PRId64 "): host shard %s is not memory "
                         "from muster_shard_alloc; in process mode the leader (pid %" PRId64
                         ") can only reach shards allocated there", r, d->pid, bad, d0->pid);
  }
  return 0;
}

static int validate_layout(const desc_t *const *ds, int R) {
  const desc_t *d0 = ds[0];
  if (d0->layout == MUSTER_LAYOUT_CYCLIC) {
    if (d0->tile <= 0)
      return muster__err(MUSTER_ETILE, "layout cyclic needs the tile the data is laid out with "
                         "(tile=%" PRId64 ")", d0->tile);
    int64_t want = muster_layout_local_cols(d0->n, d0->tile, R);
    for (int r = 0; r < R; r++)
      if (ds[r]->ncols != want)
        return muster__err(MUSTER_EINVAL, "rank %d: ncols=%" PRId64 ", the cyclic layout of n=%"
                           PRId64 " with tile %" PRId64 " over %d ranks has %" PRId64
                           " local columns", r, ds[r]->ncols, d0->n, d0->tile, R, want);
    return 0;
  }
  muster__layout_t L;
  if (muster__layout_init(&L, d0->n, 1, R) != 0)
    return muster__err(MUSTER_EINVAL, "n=%" PRId64 " over %d ranks: invalid", d0->n, R);
  for (int r = 0; r < R; r++) {
    int64_t c0 = muster__layout_block_col0(&L, r), nc = muster__layout_block_ncols(&L, r);
    if (ds[r]->col0 != c0 || ds[r]->ncols != nc)
      return muster__err(MUSTER_EINVAL, "rank %d holds columns [%" PRId64 ",%" PRId64 ") but the "
                         "block layout of n=%" PRId64 " over %d ranks gives it [%" PRId64 ",%"
                         PRId64 ") (blocks of ceil(n/R)=%" PRId64 " columns)", r, ds[r]->col0,
                         ds[r]->col0 + ds[r]->ncols, d0->n, R, c0, c0 + nc, L.block_cols);
  }
  if (d0->tile != 0) {
    int rc = muster_layout_check_tile(d0->n, d0->tile, R);
    if (rc < 0) return rc;
  }
  return 0;
}

/* Identical on every rank given the same descriptors. */
static int validate(const desc_t *const *ds, const size_t *lens, int R) {
  for (int r = 0; r < R; r++)
    if (lens[r] < sizeof(desc_t) || ds[r]->magic != DESC_MAGIC ||
        lens[r] != sizeof(desc_t) + ds[r]->bloblen)
      return muster__err(MUSTER_EVERSION, "rank %d published a solve descriptor this muster build "
                         "does not know (%zu bytes; another muster version?)", r, lens[r]);
  for (int r = 0; r < R; r++)
    if (ds[r]->problem)
      return muster__err(ds[r]->problem, "rank %d (pid %" PRId64 ", device %d): %s", r,
                         ds[r]->pid, ds[r]->device, ds[r]->msg);
  const desc_t *d0 = ds[0];
  for (int r = 1; r < R; r++) {
    const desc_t *d = ds[r];
    DIFFER(routine, "%d");
    DIFFER(dtype, "%d");
    DIFFER(n, "%" PRId64);
    DIFFER(nrhs, "%" PRId64);
    DIFFER(tile, "%" PRId64);
    DIFFER(layout, "%d");
    DIFFER(flags, "%u");
    DIFFER(mem, "%d");
    if (strcmp(d->want, d0->want))
      return muster__err(MUSTER_EMISMATCH, "rank %d asks for provider '%s', rank 0 for '%s'", r,
                         d->want, d0->want);
    if (strcmp(d->provider, d0->provider))
      return muster__err(MUSTER_EMISMATCH, "rank %d resolved provider '%s', rank 0 '%s' (check "
                         "MUSTER_PROVIDER and MUSTER_PROVIDER_PATH of every process)", r,
                         d->provider, d0->provider);
  }
  for (int r = 0; r < R; r++) {
    int rc = validate_shard(ds[r], r, d0);
    if (rc < 0) return rc;
  }
  return validate_layout(ds, R);
}

/* ---- step 3: the leader runs it ----------------------------------------------- */

static int64_t resolve_tile(muster__provider_t *p, const desc_t *d0, int R) {
  if (d0->tile > 0) return d0->tile;
  int64_t t = 0;
  if (p->v->choose_tile)
    t = p->v->choose_tile(p->ctx, (muster_routine_t)d0->routine, (muster_dtype_t)d0->dtype, d0->n, R);
  if (t > 0 && muster__layout_tile_valid(d0->n, t, R)) return t;
  return muster__solve_default_tile(d0->n, R);
}

/* Make rank r's shard usable in this process; the peer mappings it uses
 * go pinned into *pins. */
static int reach_shard(muster__provider_t *p, const desc_t *d, const void *blob, int r,
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

/* Run the provider on every shard; fills out (info, tile, seconds). */
static int run(muster__provider_t *p, const desc_t *const *ds, const void *const *blobs, int R,
               int process_mode, muster_shard_t *shards, outcome_t *out) {
  const desc_t *d0 = ds[0];
  int rc = 0;
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
  double t0 = now_s();
  rc = p->v->solve(p->ctx, &call);
  out->seconds = now_s() - t0;
  muster__shard_unpin_all(&pins);
  out->info = info;
  if (rc < 0)
    return muster__err(rc, "provider %s (%s) failed in %s: %s", p->name, p->path,
                       muster_routine_name(call.args.routine), err[0] ? err : muster_strerror(rc));
  if (info > 0 && d0->routine != MUSTER_SYEVD)
    return muster__err(MUSTER_ENOTPD, "not positive definite (leading minor %" PRId64 ")", info);
  if (info > 0)
    return muster__err(MUSTER_EPROVIDER, "provider %s: %s did not converge (info %" PRId64 ")",
                       p->name, muster_routine_name(call.args.routine), info);
  if (info < 0)
    return muster__err(MUSTER_EPROVIDER, "provider %s: %s rejected argument %" PRId64,
                       p->name, muster_routine_name(call.args.routine), -info);
  return 0;
}

static void fill_result(muster_solve_result_t *res, const outcome_t *o) {
  if (!res) return;
  res->info = o->info;
  res->tile = o->tile;
  res->seconds = o->seconds;
  snprintf(res->provider, sizeof res->provider, "%s", o->provider);
}

/* ---- peers the leader has reached ---------------------------------------------------- */

/* Processes whose memory this leader process has mapped or imported.  A
 * peer that is gone (its job ended, it crashed) leaves behind our mapping of
 * its shards (which keeps that memory alive) and the provider's cached IPC
 * handles: drop them.  Checked only for pids not in the current solve, so
 * a group that keeps meeting pays no system call. */
static pthread_mutex_t known_mu = PTHREAD_MUTEX_INITIALIZER;
static pid_t *known; /* no bound: every peer ever met and still alive */
static int nknown, capknown;

/* known_mu held: pid is known (grown as needed; out of memory: it is not,
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

static void prune_peers(muster__provider_t *p, const desc_t *const *ds, int R) {
  pid_t self = muster__proc_self_pid(), *dead = NULL;
  int ndead = 0;
  pthread_mutex_lock(&known_mu);
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
  pthread_mutex_unlock(&known_mu);
  for (int i = 0; i < ndead; i++) {
    muster__shard_forget(dead[i]);
    if (p->v->forget_peer) p->v->forget_peer(p->ctx, dead[i]);
  }
  free(dead);
}

/* ---- the collective solve ----------------------------------------------------------- */

/* The wait after the leader's compute: liveness checks, no rendezvous
 * deadline (a solve may take minutes). */
static int final_wait(muster_group_t *g) { return muster__group_barrier_ex(g, 0); }

int muster_solve(muster_group_t *g, const muster_solve_args_t *args, const muster_shard_t *mine,
                 muster_solve_result_t *res) {
  if (!g) return muster__err(MUSTER_EINVAL, "muster_solve: group is NULL");
  if (res) memset(res, 0, sizeof *res);
  int R = muster_group_size(g), me = muster_group_rank(g);
  union {
    desc_t d;
    unsigned char bytes[MUSTER_MAX_PAYLOAD];
  } pub;
  muster__provider_t *prov = NULL;
  const desc_t *ds[MUSTER_MAX_RANKS];
  const void *blobs[MUSTER_MAX_RANKS];
  size_t lens[MUSTER_MAX_RANKS];
  muster_shard_t *shards = NULL;
  outcome_t out;
  memset(&out, 0, sizeof out);
  int rc = 0;

  describe(args, mine, R, &pub.d, &prov);
  /* Before the first exchange of a new group some seats may be empty, so
   * all_local can only say "not known to be all local": the provider then
   * exports (IPC handles) for nothing, which is harmless; the leader imports
   * only what comes from another process. */
  export_blob(prov, mine, !muster__group_all_local(g), &pub.d, pub.bytes + sizeof(desc_t));
  MUSTER_CHECK(muster_group_exchange(g, pub.bytes, sizeof(desc_t) + pub.d.bloblen));
  for (int r = 0; r < R; r++) {
    const void *data;
    MUSTER_CHECK(muster_group_payload(g, r, &data, &lens[r]));
    ds[r] = data;
    blobs[r] = (const char *)data + sizeof(desc_t);
  }
  /* a bad descriptor anywhere: everyone knows it now, nobody waits more */
  MUSTER_CHECK(validate(ds, lens, R));

  if (me == 0) {
    int process_mode = 0;
    for (int r = 0; r < R; r++) process_mode |= ds[r]->pid != ds[0]->pid;
    if (process_mode) prune_peers(prov, ds, R);
    shards = calloc((size_t)R, sizeof *shards);
    int status = shards ? run(prov, ds, blobs, R, process_mode, shards, &out)
                        : muster__err(MUSTER_ENOMEM, "leader: out of memory");
    if (status < 0) snprintf(out.msg, sizeof out.msg, "%s", muster_last_error());
    MUSTER_CHECK(muster_group_set_status(g, status, &out, sizeof out));
  }
  MUSTER_CHECK(final_wait(g));
  int status = 0;
  const void *data = NULL;
  size_t len = 0;
  MUSTER_CHECK(muster_group_status(g, &status, &data, &len));
  if (len >= sizeof out) memcpy(&out, data, sizeof out);
  fill_result(res, &out);
  if (status < 0) {
    rc = muster__err(status, "%s", out.msg[0] ? out.msg : muster_strerror(status));
    goto out;
  }
  rc = 0;
out:
  free(shards);
  if (prov) muster__provider_release(prov);
  return rc;
}

/* ---- one caller holds every shard --------------------------------------------------- */

int muster_solve_all(const muster_solve_args_t *args, int nshards, const muster_shard_t *shards,
                     muster_solve_result_t *res) {
  if (res) memset(res, 0, sizeof *res);
  if (nshards < 1 || nshards > MUSTER_MAX_RANKS)
    return muster__err(MUSTER_EINVAL, "muster_solve_all: nshards=%d (1..%d)", nshards, MUSTER_MAX_RANKS);
  if (!shards) return muster__err(MUSTER_EINVAL, "muster_solve_all: shards is NULL");
  desc_t *d = calloc((size_t)nshards, sizeof *d);
  muster_shard_t *usable = calloc((size_t)nshards, sizeof *usable);
  muster__provider_t *prov = NULL;
  const desc_t *ds[MUSTER_MAX_RANKS];
  size_t lens[MUSTER_MAX_RANKS];
  outcome_t out;
  memset(&out, 0, sizeof out);
  int rc = 0;
  if (!d || !usable) {
    rc = muster__err(MUSTER_ENOMEM, "muster_solve_all: out of memory");
    goto out;
  }
  for (int r = 0; r < nshards; r++) {
    muster__provider_t *p = NULL;
    describe(args, &shards[r], nshards, &d[r], &p);
    if (p && !prov) prov = p; /* one reference is enough */
    else if (p) muster__provider_release(p);
    ds[r] = &d[r];
    lens[r] = sizeof d[r];
  }
  MUSTER_CHECK(validate(ds, lens, nshards));
  /* all ranks are this process: export hooks still run (they synchronize
   * each shard's stream) */
  for (int r = 0; r < nshards; r++) {
    unsigned char blob[BLOB_CAP];
    export_blob(prov, &shards[r], 0, &d[r], blob);
    if (d[r].problem) {
      rc = muster__err(d[r].problem, "shard %d: %s", r, d[r].msg);
      goto out;
    }
  }
  MUSTER_CHECK(run(prov, ds, NULL, nshards, 0, usable, &out));
out:
  fill_result(res, &out);
  if (prov) muster__provider_release(prov);
  free(usable);
  free(d);
  return rc;
}
