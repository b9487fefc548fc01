/*
 * runtime/solve/desc.c - the solve descriptor (see desc.h).
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "solve/desc.h"
#include "base/devices.h"
#include "base/env.h"
#include "muster/layout.h"
#include "muster/parse.h"
#include "base/proc.h"

int muster__desc_problem(muster__desc_t *d, int code, const char *fmt, ...) {
  if (d->problem) return d->problem; /* keep the first */
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(d->msg, sizeof d->msg, fmt, ap);
  va_end(ap);
  d->problem = code;
  return code;
}
#define problem(...) muster__desc_problem(__VA_ARGS__)

/* ---- this node ------------------------------------------------------------ */

uint64_t muster__hash(uint64_t h, const void *p, size_t len) {
  const unsigned char *s = p;
  for (size_t i = 0; i < len; i++) h = (h ^ s[i]) * 1099511628211ull;
  return h;
}

static pthread_once_t host_once = PTHREAD_ONCE_INIT;
static uint64_t host_id;

static void host_init(void) {
  char name[256] = "", boot[64] = "";
  gethostname(name, sizeof name - 1);
  FILE *f = fopen("/proc/sys/kernel/random/boot_id", "re");
  if (f) {
    if (!fgets(boot, sizeof boot, f)) boot[0] = '\0';
    fclose(f);
  }
  uint64_t h = muster__hash(MUSTER__HASH_START, name, strlen(name));
  host_id = muster__hash(h, boot, strlen(boot)) | 1; /* never 0 */
}

uint64_t muster__host_id(void) {
  pthread_once(&host_once, host_init);
  return host_id;
}

/* ---- describing one rank ---------------------------------------------------- */

/* Bytes a region must hold from the pointer on for `cols` columns of ld. */
static uint64_t extent(int64_t ld, int64_t rows, int64_t cols, size_t esz) {
  if (cols <= 0 || rows <= 0) return 0;
  return (uint64_t)((cols - 1) * ld + rows) * esz;
}

static void check_ref(muster__desc_t *d, const char *what, const muster__shard_ref_t *r, uint64_t need) {
  if (r->fd >= 0 && need > r->size - r->offset)
    problem(d, MUSTER_EINVAL, "shard %s is short: needs %" PRIu64 " bytes, its muster_shard_alloc "
            "region has %" PRIu64 " from there", what, need, r->size - r->offset);
}

/* geqrf, gesvd, polar: m = ldb, the flags the routine takes, and a B wide
 * enough for the factors muster_routine_outputs puts there. */
static void check_outputs(const muster_solve_args_t *args, const muster_shard_t *mine, muster__desc_t *d) {
  const char *name = muster_routine_str(args->routine);
  muster_outputs_t o;
  if (mine->ldb < 1 || mine->ldb > MUSTER_LAYOUT_MAX_N)
    problem(d, MUSTER_EINVAL, "%s: m=ldb=%" PRId64 ": the rows of A travel in ldb, which must be "
            "1..2^40", name, mine->ldb);
  else if (args->n >= 1 && args->n <= MUSTER_LAYOUT_MAX_N &&
           muster_routine_outputs(args->routine, args->flags, mine->ldb, args->n, &o) < 0)
    problem(d, MUSTER_EINVAL, "%s: flags 0x%x: it takes %s", name, args->flags,
            args->routine == MUSTER_POLAR ? "no flags" : args->routine == MUSTER_GEQRF
            ? "only MUSTER_FULL_MATRICES" : "only MUSTER_FULL_MATRICES and MUSTER_NO_VECTORS");
  else if (args->n >= 1 && (args->nrhs < o.b_cols || args->nrhs > MUSTER_LAYOUT_MAX_N))
    problem(d, MUSTER_EINVAL, "%s: nrhs=%" PRId64 ": B (m=%" PRId64 " rows, packed) needs %" PRId64
            " columns for its factors (muster_routine_outputs)", name, args->nrhs, mine->ldb, o.b_cols);
}

