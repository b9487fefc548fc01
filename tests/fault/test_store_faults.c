/*
 * tests/fault/test_store_faults.c - the store bootstrap (muster/store.h)
 * across forked processes over a store in a folder (every key a file):
 *   - a kind store comm on it runs the collective test provider, twice;
 *   - a rank SIGKILLed while every rank is blocked inside the provider
 *     (as in an NCCL call): the survivors' watchdogs see it (same node:
 *     /proc) and every survivor returns MUSTER_EPEERDEAD naming it within
 *     2 s; SIGSTOPped: MUSTER_ETIMEDOUT naming it as stopped, after its
 *     silence passed the 1 s timeout and within 1 s more (its silence
 *     counts from its last beat seen, up to one beat, 0.25 s, before the
 *     signal: so no sooner than 0.75 s after it);
 *   - the same two while the others wait in a barrier (an allgather);
 *   - nothing is left in /dev/shm, no process is left; the folder is
 *     removed by the test (the store is the caller's).
 */
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "task.h"
#include "integration/kv_util.h"
#include "integration/test_v2_util.h"
#include "providers/tp_util.h"

enum { R = 3, VICTIM = 2 };

typedef struct out {
  int rc[2];
  char msg[2][700];
  char provider[2][32];
  double t_return;
  int done;
} out_t;

/* potrs n=10, a block piece, over comm c; records call k. */
static void solve_once(muster_comm_t *c, out_t *o, int k) {
  int rank = muster_comm_rank(c), size = muster_comm_size(c);
  int64_t n = 10, col0, ncols;
  ASSERT_OK(muster_layout_block_cols(n, size, rank, &col0, &ncols));
  muster_shard_t s = {.mem = MUSTER_MEM_HOST, .device = -1, .lda = n, .ldb = n, .col0 = col0, .ncols = ncols};
  s.a = calloc((size_t)(n * (ncols ? ncols : 1)), 8);
  s.b = calloc((size_t)n, 8);
  muster_solve_args_t a = {.routine = MUSTER_POTRS, .dtype = MUSTER_F64, .n = n, .nrhs = 1};
  muster_solve_result_t res;
  o->rc[k] = muster_solve_comm(c, &a, &s, &res);
  snprintf(o->msg[k], sizeof o->msg[k], "%s", o->rc[k] ? muster_last_error() : "");
  snprintf(o->provider[k], sizeof o->provider[k], "%s", res.provider);
  free(s.a);
  free(s.b);
}

/* One rank: open the store and a comm on it; in_barrier: the victim sleeps
 * while the others wait in a barrier, else every rank solves (calls times). */
static void rank_main(const char *dir, int r, int in_barrier, int calls, out_t *o) {
  muster_kv_t kv = kv_dir(dir);
  muster_store_opts_t so = {.name = "faults", .rank = r, .size = R, .timeout_s = 1.0};
  muster_store_t *st;
  ASSERT_OK(muster_store_open(&kv, &so, &st));
  if (in_barrier) {
    ASSERT_OK(muster_store_barrier(st));
    if (r == VICTIM) pause(); /* killed or stopped here */
    o->rc[0] = muster_store_barrier(st);
    snprintf(o->msg[0], sizeof o->msg[0], "%s", o->rc[0] ? muster_last_error() : "");
  } else {
    muster_comm_opts_t co = {.kind = "store", .rank = r, .size = R, .name = "faults",
                             .allgather = muster_store_allgather, .ctx = st};
    muster_comm_t *c;
    ASSERT_OK(muster_comm_open(&co, &c));
    for (int k = 0; k < calls; k++) solve_once(c, o, k);
    ASSERT_OK(muster_comm_close(c));
  }
  o->t_return = test_now();
  o->done = 1;
  ASSERT_OK(muster_store_close(st));
}

/* Run R ranks; sig 0: none, else signal VICTIM once every rank is inside
 * the provider (or the barrier), and return the time of the signal. */
static double run(const char *dir, int in_barrier, int calls, int sig, out_t *out, const char *enter) {
  pid_t pids[R];
  for (int r = 0; r < R; r++) {
    pids[r] = fork();
    ASSERT(pids[r] >= 0);
    if (pids[r] == 0) {
      rank_main(dir, r, in_barrier, calls, &out[r]);
      _exit(0);
    }
  }
  double t_sig = 0;
  if (sig) {
    /* inside the provider: its enter log; in the barrier: the first barrier
     * passed and the others a little into the second */
    double t0 = test_now();
    if (!in_barrier)
      while (v2_count_lines(enter, "enter ") < R) {
        ASSERT_DBL_LT(test_now() - t0, 10);
        usleep(2000);
      }
    else
      usleep(300000);
    t_sig = test_now();
    ASSERT(kill(pids[VICTIM], sig) == 0);
  }
  for (int r = 0; r < R; r++) {
    if (sig == SIGSTOP && r == VICTIM) continue;
    int st;
    ASSERT(waitpid(pids[r], &st, 0) == pids[r]);
    ASSERT(sig ? r == VICTIM || (WIFEXITED(st) && WEXITSTATUS(st) == 0) : WIFEXITED(st) && !WEXITSTATUS(st));
  }
  if (sig == SIGSTOP) { /* end the stopped one: no process left */
    kill(pids[VICTIM], SIGKILL);
    ASSERT(waitpid(pids[VICTIM], NULL, 0) == pids[VICTIM]);
  }
  return t_sig;
}

