/*
 * tests/unit/test_barrier.c - process identity/liveness (including a reused
 * pid), and the futex barrier on its own: counting, cross-process, poison
 * wake-up, deadline.
 */
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>

#include "shm/barrier.h"
#include "muster.h"
#include "muster/proc.h"
#include "base/proc.h"
#include "shm/segment.h"
#include "task.h"

static void *nothing(void *p) { return p; }

TEST_IMPL(proc_liveness) {
  pid_t me = getpid();
  uint64_t st = muster__proc_start_time(me);
  ASSERT_GT(st, 0);
  ASSERT_EQ(muster__proc_self_pid(), me);
  ASSERT_EQ(muster__proc_self_start(), st);
  ASSERT_EQ(muster__proc_alive(me, st), 1);
  ASSERT_EQ(muster__proc_alive(me, 0), 1);
  /* same pid, other start time: a reused pid is not the process we knew */
  ASSERT_EQ(muster__proc_alive(me, st + 1), 0);
  ASSERT_EQ(muster__proc_alive(0, 0), 0);
  ASSERT_EQ(muster__proc_alive(-5, 0), 0);
  ASSERT_EQ(muster__proc_start_time(0), 0);
  /* a zombie (exited, not reaped) is dead; so is a reaped one */
  pid_t c = fork();
  if (c == 0) _exit(0);
  uint64_t cst = 0;
  for (int i = 0; i < 1000 && !cst; i++) cst = muster__proc_start_time(c);
  struct timespec ts = {0, 50 * 1000000L};
  nanosleep(&ts, NULL);
  ASSERT_EQ(muster__proc_alive(c, cst), 0);
  waitpid(c, NULL, 0);
  ASSERT_EQ(muster__proc_alive(c, cst), 0);
  ASSERT_EQ(muster__proc_start_time(c), 0);
  /* a stopped process is alive */
  c = fork();
  if (c == 0) {
    raise(SIGSTOP);
    _exit(0);
  }
  nanosleep(&ts, NULL);
  ASSERT_EQ(muster__proc_alive(c, muster__proc_start_time(c)), 1);
  kill(c, SIGKILL);
  waitpid(c, NULL, 0);
  /* threads: ours is alive, an ended one is not */
  ASSERT_EQ(muster__proc_thread_alive(muster__proc_self_tid()), 1);
  pthread_t th;
  ASSERT_EQ(pthread_create(&th, NULL, nothing, NULL), 0);
  pthread_join(th, NULL);
  ASSERT_EQ(muster__proc_thread_alive(999999999), 0);
  /* fork child sees its own pid, not the cached parent one */
  c = fork();
  if (c == 0) _exit(muster__proc_self_pid() == getpid() && muster__proc_self_pid() != me ? 0 : 1);
  int status;
  waitpid(c, &status, 0);
  ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  return 0;
}

/* The start time is counted after the LAST ')' of /proc/PID/stat: a name
 * (comm) holding ") " and numbers must not shift the fields (a parser
 * counting from the first ')' reads another field).  One parser
 * (muster/proc.h) serves the runtime and the GPU providers. */
TEST_IMPL(proc_start_time_odd_comm) {
  pid_t me = getpid();
  char state = '?';
  uint64_t st = muster_proc_start_time(me, NULL);
  ASSERT_GT(st, 0);
  ASSERT_EQ(muster_proc_self_start_time(), st);
  ASSERT_EQ(muster__proc_start_time(me), st);
  FILE *f = fopen("/proc/self/comm", "w"); /* the main thread's name */
  ASSERT(f);
  ASSERT(fputs("x) 1 2 ) 3 4", f) >= 0);
  ASSERT_EQ(fclose(f), 0);
  char comm[64] = "";
  f = fopen("/proc/self/comm", "r");
  ASSERT(f && fgets(comm, sizeof comm, f));
  fclose(f);
  ASSERT_STR_CONTAINS(comm, "x) 1 2 ) 3 4");
  ASSERT_EQ(muster_proc_start_time(me, &state), st);
  ASSERT_EQ(state, 'R'); /* we are reading it */
  ASSERT_EQ(muster_proc_self_start_time(), st);
  ASSERT_EQ(muster__proc_start_time(me), st);
  ASSERT_EQ(muster_proc_start_time(0, &state), 0);
  ASSERT_EQ(muster_proc_stat_start("/proc/self/no-such-file", NULL), 0);
  return 0;
}