static void check_args(const muster_solve_args_t *args, const muster_shard_t *mine, muster__desc_t *d) {
  if (muster__env_check_log() < 0) /* a malformed MUSTER_LOG fails the call (env.h) */
    problem(d, MUSTER_EINVAL, "%s", muster_last_error());
  else if (args->provider && *args->provider &&
           muster_parse_backend(args->provider, strlen(args->provider)) < 0)
    problem(d, MUSTER_EINVAL, "args->provider: %s", muster_last_error());
  else if (args->provider)
    snprintf(d->want, sizeof d->want, "%s", args->provider);
  if (!muster_routine_str(args->routine))
    problem(d, MUSTER_EINVAL, "unknown routine %d (known: potrs, potri, syevd, getrs, gels, geqrf, gesvd, polar)",
            (int)args->routine);
  if (muster_dtype_size(args->dtype) == 0)
    problem(d, MUSTER_EINVAL, "unknown dtype %d (known: f32, f64, c64, c128)", (int)args->dtype);
  if (args->n <= 0 || args->n > MUSTER_LAYOUT_MAX_N)
    problem(d, MUSTER_EINVAL, "n=%" PRId64 ": must be > 0", args->n);
  unsigned takes = muster_routine_takes(args->routine);
  if (takes & MUSTER_TAKES_O)
    check_outputs(args, mine, d);
  else if ((takes & MUSTER_TAKES_B) && (args->nrhs < 1 || args->nrhs > MUSTER_LAYOUT_MAX_N))
    problem(d, MUSTER_EINVAL, "nrhs=%" PRId64 ": %s needs nrhs >= 1", args->nrhs,
            muster_routine_str(args->routine));
  if ((takes & MUSTER_TAKES_M) && !(takes & MUSTER_TAKES_O) && mine->ldb < args->n)
    problem(d, MUSTER_EINVAL, "gels: m=ldb=%" PRId64 " < n=%" PRId64 ": A must be tall (m >= n; "
            "a wide A is not supported)", mine->ldb, args->n);
  if ((takes & MUSTER_TAKES_M) && !(takes & MUSTER_TAKES_O) && mine->ldb > MUSTER_LAYOUT_MAX_N)
    problem(d, MUSTER_EINVAL, "gels: m=ldb=%" PRId64 " too large", mine->ldb);
  if (args->flags & ~MUSTER_FLAGS_KNOWN)
    problem(d, MUSTER_EINVAL, "flags 0x%x: unknown bits 0x%x", args->flags,
            args->flags & ~MUSTER_FLAGS_KNOWN);
  if ((args->flags & MUSTER_LOGDET) && args->routine != MUSTER_POTRS)
    problem(d, MUSTER_EINVAL, "MUSTER_LOGDET is for potrs, not %s", muster_routine_name(args->routine));
  if (args->layout != MUSTER_LAYOUT_BLOCK && args->layout != MUSTER_LAYOUT_CYCLIC)
    problem(d, MUSTER_EINVAL, "unknown layout %d", (int)args->layout);
  if (mine->mem != MUSTER_MEM_HOST && mine->mem != MUSTER_MEM_CUDA)
    problem(d, MUSTER_EINVAL, "unknown memory kind %d", (int)mine->mem);
}

void muster__desc_describe(const muster_solve_args_t *args, const muster_shard_t *mine, muster__desc_t *d) {
  muster__desc_describe_dist(args, mine, NULL, d);
}

