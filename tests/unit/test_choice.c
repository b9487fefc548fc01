/*
 * tests/unit/test_choice.c - the engine choice (runtime/registry/choice.c) over
 * fake providers built here (no files): which one wins and why, memory
 * refusal through estimate(), unavailable providers left out, a forced
 * provider, ties and their order, cost tables, kinds and spans.
 */
#include <inttypes.h>
#include <math.h>

#include "task.h"
#include "registry/choice.h"
#include "registry/cost.h"

/* estimate: seconds from ctx (a double), or "needs ctx bytes" for est_mem */
static int est_secs(void *ctx, const muster_provider_query_t *q, muster_provider_estimate_t *e) {
  (void)q;
  e->seconds = *(const double *)ctx;
  snprintf(e->note, sizeof e->note, "model says %g", e->seconds);
  return 0;
}

static int est_mem(void *ctx, const muster_provider_query_t *q, muster_provider_estimate_t *e) {
  uint64_t need = *(const uint64_t *)ctx;
  for (int r = 0; r < q->nranks; r++)
    if (q->free_bytes && q->free_bytes[r] && q->free_bytes[r] < need) {
      snprintf(e->note, sizeof e->note, "needs %" PRIu64 " B, device %d has %" PRIu64 " B free", need,
               q->devices[r], q->free_bytes[r]);
      return MUSTER_EUNSUPPORTED;
    }
  e->seconds = 0.01;
  snprintf(e->note, sizeof e->note, "fits");
  return 0;
}

static int est_none(void *ctx, const muster_provider_query_t *q, muster_provider_estimate_t *e) {
  (void)ctx, (void)q;
  e->seconds = -1; /* no model */
  return 0;
}

/* No model, but words (scalapack on one node says why lapack should run). */
static int est_none_noted(void *ctx, const muster_provider_query_t *q, muster_provider_estimate_t *e) {
  (void)ctx, (void)q;
  e->seconds = -1;
  snprintf(e->note, sizeof e->note, "one node: the other is faster");
  return 0;
}

typedef struct fake {
  muster_provider_v2_t v;
  muster__provider_t p;
} fake_t;

static void fake_init(fake_t *f, const char *name, int priority, unsigned kind,
                      int (*est)(void *, const muster_provider_query_t *, muster_provider_estimate_t *),
                      void *ctx) {
  memset(f, 0, sizeof *f);
  f->v.abi_version = MUSTER_PROVIDER_V2_ABI;
  f->v.kind = kind;
  f->v.name = name;
  f->v.priority = priority;
  f->v.routines = 1u << MUSTER_POTRS;
  f->v.dtypes = 1u << MUSTER_F64;
  f->v.mem_kinds = 1u << MUSTER_MEM_CUDA;
  f->v.spans = MUSTER_SPAN_THREADS | MUSTER_SPAN_PROCESSES;
  f->v.estimate = est;
  f->p.v = &f->v;
  f->p.ctx = ctx;
  f->p.available = 1;
  snprintf(f->p.name, sizeof f->p.name, "%s", name);
  snprintf(f->p.path, sizeof f->p.path, "/fake/%s.so", name);
}

/* A potrs f64 call on 2 GPUs in threads mode with `free_mb` free each. */
typedef struct qbuf {
  muster_provider_query_t q;
  int devices[2];
  uint64_t free_b[2], total_b[2];
} qbuf_t;

static void query_init(qbuf_t *b, uint64_t free_mb) {
  memset(b, 0, sizeof *b);
  b->q.routine = MUSTER_POTRS;
  b->q.dtype = MUSTER_F64;
  b->q.n = 4096;
  b->q.nrhs = 1;
  b->q.mem = MUSTER_MEM_CUDA;
  b->q.nranks = 2;
  b->q.ndevices = 2;
  b->q.nnodes = 1;
  b->q.span = MUSTER_SPAN_THREADS;
  b->devices[0] = 0, b->devices[1] = 1;
  b->free_b[0] = b->free_b[1] = free_mb << 20;
  b->total_b[0] = b->total_b[1] = UINT64_C(80) << 30;
  b->q.devices = b->devices;
  b->q.free_bytes = b->free_b;
  b->q.total_bytes = b->total_b;
}

#define ALL_KINDS ((1u << MUSTER_PROVIDER_LEADER) | (1u << MUSTER_PROVIDER_COLLECTIVE))

static int rank_these(const qbuf_t *b, const char *forced, muster__provider_t **provs, int n,
                      muster__choice_t *ch) {
  muster__choice_in_t in = {.q = &b->q, .kinds = ALL_KINDS};
  return muster__choice_rank(&in, forced ? forced : "", "MUSTER_PROVIDER", provs, n, ch);
}

