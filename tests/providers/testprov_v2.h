/*
 * tests/providers/testprov_v2.h - the ABI v2 parts of the test provider
 * (included by testprov.c when TP_V2 is defined; it uses its put/fill and
 * tp_solve).
 *
 * estimate(), driven by TESTPROV_EST="name=SPEC,name=SPEC" (the entry of
 * this provider's TP_NAME; none: no model, seconds -1):
 *   SECONDS      that many seconds (e.g. 0.002)
 *   refuse       MUSTER_EUNSUPPORTED, note "refused by TESTPROV_EST"
 *   needMB       refuse when some rank's free_bytes is known and below MB
 *                MiB ("needs MB MiB, rank r's device d has F MiB free"),
 *                else 0.001 s
 * TESTPROV_QLOG=PATH: every estimate appends one line describing its query.
 * TP_REFUSE: estimate always refuses ("refused: test provider TP_REFUSE").
 *
 * The collective kind (TP_COLLECTIVE), on every rank:
 *   - checks its bootstrap: an allgather of (rank, size, key, pid) must
 *     give every rank its own slot and one key, and one of 2500 bytes a
 *     known pattern (the runtime splits it into several exchanges);
 *   - checks its dist against the shard (P = 1, Q = size, mycol = rank,
 *     numroc(n, nb, rank, size) local columns; a 2-D piece, P > 1: P x Q
 *     = size, myrow * Q + mycol = rank, lld = lda >= its rows);
 *   - writes TP_VERSION into its b (potrs, getrs: collective only), w (syevd), its piece of a
 *     (potri; a 2-D f64 piece: 1 + i * n + j at global (i, j)), sets info
 *     from TESTPROV_INFO and tile_used = dist.nb;
 *   TESTPROV_SUM=1         instead, what shows where A's data reached: with
 *                          S = sum of A(i, j) * (1 + i * n + j) over the
 *                          whole A (each rank its piece's terms, placed by
 *                          the dist, summed over the bootstrap), every
 *                          entry of B (potrs, getrs) is S, of W (syevd) Re S + Im S
 *   TESTPROV_FAIL_RANK=r   rank r fails after the checks (MUSTER_EPROVIDER)
 *   TESTPROV_BLOCK=1       block until cancel() (after the bootstrap
 *                          check), then return cancel's code and reason
 *   TESTPROV_BLOCK_S=S     the same for at most S seconds, then go on (a
 *                          long call that ends by itself)
 *   TESTPROV_CANCEL_RC=N   a cancelled call returns N instead (a failure of
 *                          its own, still saying "cancelled: " and why)
 *   TESTPROV_CANCEL_MSG=S  a cancelled call says S instead of why
 *   TESTPROV_DEAF=1        block for ever, deaf to cancel (an engine stuck
 *                          in a GPU wait after its peer died)
 *   TESTPROV_RELEASE_LOG=PATH  release_comms appends "release KEY"
 *   TESTPROV_ENTER_LOG=PATH    appends "enter RANK PID" once its checks passed
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

#ifndef TP_RULES
#define TP_RULES MUSTER_LAYOUT_RULES_VERSION
#endif
#ifndef TP_SPANS
#define TP_SPANS (MUSTER_SPAN_THREADS | MUSTER_SPAN_PROCESSES)
#endif

static void append_line(const char *path, const char *line) {
  int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return;
  ssize_t w = write(fd, line, strlen(line));
  (void)w;
  close(fd);
}

/* This provider's SPEC in TESTPROV_EST into out; 0 when none. */
static int est_spec(char *out, size_t cap) {
  const char *env = getenv("TESTPROV_EST");
  size_t nl = strlen(TP_NAME);
  for (const char *s = env; s && *s;) {
    const char *e = strchr(s, ',');
    size_t l = e ? (size_t)(e - s) : strlen(s);
    if (l > nl + 1 && !strncmp(s, TP_NAME, nl) && s[nl] == '=') {
      snprintf(out, cap, "%.*s", (int)(l - nl - 1), s + nl + 1);
      return 1;
    }
    s = e ? e + 1 : s + l;
  }
  return 0;
}

