/*
 * tests/mpi/errors.c - "errors": what a hostile or unlucky call gets.  Every
 * rank must return the same code (and the same words after the "who"
 * prefix), nothing may be written into any rank's buffers, and where the
 * lapack provider has the same case it must say the same thing (info,
 * the NaN's place).  Most cases call the provider directly (its own half
 * of the ABI contract: the runtime would refuse some of these inputs
 * before the provider saw them); the last ones go through muster_solve_comm
 * as a user's call does, and the engine choice is checked as the runtime
 * makes it.
 */
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>

#include "mpi/driver.h"

/* A copy of this rank's buffers, to show nothing was written. */
typedef struct snap {
  void *a, *b;
  size_t abytes, bbytes;
} snap_t;

static size_t piece_bytes(const lfx_t *fx) {
  int64_t S = (fx->n + fx->R - 1) / fx->R;
  return (size_t)(S * fx->lda) * fx->esz;
}

static void snap_take(const lfx_t *fx, int rank, snap_t *s) {
  const muster_shard_t *me = &fx->shards[rank];
  s->abytes = piece_bytes(fx);
  s->bbytes = me->b ? (size_t)(fx->ldb * fx->nrhs) * fx->esz : 0;
  s->a = malloc(s->abytes);
  s->b = s->bbytes ? malloc(s->bbytes) : NULL;
  ASSERT(s->a && (!s->bbytes || s->b));
  memcpy(s->a, me->a, s->abytes);
  if (s->bbytes) memcpy(s->b, me->b, s->bbytes);
}

static int snap_same(const lfx_t *fx, int rank, snap_t *s) {
  const muster_shard_t *me = &fx->shards[rank];
  int same =
      memcmp(s->a, me->a, s->abytes) == 0 && (!s->bbytes || memcmp(s->b, me->b, s->bbytes) == 0);
  free(s->a);
  free(s->b);
  return same;
}

static void setup(lfx_t *fx, drv_t *d, muster_routine_t r, muster_dtype_t t, int64_t n,
                  uint64_t seed) {
  lfx_seed(d->seed + seed);
  *fx =
      (lfx_t){.routine = r, .t = t, .n = n, .nrhs = 2, .R = d->size, .layout = MUSTER_LAYOUT_BLOCK};
  lfx_setup(fx);
}

int drv_expect(drv_t *d, const lfx_t *fx, int rc, int want, const char *text, char *why,
               size_t len) {
  int lo = rc, hi = rc;
  MPI_Allreduce(MPI_IN_PLACE, &lo, 1, MPI_INT, MPI_MIN, d->comm);
  MPI_Allreduce(MPI_IN_PLACE, &hi, 1, MPI_INT, MPI_MAX, d->comm);
  if (lo != hi)
    snprintf(why, len, "ranks returned different codes (%d .. %d)", lo, hi);
  else if (rc != want)
    snprintf(why, len, "rc %d, want %d: %s", rc, want, fx->err);
  else if (text && !strstr(fx->err, text))
    snprintf(why, len, "message lacks \"%s\": %s", text, fx->err);
  else
    return 1;
  return 0;
}

/* The case name's prefix: which way the call went. */
static const char *via(const drv_t *d) { return d->via_comm ? "muster_solve_comm: " : ""; }

/* Rank 0: the lapack provider on the same (modified) input says `text` too. */
static void lapack_agrees(drv_t *d, lfx_t *fx, int want, int64_t info, const char *text, char *why,
                          size_t len) {
  if (d->rank != 0 || why[0]) return;
  /* rank 0 holds every rank's (unchanged: checked) input shards */
  int rc = lfx_solve(d->lp, d->lp_ctx, fx);
  if (rc != want || (info && fx->info != info) || !strstr(fx->err, text))
    snprintf(why, len, "lapack says rc %d info %" PRId64 ": %s", rc, fx->info, fx->err);
}