TEST_IMPL(choice_fastest_wins) {
  double sa = 0.5, sb = 0.2;
  fake_t a, b, c;
  fake_init(&a, "alpha", 10, MUSTER_PROVIDER_LEADER, est_secs, &sa);
  fake_init(&b, "beta", 10, MUSTER_PROVIDER_LEADER, est_secs, &sb);
  fake_init(&c, "gamma", 100, MUSTER_PROVIDER_LEADER, NULL, NULL); /* no model, high priority */
  qbuf_t q;
  query_init(&q, 1000);
  muster__provider_t *all[] = {&a.p, &b.p, &c.p};
  muster__choice_t ch;
  ASSERT_OK(rank_these(&q, NULL, all, 3, &ch));
  ASSERT_EQ(ch.n, 3);
  ASSERT(!strcmp(ch.c[0].p->name, "beta"));
  ASSERT(!strcmp(ch.c[1].p->name, "alpha"));
  ASSERT(!strcmp(ch.c[2].p->name, "gamma")); /* a time, any time, beats none */
  ASSERT(ch.c[0].timed && ch.c[0].seconds == 0.2);
  ASSERT(!ch.c[2].timed && ch.c[2].ok);
  ASSERT_STR_CONTAINS(ch.reason, "fastest: 0.2 s (estimate: model says 0.2) vs alpha 0.5 s");
  /* the same facts in any order give the same ranking */
  muster__provider_t *perm[] = {&c.p, &a.p, &b.p};
  muster__choice_t ch2;
  ASSERT_OK(rank_these(&q, NULL, perm, 3, &ch2));
  for (int i = 0; i < 3; i++) ASSERT(ch2.c[i].p == ch.c[i].p);
  ASSERT(!strcmp(ch2.reason, ch.reason));
  /* an estimate without a model falls back to priority order */
  fake_init(&a, "alpha", 10, MUSTER_PROVIDER_LEADER, est_none, NULL);
  muster__provider_t *two[] = {&a.p, &c.p};
  ASSERT_OK(rank_these(&q, NULL, two, 2, &ch));
  ASSERT(!strcmp(ch.c[0].p->name, "gamma"));
  ASSERT_STR_CONTAINS(ch.reason, "no estimate or cost table; higher priority (100, alpha has 10)");
  ASSERT(strstr(ch.reason, "; alpha:") == NULL); /* alpha's estimate said nothing */
  /* the runner-up's words without a model end the reason */
  fake_init(&a, "alpha", 10, MUSTER_PROVIDER_LEADER, est_none_noted, NULL);
  ASSERT_OK(rank_these(&q, NULL, two, 2, &ch));
  ASSERT(!strcmp(ch.c[0].p->name, "gamma"));
  ASSERT_STR_CONTAINS(ch.reason, "higher priority (100, alpha has 10); alpha: no estimate (one node: the "
                                 "other is faster), no cost table");
  return 0;
}

TEST_IMPL(choice_memory_refusal) {
  uint64_t need = UINT64_C(4) << 30; /* 4 GiB */
  double slow = 3.0;
  fake_t big, small;
  fake_init(&big, "onegpu", 50, MUSTER_PROVIDER_LEADER, est_mem, &need);
  fake_init(&small, "multigpu", 10, MUSTER_PROVIDER_LEADER, est_secs, &slow);
  muster__provider_t *all[] = {&big.p, &small.p};
  qbuf_t q;
  muster__choice_t ch;
  query_init(&q, 8192); /* 8 GiB free: it fits and is faster */
  ASSERT_OK(rank_these(&q, NULL, all, 2, &ch));
  ASSERT(!strcmp(ch.c[0].p->name, "onegpu"));
  query_init(&q, 1024); /* 1 GiB: refused, the other one runs */
  q.free_b[1] = UINT64_C(512) << 20;
  ASSERT_OK(rank_these(&q, NULL, all, 2, &ch));
  ASSERT(!strcmp(ch.c[0].p->name, "multigpu"));
  ASSERT(!ch.c[1].ok);
  ASSERT_STR_CONTAINS(ch.c[1].note, "estimate refused: needs 4294967296 B, device 0 has 1073741824 B free");
  ASSERT_STR_CONTAINS(ch.reason, "the only provider that can run it");
  ASSERT_STR_CONTAINS(ch.reason, "not onegpu: estimate refused: needs");
  /* forced, the refusal is an error and there is no fallback */
  ASSERT_EQ(rank_these(&q, "onegpu", all, 2, &ch), MUSTER_EUNSUPPORTED);
  ASSERT_STR_CONTAINS(muster_last_error(), "onegpu (/fake/onegpu.so): estimate refused: needs");
  /* forced and fitting: forced, whatever is faster */
  query_init(&q, 8192);
  ASSERT_OK(rank_these(&q, "multigpu", all, 2, &ch));
  ASSERT_EQ(ch.n, 1);
  ASSERT(!strcmp(ch.c[0].p->name, "multigpu"));
  ASSERT_STR_CONTAINS(ch.reason, "forced by MUSTER_PROVIDER; expected 3 s");
  /* forced to a name nobody has */
  ASSERT_EQ(rank_these(&q, "nosuch", all, 2, &ch), MUSTER_ENOPROVIDER);
  ASSERT_STR_CONTAINS(muster_last_error(), "provider 'nosuch' (MUSTER_PROVIDER) does not provide potrs");
  return 0;
}

