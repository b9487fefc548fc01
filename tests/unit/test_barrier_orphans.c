/*
 * tests/unit/test_barrier_orphans.c - the barrier's two windows where a
 * rank that dies leaves no trace the others used to look at:
 *   - killed while taking its seat (seat word set, tid not yet written):
 *     the seat looked "being taken" forever;
 *   - killed as the last arriver between counting itself and ending the
 *     round: every rank looked arrived and nobody ended it;
 *   - stopped or killed between showing itself arrived (slot) and counting
 *     itself (the arrival window, shm/barrier_blame.h): the deadline found
 *     nobody to name and the others waited, spinning, until SIGCONT (CI's
 *     fault_stop_one_rank_named under TSan, 2026-11-27) or forever.
 * They used to leave the others waiting until the deadline (or forever).
 */
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>

#include "shm/barrier.h"
#include "muster.h"
#include "base/proc.h"
#include "shm/segment.h"
#include "task.h"

static struct muster_segment seg_new(const char *name, int n) {
  struct muster_segment seg;
  int created;
  ASSERT_OK(muster__segment_open(&seg, test_job(), name, n, &created));
  muster__segment_unlink(&seg); /* anonymous from the start: nothing can leak */
  return seg;
}

/* (atomic stores: a waiter may be reading the slot meanwhile) */
static void seat_as(struct muster_seg_header *h, int rank, pid_t pid, pid_t tid) {
  struct muster_seg_slot *s = muster__segment_slot(h, rank);
  __atomic_store_n(&s->pid, pid, __ATOMIC_RELAXED);
  __atomic_store_n(&s->start_time, muster__proc_start_time(pid), __ATOMIC_RELAXED);
  __atomic_store_n(&s->tid, tid, __ATOMIC_RELAXED);
  __atomic_store_n(&s->owner_tid, (uint32_t)tid, __ATOMIC_RELEASE);
}

/* a pid that existed and is reaped now */
static pid_t gone_pid(void) {
  pid_t c = fork();
  ASSERT(c >= 0);
  if (c == 0) _exit(0);
  ASSERT_EQ(waitpid(c, NULL, 0), c);
  return c;
}

TEST_IMPL(barrier_seat_taken_by_dead_thread) {
  struct muster_segment seg = seg_new("halfseat", 2);
  struct muster_seg_header *h = seg.hdr;
  seat_as(h, 0, getpid(), muster__proc_self_tid());
  /* rank 1: seat word of a thread that died before writing its tid */
  pid_t dead = gone_pid();
  __atomic_store_n(&muster__segment_slot(h, 1)->owner_tid, (uint32_t)dead, __ATOMIC_RELEASE);
  uint32_t gen;
  double t0 = test_now();
  ASSERT_EQ(muster__barrier_wait(h, 0, 30, 1, &gen), MUSTER_EPEERDEAD);
  ASSERT_DBL_LT(test_now() - t0, 2.0);
  char want[96];
  snprintf(want, sizeof want, "rank 1 (thread %d) died while taking its seat", (int)dead);
  ASSERT_STR_CONTAINS(muster_last_error(), want);
  muster__segment_close(&seg);

  /* the same half-taken seat of a live (stopped) process is not dead */
  seg = seg_new("halfseat2", 2);
  h = seg.hdr;
  seat_as(h, 0, getpid(), muster__proc_self_tid());
  pid_t live = fork();
  if (live == 0) {
    raise(SIGSTOP);
    _exit(0);
  }
  __atomic_store_n(&muster__segment_slot(h, 1)->owner_tid, (uint32_t)live, __ATOMIC_RELEASE);
  ASSERT_EQ(muster__barrier_wait(h, 0, 0.5, 1, &gen), MUSTER_ETIMEDOUT);
  kill(live, SIGKILL);
  waitpid(live, NULL, 0);
  muster__segment_close(&seg);
  return 0;
}

struct waiter {
  struct muster_seg_header *h;
  int rc;
  uint32_t gen;
  double took;
};

static void *wait_rank0(void *p) {
  struct waiter *w = p;
  double t0 = test_now();
  w->rc = muster__barrier_wait(w->h, 0, 30, 1, &w->gen);
  w->took = test_now() - t0;
  return NULL;
}

