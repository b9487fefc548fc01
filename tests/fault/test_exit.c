/*
 * tests/fault/test_exit.c - a process that calls exit() while other threads
 * of it join groups or run solves (docs/runtime-lifetime.md "exit() while threads
 * are inside muster").  Each case forks a child that starts those threads,
 * sleeps a delay and calls exit(42); the delays sweep the window from
 * "threads not started" to "deep in a solve", each repeated, since the
 * old failures came 10-30% of the time at a given delay.  The parent
 * checks that every child ended with status 42 (not a signal, not a hang:
 * a time limit), and that nothing of the job is left in /dev/shm.
 *
 * Before the fix: the name of a group the threads were forming stayed in
 * /dev/shm (every run); exit() during a first solve faulted in CUDA's
 * libraries, which that solve had loaded for host memory, or freed the
 * heap under them; exit() while a thread was inside OpenBLAS hung for ever
 * (OpenBLAS's destructor joins its busy workers).
 */
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>

#include "muster.h"
#include "providers/tp_util.h"
#include "task.h"

#define CHILD_LIMIT_S 20.0 /* a child still there after this hung */
/* each delay this often; under TSan once (its exit sleeps 1 s, atexit_sleep_ms) */
#ifdef __SANITIZE_THREAD__
#define REPS 1
#else
#define REPS 2
#endif
#define STATUS 42          /* the child's exit(); not ASSERT's 3 */

typedef void (*start_fn)(void);

static void nap_us(long us) {
  struct timespec ts = {us / 1000000, (us % 1000000) * 1000L};
  nanosleep(&ts, NULL);
}

static void spawn(void *(*fn)(void *), void *arg) {
  pthread_t t;
  if (pthread_create(&t, NULL, fn, arg) != 0) abort(); /* a signal, not STATUS */
  pthread_detach(t);
}

/* Fork a child that runs start(), sleeps delay_us and calls exit(STATUS);
 * it must end with that status within CHILD_LIMIT_S and leave nothing of the job
 * in /dev/shm.  Returns how long it took. */