static void not_pd(drv_t *d, muster_routine_t r, muster_dtype_t t, int k) {
  lfx_t fx;
  setup(&fx, d, r, t, 37, 500 + (uint64_t)k);
  int64_t bad = 17; /* A[bad][bad] hugely negative: leading minor bad+1 fails */
  fx.A[bad * fx.n + bad] = -1000.0;
  lfx_reshard(&fx);
  snap_t s;
  snap_take(&fx, d->rank, &s);
  int rc = drv_solve(d, &fx);
  char why[700] = "", text[64];
  /* the info > 0 contract (muster/provider.h): through the runtime the
   * verdict is worded; a provider called directly gives only the detail */
  if (d->via_comm) snprintf(text, sizeof text, "not positive definite (leading minor %d)", (int)bad + 1);
  else snprintf(text, sizeof text, "potrf");
  if (drv_expect(d, &fx, rc, MUSTER_ENOTPD, text, why, sizeof why) && fx.info != bad + 1)
    snprintf(why, sizeof why, "info %" PRId64 ", want %" PRId64, fx.info, bad + 1);
  if (!snap_same(&fx, d->rank, &s) && !why[0]) snprintf(why, sizeof why, "the piece was written");
  lapack_agrees(d, &fx, MUSTER_ENOTPD, bad + 1, "LAPACKE_", why, sizeof why);
  drv_case(d, !why[0], why, "%s%s %s not positive definite: MUSTER_ENOTPD, info %d everywhere",
           via(d), muster_routine_str(r), muster_dtype_str(t), (int)bad + 1);
  lfx_free(&fx);
}

/* NaN or Inf at (i, j) of A (lower: refused; upper: never read). */
static void nonfinite_a(drv_t *d, muster_dtype_t t, int64_t i, int64_t j, double v, int k) {
  lfx_t fx;
  setup(&fx, d, MUSTER_POTRS, t, 37, 600 + (uint64_t)k);
  fx.A[j * fx.n + i] = v;
  lfx_reshard(&fx);
  snap_t s;
  snap_take(&fx, d->rank, &s);
  int rc = drv_solve(d, &fx);
  char why[700] = "", text[96];
  int64_t S = (fx.n + d->size - 1) / d->size;
  if (i >= j) {
    snprintf(text, sizeof text,
             "NaN/Inf in A at row %" PRId64 ", column %" PRId64 " (rank %d's piece)", i, j,
             (int)(j / S));
    drv_expect(d, &fx, rc, MUSTER_ENONFINITE, text, why, sizeof why);
    if (!snap_same(&fx, d->rank, &s) && !why[0]) snprintf(why, sizeof why, "the piece was written");
    snprintf(text, sizeof text, "at row %" PRId64 ", column %" PRId64, i, j);
    lapack_agrees(d, &fx, MUSTER_ENONFINITE, 0, text, why, sizeof why);
  } else {
    drv_expect(d, &fx, rc, 0, NULL, why, sizeof why);
    free(s.a);
    free(s.b);
  }
  drv_case(d, !why[0], why, "%s%s %s at A(%" PRId64 ", %" PRId64 "): %s", via(d),
           isnan(v) ? "NaN" : "Inf", muster_dtype_str(t), i, j,
           i >= j ? "MUSTER_ENONFINITE everywhere" : "upper, never read: ok");
  lfx_free(&fx);
}

static void nonfinite_b(drv_t *d) {
  lfx_t fx;
  setup(&fx, d, MUSTER_POTRS, MUSTER_C128, 37, 700);
  lfx_set(&fx, fx.shards[0].b, fx.ldb, 4, 1, NAN);
  int rc = drv_solve(d, &fx);
  char why[700] = "";
  drv_expect(d, &fx, rc, MUSTER_ENONFINITE, "NaN/Inf in B at row 4, column 1 (rank 0)", why,
         sizeof why);
  drv_case(d, !why[0], why, "NaN in rank 0's B: MUSTER_ENONFINITE everywhere");
  lfx_free(&fx);
}

/* A finite input whose solution overflows f32 (the lapack test's case). */
static void nonfinite_result(drv_t *d) {
  lfx_t fx;
  setup(&fx, d, MUSTER_POTRS, MUSTER_F32, 6, 31337);
  for (int64_t k = 0; k < 36; k++) fx.A[k] = (k % 7 == 0) ? 1e-37 : 0; /* tiny diagonal */
  for (int64_t k = 0; k < 6 * fx.nrhs; k++) fx.B[k] = 1e3;             /* X = 1e40 > FLT_MAX */
  lfx_reshard(&fx);
  snap_t s;
  snap_take(&fx, d->rank, &s);
  int rc = drv_solve(d, &fx);
  char why[700] = "";
  drv_expect(d, &fx, rc, MUSTER_ENONFINITE, "NaN/Inf in the result X", why, sizeof why);
  if (!snap_same(&fx, d->rank, &s) && !why[0]) snprintf(why, sizeof why, "A or B was written");
  drv_case(d, !why[0], why, "%sX overflows f32: MUSTER_ENONFINITE everywhere, nothing written",
           via(d));
  lfx_free(&fx);
}