TEST_IMPL(barrier_round_of_dead_last_arriver) {
  struct muster_segment seg = seg_new("lastin", 3);
  struct muster_seg_header *h = seg.hdr;
  seat_as(h, 0, getpid(), muster__proc_self_tid());
  struct waiter w = {h, -1, 0, 0};
  pthread_t th;
  ASSERT_EQ(pthread_create(&th, NULL, wait_rank0, &w), 0);
  struct timespec ts = {0, 50 * 1000000L};
  nanosleep(&ts, NULL);
  /* ranks 1 and 2 arrive; 2 is the last one in and "dies" right after
   * counting itself: arrived == nranks, the word never moves */
  uint32_t g = __atomic_load_n(&h->generation, __ATOMIC_ACQUIRE);
  for (int r = 1; r < 3; r++) {
    struct muster_seg_slot *s = muster__segment_slot(h, r);
    seat_as(h, r, getpid(), muster__proc_self_tid());
    __atomic_store_n(&s->barrier_gen, g, __ATOMIC_RELAXED);
    __atomic_store_n(&s->phase, MUSTER_PHASE_WAITING, __ATOMIC_RELEASE);
    __atomic_add_fetch(&h->arrived, 1, __ATOMIC_ACQ_REL);
  }
  pthread_join(th, NULL);
  fprintf(stderr, "waiter: rc %d after %.3f s: %s\n", w.rc, w.took, w.rc ? muster_last_error() : "");
  ASSERT_EQ(w.rc, 0);             /* everyone had arrived: the round is over */
  ASSERT_EQ(w.gen, g);
  ASSERT_EQ(__atomic_load_n(&h->generation, __ATOMIC_ACQUIRE), g + 1);
  ASSERT_EQ(__atomic_load_n(&h->arrived, __ATOMIC_ACQUIRE), 0);
  ASSERT_DBL_LT(w.took, 1.0);     /* at its first liveness check */
  muster__segment_close(&seg);
  return 0;
}

/* Rank 1 is `pid` and sits in the arrival window of round g: its slot says
 * it waits at g, the counter does not have it. */
static void show_arrived_uncounted(struct muster_seg_header *h, pid_t pid) {
  struct muster_seg_slot *s = muster__segment_slot(h, 1);
  seat_as(h, 1, pid, pid);
  __atomic_store_n(&s->barrier_gen, __atomic_load_n(&h->generation, __ATOMIC_ACQUIRE),
                   __ATOMIC_RELAXED);
  __atomic_store_n(&s->phase, MUSTER_PHASE_WAITING, __ATOMIC_RELEASE);
}

static pid_t stopped_child(void) {
  pid_t c = fork();
  ASSERT(c >= 0);
  if (c == 0) {
    raise(SIGSTOP);
    _exit(0);
  }
  int st;
  ASSERT_EQ(waitpid(c, &st, WUNTRACED), c);
  ASSERT(WIFSTOPPED(st));
  return c;
}

static void end_child(pid_t c) {
  kill(c, SIGKILL);
  ASSERT_EQ(waitpid(c, NULL, 0), c);
}

/* stopped inside the window: named at the deadline, as stopped, in time;
 * with no deadline, once the stop lasts longer than the stop limit */
TEST_IMPL(barrier_uncounted_stopped_arriver) {
  for (int busy = 0; busy < 2; busy++) {
    struct muster_segment seg = seg_new(busy ? "winstop2" : "winstop", 2);
    struct muster_seg_header *h = seg.hdr;
    seat_as(h, 0, getpid(), muster__proc_self_tid());
    pid_t c = stopped_child();
    show_arrived_uncounted(h, c);
    uint32_t gen;
    double t0 = test_now();
    int rc = busy ? muster__barrier_wait_busy(h, 0, 0.5, 3, &gen) : muster__barrier_wait(h, 0, 0.5, 3, &gen);
    double took = test_now() - t0;
    fprintf(stderr, "%s: rc %d after %.3f s: %s\n", busy ? "busy" : "deadline", rc, took,
            muster_last_error());
    ASSERT_EQ(rc, MUSTER_ETIMEDOUT);
    ASSERT_DBL_LT(0.45, took);
    ASSERT_DBL_LT(took, 1.5);
    char want[128];
    snprintf(want, sizeof want, "rank 1 (pid %d, device -1) is stopped (SIGSTOP?); it was arriving at "
             "this barrier and has not counted itself", (int)c);
    ASSERT_STR_CONTAINS(muster_last_error(), want);
    if (!busy) ASSERT_STR_CONTAINS(muster_last_error(), "rank 1 missing after 0.5 s at barrier 3");
    ASSERT_EQ(h->abort_rank, 1);
    end_child(c);
    muster__segment_close(&seg);
  }
  return 0;
}