static double exit_case(start_fn start, long delay_us) {
  fflush(NULL);
  double t0 = test_now();
  pid_t pid = fork();
  ASSERT(pid >= 0);
  if (pid == 0) {
    start();
    nap_us(delay_us);
    exit(STATUS);
  }
  int st = 0;
  pid_t w = 0;
  while ((w = waitpid(pid, &st, WNOHANG)) == 0 && test_now() - t0 < CHILD_LIMIT_S) nap_us(2000);
  if (w == 0) {
    fprintf(stderr, "child %d still running %.0f s after exit(%d) at %ld us: hung\n", (int)pid,
            CHILD_LIMIT_S, STATUS, delay_us);
    kill(pid, SIGKILL);
    waitpid(pid, &st, 0);
    ASSERT(0);
  }
  if (!WIFEXITED(st) || WEXITSTATUS(st) != STATUS)
    fprintf(stderr, "child exit(%d) at %ld us ended with %s %d\n", STATUS, delay_us,
            WIFSIGNALED(st) ? "signal" : "status",
            WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
  ASSERT(WIFEXITED(st));
  ASSERT_EQ(WEXITSTATUS(st), STATUS);
  int left = test_count_job_segments(test_job());
  if (left) fprintf(stderr, "exit(%d) at %ld us left %d segment(s) of the job\n", STATUS, delay_us, left);
  ASSERT_EQ(left, 0);
  return test_now() - t0;
}

/* ---- joining --------------------------------------------------------------- */

/* ranks 0 and 1 of a 3-rank group that never forms: they wait in it */
static void *join_and_wait(void *arg) {
  muster_group_opts_t o = {.job = NULL, .timeout_s = 60, .device = -1};
  muster_group_t *g;
  if (muster_group_join("never3", (int)(long)arg, 3, &o, &g) == 0) {
    muster_group_barrier(g);
    muster_group_leave(g);
  }
  return NULL;
}

/* two threads meet in a fresh group (a new name) again and again: the
 * exit lands while one is being made, formed, or left */
static void *join_fresh_groups(void *arg) {
  int rank = (int)(long)arg;
  muster_group_opts_t o = {.job = NULL, .timeout_s = 60, .device = -1};
  for (int k = 0;; k++) {
    char name[32];
    snprintf(name, sizeof name, "fresh.%d", k);
    muster_group_t *g;
    if (muster_group_join(name, rank, 2, &o, &g) != 0) {
      nap_us(100); /* refused: the process is exiting */
      continue;
    }
    muster_group_exchange(g, &k, sizeof k);
    muster_group_leave(g);
  }
  return NULL;
}

static void start_joiners(void) {
  for (long r = 0; r < 2; r++) spawn(join_and_wait, (void *)r);
  for (long r = 0; r < 2; r++) spawn(join_fresh_groups, (void *)r);
}

/* Threads forming groups while main calls exit(42): status 42 and no
 * segment left (the names were removed at exit; a join after that is
 * refused).  Before the fix: "never3" stayed in /dev/shm, every time. */
TEST_IMPL(exit_while_threads_join) {
  int runs = 0;
  for (int rep = 0; rep < REPS; rep++)
    for (long us = 0; us <= 4000; us += 250 * (3 - REPS), runs++) exit_case(start_joiners, us);
  for (long ms = 6; ms <= 30; ms += 6, runs++) exit_case(start_joiners, ms * 1000);
  fprintf(stderr, "%d children exited with status %d, nothing left\n", runs, STATUS);
  return 0;
}

/* ---- solving --------------------------------------------------------------- */

#define SOLVE_N 200

/* A (SPD: n on the diagonal, small elsewhere) and b, for shard s of 2
 * (no ASSERT in the child's threads: its status is the test's). */
static void fill_shard(muster_shard_t *sh, int s) {
  int64_t n = SOLVE_N, nc = n / 2;
  double *a = calloc((size_t)(n * nc), sizeof(double)), *b = calloc((size_t)n, sizeof(double)),
         *w = calloc((size_t)n, sizeof(double));
  if (!a || !b || !w) abort(); /* a signal, not STATUS */
  for (int64_t j = 0; j < nc; j++)
    for (int64_t i = 0; i < n; i++) a[j * n + i] = i == s * nc + j ? (double)n : 0.5 / (double)n;
  for (int64_t i = 0; i < n; i++) b[i] = 1;
  *sh = (muster_shard_t){.mem = MUSTER_MEM_HOST, .device = -1, .a = a, .lda = n, .col0 = s * nc,
                         .ncols = nc, .b = b, .ldb = n, .w = w};
}

static void free_shard(muster_shard_t *sh) {
  free(sh->a);
  free(sh->b);
  free(sh->w);
}

static const muster_solve_args_t potrs_args = {.routine = MUSTER_POTRS, .dtype = MUSTER_F64,
                                               .n = SOLVE_N, .nrhs = 1,
                                               .layout = MUSTER_LAYOUT_BLOCK};

/* one caller, both shards, call after call (the lapack provider) */
static void *solve_all_loop(void *arg) {
  (void)arg;
  for (;;) {
    muster_shard_t sh[2];
    muster_solve_result_t res;
    fill_shard(&sh[0], 0);
    fill_shard(&sh[1], 1);
    if (muster_solve_all(&potrs_args, 2, sh, &res) != 0) nap_us(100);
    free_shard(&sh[0]);
    free_shard(&sh[1]);
  }
  return NULL;
}

/* rank r of a 2-thread group, one collective solve after another */
static void *solve_group_loop(void *arg) {
  int rank = (int)(long)arg;
  muster_group_opts_t o = {.job = NULL, .timeout_s = 60, .device = -1};
  for (;;) {
    muster_group_t *g;
    if (muster_group_join("solvers", rank, 2, &o, &g) != 0) {
      nap_us(100);
      continue;
    }
    muster_shard_t sh;
    muster_solve_result_t res;
    fill_shard(&sh, rank);
    muster_solve(g, &potrs_args, &sh, &res);
    muster_group_leave(g);
    free_shard(&sh);
  }
  return NULL;
}

static void start_solvers(void) {
  spawn(solve_all_loop, NULL);
  for (long r = 0; r < 2; r++) spawn(solve_group_loop, (void *)r);
}

/* Solves running (the first one loading the providers) while main calls
 * exit(42): status 42, within the time limit, nothing left.  The provider
 * path is the build's, GPU providers included where they were built.
 * Before the fix: SIGSEGV (CUDA's libraries, loaded by the first solve on
 * host memory, torn down under it) in most runs at 20-50 ms, a hang when
 * the exit came while a thread was inside OpenBLAS. */
TEST_IMPL(exit_while_threads_solve) {
  setenv("MUSTER_PROVIDER_PATH", tp_lapack_dir(), 1);
  unsetenv("MUSTER_PROVIDER");
  static const int ms[] = {0, 1, 3, 6, 10, 15, 20, 25, 30, 35, 40, 50, 60, 80, 120};
  int runs = 0;
  double worst = 0;
  for (int rep = 0; rep < REPS; rep++)
    for (size_t i = 0; i < sizeof ms / sizeof ms[0]; i++, runs++) {
      double took = exit_case(start_solvers, ms[i] * 1000L);
      if (took > worst) worst = took;
    }
  fprintf(stderr, "%d children exited with status %d, nothing left; slowest %.2f s\n", runs,
          STATUS, worst);
  return 0;
}
