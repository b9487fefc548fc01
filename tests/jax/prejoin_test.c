/*
 * tests/jax/prejoin_test.c - a rank of a launch that fails before it joins
 * the group (adapters/jax/ffi.c, solve.c: mj_abort_peers), 3 ranks as
 * threads, MUSTER_TIMEOUT=30: its peers must fail within 3 s of their
 * call with an error that names it and its reason, whether it comes first
 * (the others 0.3 s later) or last (0.3 s after them):
 *   - an argument check: rank 1's A shard one column short;
 *   - the staging of process mode: rank 2's region cannot be had (the
 *     test-only MUSTER_JAX_TEST_FAIL_STAGE, which fails its first staging
 *     only), then the next launch solves.
 * potri of 2 I (n = 9), whose inverse is 0.5 I.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "handler_fake.h"
#include "muster/clock.h"

enum { R = 3, N = 9, S = 3 };

typedef struct pj_rank {
  problem_t p;
  int delay_ms, short_a, process_mode;
  char *err;
  double took;
} pj_rank_t;

static void *pj_main(void *arg) {
  pj_rank_t *x = arg;
  usleep((useconds_t)x->delay_ms * 1000);
  frame_t *f = malloc(sizeof *f);
  build(f, &x->p);
  if (x->process_mode) {
    attr_drop(f, "process_mode");
    attr_int(f, "process_mode", 1);
  }
  if (x->short_a) f->dims[1][1] = f->dims[2][1] = S - 1; /* A's operand and its aliased result */
  double t0 = muster_clock_s();
  x->err = call(f);
  x->took = muster_clock_s() - t0;
  free(f);
  return NULL;
}

/* One launch (run_id) of potri on 2 I: rank `bad` short of a column
 * (short_a) or not; late: the rank that starts 0.3 s after the others. */
static void launch(pj_rank_t *x, int64_t run_id, int bad, int short_a, int late, int process_mode) {
  pthread_t th[R];
  for (int r = 0; r < R; r++) {
    memset(&x[r], 0, sizeof x[r]);
    problem_t *p = &x[r].p;
    p->routine = MUSTER_POTRI;
    p->nranks = R;
    p->rank = r;
    p->n = p->ld = N;
    p->w = S;
    p->run_id = run_id;
    p->site = 77;
    p->api = &new_api;
    p->a = calloc(N * S, sizeof(double));
    for (int j = 0; j < S; j++) p->a[(r * S + j) + j * N] = 2.0;
    p->status = -999;
    x[r].short_a = short_a && r == bad;
    x[r].delay_ms = (r == late) ? 300 : 0;
    x[r].process_mode = process_mode;
    pthread_create(&th[r], NULL, pj_main, &x[r]);
  }
  for (int r = 0; r < R; r++) pthread_join(th[r], NULL);
}

static void done(pj_rank_t *x) {
  for (int r = 0; r < R; r++) {
    free(x[r].p.a);
    free(x[r].err);
  }
}

/* Every rank failed, the others within 3 s naming rank bad and `why`. */
static void expect_told(const pj_rank_t *x, int bad, const char *why, const char *what) {
  char who[32];
  snprintf(who, sizeof who, "rank %d (pid", bad);
  for (int r = 0; r < R; r++) {
    const char *m = x[r].err ? x[r].err : "(no error)";
    fprintf(stderr, "prejoin %s, rank %d: %.3f s: %s\n", what, r, x[r].took, m);
    CHECK(x[r].err && strstr(m, why), "%s: rank %d: %s", what, r, m);
    if (r == bad) continue;
    CHECK(strstr(m, who), "%s: rank %d does not name rank %d: %s", what, r, bad, m);
    CHECK(x[r].took < 3.0, "%s: rank %d took %.1f s", what, r, x[r].took);
  }
}

void test_prejoin_failures(void) {
  setenv("MUSTER_TIMEOUT", "30", 1);
  setenv("MUSTER_JAX_TEST_FAIL_STAGE", "2", 1); /* read at this process's first staging */
  pj_rank_t x[R];
  /* rank 1's argument check: first (the others late), then last */
  launch(x, 601, 1, 1, 0, 0);
  expect_told(x, 1, "A shard has 2 columns", "short A, first");
  done(x);
  launch(x, 602, 1, 1, 1, 0);
  expect_told(x, 1, "A shard has 2 columns", "short A, last");
  done(x);
  /* rank 2's staging (process mode), first: the others are late */
  launch(x, 603, 2, 0, 0, 1);
  expect_told(x, 2, "MUSTER_JAX_TEST_FAIL_STAGE=2", "staging");
  done(x);
  /* the fault fired once: the next launch solves (inverse 0.5 I) */
  launch(x, 604, -1, 0, -1, 1);
  for (int r = 0; r < R; r++) {
    CHECK(!x[r].err && x[r].p.status == 0, "after the fault, rank %d: %s", r, x[r].err ? x[r].err : "status");
    for (int j = 0; j < S; j++)
      for (int i = 0; i < N; i++)
        CHECK(fabs(x[r].p.a[i + j * N] - (i == r * S + j ? 0.5 : 0.0)) < 1e-12, "rank %d: inverse (%d, %d)", r, i,
              j);
  }
  done(x);
  unsetenv("MUSTER_JAX_TEST_FAIL_STAGE");
  unsetenv("MUSTER_TIMEOUT");
}