void muster__desc_describe_dist(const muster_solve_args_t *args, const muster_shard_t *mine,
                                const muster_dist_t *dist, muster__desc_t *d) {
  memset(d, 0, sizeof *d);
  d->magic = MUSTER__DESC_MAGIC;
  d->pid = muster__proc_self_pid();
  d->start_time = muster__proc_self_start();
  d->host = muster__host_id();
  d->ra.fd = d->rb.fd = d->rw.fd = -1;
  d->device = -1;
  if (!args || !mine) {
    problem(d, MUSTER_EINVAL, "%s is NULL", args ? "shard" : "args");
    return;
  }
  d->routine = args->routine;
  d->dtype = args->dtype;
  d->layout = args->layout;
  d->flags = args->flags;
  d->n = args->n;
  d->nrhs = muster_routine_nrhs(args->routine, args->nrhs);
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
  muster_solve_args_t a = *args;
  if (dist) a.layout = MUSTER_LAYOUT_BLOCK; /* not read for a 2-D piece */
  check_args(&a, mine, d);
  muster_shape_t sh;
  int64_t a_rows = 0;
  if (!d->problem) {
    muster_routine_shape(args->routine, args->n, args->nrhs, mine->ldb, &sh); /* checked above */
    a_rows = sh.a_rows;
    if (dist) {
      muster__desc_set_dist(dist, sh.a_rows, args->tile, mine->lda, d);
      a_rows = muster_layout_numroc(dist->m, dist->mb, dist->myrow, dist->nprow);
    }
  }
  if (d->problem) return;
  if (mine->mem == MUSTER_MEM_CUDA) {
    muster__cuda_device_facts(mine->device, &d->free_bytes, &d->total_bytes, d->busid, sizeof d->busid);
    return;
  }
  size_t esz = muster_dtype_size(args->dtype);
  muster__shard_find(mine->a, &d->ra);
  muster__shard_find(mine->b, &d->rb);
  muster__shard_find(mine->w, &d->rw);
  check_ref(d, "a", &d->ra, extent(mine->lda, a_rows, d->ncols, esz));
  if (sh.b_rows) check_ref(d, "b", &d->rb, extent(mine->ldb, sh.b_rows, sh.nrhs, esz));
  if (muster__desc_w_count(d))
    check_ref(d, "w", &d->rw, (uint64_t)muster__desc_w_count(d) * muster_dtype_real_size(args->dtype));
}

int64_t muster__desc_w_count(const muster__desc_t *d) {
  muster_outputs_t o;
  if (muster_routine_takes(d->routine) & MUSTER_TAKES_O)
    return muster_routine_outputs(d->routine, d->flags, d->ldb, d->n, &o) == 0 ? o.w_count : 0;
  if (muster_routine_takes(d->routine) & MUSTER_TAKES_W) return d->n;
  return d->routine == MUSTER_POTRS && (d->flags & MUSTER_LOGDET) ? 1 : 0;
}

/* ---- the same verdict on every rank ---------------------------------------------- */

#define DIFFER(field, fmt)                                                                  \
  if (d->field != d0->field)                                                                \
    return muster__err(MUSTER_EMISMATCH, "rank %d has " #field "=" fmt ", rank 0 has " #field \
                       "=" fmt, r, d->field, d0->field)

static int validate_shard(const muster__desc_t *d, int r) {
  if (d->ncols < 0)
    return muster__err(MUSTER_EINVAL, "rank %d: ncols=%" PRId64 " < 0", r, d->ncols);
  if (d->ncols > 0 && !d->a)
    return muster__err(MUSTER_EINVAL, "rank %d (pid %" PRId64 "): shard a is NULL with %" PRId64
                       " columns", r, d->pid, d->ncols);
  const char *rname = muster_routine_name((muster_routine_t)d->routine);
  muster_shape_t sh;
  muster_routine_shape(d->routine, d->n, d->nrhs, d->ldb, &sh); /* each rank checked its own */
  if (d->lda < sh.a_rows && !d->grid.nprow) /* a 2-D piece's lld: checked by muster__desc_set_dist */
    return muster__err(MUSTER_EINVAL, "rank %d: lda=%" PRId64 " < %s=%" PRId64, r, d->lda,
                       sh.a_rows == d->n ? "n" : "m", sh.a_rows);
  if (sh.b_rows && !d->b)
    return muster__err(MUSTER_EINVAL, "rank %d (pid %" PRId64 "): %s needs b (%" PRId64 " x nrhs), "
                       "got NULL", r, d->pid, rname, sh.b_rows);
  if (sh.b_rows && d->ldb < sh.b_rows)
    return muster__err(MUSTER_EINVAL, "rank %d: ldb=%" PRId64 " < n=%" PRId64, r, d->ldb, sh.b_rows);
  if (muster__desc_w_count(d) && !d->w)
    return muster__err(MUSTER_EINVAL, "rank %d (pid %" PRId64 "): %s needs w (%s), got NULL", r,
                       d->pid, rname, d->routine == MUSTER_POTRS ? "one real: log det A"
                       : d->routine == MUSTER_GESVD ? "min(m,n) singular values" : "n eigenvalues");
  return 0;
}