/* killed inside the window: EPEERDEAD at a liveness tick, not at the
 * deadline (30 s) */
TEST_IMPL(barrier_uncounted_dead_arriver) {
  struct muster_segment seg = seg_new("windead", 3);
  struct muster_seg_header *h = seg.hdr;
  seat_as(h, 0, getpid(), muster__proc_self_tid());
  seat_as(h, 2, getpid(), muster__proc_self_tid()); /* rank 2: arrived and counted */
  struct muster_seg_slot *s2 = muster__segment_slot(h, 2);
  __atomic_store_n(&s2->phase, MUSTER_PHASE_WAITING, __ATOMIC_RELEASE);
  __atomic_add_fetch(&h->arrived, 1, __ATOMIC_ACQ_REL);
  pid_t c = stopped_child();
  show_arrived_uncounted(h, c);
  end_child(c);
  uint32_t gen;
  double t0 = test_now();
  ASSERT_EQ(muster__barrier_wait(h, 0, 30, 1, &gen), MUSTER_EPEERDEAD);
  ASSERT_DBL_LT(test_now() - t0, 2.0);
  char want[96];
  snprintf(want, sizeof want, "rank 1 (pid %d, device -1) died", (int)c);
  ASSERT_STR_CONTAINS(muster_last_error(), want);
  ASSERT_EQ(h->abort_rank, 1);
  muster__segment_close(&seg);
  return 0;
}

struct late {
  struct muster_seg_header *h;
  int ms; /* how long rank 1 stays inside the window */
};

/* rank 1 shows itself arrived, stays in the window `ms`, then counts
 * itself (ending the round if it is the last, as wait_any does) */
static void *late_counter(void *p) {
  struct late *l = p;
  uint32_t g = __atomic_load_n(&l->h->generation, __ATOMIC_ACQUIRE);
  show_arrived_uncounted(l->h, getpid());
  struct timespec ts = {l->ms / 1000, (l->ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
  uint32_t full = 2;
  if (__atomic_add_fetch(&l->h->arrived, 1, __ATOMIC_ACQ_REL) == 2 &&
      __atomic_compare_exchange_n(&l->h->arrived, &full, 0, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
    __atomic_store_n(&l->h->generation, g + 1, __ATOMIC_SEQ_CST);
  return NULL;
}

/* A running rank in the window is not blamed before the deadline: the
 * round ends once it counts itself (here 400 ms later, several ticks); one
 * that stays longer than the deadline (a process not scheduled) is named
 * as arriving. */
TEST_IMPL(barrier_uncounted_running_arriver) {
  for (int stay = 0; stay < 2; stay++) {
    struct muster_segment seg = seg_new(stay ? "winrun2" : "winrun", 2);
    struct muster_seg_header *h = seg.hdr;
    seat_as(h, 0, getpid(), muster__proc_self_tid());
    struct late l = {h, stay ? 3000 : 400};
    pthread_t th;
    ASSERT_EQ(pthread_create(&th, NULL, late_counter, &l), 0);
    struct timespec ts = {0, 20 * 1000000L};
    nanosleep(&ts, NULL);
    uint32_t gen;
    double t0 = test_now();
    int rc = muster__barrier_wait(h, 0, 1.0, 1, &gen);
    double took = test_now() - t0;
    fprintf(stderr, "stay %d: rc %d after %.3f s: %s\n", stay, rc, took, rc ? muster_last_error() : "");
    if (!stay) {
      ASSERT_OK(rc);
      ASSERT_DBL_LT(took, 0.9);
    } else {
      ASSERT_EQ(rc, MUSTER_ETIMEDOUT);
      ASSERT_DBL_LT(0.95, took);
      ASSERT_DBL_LT(took, 2.0);
      ASSERT_STR_CONTAINS(muster_last_error(), "was arriving at this barrier and has not counted itself");
    }
    pthread_join(th, NULL);
    muster__segment_close(&seg);
  }
  return 0;
}