struct bctx {
  struct muster_seg_header *h;
  int counter;
  int rounds;
  int rc[2];
};

static void seat_me(struct muster_seg_header *h, int rank) {
  struct muster_seg_slot *s = muster__segment_slot(h, rank);
  s->pid = muster__proc_self_pid();
  s->start_time = muster__proc_self_start();
  s->tid = muster__proc_self_tid();
  __atomic_store_n(&s->owner_tid, (uint32_t)s->tid, __ATOMIC_RELEASE);
}

static void *count_thread(void *p) {
  struct bctx *c = p;
  seat_me(c->h, 1);
  for (int k = 0; k < c->rounds; k++) {
    uint32_t gen;
    __atomic_add_fetch(&c->counter, 1, __ATOMIC_RELAXED);
    if ((c->rc[1] = muster__barrier_wait(c->h, 1, 10, k + 1, &gen)) != 0) return NULL;
    if (__atomic_load_n(&c->counter, __ATOMIC_RELAXED) < 2 * (k + 1)) {
      c->rc[1] = -100;
      return NULL;
    }
    if ((c->rc[1] = muster__barrier_wait(c->h, 1, 10, k + 1, &gen)) != 0) return NULL;
  }
  return NULL;
}

static struct muster_segment make_seg(const char *name, int n) {
  struct muster_segment seg;
  int created;
  ASSERT_OK(muster__segment_open(&seg, test_job(), name, n, &created));
  muster__segment_unlink(&seg); /* anonymous from the start: nothing can leak */
  return seg;
}

TEST_IMPL(barrier_threads_count) {
  struct muster_segment seg = make_seg("bar", 2);
  struct bctx c = {seg.hdr, 0, 20000, {0, 0}};
  seat_me(seg.hdr, 0);
  pthread_t th;
  ASSERT_EQ(pthread_create(&th, NULL, count_thread, &c), 0);
  uint32_t prev = seg.hdr->generation, gen;
  for (int k = 0; k < c.rounds; k++) {
    __atomic_add_fetch(&c.counter, 1, __ATOMIC_RELAXED);
    ASSERT_OK(muster__barrier_wait(seg.hdr, 0, 10, k + 1, &gen));
    ASSERT_EQ(gen, prev);
    ASSERT_GE(__atomic_load_n(&c.counter, __ATOMIC_RELAXED), 2 * (k + 1));
    ASSERT_OK(muster__barrier_wait(seg.hdr, 0, 10, k + 1, &gen));
    ASSERT_EQ(gen, prev + 1);
    prev += 2;
  }
  pthread_join(th, NULL);
  ASSERT_EQ(c.rc[1], 0);
  ASSERT_EQ(seg.hdr->generation, (uint32_t)(2 * c.rounds));
  ASSERT_EQ(seg.hdr->arrived, 0);
  muster__segment_close(&seg);
  return 0;
}

