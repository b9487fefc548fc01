/*
 * runtime/shm/barrier.c - futex barrier in a shared segment, with deadline,
 * abort word and peer liveness.  See barrier.h for the protocol.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/futex.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "base/atomics.h"
#include "shm/barrier.h"
#include "shm/barrier_blame.h"
#include "base/proc.h"


static long futex(uint32_t *addr, int op, uint32_t val, const struct timespec *ts) {
  /* not FUTEX_PRIVATE_FLAG: the word is shared between processes */
  return syscall(SYS_futex, addr, op, val, ts, NULL, 0);
}

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}

const char *muster__phase_name(uint32_t phase) {
  switch (phase) {
  case MUSTER_PHASE_FREE: return "never joined";
  case MUSTER_PHASE_JOINED: return "joined";
  case MUSTER_PHASE_PUBLISHED: return "publishing its payload";
  case MUSTER_PHASE_WAITING: return "waiting at a barrier";
  case MUSTER_PHASE_PASSED: return "past its last barrier";
  case MUSTER_PHASE_LEFT: return "between calls (had left)";
  default: return "in an unknown phase";
  }
}

int muster__barrier_poison(struct muster_seg_header *h, int code, int rank, int pid,
                           const char *reason) {
  uint32_t none = MUSTER_ABORT_NONE;
  if (!__atomic_compare_exchange_n(&h->abort_state, &none, MUSTER_ABORT_WRITING, 0,
                                   __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
    return 0;
  ST(&h->abort_code, code);
  ST(&h->abort_rank, rank);
  ST(&h->abort_pid, pid);
  ST(&h->abort_ns, muster__now_real_ns());
  snprintf(h->abort_reason, sizeof h->abort_reason, "%s", reason);
  STR(&h->abort_state, MUSTER_ABORT_SET);
  futex(&h->generation, FUTEX_WAKE, INT_MAX, NULL);
  return 1;
}

int muster__barrier_check_abort(const struct muster_seg_header *h) {
  uint32_t st = LDA(&h->abort_state);
  if (st == MUSTER_ABORT_NONE) return MUSTER_OK;
  /* the poisoner is writing the reason: it takes microseconds, unless it
   * died in between; do not wait for it more than 100 ms */
  for (int i = 0; st == MUSTER_ABORT_WRITING && i < 1000; i++) {
    struct timespec ts = {0, 100000};
    nanosleep(&ts, NULL);
    st = LDA(&h->abort_state);
  }
  if (st != MUSTER_ABORT_SET)
    return muster__err(MUSTER_EPOISONED, "group %s was poisoned (its poisoner died before "
                       "saying why)", h->group);
  int code = LD(&h->abort_code);
  char reason[MUSTER_SEG_REASON_MAX];
  memcpy(reason, h->abort_reason, sizeof reason);
  reason[sizeof reason - 1] = '\0';
  if (code >= 0) code = MUSTER_EPOISONED;
  return muster__err(code, "%s", reason);
}

/* End round g when every rank has arrived (arrived == nranks): reset the
 * counter and bump the word.  The last arriver does it; a waiter does it at
 * its liveness tick when the last arriver died (or stopped) between
 * counting itself and this.  The CAS on the counter makes it happen once;
 * nobody can arrive at the next barrier before the word moves, so
 * resetting the counter first is safe.  1 if this call ended it. */
static int end_round(struct muster_seg_header *h, uint32_t g) {
  uint32_t full = (uint32_t)h->nranks;
  if (LDA(&h->generation) != g ||
      !__atomic_compare_exchange_n(&h->arrived, &full, 0, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
    return 0;
  __atomic_store_n(&h->generation, g + 1, __ATOMIC_SEQ_CST);
  if (__atomic_load_n(&h->sleepers, __ATOMIC_SEQ_CST))
    futex(&h->generation, FUTEX_WAKE, INT_MAX, NULL);
  return 1;
}

static int ncpus(void) {
  static int cached;
  int n = LD(&cached);
  if (!n) {
    long v = sysconf(_SC_NPROCESSORS_ONLN);
    n = v > 0 ? (int)v : 1;
    ST(&cached, n);
  }
  return n;
}

#define SPIN_NS 5000u     /* busy-wait this long: a peer on another core */
#define YIELD_NS 100000u  /* then yield this long: a peer sharing our core */

/* Spin, then yield, while the generation is still g.  Returns 1 once it
 * moved.  Spinning only pays when every rank can run at once; when ranks
 * outnumber cores (or the machine is busy) yielding lets the late rank run. */
/* Adaptive spin (per thread): every time spinning did not see the round
 * end, the next spin is halved (a busy machine, or the peer shares our
 * core); a success restores it, and every 16th wait probes the full spin. */
static __thread unsigned spin_misses, spin_waits;

static int spin_phase(struct muster_seg_header *h, uint32_t g, uint64_t t0) {
  uint64_t spin_ns = h->nranks <= ncpus() ? SPIN_NS : 0;
  if ((++spin_waits & 15) != 0) spin_ns >>= spin_misses;
  for (unsigned i = 1;; i++) {
    if (LDA(&h->generation) != g) {
      spin_misses = 0;
      return 1;
    }
    if ((i & 31) == 0) {
      if (LD(&h->abort_state)) return 0;
      if (muster__now_mono_ns() - t0 >= spin_ns) break;
    }
    cpu_relax();
  }
  if (spin_ns && spin_misses < 8) spin_misses++;
  /* more ranks than cores: yielding waiters crowd out the late ones, so
   * only briefly before sleeping */
  uint64_t yield_ns = h->nranks <= ncpus() ? YIELD_NS : YIELD_NS / 8;
  for (;;) {
    if (LDA(&h->generation) != g) return 1;
    if (LD(&h->abort_state) || muster__now_mono_ns() - t0 >= yield_ns) return 0;
    sched_yield();
  }
}

/* A waiter's clock.  The deadline counts only time in which the group
 * could make progress: a step between two of the waiter's own readings
 * longer than it meant to be away (its futex slice) plus MUSTER_STALL_NS
 * means this process did not run (SIGSTOP of the job, a debugger, a paused
 * VM); that time moves the deadline.  CLOCK_MONOTONIC stands still while
 * the machine is suspended, so a suspend does not count either. */
struct wait_clock {
  uint64_t deadline; /* UINT64_MAX: none (moving it saturates there) */
  uint64_t last;     /* the previous reading */
  uint64_t away;     /* how long the waiter meant to be away since then */
  uint64_t stalled;  /* ns not counted */
};

static uint64_t clock_read(struct wait_clock *c) {
  uint64_t now = muster__now_mono_ns(), step = now - c->last;
  if (step > c->away + MUSTER_STALL_NS) {
    uint64_t lost = step - c->away;
    c->stalled += lost;
    c->deadline = c->deadline > UINT64_MAX - lost ? UINT64_MAX : c->deadline + lost;
  }
  c->last = now;
  c->away = 0;
  return now;
}

/* A process dropped this group from its cache while we waited in the
 * first round of our session: the others will meet by name in a new
 * segment.  Poison this one the recognisable way (EPOISONED, no rank
 * blamed) so everyone in it moves there (group.c, relocate). */
static int retired(struct muster_seg_header *h, uint32_t g) {
  char reason[MUSTER_SEG_REASON_MAX];
  snprintf(reason, sizeof reason, "group %s was retired (a process dropped it from its "
           "cache) while its ranks waited", h->group);
  muster__barrier_poison(h, MUSTER_EPOISONED, -1, 0, reason);
  if (LDA(&h->generation) != g) return MUSTER_OK; /* completed meanwhile */
  return muster__barrier_check_abort(h);
}

static int sleep_phase(struct muster_seg_header *h, int me, uint32_t g, double timeout_s,
                       double stop_limit_s, uint64_t barrier_no, uint64_t t0) {
  /* since t0 it spun and yielded for up to YIELD_NS; no deadline, or one
   * of 30 years or more (inf), is UINT64_MAX */
  int none = !(timeout_s > 0 && timeout_s < 1e9);
  struct wait_clock c = {none ? UINT64_MAX : t0 + (uint64_t)(timeout_s * 1e9), t0, YIELD_NS, 0};
  /* Liveness reads /proc (tens of us): not in the common short wait, only
   * once the wait has lasted a while, then every tick. */
  uint64_t next_check = t0 + MUSTER_LIVENESS_FIRST_NS, stopped_since = 0;
  int short_ticks = 0; /* ticks in a row that found the arrival window open */
  int rc;
  for (;;) {
    if ((rc = muster__barrier_check_abort(h)) < 0) return rc;
    if (barrier_no == 1 && LD(&h->retired)) return retired(h, g);
    uint64_t now = clock_read(&c);
    int uncounted = short_ticks >= 2;
    if (now >= c.deadline) {
      rc = muster__barrier_timeout(h, me, g, barrier_no, (now - t0 - c.stalled) * 1e-9,
                                   c.stalled * 1e-9, uncounted);
      if (rc < 0 || LDA(&h->generation) != g) return rc;
    }
    if (now >= next_check) {
      /* the last arriver died (or stopped) between counting itself and
       * ending the round: end it for it */
      if (end_round(h, g)) return MUSTER_OK;
      short_ticks = muster__barrier_uncounted(h, g) ? short_ticks + 1 : 0;
      uncounted = short_ticks >= 2;
      if ((rc = muster__barrier_check_missing(h, me, g, barrier_no, uncounted)) < 0) return rc;
      if (stop_limit_s > 0 &&
          (rc = muster__barrier_check_stopped(h, me, g, barrier_no, stop_limit_s, now,
                                              &stopped_since, uncounted)) < 0)
        return rc;
      next_check = now + MUSTER_LIVENESS_TICK_NS;
    }
    /* past the deadline with nobody to name (a rank crossing the arrival
     * window), the next try is the next tick, not a busy loop */
    uint64_t wake = next_check < c.deadline || now >= c.deadline ? next_check : c.deadline;
    uint64_t slice = wake > now ? wake - now : 1000;
    c.away = slice;
    struct timespec ts = {(time_t)(slice / 1000000000u), (long)(slice % 1000000000u)};
    /* sleepers++ before re-checking the word; the waker bumps the word
     * before reading sleepers (both seq_cst), so one of us sees the other */
    __atomic_add_fetch(&h->sleepers, 1, __ATOMIC_SEQ_CST);
    if (__atomic_load_n(&h->generation, __ATOMIC_SEQ_CST) == g)
      futex(&h->generation, FUTEX_WAIT, g, &ts);
    __atomic_sub_fetch(&h->sleepers, 1, __ATOMIC_SEQ_CST);
    if (LDA(&h->generation) != g) return MUSTER_OK;
  }
}

static int wait_any(struct muster_seg_header *h, int rank, double timeout_s, double stop_limit_s,
                    uint64_t barrier_no, uint32_t *gen) {
  struct muster_seg_slot *s = muster__segment_slot(h, rank);
  int rc = muster__barrier_check_abort(h);
  if (rc < 0) return rc;
  uint32_t g = LDA(&h->generation);
  uint64_t now_real = muster__now_real_ns();
  ST(&s->barrier_gen, g);
  ST(&s->arrive_ns, now_real);
  ST(&s->wait_start_ns, now_real);
  ST(&s->phase, MUSTER_PHASE_WAITING);
  uint64_t t0 = muster__now_mono_ns();
  uint32_t n = __atomic_add_fetch(&h->arrived, 1, __ATOMIC_ACQ_REL);
  if (n > (uint32_t)h->nranks) {
    /* more arrivals than ranks: the counter was not written by muster
     * (a damaged or forged segment); no round could ever end */
    char reason[MUSTER_SEG_REASON_MAX];
    snprintf(reason, sizeof reason, "group %s is corrupt: rank %d was arrival %" PRIu32 " at "
             "barrier %" PRIu64 " of a group of %d ranks", h->group, rank, n, barrier_no, h->nranks);
    muster__barrier_poison(h, MUSTER_ECORRUPT, rank, muster__proc_self_pid(), reason);
    ST(&s->wait_start_ns, 0);
    return muster__barrier_check_abort(h);
  }
  /* last one in ends the round, unless a waiter ended it for us (we were
   * stopped or slow in between): then wait for the word like the others */
  int ended = n == (uint32_t)h->nranks && end_round(h, g);
  if (!ended && !spin_phase(h, g, t0)) rc = sleep_phase(h, rank, g, timeout_s, stop_limit_s, barrier_no, t0);
  ST(&s->wait_start_ns, 0);
  if (rc < 0) return rc;
  ST(&s->phase, MUSTER_PHASE_PASSED);
  ST(&s->barriers, LD(&s->barriers) + 1);
  *gen = g;
  return MUSTER_OK;
}

int muster__barrier_wait(struct muster_seg_header *h, int rank, double timeout_s,
                         uint64_t barrier_no, uint32_t *gen) {
  return wait_any(h, rank, timeout_s, 0, barrier_no, gen);
}

int muster__barrier_wait_busy(struct muster_seg_header *h, int rank, double stop_limit_s,
                              uint64_t barrier_no, uint32_t *gen) {
  return wait_any(h, rank, 0, stop_limit_s, barrier_no, gen);
}
