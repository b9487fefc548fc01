/*
 * tests/integration/test_group_util.h - run N ranks as threads or as forked
 * processes, and collect what each saw (shared by the core group tests).
 */
#ifndef TEST_GROUP_UTIL_H
#define TEST_GROUP_UTIL_H

#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "muster.h"
#include "task.h"

enum { MODE_THREADS = 0, MODE_PROCS = 1 };

typedef int (*rank_fn)(int rank, int nranks, void *arg);

/* What one rank reports back (lives in MAP_SHARED memory so forked ranks
 * can fill it). */
struct rank_report {
  int rc;            /* what the call under test returned */
  int done;          /* 1 once filled */
  int pid;
  double elapsed;    /* seconds the call under test took */
  double t_end;      /* test_now() when it returned */
  char msg[768];     /* muster_last_error() */
};

static inline struct rank_report *reports_new(int n) {
  void *p = mmap(NULL, sizeof(struct rank_report) * n, PROT_READ | PROT_WRITE,
                 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  ASSERT(p != MAP_FAILED);
  memset(p, 0, sizeof(struct rank_report) * n);
  return p;
}

static inline void reports_free(struct rank_report *r, int n) {
  munmap(r, sizeof(struct rank_report) * n);
}

static inline void report_fill(struct rank_report *r, int rc, double t0) {
  r->rc = rc;
  r->pid = getpid();
  r->t_end = test_now();
  r->elapsed = r->t_end - t0;
  snprintf(r->msg, sizeof r->msg, "%s", rc ? muster_last_error() : "");
  __atomic_store_n(&r->done, 1, __ATOMIC_RELEASE);
}

struct thr_arg {
  rank_fn fn;
  int rank, nranks, rc;
  void *arg;
};

static inline void *thr_main(void *p) {
  struct thr_arg *a = p;
  a->rc = a->fn(a->rank, a->nranks, a->arg);
  return NULL;
}

/* Run fn on nranks threads; returns the number of ranks that returned != 0. */
static inline int run_threads(int nranks, rank_fn fn, void *arg) {
  pthread_t th[64];
  struct thr_arg a[64];
  for (int r = 0; r < nranks; r++) {
    a[r] = (struct thr_arg){fn, r, nranks, 0, arg};
    ASSERT(pthread_create(&th[r], NULL, thr_main, &a[r]) == 0);
  }
  int bad = 0;
  for (int r = 0; r < nranks; r++) {
    pthread_join(th[r], NULL);
    if (a[r].rc) {
      fprintf(stderr, "rank %d (thread) returned %d\n", r, a[r].rc);
      bad++;
    }
  }
  return bad;
}

/* Fork nranks children running fn; pids[] gets their pids.  Does not wait. */
static inline void fork_ranks(int nranks, rank_fn fn, void *arg, pid_t *pids) {
  fflush(stdout);
  fflush(stderr);
  for (int r = 0; r < nranks; r++) {
    pid_t p = fork();
    ASSERT(p >= 0);
    if (p == 0) {
      int rc = fn(r, nranks, arg);
      muster_group_cache_flush();
      fflush(stderr);
      _exit(rc ? 1 : 0);
    }
    pids[r] = p;
  }
}

/* Wait for the children; returns how many did not exit 0 (killed ones
 * count, so callers that kill one subtract it). */
static inline int wait_ranks(int nranks, const pid_t *pids) {
  int bad = 0;
  for (int r = 0; r < nranks; r++) {
    int st = 0;
    if (pids[r] <= 0) continue;
    ASSERT(waitpid(pids[r], &st, 0) == pids[r]);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
      if (WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL) continue; /* killed on purpose */
      fprintf(stderr, "rank %d (pid %d) ended with status 0x%x\n", r, (int)pids[r], st);
      bad++;
    }
  }
  return bad;
}

static inline int run_procs(int nranks, rank_fn fn, void *arg) {
  pid_t pids[64];
  fork_ranks(nranks, fn, arg, pids);
  return wait_ranks(nranks, pids);
}

static inline int run_mode(int mode, int nranks, rank_fn fn, void *arg) {
  return mode == MODE_THREADS ? run_threads(nranks, fn, arg) : run_procs(nranks, fn, arg);
}

/* Check inside a rank: on failure print and return 1 from the rank fn. */
#define RCHECK(expr)                                                           \
  do {                                                                         \
    if (!(expr)) {                                                             \
      fprintf(stderr, "rank %d: check failed %s:%d: %s (last error: %s)\n",    \
              rank, __FILE__, __LINE__, #expr, muster_last_error());           \
      return 1;                                                                \
    }                                                                          \
  } while (0)

#endif