/* parent and child meet on the futex many times */
TEST_IMPL(barrier_processes) {
  struct muster_segment seg = make_seg("barp", 2);
  int *shared = (int *)muster__segment_slot(seg.hdr, 1)->payload[0]; /* scratch */
  pid_t c = fork();
  if (c == 0) {
    seat_me(seg.hdr, 1);
    uint32_t gen;
    for (int k = 0; k < 20000; k++) {
      __atomic_add_fetch(shared, 1, __ATOMIC_RELAXED);
      if (muster__barrier_wait(seg.hdr, 1, 10, k + 1, &gen)) _exit(2);
      if (__atomic_load_n(shared, __ATOMIC_RELAXED) < 2 * (k + 1)) _exit(3);
      if (muster__barrier_wait(seg.hdr, 1, 10, k + 1, &gen)) _exit(2);
    }
    _exit(0);
  }
  seat_me(seg.hdr, 0);
  uint32_t gen;
  for (int k = 0; k < 20000; k++) {
    __atomic_add_fetch(shared, 1, __ATOMIC_RELAXED);
    ASSERT_OK(muster__barrier_wait(seg.hdr, 0, 10, k + 1, &gen));
    ASSERT_GE(__atomic_load_n(shared, __ATOMIC_RELAXED), 2 * (k + 1));
    ASSERT_OK(muster__barrier_wait(seg.hdr, 0, 10, k + 1, &gen));
  }
  int st;
  ASSERT_EQ(waitpid(c, &st, 0), c);
  ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  muster__segment_close(&seg);
  return 0;
}

struct pctx {
  struct muster_seg_header *h;
  int rc;
  double t;
  char msg[600];
};

static void *wait_alone(void *p) {
  struct pctx *c = p;
  uint32_t gen;
  seat_me(c->h, 1);
  c->rc = muster__barrier_wait(c->h, 1, 0, 1, &gen); /* no deadline */
  c->t = test_now();
  snprintf(c->msg, sizeof c->msg, "%s", muster_last_error());
  return NULL;
}

TEST_IMPL(barrier_poison_wakes) {
  struct muster_segment seg = make_seg("poison", 3);
  struct pctx c = {seg.hdr, 0, 0, ""};
  seat_me(seg.hdr, 0);
  pthread_t th;
  ASSERT_EQ(pthread_create(&th, NULL, wait_alone, &c), 0);
  struct timespec ts = {0, 300 * 1000000L};
  nanosleep(&ts, NULL); /* let it sleep on the futex */
  double t0 = test_now();
  ASSERT_EQ(muster__barrier_poison(seg.hdr, MUSTER_EPROVIDER, 0, getpid(), "leader gave up"), 1);
  ASSERT_EQ(muster__barrier_poison(seg.hdr, MUSTER_ETIMEDOUT, 0, getpid(), "second"), 0);
  pthread_join(th, NULL);
  ASSERT_EQ(c.rc, MUSTER_EPROVIDER);
  ASSERT_STR_CONTAINS(c.msg, "leader gave up");
  ASSERT_DBL_LT(c.t - t0, 0.2);
  /* and anyone arriving later gets it at once */
  uint32_t gen;
  ASSERT_EQ(muster__barrier_wait(seg.hdr, 0, 5, 1, &gen), MUSTER_EPROVIDER);
  ASSERT_EQ(muster__barrier_check_abort(seg.hdr), MUSTER_EPROVIDER);
  muster__segment_close(&seg);
  return 0;
}

TEST_IMPL(barrier_deadline) {
  struct muster_segment seg = make_seg("deadline", 4);
  seat_me(seg.hdr, 0);
  uint32_t gen;
  double t0 = test_now();
  ASSERT_EQ(muster__barrier_wait(seg.hdr, 0, 0.3, 7, &gen), MUSTER_ETIMEDOUT);
  double dt = test_now() - t0;
  ASSERT_DBL_LT(0.29, dt);
  ASSERT_DBL_LT(dt, 0.6);
  ASSERT_STR_CONTAINS(muster_last_error(), "ranks 1,2,3 missing after 0.3 s at barrier 7 of group deadline");
  ASSERT_EQ(seg.hdr->abort_code, MUSTER_ETIMEDOUT);
  ASSERT_EQ(seg.hdr->abort_rank, 1);
  muster__segment_close(&seg);
  return 0;
}
