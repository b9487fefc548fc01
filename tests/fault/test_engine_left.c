/*
 * tests/fault/test_engine_left.c - the collective engine thread
 * (runtime/solve/engine.c) through muster__collective_run, on the v2
 * collective test provider (colltwo) with a bootstrap of the test's own:
 *  - collective_left_inside_exchange: the engine is stuck inside an
 *    allgather of its bootstrap when the watchdog cancels (run_threaded's
 *    return 2, which no peer-death test reaches: a group's allgather ends
 *    once the group is poisoned).  The caller gets the watch's code, the
 *    call marked left (MUSTER__ENGINE_LEFT), a message that says not to
 *    leave the group, after two grace periods (cancel ignored, then the
 *    bootstrap not given back), and its bootstrap is never used again by
 *    the runtime's wait (the engine still owns it).
 *  - collective_engine_cost: what the engine thread costs a call (its
 *    pthread_create + calloc, and the watchdog's), against the same call
 *    without a watch (no watchdog, no engine): every call checked right,
 *    the times printed (a measurement, not a limit: speed goals live in
 *    benchmarks, never in a timed unit test).
 */
#include <pthread.h>
#include <stdlib.h>

#include "registry/choice.h"
#include "solve/collective.h"
#include "solve/engine.h"
#include "task.h"
#include "providers/tp_util.h"

/* A bootstrap of 1 or 2 ranks (this is rank 0): with `stick` set, an
 * allgather waits until released (a peer's transport that never answers);
 * else it copies mine into every slot. */
typedef struct {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int stick, inside, released, calls;
} fake_boot_t;

static int fake_allgather(void *ctx, const void *mine, void *all, size_t len, char *err, size_t errlen) {
  fake_boot_t *f = ctx;
  pthread_mutex_lock(&f->mu);
  f->calls++;
  if (f->stick) {
    f->inside = 1;
    pthread_cond_broadcast(&f->cv);
    while (!f->released) pthread_cond_wait(&f->cv, &f->mu);
    f->inside = 0;
    pthread_mutex_unlock(&f->mu);
    snprintf(err, errlen, "fake bootstrap: released by the test");
    return MUSTER_EPEERDEAD;
  }
  pthread_mutex_unlock(&f->mu);
  memcpy(all, mine, len); /* size 1 */
  return 0;
}

/* The watch: a dead peer once the engine sits inside the stuck allgather. */
static int watch_peer_gone(void *arg) {
  fake_boot_t *f = arg;
  pthread_mutex_lock(&f->mu);
  int inside = f->inside;
  pthread_mutex_unlock(&f->mu);
  return inside ? muster__err(MUSTER_EPEERDEAD, "rank 1 (pid 4242) died (the test's watch)") : 0;
}

static int watch_quiet(void *arg) {
  (void)arg;
  return 0;
}

typedef struct {
  char dir[256];
  muster__provider_t *p;
  fake_boot_t f;
  muster_bootstrap_t boot;
  muster_solve_args_t args;
  muster_shard_t mine;
  double a[8 * 8], b[8];
  muster__coll_in_t in;
} fixture_t;

/* potrs n = 8 on `size` ranks (this one rank 0, block layout) through colltwo */
static void setup(fixture_t *x, int size, int stick) {
  memset(x, 0, sizeof *x);
  tp_env_fresh(x->dir, sizeof x->dir);
  tp_link(x->dir, "potrs", "colltwo.so", "testprov_coll2.so");
  ASSERT_OK(muster__provider_get(MUSTER_POTRS, MUSTER_F64, MUSTER_MEM_HOST, "colltwo", NULL, size, &x->p));
  pthread_mutex_init(&x->f.mu, NULL);
  pthread_cond_init(&x->f.cv, NULL);
  x->f.stick = stick;
  x->boot = (muster_bootstrap_t){.rank = 0, .size = size, .kind = "store", .key = 77, .ctx = &x->f,
                                 .allgather = fake_allgather};
  int64_t n = 8, cols = (n + size - 1) / size;
  x->args = (muster_solve_args_t){.routine = MUSTER_POTRS, .dtype = MUSTER_F64, .n = n, .nrhs = 1,
                                  .layout = MUSTER_LAYOUT_BLOCK};
  x->mine = (muster_shard_t){.mem = MUSTER_MEM_HOST, .device = -1, .a = x->a, .lda = n, .col0 = 0,
                             .ncols = cols, .b = x->b, .ldb = n};
  x->in = (muster__coll_in_t){.p = x->p, .args = &x->args, .mine = &x->mine, .rank = 0, .nranks = size,
                              .boot = &x->boot};
}