static void log_query(const muster_provider_query_t *q) {
  const char *path = getenv("TESTPROV_QLOG");
  if (!path) return;
  char line[512];
  int k = snprintf(line, sizeof line, "%s routine=%d n=%" PRId64 " nrhs=%" PRId64 " nranks=%d ndevices=%d "
                   "nnodes=%d span=%u mem=%d", TP_NAME, (int)q->routine, q->n, q->nrhs, q->nranks,
                   q->ndevices, q->nnodes, q->span, (int)q->mem);
  for (int r = 0; q->free_bytes && r < q->nranks && k < (int)sizeof line - 40; r++)
    k += snprintf(line + k, sizeof line - k, " free%d=%" PRIu64 "MiB", r, q->free_bytes[r] >> 20);
  snprintf(line + k, sizeof line - k, "\n");
  append_line(path, line);
}

static int tp_estimate(void *ctx, const muster_provider_query_t *q, muster_provider_estimate_t *est) {
  (void)ctx;
  log_query(q);
#ifdef TP_REFUSE
  snprintf(est->note, sizeof est->note, "refused: test provider TP_REFUSE");
  return MUSTER_EUNSUPPORTED;
#endif
  char spec[64];
  est->seconds = -1;
  if (!est_spec(spec, sizeof spec)) return 0;
  if (!strcmp(spec, "refuse")) {
    snprintf(est->note, sizeof est->note, "refused by TESTPROV_EST");
    return MUSTER_EUNSUPPORTED;
  }
  if (!strncmp(spec, "need", 4)) {
    uint64_t need = strtoull(spec + 4, NULL, 10) << 20;
    for (int r = 0; q->free_bytes && r < q->nranks; r++)
      if (q->free_bytes[r] && q->free_bytes[r] < need) {
        snprintf(est->note, sizeof est->note, "needs %" PRIu64 " MiB, rank %d's device %d has %" PRIu64
                 " MiB free", need >> 20, r, q->devices ? q->devices[r] : -1, q->free_bytes[r] >> 20);
        return MUSTER_EUNSUPPORTED;
      }
    est->seconds = 0.001;
    est->peak_bytes = need;
    snprintf(est->note, sizeof est->note, "fits (needs %" PRIu64 " MiB)", need >> 20);
    return 0;
  }
  est->seconds = atof(spec);
  snprintf(est->note, sizeof est->note, "TESTPROV_EST says %s s", spec);
  return 0;
}

/* ---- the collective kind ---------------------------------------------------------- */

#define MAX_CALLS 64
static pthread_mutex_t calls_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t calls_cv = PTHREAD_COND_INITIALIZER;
static struct running {
  const muster_collective_call_t *call;
  int cancelled, code;
  char why[256];
} calls[MAX_CALLS];

static struct running *call_slot(const muster_collective_call_t *c, int take) {
  for (int i = 0; i < MAX_CALLS; i++)
    if (calls[i].call == c) return &calls[i];
  if (!take) return NULL;
  for (int i = 0; i < MAX_CALLS; i++)
    if (!calls[i].call) {
      memset(&calls[i], 0, sizeof calls[i]);
      calls[i].call = c;
      return &calls[i];
    }
  return NULL;
}

__attribute__((unused)) static void tp_cancel(void *ctx, const muster_collective_call_t *c, int code,
                                              const char *why) {
  (void)ctx;
  pthread_mutex_lock(&calls_mu);
  struct running *r = call_slot(c, 0); /* a call not running: nothing to do */
  if (r) {
    r->cancelled = 1;
    r->code = code;
    snprintf(r->why, sizeof r->why, "%s", why);
    pthread_cond_broadcast(&calls_cv);
  }
  pthread_mutex_unlock(&calls_mu);
}

__attribute__((unused)) static void tp_release(void *ctx, uint64_t key) {
  (void)ctx;
  const char *path = getenv("TESTPROV_RELEASE_LOG");
  char line[64];
  snprintf(line, sizeof line, "release %" PRIu64 "\n", key);
  if (path) append_line(path, line);
}

typedef struct hello {
  int32_t rank, size;
  uint64_t key;
  int64_t pid;
} hello_t;

static int fail(const muster_collective_call_t *c, int code, const char *what) {
  snprintf(c->err, c->errlen, "test provider %s: %s", TP_NAME, what);
  return code;
}