/* The last rank disagrees (flags, or even the dtype): all get EMISMATCH. */
static void mismatch(drv_t *d, int dtype) {
  int odd = d->rank == d->size - 1;
  lfx_t fx;
  setup(&fx, d, MUSTER_POTRS, dtype && odd ? MUSTER_F32 : MUSTER_F64, 37, 800);
  if (!dtype && odd) fx.flags = MUSTER_NO_FACTOR;
  snap_t s;
  snap_take(&fx, d->rank, &s);
  int rc = drv_solve(d, &fx);
  char why[700] = "", text[64];
  /* the runtime's descriptor round sees it first; the provider's own check
   * is for callers of collective_solve that skip the runtime */
  snprintf(text, sizeof text, d->via_comm ? "rank %d has %s=" : "ranks disagree: rank %d has %s",
           d->size - 1, dtype ? "dtype" : "flags");
  drv_expect(d, &fx, rc, MUSTER_EMISMATCH, text, why, sizeof why);
  if (!snap_same(&fx, d->rank, &s) && !why[0]) snprintf(why, sizeof why, "the piece was written");
  drv_case(d, !why[0], why, "%srank %d passes another %s: MUSTER_EMISMATCH everywhere", via(d),
           d->size - 1, dtype ? "dtype" : "flags");
  lfx_free(&fx);
}

/* One rank's bad argument stops every rank, with its words.  The grid
 * " 1xR" (a space) and "" were taken by sscanf, or as the default. */
static void bad_piece(drv_t *d, int which) {
  static const char *names[] = {"no W on the last rank", "MUSTER_SCALAPACK_GRID=3x5",
                                "a bootstrap of kind \"group\"", "MUSTER_SCALAPACK_GRID=' 1xR'",
                                "MUSTER_SCALAPACK_GRID=''"};
  static const char *texts[] = {"W (eigenvalues) is null", "MUSTER_SCALAPACK_GRID: '3x5' is not PxQ",
                                "needs the MPI bootstrap", "is not PxQ with P*Q",
                                "MUSTER_SCALAPACK_GRID is set but empty"};
  char grid[32];
  snprintf(grid, sizeof grid, " 1x%d", d->size);
  lfx_t fx;
  setup(&fx, d, MUSTER_SYEVD, MUSTER_F64, 37, 900);
  muster_bootstrap_t b = d->boot;
  muster_shard_t *me = &fx.shards[d->rank];
  void *w = me->w;
  if (which == 0 && d->rank == d->size - 1) me->w = NULL;
  if (which == 1) setenv("MUSTER_SCALAPACK_GRID", "3x5", 1);
  if (which == 2) b.kind = "group";
  if (which == 3) setenv("MUSTER_SCALAPACK_GRID", grid, 1);
  if (which == 4) setenv("MUSTER_SCALAPACK_GRID", "", 1);
  int want = which == 2 ? MUSTER_EUNSUPPORTED : MUSTER_EINVAL;
  int rc = drv_solve_on(d, &fx, &b);
  me->w = w;
  unsetenv("MUSTER_SCALAPACK_GRID");
  char why[700] = "";
  drv_expect(d, &fx, rc, want, texts[which], why, sizeof why);
  drv_case(d, !why[0], why, "%s: %s everywhere", names[which],
           want == MUSTER_EINVAL ? "MUSTER_EINVAL" : "MUSTER_EUNSUPPORTED");
  lfx_free(&fx);
}