TEST_IMPL(choice_unavailable_and_unfit) {
  double s = 0.001;
  fake_t gone, host, coll, few, slow;
  fake_init(&gone, "nogpu", 90, MUSTER_PROVIDER_LEADER, est_secs, &s);
  gone.p.available = 0;
  snprintf(gone.p.why, sizeof gone.p.why, "probe: no CUDA driver");
  fake_init(&host, "hostonly", 80, MUSTER_PROVIDER_LEADER, est_secs, &s);
  host.v.mem_kinds = 1u << MUSTER_MEM_HOST;
  fake_init(&coll, "threadless", 70, MUSTER_PROVIDER_COLLECTIVE, est_secs, &s);
  coll.v.spans = MUSTER_SPAN_PROCESSES | MUSTER_SPAN_NODES;
  fake_init(&few, "onerank", 60, MUSTER_PROVIDER_LEADER, est_secs, &s);
  few.v.max_shards = 1;
  fake_init(&slow, "fallback", 1, MUSTER_PROVIDER_LEADER, NULL, NULL);
  muster__provider_t *all[] = {&gone.p, &host.p, &coll.p, &few.p, &slow.p};
  qbuf_t q;
  query_init(&q, 1000);
  muster__choice_t ch;
  ASSERT_OK(rank_these(&q, NULL, all, 5, &ch));
  ASSERT(!strcmp(ch.c[0].p->name, "fallback"));
  const char *why[][2] = {{"nogpu", "probe: no CUDA driver"},
                          {"hostonly", "no cuda memory"},
                          {"threadless", "does not run threads of one process"},
                          {"onerank", "takes at most 1 ranks, the call has 2"}};
  for (int k = 0; k < 4; k++) {
    int found = 0;
    for (int i = 1; i < ch.n; i++)
      if (!strcmp(ch.c[i].p->name, why[k][0])) {
        ASSERT(!ch.c[i].ok);
        ASSERT_STR_CONTAINS(ch.c[i].note, why[k][1]);
        found = 1;
      }
    ASSERT(found);
  }
  ASSERT_STR_CONTAINS(ch.reason, "not nogpu: probe: no CUDA driver");
  /* processes: the collective one can run, and is timed */
  q.q.span = MUSTER_SPAN_PROCESSES;
  ASSERT_OK(rank_these(&q, NULL, all, 5, &ch));
  ASSERT(!strcmp(ch.c[0].p->name, "threadless"));
  /* only leader providers allowed (muster_solve_all) */
  muster__choice_in_t in = {.q = &q.q, .kinds = 1u << MUSTER_PROVIDER_LEADER};
  ASSERT_OK(muster__choice_rank(&in, "", "", all, 5, &ch));
  ASSERT(!strcmp(ch.c[0].p->name, "fallback"));
  /* the leader cannot reach the shards: leader providers are out, and
   * with nothing else that is the caller's error */
  in.kinds = ALL_KINDS;
  in.no_leader = "rank 1: host shard a is not memory from muster_shard_alloc";
  q.q.span = MUSTER_SPAN_THREADS;
  ASSERT_EQ(muster__choice_rank(&in, "", "", all, 5, &ch), MUSTER_EINVAL);
  ASSERT_STR_CONTAINS(muster_last_error(), "not memory from muster_shard_alloc");
  /* none at all */
  ASSERT_EQ(rank_these(&q, NULL, all, 1, &ch), MUSTER_ENOPROVIDER);
  ASSERT_STR_CONTAINS(muster_last_error(), "no usable provider for potrs f64 on cuda memory, 2 ranks: "
                                           "nogpu (/fake/nogpu.so): probe: no CUDA driver");
  return 0;
}