static int check_boot(const muster_collective_call_t *c) {
  const muster_bootstrap_t *b = c->boot;
  if (!b || !b->allgather || b->size < 1 || b->rank < 0 || b->rank >= b->size || b->key == 0)
    return fail(c, MUSTER_EPROVIDER, "bad bootstrap");
  hello_t me = {b->rank, b->size, b->key, (int64_t)getpid()}, all[MUSTER_MAX_RANKS];
  char err[256] = "";
  int rc = b->allgather(b->ctx, &me, all, sizeof me, err, sizeof err);
  if (rc < 0) return fail(c, rc, err);
  for (int r = 0; r < b->size; r++)
    if (all[r].rank != r || all[r].size != b->size || all[r].key != b->key)
      return fail(c, MUSTER_EPROVIDER, "bootstrap allgather gave a wrong slot");
  enum { BIG = 2500 };
  unsigned char *mine = malloc(BIG), *big = malloc((size_t)BIG * b->size);
  if (!mine || !big) {
    free(mine);
    free(big);
    return fail(c, MUSTER_ENOMEM, "out of memory");
  }
  for (int i = 0; i < BIG; i++) mine[i] = (unsigned char)(b->rank * 7 + i);
  rc = b->allgather(b->ctx, mine, big, BIG, err, sizeof err);
  for (int r = 0; r < b->size && rc == 0; r++)
    for (int i = 0; i < BIG && rc == 0; i++)
      if (big[(size_t)r * BIG + i] != (unsigned char)(r * 7 + i))
        rc = fail(c, MUSTER_EPROVIDER, "large bootstrap allgather gave wrong bytes");
  free(mine);
  free(big);
  if (rc < 0 && !c->err[0]) return fail(c, rc, err);
  return rc;
}

static int check_dist(const muster_collective_call_t *c) {
  const muster_dist_t *d = &c->dist;
  const muster_shard_t *s = c->mine;
  int64_t n = c->args.n, cols = muster_layout_numroc(n, d->nb, d->mycol, d->npcol);
  int ok = d->m == n && d->n == n && d->nprow * d->npcol == c->boot->size &&
           d->myrow * d->npcol + d->mycol == c->boot->rank && d->lld == s->lda;
  if (d->nprow > 1) /* a 2-D piece (muster_solve_comm_dist): its rows fit lld */
    return ok && d->lld >= muster_layout_numroc(n, d->mb, d->myrow, d->nprow)
               ? 0 : fail(c, MUSTER_EPROVIDER, "dist does not describe a 2-D piece");
  ok = ok && d->myrow == 0 && (c->args.layout == MUSTER_LAYOUT_CYCLIC ? cols <= s->ncols : cols == s->ncols);
  return ok ? 0 : fail(c, MUSTER_EPROVIDER, "dist does not describe the shard");
}

/* potri on a 2-D piece: each local element of f64 A gets 1 + its global
 * index i * n + j, found from the dist (the caller checks the same rule
 * from its own place: the dist reached the provider as given). */
static void fill_global(const muster_collective_call_t *c) {
  const muster_dist_t *d = &c->dist;
  int64_t rows = muster_layout_numroc(d->m, d->mb, d->myrow, d->nprow);
  int64_t cols = muster_layout_numroc(d->n, d->nb, d->mycol, d->npcol);
  double *a = c->mine->a;
  for (int64_t lj = 0; lj < cols; lj++)
    for (int64_t li = 0; li < rows; li++) {
      int64_t i = (li / d->mb * d->nprow + d->myrow) * d->mb + li % d->mb;
      int64_t j = (lj / d->nb * d->npcol + d->mycol) * d->nb + lj % d->nb;
      a[lj * d->lld + li] = (double)(1 + i * d->n + j);
    }
}

/* Element k of a (any dtype) as (re, im). */
static void get_elem(muster_dtype_t t, const void *a, int64_t k, double *re, double *im) {
  switch (t) {
  case MUSTER_F32: *re = ((const float *)a)[k], *im = 0; break;
  case MUSTER_F64: *re = ((const double *)a)[k], *im = 0; break;
  case MUSTER_C64: *re = ((const float *)a)[2 * k], *im = ((const float *)a)[2 * k + 1]; break;
  default: *re = ((const double *)a)[2 * k], *im = ((const double *)a)[2 * k + 1]; break;
  }
}