/* potrs on comm through a bootstrap with `key`: 0 and a small residual. */
static int solve_on(drv_t *d, MPI_Comm *comm, uint64_t key, char *why, size_t len) {
  muster_bootstrap_t b = d->boot;
  if (comm != &d->comm) drv_boot(&b, comm, key); /* else the runtime's, over the world */
  lfx_t fx;
  lfx_seed(d->seed + key);
  fx = (lfx_t){.routine = MUSTER_POTRS,
               .t = MUSTER_F64,
               .n = 50,
               .nrhs = 1,
               .R = b.size,
               .layout = MUSTER_LAYOUT_BLOCK};
  lfx_setup(&fx);
  int rc = drv_solve_on(d, &fx, &b);
  for (int r = 0; r < b.size; r++) /* the residual reads every shard's b: this rank's X */
    if (r != b.rank)
      memcpy(fx.shards[r].b, fx.shards[b.rank].b, (size_t)(fx.ldb * fx.nrhs) * fx.esz);
  double res = rc ? 0 : lfx_potrs_residual(&fx);
  if (rc)
    snprintf(why, len, "rc %d: %s", rc, fx.err);
  else if (res > DRV_TOL)
    snprintf(why, len, "residual %.3g on key %" PRIu64, res, key);
  lfx_free(&fx);
  return !why[0];
}

/* Two halves of the job solve at once on their own communicators (keys
 * 100, 101); then their cached contexts are released and they solve again. */
static void sub_comms(drv_t *d) {
  MPI_Comm half;
  int color = d->rank % 2;
  MPI_Comm_split(d->comm, color, d->rank, &half);
  char why[700] = "";
  for (int round = 0; round < 2 && !why[0]; round++) {
    solve_on(d, &half, 100 + (uint64_t)color, why, sizeof why);
    d->sl->release_comms(d->sl_ctx, 100 + (uint64_t)color);
  }
  MPI_Comm_free(&half);
  drv_case(d, !why[0], why, "two sub-communicators (keys 100, 101) at once, released, again");
  /* the job's own key after release_comms: rebuilt on the next call */
  why[0] = '\0';
  d->sl->release_comms(d->sl_ctx, d->boot.key);
  solve_on(d, &d->comm, d->boot.key, why, sizeof why);
  drv_case(d, !why[0], why, "release_comms(job key), then a solve builds the grid again");
}

/* release_comms on one rank only: the next call fails everywhere with
 * MUSTER_EMISMATCH (instead of hanging in a half-made grid), and the one
 * after it works again. */
static void lone_release(drv_t *d) {
  char why[700] = "";
  if (d->rank == d->size - 1) d->sl->release_comms(d->sl_ctx, d->boot.key);
  lfx_t fx;
  setup(&fx, d, MUSTER_POTRS, MUSTER_F64, 37, 950);
  int rc = drv_solve(d, &fx);
  drv_expect(d, &fx, rc, MUSTER_EMISMATCH, "cached communicators", why, sizeof why);
  lfx_free(&fx);
  if (!why[0]) solve_on(d, &d->comm, d->boot.key, why, sizeof why);
  drv_case(d, !why[0], why,
           "release_comms on rank %d only: MUSTER_EMISMATCH everywhere, then "
           "solves again",
           d->size - 1);
}

static void estimates(drv_t *d) {
  char why[700] = "";
  muster_provider_query_t q = {.routine = MUSTER_SYEVD,
                               .dtype = MUSTER_F64,
                               .n = 1000,
                               .mem = MUSTER_MEM_HOST,
                               .nranks = d->size,
                               .ndevices = d->size,
                               .nnodes = 2,
                               .span = MUSTER_SPAN_NODES};
  muster_provider_estimate_t e;
  int rc = d->sl->estimate(d->sl_ctx, &q, &e);
  /* across nodes the flops model (slModel.h): syevd 1000 is 14/3 Gflop, a
   * fraction of a second at the fit's rate, however many ranks */
  if (rc != 0 || !(e.seconds > 0.01 && e.seconds < 1) ||
      e.peak_bytes < 2 * 8 * 1000 * 1000 / (uint64_t)d->size || !strstr(e.note, "2 nodes: flops model"))
    snprintf(why, sizeof why, "nodes: rc %d seconds %g peak %" PRIu64 ": %s", rc, e.seconds,
             e.peak_bytes, e.note);
  q.nnodes = 1;
  q.span = MUSTER_SPAN_PROCESSES;
  if (!why[0] && ((rc = d->sl->estimate(d->sl_ctx, &q, &e)) != 0 || e.seconds >= 0 ||
                  !strstr(e.note, "one node: lapack measured faster")))
    snprintf(why, sizeof why, "one node: rc %d seconds %g: %s", rc, e.seconds, e.note);
  q.span = MUSTER_SPAN_THREADS; /* 2 ranks as threads: refused; 1 rank: fine */
  q.nranks = 2;
  if (!why[0] && ((rc = d->sl->estimate(d->sl_ctx, &q, &e)) != MUSTER_EUNSUPPORTED ||
                  !strstr(e.note, "threads of one process")))
    snprintf(why, sizeof why, "threads: rc %d: %s", rc, e.note);
  q.nranks = 1;
  if (!why[0] && (rc = d->sl->estimate(d->sl_ctx, &q, &e)) != 0)
    snprintf(why, sizeof why, "one rank: rc %d: %s", rc, e.note);
  q.span = MUSTER_SPAN_PROCESSES;
  q.nranks = d->size + 1;
  if (!why[0] && (rc = d->sl->estimate(d->sl_ctx, &q, &e)) != MUSTER_EUNSUPPORTED)
    snprintf(why, sizeof why, "more ranks than the MPI job: rc %d: %s", rc, e.note);
  drv_case(d, !why[0], why,
           "estimate: the flops model across nodes, none (seconds < 0) on one node, whose note "
           "names lapack; refused "
           "for 2 ranks as threads and for more ranks than the job");
}