TEST_IMPL(collective_left_inside_exchange) {
  fixture_t *x = calloc(1, sizeof *x); /* never freed: the engine left running points into it */
  ASSERT(x);
  setup(x, 2, 1);
  x->in.watch = watch_peer_gone;
  x->in.watch_arg = &x->f;
  muster__outcome_t out;
  memset(&out, 0, sizeof out);
  out.seconds = -1;
  int engine_rc = 0;
  double t0 = test_now();
  int rc = muster__collective_run(&x->in, &out, &engine_rc);
  double took = test_now() - t0;
  const char *msg = muster_last_error();
  fprintf(stderr, "returned %d after %.2f s: %s\n", rc, took, msg);
  ASSERT_EQ(rc, MUSTER_EPEERDEAD);
  ASSERT_EQ(engine_rc, MUSTER__ENGINE_LEFT);
  ASSERT_STR_CONTAINS(msg, "rank 0: provider colltwo was cancelled");
  ASSERT_STR_CONTAINS(msg, "rank 1 (pid 4242) died");
  ASSERT_STR_CONTAINS(msg, "is left running on a thread of this process");
  ASSERT_STR_CONTAINS(msg, "inside an exchange with its peers: do not leave the group");
  ASSERT(out.seconds == 0);
  /* a tick to fire, the cancel's grace, then the grace to take the
   * bootstrap back (engine.h), each give or take a tick */
  ASSERT_DBL_LT(2 * MUSTER__ENGINE_GRACE_S, took);
  ASSERT_DBL_LT(took, 2 * MUSTER__ENGINE_GRACE_S + 2.0);
  /* the engine is still inside the one allgather the provider began */
  pthread_mutex_lock(&x->f.mu);
  int inside = x->f.inside, calls = x->f.calls;
  pthread_mutex_unlock(&x->f.mu);
  ASSERT_EQ(inside, 1);
  ASSERT_EQ(calls, 1);
  /* left as engine.h says: the process ends (the runner's _exit), the
   * provider's reference, x and the engine thread never released */
  test_remove_tree(x->dir);
  return 0;
}

/* Median seconds per muster__collective_run of x's call, over `calls`. */
static double per_call(fixture_t *x, int calls) {
  double *t = malloc(sizeof *t * (size_t)calls);
  ASSERT(t);
  for (int i = 0; i < calls; i++) {
    muster__outcome_t out;
    memset(&out, 0, sizeof out);
    int engine_rc = -1;
    x->b[0] = 0;
    double t0 = test_now();
    int rc = muster__collective_run(&x->in, &out, &engine_rc);
    t[i] = test_now() - t0;
    ASSERT_OK(rc);
    ASSERT_EQ(engine_rc, 0);
    ASSERT(x->b[0] == 4.0); /* colltwo (TP_VERSION 4) wrote its answer */
    ASSERT_EQ(out.tile, 8); /* tile_used = dist.nb: block layout of n = 8 on 1 rank */
  }
  for (int i = 1; i < calls; i++) /* insertion sort: a few hundred */
    for (int j = i; j > 0 && t[j - 1] > t[j]; j--) {
      double s = t[j];
      t[j] = t[j - 1];
      t[j - 1] = s;
    }
  double m = t[calls / 2];
  free(t);
  return m;
}

static void *nothing(void *arg) { return arg; }

/* The engine's cost: a watched call (watchdog + engine threads) against the
 * unwatched one, alternating rounds so that load hits both alike; a bare
 * pthread_create + join for scale.  Checked: every call right; the times
 * are printed, not asserted (the project keeps speed out of unit tests). */
TEST_IMPL(collective_engine_cost) {
  fixture_t *x = calloc(1, sizeof *x);
  ASSERT(x);
  setup(x, 1, 0);
  enum { ROUNDS = 5, CALLS = 200 };
  double watched[ROUNDS], bare[ROUNDS], thread[ROUNDS];
  for (int r = 0; r < ROUNDS; r++) {
    x->in.watch = NULL;
    bare[r] = per_call(x, CALLS);
    x->in.watch = watch_quiet;
    watched[r] = per_call(x, CALLS);
    double t0 = test_now();
    for (int i = 0; i < CALLS; i++) {
      pthread_t tid;
      ASSERT_EQ(pthread_create(&tid, NULL, nothing, NULL), 0);
      pthread_join(tid, NULL);
    }
    thread[r] = (test_now() - t0) / CALLS;
  }
  double best_w = watched[0], best_b = bare[0], best_t = thread[0];
  for (int r = 1; r < ROUNDS; r++) {
    if (watched[r] < best_w) best_w = watched[r];
    if (bare[r] < best_b) best_b = bare[r];
    if (thread[r] < best_t) best_t = thread[r];
  }
  fprintf(stderr, "collective call, median of %d (best of %d rounds): unwatched %.1f us, watched "
          "(watchdog + engine threads) %.1f us, difference %.1f us; a bare pthread_create + join "
          "%.1f us\n", CALLS, ROUNDS, best_b * 1e6, best_w * 1e6, (best_w - best_b) * 1e6, best_t * 1e6);
  muster__provider_release(x->p);
  test_remove_tree(x->dir);
  free(x);
  return 0;
}