static int validate_layout(const muster__desc_t *const *ds, int R) {
  const muster__desc_t *d0 = ds[0];
  if (d0->layout == MUSTER__LAYOUT_DIST) return muster__desc_validate_dist(ds, R);
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
  muster_layout_geom_t L;
  if (muster_layout_geom_init(&L, d0->n, 1, R) != 0)
    return muster__err(MUSTER_EINVAL, "n=%" PRId64 " over %d ranks: invalid", d0->n, R);
  for (int r = 0; r < R; r++) {
    int64_t c0 = muster_layout_block_col0(&L, r), nc = muster_layout_block_ncols(&L, r);
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

/* Every string of a published descriptor ends inside its field: they come
 * from other processes, and are printed and compared. */
static int terminated(const muster__desc_t *d) {
  return memchr(d->want, 0, sizeof d->want) && memchr(d->provider, 0, sizeof d->provider) &&
         memchr(d->msg, 0, sizeof d->msg) && memchr(d->busid, 0, sizeof d->busid);
}

int muster__desc_validate(const muster__desc_t *const *ds, const size_t *lens, int R) {
  for (int r = 0; r < R; r++) {
    if (ds[r]->magic != MUSTER__DESC_MAGIC ||
        (lens && (lens[r] < sizeof(muster__desc_t) || lens[r] != sizeof(muster__desc_t) + ds[r]->bloblen)))
      return muster__err(MUSTER_EVERSION, "rank %d published a solve descriptor this muster build "
                         "does not know (%zu bytes; another muster version?)", r,
                         lens ? lens[r] : sizeof(muster__desc_t));
    if (!terminated(ds[r]))
      return muster__err(MUSTER_ECORRUPT, "rank %d published a solve descriptor with an unterminated "
                         "string", r);
  }
  for (int r = 0; r < R; r++)
    if (ds[r]->problem)
      return muster__err(ds[r]->problem, "rank %d (pid %" PRId64 ", device %d): %s", r,
                         ds[r]->pid, ds[r]->device, ds[r]->msg);
  const muster__desc_t *d0 = ds[0];
  for (int r = 1; r < R; r++) {
    const muster__desc_t *d = ds[r];
    DIFFER(routine, "%d");
    DIFFER(dtype, "%d");
    DIFFER(n, "%" PRId64);
    DIFFER(nrhs, "%" PRId64);
    DIFFER(tile, "%" PRId64);
    if ((d->layout == MUSTER__LAYOUT_DIST) != (d0->layout == MUSTER__LAYOUT_DIST))
      return muster__err(MUSTER_EMISMATCH, "rank %d %s a 2-D piece (muster_solve_comm_dist), rank 0 %s", r,
                         d->layout == MUSTER__LAYOUT_DIST ? "passes" : "does not pass",
                         d0->layout == MUSTER__LAYOUT_DIST ? "does" : "does not");
    DIFFER(layout, "%d");
    DIFFER(flags, "%u");
    if (muster_routine_takes(d0->routine) & MUSTER_TAKES_M) DIFFER(ldb, "%" PRId64 " (gels: m)");
    DIFFER(mem, "%d");
    if (strcmp(d->want, d0->want))
      return muster__err(MUSTER_EMISMATCH, "rank %d asks for provider '%s', rank 0 for '%s'", r,
                         d->want, d0->want);
  }
  for (int r = 0; r < R; r++) {
    int rc = validate_shard(ds[r], r);
    if (rc < 0) return rc;
  }
  return validate_layout(ds, R);
}

/* ---- what the choice sees --------------------------------------------------------- */

void muster__desc_query(const muster__desc_t *const *ds, int R, muster__query_t *out) {
  const muster__desc_t *d0 = ds[0];
  muster_provider_query_t *q = &out->q;
  memset(q, 0, sizeof *q);
  q->routine = (muster_routine_t)d0->routine;
  q->dtype = (muster_dtype_t)d0->dtype;
  q->n = d0->n;
  q->nrhs = d0->nrhs;
  q->tile = d0->tile;
  /* a 2-D piece: the engines redistribute it as they do a block one */
  q->layout = d0->layout == MUSTER__LAYOUT_DIST ? MUSTER_LAYOUT_BLOCK : (muster_layout_t)d0->layout;
  q->flags = d0->flags;
  q->mem = (muster_mem_t)d0->mem;
  q->nranks = R;
  int procs = 1, nodes = 1, devs = 0;
  for (int r = 0; r < R; r++) {
    const muster__desc_t *d = ds[r];
    out->devices[r] = d->mem == MUSTER_MEM_CUDA ? d->device : -1;
    out->free_bytes[r] = d->free_bytes;
    out->total_bytes[r] = d->total_bytes;
    int new_proc = 1, new_node = 1, new_dev = 1;
    for (int k = 0; k < r; k++) {
      new_node &= ds[k]->host != d->host;
      new_proc &= ds[k]->host != d->host || ds[k]->pid != d->pid;
      /* a GPU is its node and bus id; without a bus id, its process's ordinal */
      new_dev &= !(ds[k]->host == d->host &&
                   (d->busid[0] ? !strcmp(ds[k]->busid, d->busid)
                                : ds[k]->pid == d->pid && ds[k]->device == d->device));
    }
    procs += r > 0 && new_proc;
    nodes += r > 0 && new_node;
    devs += new_dev;
  }
  q->nnodes = nodes;
  q->span = nodes > 1 ? MUSTER_SPAN_NODES : procs > 1 ? MUSTER_SPAN_PROCESSES : MUSTER_SPAN_THREADS;
  q->ndevices = q->mem == MUSTER_MEM_CUDA ? devs : R;
  q->devices = out->devices;
  q->free_bytes = out->free_bytes;
  q->total_bytes = out->total_bytes;
}

const char *muster__desc_leader_reach(const muster__desc_t *const *ds, int R, char *why, size_t cap) {
  const muster__desc_t *d0 = ds[0];
  for (int r = 1; r < R; r++) {
    const muster__desc_t *d = ds[r];
    if (d->host != d0->host) {
      snprintf(why, cap, "rank %d (pid %" PRId64 ") is on another node than the leader", r, d->pid);
      return why;
    }
    if (d->mem != MUSTER_MEM_HOST || d->pid == d0->pid) continue;
    const char *bad = (d->ncols > 0 && d->ra.fd < 0) ? "a"
                      : (d->nrhs > 0 && d->rb.fd < 0) ? "b"
                      : (muster__desc_w_count(d) && d->rw.fd < 0) ? "w" : NULL;
    if (bad) {
      snprintf(why, cap, "rank %d (pid %" PRId64 "): host shard %s is not memory from "
               "muster_shard_alloc; in process mode the leader (pid %" PRId64 ") can only reach "
               "shards allocated there", r, d->pid, bad, d0->pid);
      return why;
    }
  }
  return NULL;
}