/* Another thread: once a call is under way, cancel a call that is not it. */
static void *cancel_other(void *arg) {
  drv_t *d = arg;
  while (!atomic_load(&d->running)) sched_yield();
  muster_collective_call_t other;
  memset(&other, 0, sizeof other);
  d->sl->cancel(d->sl_ctx, &other, MUSTER_EPEERDEAD, "test: a cancel of another call");
  return NULL;
}

/* A cancel that names a call not inside collective_solve (its call returned
 * already: the runtime's watchdog may cross the return; or NULL) does
 * nothing: the process lives on and the next call works. */
static void late_cancel(drv_t *d) {
  char why[700] = "";
  lfx_t fx;
  setup(&fx, d, MUSTER_POTRS, MUSTER_F64, 30, 960);
  int rc = drv_solve_on(d, &fx, &d->boot);
  if (rc) snprintf(why, sizeof why, "first solve: rc %d: %s", rc, fx.err);
  muster_collective_call_t returned; /* any pointer the provider is not running */
  memset(&returned, 0, sizeof returned);
  d->sl->cancel(d->sl_ctx, &returned, MUSTER_EPEERDEAD, "test: a cancel after its call returned");
  d->sl->cancel(d->sl_ctx, NULL, MUSTER_ETIMEDOUT, "test: a cancel of no call");
  lfx_free(&fx);
  if (!why[0]) solve_on(d, &d->comm, d->boot.key, why, sizeof why);
  drv_case(d, !why[0], why,
           "cancel of a call that is not running: nothing happens, the next call works");
  /* while a call runs, a cancel naming another one leaves it alone (a
   * cancel for the process as a whole would end the job here) */
  why[0] = '\0';
  pthread_t th;
  ASSERT_EQ(pthread_create(&th, NULL, cancel_other, d), 0);
  setup(&fx, d, MUSTER_SYEVD, MUSTER_F64, 200, 970);
  rc = drv_solve_on(d, &fx, &d->boot);
  pthread_join(th, NULL);
  if (rc) snprintf(why, sizeof why, "rc %d: %s", rc, fx.err);
  lfx_free(&fx);
  drv_case(d, !why[0], why, "cancel of another call while one runs: that one goes on");
}

/* reason has `what`, or was cut at MUSTER_MAX_REASON before it could (other
 * providers on the path, e.g. the GPU ones, are listed first; run-mpi-tests.sh
 * puts lapack and scalapack alone on the path). */
static int names_or_cut(const char *reason, const char *what) {
  size_t k = strlen(reason);
  return strstr(reason, what) || (k >= 3 && !strcmp(reason + k - 3, "..."));
}

/* The engine choice, as the runtime makes it: on one node lapack runs (and
 * the reason says why not scalapack); across nodes scalapack, the only one
 * that can (lapack does not span nodes); muster_solve_comm, which runs
 * collective providers only, picks scalapack unforced. */