/* TESTPROV_SUM: S of the header over every rank's piece, into B or W. */
static int write_sum(const muster_collective_call_t *c) {
  const muster_dist_t *d = &c->dist;
  const muster_shard_t *s = c->mine;
  muster_dtype_t t = c->args.dtype;
  int64_t rows = muster_layout_numroc(d->m, d->mb, d->myrow, d->nprow);
  int64_t cols = muster_layout_numroc(d->n, d->nb, d->mycol, d->npcol);
  double mine[2] = {0, 0}, all[MUSTER_MAX_RANKS][2], re, im;
  for (int64_t lj = 0; lj < cols; lj++)
    for (int64_t li = 0; li < rows; li++) {
      int64_t i = (li / d->mb * d->nprow + d->myrow) * d->mb + li % d->mb;
      int64_t j = (lj / d->nb * d->npcol + d->mycol) * d->nb + lj % d->nb;
      get_elem(t, s->a, lj * d->lld + li, &re, &im);
      mine[0] += re * (double)(1 + i * d->n + j);
      mine[1] += im * (double)(1 + i * d->n + j);
    }
  char err[256] = "";
  int rc = c->boot->allgather(c->boot->ctx, mine, all, sizeof mine, err, sizeof err);
  if (rc < 0) return fail(c, rc, err);
  double sum[2] = {0, 0};
  for (int r = 0; r < c->boot->size; r++) sum[0] += all[r][0], sum[1] += all[r][1];
  if (c->args.routine == MUSTER_SYEVD) {
    fill(muster_dtype_real_bytes(t) == 4 ? MUSTER_F32 : MUSTER_F64, s->w, c->args.n, c->args.n, 1, sum[0] + sum[1]);
    return 0;
  }
  fill(t, s->b, s->ldb, c->args.n, c->args.nrhs, sum[0]);
  if (t == MUSTER_C64 || t == MUSTER_C128) /* fill wrote the real parts */
    for (int64_t j = 0; j < c->args.nrhs; j++)
      for (int64_t i = 0; i < c->args.n; i++) {
        int64_t k = 2 * (j * s->ldb + i) + 1;
        if (t == MUSTER_C64) ((float *)s->b)[k] = (float)sum[1];
        else ((double *)s->b)[k] = sum[1];
      }
  return 0;
}

/* Wait until cancelled, or `seconds` (> 0; else no limit) have passed:
 * cancel's code with the reason, or 0 when the time ran out first. */
static int block_until_cancelled(const muster_collective_call_t *c, double seconds) {
  struct timespec until;
  clock_gettime(CLOCK_REALTIME, &until); /* calls_cv's clock */
  until.tv_sec += (time_t)seconds;
  until.tv_nsec += (long)((seconds - (double)(time_t)seconds) * 1e9);
  if (until.tv_nsec >= 1000000000L) until.tv_sec++, until.tv_nsec -= 1000000000L;
  pthread_mutex_lock(&calls_mu);
  struct running *r = call_slot(c, 1);
  int timed_out = 0;
  while (r && !r->cancelled && !timed_out)
    timed_out = seconds > 0 ? pthread_cond_timedwait(&calls_cv, &calls_mu, &until) == ETIMEDOUT
                            : (pthread_cond_wait(&calls_cv, &calls_mu), 0);
  int code = !r ? MUSTER_EPROVIDER : r->cancelled ? r->code : 0;
  const char *own_rc = getenv("TESTPROV_CANCEL_RC"), *own_msg = getenv("TESTPROV_CANCEL_MSG");
  if (code < 0 && r && own_rc) code = atoi(own_rc);
  if (code < 0) snprintf(c->err, c->errlen, "%s%s", own_msg ? "" : "cancelled: ",
                         own_msg ? own_msg : r ? r->why : "(no slot)");
  pthread_mutex_unlock(&calls_mu);
  return code;
}

static void forget_call(const muster_collective_call_t *c) {
  pthread_mutex_lock(&calls_mu);
  struct running *r = call_slot(c, 0);
  if (r) r->call = NULL;
  pthread_mutex_unlock(&calls_mu);
}