TEST_IMPL(choice_ties) {
  double s = 0.3;
  fake_t a, b, c;
  fake_init(&a, "alpha", 10, MUSTER_PROVIDER_LEADER, est_secs, &s);
  fake_init(&b, "beta", 20, MUSTER_PROVIDER_LEADER, est_secs, &s);
  fake_init(&c, "charlie", 20, MUSTER_PROVIDER_LEADER, est_secs, &s);
  qbuf_t q;
  query_init(&q, 1000);
  muster__choice_t ch;
  muster__provider_t *ab[] = {&a.p, &b.p};
  ASSERT_OK(rank_these(&q, NULL, ab, 2, &ch));
  ASSERT(!strcmp(ch.c[0].p->name, "beta"));
  ASSERT_STR_CONTAINS(ch.reason, "ties with alpha at 0.3 s; higher priority (20, alpha has 10)");
  /* same time, same priority: name order, whatever the input order */
  muster__provider_t *cb[] = {&c.p, &b.p}, *bc[] = {&b.p, &c.p};
  ASSERT_OK(rank_these(&q, NULL, cb, 2, &ch));
  ASSERT(!strcmp(ch.c[0].p->name, "beta"));
  ASSERT_STR_CONTAINS(ch.reason, "same priority (20) as charlie, name order");
  ASSERT_OK(rank_these(&q, NULL, bc, 2, &ch));
  ASSERT(!strcmp(ch.c[0].p->name, "beta"));
  return 0;
}

TEST_IMPL(choice_cost_tables) {
  double est = 0.05;
  fake_t tab, model, none;
  fake_init(&tab, "tabled", 1, MUSTER_PROVIDER_LEADER, NULL, NULL);
  fake_init(&model, "modelled", 1, MUSTER_PROVIDER_LEADER, est_secs, &est);
  fake_init(&none, "unmeasured", 99, MUSTER_PROVIDER_LEADER, NULL, NULL);
  muster__cost_t *t = NULL;
  char why[200];
  ASSERT_OK(muster__cost_parse("potrs f64 2 2048 1 0.01\npotrs f64 2 8192 1 0.64\n", "/x/tabled.cost", &t,
                               why, sizeof why));
  tab.p.cost = t;
  muster__provider_t *all[] = {&tab.p, &model.p, &none.p};
  qbuf_t q;
  query_init(&q, 1000);
  muster__choice_t ch;
  /* n=4096: 0.01 * 2^3 = 0.08 s from the table, the model says 0.05 */
  ASSERT_OK(rank_these(&q, NULL, all, 3, &ch));
  ASSERT(!strcmp(ch.c[0].p->name, "modelled"));
  ASSERT(!strcmp(ch.c[1].p->name, "tabled"));
  ASSERT(ch.c[1].timed && fabs(ch.c[1].seconds - 0.08) < 1e-12);
  ASSERT_STR_CONTAINS(ch.c[1].note, "cost table tabled.cost: interpolated between n=2048 and 8192");
  ASSERT(!strcmp(ch.c[2].p->name, "unmeasured")); /* priority 99, but nothing known */
  /* n=2048: the table says 0.01 s and wins */
  q.q.n = 2048;
  ASSERT_OK(rank_these(&q, NULL, all, 3, &ch));
  ASSERT(!strcmp(ch.c[0].p->name, "tabled"));
  ASSERT_STR_CONTAINS(ch.reason, "fastest: 0.01 s (cost table tabled.cost: measured at n=2048) vs modelled 0.05 s");
  /* an estimate with a model is preferred to the provider's own table */
  tab.v.estimate = est_secs;
  tab.p.ctx = &est;
  ASSERT_OK(rank_these(&q, NULL, all, 3, &ch));
  ASSERT_STR_CONTAINS(ch.c[0].note, "estimate: model says 0.05");
  /* a table without the dtype: no time */
  q.q.dtype = MUSTER_F64;
  tab.v.estimate = NULL;
  q.q.routine = MUSTER_POTRS;
  tab.v.dtypes |= 1u << MUSTER_F32;
  none.v.dtypes = model.v.dtypes = tab.v.dtypes;
  q.q.dtype = MUSTER_F32;
  ASSERT_OK(rank_these(&q, NULL, all, 3, &ch));
  ASSERT(!strcmp(ch.c[0].p->name, "modelled"));
  for (int i = 0; i < 3; i++)
    if (ch.c[i].p == &tab.p) {
      ASSERT(!ch.c[i].timed);
      ASSERT_STR_CONTAINS(ch.c[i].note, "no estimate, its cost table has no such row");
    }
  muster__cost_free(t);
  return 0;
}