static void choices(drv_t *d) {
  char why[700] = "", name[32] = "", reason[MUSTER_MAX_REASON] = "";
  muster_provider_query_t q = {.routine = MUSTER_POTRS,
                               .dtype = MUSTER_F64,
                               .n = 2000,
                               .nrhs = 1,
                               .mem = MUSTER_MEM_HOST,
                               .nranks = d->size,
                               .ndevices = d->size,
                               .nnodes = 1,
                               .span = d->size > 1 ? MUSTER_SPAN_PROCESSES : MUSTER_SPAN_THREADS};
  if (d->size > 1) {
    int rc = muster_provider_choose(&q, NULL, name, sizeof name, reason, sizeof reason);
    if (rc != 0 || strcmp(name, "lapack") ||
        !strstr(reason,
                "higher priority (10, scalapack has 5); "
                "scalapack: no estimate (one node: lapack measured faster"))
      snprintf(why, sizeof why, "one node: rc %d, %s: %s", rc, name,
               rc ? muster_last_error() : reason);
    q.nnodes = 2;
    q.span = MUSTER_SPAN_NODES;
    rc = muster_provider_choose(&q, NULL, name, sizeof name, reason, sizeof reason);
    if (!why[0] && (rc != 0 || strcmp(name, "scalapack") ||
                    !strstr(reason, "the only provider that can run it") ||
                    !names_or_cut(reason, "not lapack: does not run processes of several nodes")))
      snprintf(why, sizeof why, "two nodes: rc %d, %s: %s", rc, name,
               rc ? muster_last_error() : reason);
  }
  lfx_t fx;
  setup(&fx, d, MUSTER_POTRS, MUSTER_F64, 40, 990);
  muster_solve_args_t a = {
      .routine = MUSTER_POTRS, .dtype = MUSTER_F64, .n = fx.n, .nrhs = fx.nrhs};
  int rc = muster_solve_comm(d->mc, &a, &fx.shards[d->rank], &d->res);
  if (!why[0] && (rc != 0 || strcmp(d->res.provider, "scalapack") ||
                  !strstr(d->res.reason, "the only provider that can run it") ||
                  !names_or_cut(d->res.reason, "not lapack: a leader provider")))
    snprintf(why, sizeof why, "muster_solve_comm unforced: rc %d, %s: %s", rc, d->res.provider,
             rc ? muster_last_error() : d->res.reason);
  for (int r = 0; r < d->size; r++) /* the residual reads every shard's b: this rank's X */
    if (r != d->rank)
      memcpy(fx.shards[r].b, fx.shards[d->rank].b, (size_t)(fx.ldb * fx.nrhs) * fx.esz);
  double res = rc ? 0 : lfx_potrs_residual(&fx);
  if (!why[0] && res > DRV_TOL) snprintf(why, sizeof why, "unforced potrs residual %.3g", res);
  drv_case(d, !why[0], why,
           "choice: lapack on one node (the reason says why), scalapack across "
           "nodes and unforced in muster_solve_comm");
  lfx_free(&fx);
}

void drv_mode_errors(drv_t *d) {
  static const muster_dtype_t dtypes[] = {MUSTER_F32, MUSTER_F64, MUSTER_C64, MUSTER_C128};
  int k = 0;
  d->via_comm = 0; /* first the provider's own half of the contract: direct calls */
  for (int i = 0; i < 4; i++) not_pd(d, MUSTER_POTRS, dtypes[i], k++);
  not_pd(d, MUSTER_POTRI, MUSTER_C64, k++);
  nonfinite_a(d, MUSTER_F64, 36, 30, NAN, k++); /* the last column block */
  nonfinite_a(d, MUSTER_C64, 20, 3, INFINITY, k++);
  nonfinite_a(d, MUSTER_F64, 2, 30, NAN, k++); /* upper triangle: ignored */
  nonfinite_b(d);
  nonfinite_result(d);
  if (d->size > 1) {
    mismatch(d, 0);
    mismatch(d, 1);
  }
  for (int w = 0; w < 5; w++) bad_piece(d, w);
  sub_comms(d);
  if (d->size > 1) lone_release(d);
  estimates(d);
  late_cancel(d);
  /* what a user of muster_solve_comm gets for the same faults */
  d->via_comm = 1;
  not_pd(d, MUSTER_POTRS, MUSTER_F64, k++);
  nonfinite_a(d, MUSTER_C128, 30, 5, NAN, k++);
  nonfinite_result(d);
  if (d->size > 1) mismatch(d, 0);
  choices(d);
}