__attribute__((unused)) static int tp_collective(void *ctx, const muster_collective_call_t *c) {
  (void)ctx;
  pthread_mutex_lock(&calls_mu);
  call_slot(c, 1); /* from now on cancel() finds it */
  pthread_mutex_unlock(&calls_mu);
  int rc = check_boot(c);
  if (rc == 0) rc = check_dist(c);
  const char *fr = getenv("TESTPROV_FAIL_RANK");
  if (rc == 0 && fr && atoi(fr) == c->boot->rank) rc = fail(c, MUSTER_EPROVIDER, "TESTPROV_FAIL_RANK");
  const char *enter = getenv("TESTPROV_ENTER_LOG");
  if (rc == 0 && enter) {
    char line[64];
    snprintf(line, sizeof line, "enter %d %d\n", c->boot->rank, (int)getpid());
    append_line(enter, line);
  }
  while (rc == 0 && getenv("TESTPROV_DEAF")) pause();
  if (rc == 0 && getenv("TESTPROV_BLOCK")) rc = block_until_cancelled(c, 0);
  if (rc == 0 && getenv("TESTPROV_BLOCK_S")) rc = block_until_cancelled(c, atof(getenv("TESTPROV_BLOCK_S")));
  forget_call(c);
  if (rc < 0) return rc;
  const muster_solve_args_t *a = &c->args;
  const muster_shard_t *s = c->mine;
  int has_b = a->routine == MUSTER_POTRS || a->routine == MUSTER_GETRS;
  if (getenv("TESTPROV_SUM") && (has_b || a->routine == MUSTER_SYEVD)) {
    rc = write_sum(c);
    if (rc < 0) return rc;
  } else {
    if (has_b) fill(a->dtype, s->b, s->ldb, a->n, a->nrhs, TP_VERSION);
    if (a->routine == MUSTER_SYEVD) fill(muster_dtype_real_bytes(a->dtype) == 4 ? MUSTER_F32 : MUSTER_F64,
                                         s->w, a->n, a->n, 1, TP_VERSION);
  }
  if (a->routine == MUSTER_POTRI && c->dist.nprow > 1 && a->dtype == MUSTER_F64) fill_global(c);
  else if (a->routine == MUSTER_POTRI && c->dist.nprow == 1) fill(a->dtype, s->a, s->lda, a->n, s->ncols, TP_VERSION);
  const char *info = getenv("TESTPROV_INFO");
  *c->info = info ? atoll(info) : 0;
  *c->tile_used = c->dist.nb;
  return 0;
}

__attribute__((visibility("default"))) const muster_provider_v2_t muster_provider_v2 = {
    .abi_version = TP_ABI == MUSTER_PROVIDER_V1_ABI ? MUSTER_PROVIDER_V2_ABI : TP_ABI,
    .struct_size = sizeof(muster_provider_v2_t),
    .layout_rules = TP_RULES,
#ifdef TP_COLLECTIVE
    .kind = MUSTER_PROVIDER_COLLECTIVE,
#else
    .kind = MUSTER_PROVIDER_LEADER,
#endif
    .name = TP_NAME,
    .description = "test provider (ABI v2)",
    .priority = TP_PRIORITY,
    .routines = (1u << MUSTER_POTRS) | (1u << MUSTER_POTRI) | (1u << MUSTER_SYEVD)
#ifdef TP_COLLECTIVE
                | (1u << MUSTER_GETRS) /* as potrs: B in and out (the adapters' 2-D pieces) */
#endif
    ,
    .dtypes = TP_DTYPES,
#ifdef TP_MEM_CUDA
    .mem_kinds = 1u << MUSTER_MEM_CUDA,
#else
    .mem_kinds = 1u << MUSTER_MEM_HOST,
#endif
    .spans = TP_SPANS,
    .max_shards = TP_MAX_SHARDS,
    .init = tp_init,
    .fini = tp_fini,
    .probe = tp_probe,
    .estimate = tp_estimate,
#if defined(TP_COLLECTIVE) && !defined(TP_NO_HOOK)
    .collective_solve = tp_collective,
    .cancel = tp_cancel,
    .release_comms = tp_release,
#elif !defined(TP_COLLECTIVE) && !defined(TP_NO_HOOK)
    .solve = tp_solve,
#endif
};