static void check_survivors(const out_t *out, int sig, double t_sig, int in_provider) {
  int want = sig == SIGSTOP ? MUSTER_ETIMEDOUT : MUSTER_EPEERDEAD;
  const char *what = sig == SIGSTOP ? "it is stopped (SIGSTOP or a debugger)" : "died";
  /* a stopped rank's silence starts at its last beat seen, which may come
   * up to one beat (timeout / 4) before the signal (once in ~20 runs here:
   * 0.97 s) */
  double lo = sig == SIGSTOP ? 1.0 - 0.25 : 0, hi = sig == SIGSTOP ? 2.0 + 0.5 : 2.0;
  for (int r = 0; r < R; r++) {
    if (r == VICTIM) continue;
    const out_t *o = &out[r];
    ASSERT(o->done);
    if (o->rc[0] != want) fprintf(stderr, "rank %d: %d %s\n", r, o->rc[0], o->msg[0]);
    ASSERT_EQ(o->rc[0], want);
    ASSERT_STR_CONTAINS(o->msg[0], "rank 2 (pid ");
    ASSERT_STR_CONTAINS(o->msg[0], what);
    ASSERT_STR_CONTAINS(o->msg[0], "when last heard it was"); /* its last beat read: may predate the call */
    if (in_provider) ASSERT_STR_CONTAINS(o->msg[0], "was cancelled");
    double after = o->t_return - t_sig;
    fprintf(stderr, "rank %d returned %.3f s after the signal: %s\n", r, after, o->msg[0]);
    ASSERT_DBL_LT(lo, after);
    ASSERT_DBL_LT(after, hi);
  }
}

static char pdir[256], sdir[320], enter[320];

static out_t *setup(void) {
  tp_env_fresh(pdir, sizeof pdir);
  tp_link(pdir, "potrs", "colltwo.so", "testprov_coll2.so");
  snprintf(sdir, sizeof sdir, "%s/store", pdir);
  ASSERT(mkdir(sdir, 0700) == 0);
  snprintf(enter, sizeof enter, "%s/enter.log", pdir);
  out_t *out = mmap(NULL, sizeof(out_t) * R, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  ASSERT(out != MAP_FAILED);
  memset(out, 0, sizeof(out_t) * R);
  return out;
}

static void teardown(out_t *out) {
  ASSERT_EQ(test_count_job_segments(test_job()), 0);
  munmap(out, sizeof(out_t) * R);
  unsetenv("TESTPROV_BLOCK");
  unsetenv("TESTPROV_ENTER_LOG");
  test_remove_tree(pdir);
}

TEST_IMPL(store_comm_solve_processes) {
  out_t *out = setup();
  run(sdir, 0, 2, 0, out, enter);
  for (int r = 0; r < R; r++)
    for (int k = 0; k < 2; k++) {
      if (out[r].rc[k]) fprintf(stderr, "rank %d call %d: %s\n", r, k, out[r].msg[k]);
      ASSERT_EQ(out[r].rc[k], 0);
      ASSERT(!strcmp(out[r].provider[k], "colltwo"));
    }
  /* with del: each rank's last two allgathers and its closed beat */
  ASSERT_LE(test_count_dir(sdir), 3 * R);
  teardown(out);
  return 0;
}

static int signal_case(int sig, int in_barrier) {
  out_t *out = setup();
  setenv("TESTPROV_BLOCK", "1", 1);
  setenv("TESTPROV_ENTER_LOG", enter, 1);
  double t = run(sdir, in_barrier, 1, sig, out, enter);
  check_survivors(out, sig, t, !in_barrier);
  teardown(out);
  return 0;
}

TEST_IMPL(store_sigkill_in_provider) { return signal_case(SIGKILL, 0); }
TEST_IMPL(store_sigstop_in_provider) { return signal_case(SIGSTOP, 0); }
TEST_IMPL(store_sigkill_in_barrier) { return signal_case(SIGKILL, 1); }
TEST_IMPL(store_sigstop_in_barrier) { return signal_case(SIGSTOP, 1); }
