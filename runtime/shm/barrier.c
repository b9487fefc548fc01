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
#include "shm/barrier_launcher.h"
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

/* An empty seat whose rank a launcher started: that process is gone. */
static int declared_dead(const struct muster_seg_header *h, int rank, char *buf, size_t cap,
                         uint32_t *phase_out) {
  if (!muster__launch_declared_dead(h, rank, buf, cap)) return 0;
  if (phase_out) *phase_out = LD(&muster__segment_slot((struct muster_seg_header *)h, rank)->phase);
  return 1;
}

/* The seat word names thread `owner` but the seat is not complete (its tid
 * is not written yet): the occupant is taking it right now, or died doing
 * so (killed between the two, it would hold the seat forever).  Judge it by
 * the pid its launcher declared, else by that thread (a tid is a pid to
 * kill(0) and /proc), unless the group was made in another pid namespace
 * (the caller checked the slot's). */
static int seating_dead(const struct muster_seg_header *h, int rank, uint32_t owner, char *buf,
                        size_t cap, uint32_t *phase_out) {
  const struct muster_seg_slot *s = muster__segment_slot((struct muster_seg_header *)h, rank);
  if (declared_dead(h, rank, buf, cap, phase_out)) return 1;
  if (LDA(&s->declared_pid) > 0 || !muster__proc_same_pidns(h->creator_pidns)) return 0;
  if (muster__proc_thread_alive((pid_t)owner) || muster__proc_alive((pid_t)owner, 0)) return 0;
  snprintf(buf, cap, "rank %d (thread %u) died while taking its seat", rank, owner);
  if (phase_out) *phase_out = MUSTER_PHASE_FREE;
  return 1;
}

/* Is rank's occupant gone?  Seated: its process (pid + start time) or, when
 * it is a thread of this process, its thread; half-seated: seating_dead.
 * Not seated: in a formed group only the processes mapping the segment can
 * ever take a seat again, so a dead last occupant means the rank can never
 * arrive; otherwise the pid a launcher declared for it, if any. */
int muster__barrier_rank_dead(const struct muster_seg_header *h, int rank, char *buf,
                              size_t cap, uint32_t *phase_out) {
  const struct muster_seg_slot *s = muster__segment_slot((struct muster_seg_header *)h, rank);
  uint32_t owner = LDA(&s->owner_tid);
  int pid = LD(&s->pid), tid = LDA(&s->tid), dev = LD(&s->device);
  uint64_t start = LD(&s->start_time);
  uint32_t phase = LD(&s->phase);
  int dead;
  /* a pid from another pid namespace means nothing here: only the deadline
   * can judge that rank */
  if (!muster__proc_same_pidns(LD(&s->pidns))) return 0;
  if (owner != 0) {
    if ((uint32_t)tid != owner) return seating_dead(h, rank, owner, buf, cap, phase_out);
    if (pid == muster__proc_self_pid()) dead = !muster__proc_thread_alive(tid);
    else dead = !muster__proc_alive(pid, start);
  } else {
    if (!LD(&h->formed) || pid <= 0 || pid == muster__proc_self_pid())
      return declared_dead(h, rank, buf, cap, phase_out);
    dead = !muster__proc_alive(pid, start);
  }
  if (dead) {
    snprintf(buf, cap, "rank %d (pid %d, device %d) %s", rank, pid, dev,
             pid == muster__proc_self_pid() ? "ended its thread" : owner ? "died" : "died or exited");
    if (phase_out) *phase_out = phase;
  }
  return dead;
}

/* One rank's slot, read once: whether it has arrived and how a timeout
 * describes it come from the same reading, so they cannot disagree. */
struct seen {
  uint32_t owner, phase, gen;
  int pid, dev;
  uint64_t start, pidns, barriers;
};

static void read_slot(const struct muster_seg_header *h, int r, struct seen *v) {
  const struct muster_seg_slot *s = muster__segment_slot((struct muster_seg_header *)h, r);
  v->owner = LDA(&s->owner_tid);
  v->phase = LD(&s->phase);
  v->gen = LD(&s->barrier_gen);
  v->pid = LD(&s->pid);
  v->dev = LD(&s->device);
  v->start = LD(&s->start_time);
  v->pidns = LD(&s->pidns);
  v->barriers = LD(&s->barriers);
}

static int seen_arrived(const struct seen *v, uint32_t g) {
  return v->owner != 0 && v->phase == MUSTER_PHASE_WAITING && v->gen == g;
}

static int arrived_at(const struct muster_seg_header *h, int r, uint32_t g) {
  struct seen v;
  read_slot(h, r, &v);
  return seen_arrived(&v, g);
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

/* A missing rank is dead: poison with EPEERDEAD and return it. */
static int check_missing(struct muster_seg_header *h, int me, uint32_t g, uint64_t barrier_no) {
  char who[256], reason[MUSTER_SEG_REASON_MAX];
  uint32_t phase = 0;
  if (end_round(h, g)) return MUSTER_OK; /* everyone had arrived */
  int rc = muster__launch_check(h, me, g, barrier_no);
  if (rc < 0) return rc;
  for (int r = 0; r < h->nranks; r++) {
    if (r == me || arrived_at(h, r, g)) continue;
    if (!muster__barrier_rank_dead(h, r, who, sizeof who, &phase)) continue;
    if (LD(&h->generation) != g) return MUSTER_OK; /* completed meanwhile */
    /* its launcher knows how it died (the signal): let it say so */
    if (muster__launch_await_report(h)) return muster__barrier_check_abort(h);
    const struct muster_seg_slot *s = muster__segment_slot(h, r);
    snprintf(reason, sizeof reason, "%.200s while group %s waited at barrier %" PRIu64
             " (generation %" PRIu32 "); it was %s", who, h->group, barrier_no, g,
             muster__phase_name(phase));
    muster__barrier_poison(h, MUSTER_EPEERDEAD, r, LD(&s->pid), reason);
    return muster__barrier_check_abort(h);
  }
  return MUSTER_OK;
}

/* Where a rank that has not arrived at barrier g is, truthfully: "rank 1
 * (pid 77, device 0) is stopped (SIGSTOP?); it last passed barrier 41
 * (generation 1040) and has not arrived". */
static int describe_missing(char *buf, size_t cap, int r, const struct seen *v) {
  if (!v->owner && v->phase == MUSTER_PHASE_FREE) return snprintf(buf, cap, "rank %d never joined", r);
  /* a stopped process (judged only in our pid namespace; a thread of ours
   * is running, since we are) */
  int stopped = v->owner && v->pid != muster__proc_self_pid() &&
                muster__proc_same_pidns(v->pidns) && muster__proc_stopped(v->pid, v->start);
  const char *it = stopped ? "is stopped (SIGSTOP?); it " : "";
  int n = snprintf(buf, cap, "rank %d (pid %d, device %d) ", r, v->pid, v->dev);
  if (n < 0 || (size_t)n >= cap) return n;
  buf += n;
  cap -= (size_t)n;
  unsigned long long k = v->barriers;
  if (!v->owner) return n + snprintf(buf, cap, "had left the group (between calls)");
  switch (v->phase) {
  case MUSTER_PHASE_JOINED:
    return n + snprintf(buf, cap, "%sjoined and has not arrived", it);
  case MUSTER_PHASE_PUBLISHED:
    return n + snprintf(buf, cap, "%spublished its payload and has not arrived", it);
  case MUSTER_PHASE_PASSED:
    return n + snprintf(buf, cap, "%slast passed barrier %llu (generation %u) and has not arrived",
                        it, k, v->gen);
  case MUSTER_PHASE_WAITING: /* at an earlier barrier: released, not yet out of it */
    return n + snprintf(buf, cap, "%swas released from barrier %llu (generation %u) and has not "
                        "moved on", it, k + 1, v->gen);
  default:
    return n + snprintf(buf, cap, "%s%s", it, muster__phase_name(v->phase));
  }
}

/* The deadline passed: poison with ETIMEDOUT naming every rank that has not
 * arrived at barrier g (never the caller), unless it completed meanwhile. */
static int timeout_error(struct muster_seg_header *h, int me, uint32_t g, uint64_t barrier_no,
                         double waited, double stalled) {
  char list[256] = "", detail[MUSTER_SEG_REASON_MAX] = "", reason[MUSTER_SEG_REASON_MAX];
  char not_counted[96] = "";
  struct seen v[MUSTER_MAX_RANKS];
  int first = -1, nmiss = 0, nranks = h->nranks;
  size_t ll = 0, dl = 0;
  for (int r = 0; r < nranks; r++) read_slot(h, r, &v[r]);
  /* checked after reading the slots: a rank seen not arrived below had not
   * arrived at this barrier when its slot was read */
  __atomic_thread_fence(__ATOMIC_ACQUIRE);
  if (LDA(&h->generation) != g) return MUSTER_OK;
  for (int r = 0; r < nranks; r++) {
    if (r == me || seen_arrived(&v[r], g)) continue;
    if (first < 0) first = r;
    nmiss++;
    if (ll < sizeof list)
      ll += snprintf(list + ll, sizeof list - ll, "%s%d", nmiss > 1 ? "," : "", r);
    if (dl < sizeof detail) {
      if (nmiss > 1) dl += snprintf(detail + dl, sizeof detail - dl, "; ");
      if (dl < sizeof detail) dl += describe_missing(detail + dl, sizeof detail - dl, r, &v[r]);
    }
  }
  if (nmiss == 0) return MUSTER_OK; /* everyone arrived at the last moment */
  if (stalled >= 0.05)
    snprintf(not_counted, sizeof not_counted, ", not counting %.1f s in which this process was "
             "stopped or not scheduled", stalled);
  snprintf(reason, sizeof reason, "rank%s %s missing after %.1f s%s at barrier %" PRIu64
           " of group %s (generation %" PRIu32 "): %s", nmiss > 1 ? "s" : "", list, waited,
           not_counted, barrier_no, h->group, g, detail);
  muster__barrier_poison(h, MUSTER_ETIMEDOUT, first, v[first].pid, reason);
  return muster__barrier_check_abort(h);
}

/* No deadline, but a stop limit: poison with ETIMEDOUT once a missing rank
 * has been seen stopped at every liveness tick for more than limit_s.
 * *since is when it was first seen stopped (0: none is). */
static int check_stopped(struct muster_seg_header *h, int me, uint32_t g, uint64_t barrier_no,
                         double limit_s, uint64_t now, uint64_t *since) {
  int victim = -1;
  struct seen v;
  for (int r = 0; r < h->nranks && victim < 0; r++) {
    if (r == me) continue;
    read_slot(h, r, &v);
    if (seen_arrived(&v, g) || !v.owner || v.pid == muster__proc_self_pid() ||
        !muster__proc_same_pidns(v.pidns) || !muster__proc_stopped(v.pid, v.start))
      continue;
    victim = r;
  }
  if (victim < 0) {
    *since = 0;
    return MUSTER_OK;
  }
  if (!*since) *since = now;
  double secs = (double)(now - *since) * 1e-9;
  if (secs <= limit_s) return MUSTER_OK;
  char where[256], reason[MUSTER_SEG_REASON_MAX];
  describe_missing(where, sizeof where, victim, &v);
  if (LDA(&h->generation) != g) return MUSTER_OK;
  snprintf(reason, sizeof reason, "%.200s; it has been stopped (SIGSTOP or a debugger) for %.1f s, "
           "more than the timeout (%.1f s), while group %s waited for it at barrier %" PRIu64
           " (generation %" PRIu32 ")", where, secs, limit_s, h->group, barrier_no, g);
  muster__barrier_poison(h, MUSTER_ETIMEDOUT, victim, v.pid, reason);
  return muster__barrier_check_abort(h);
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

static int sleep_phase(struct muster_seg_header *h, int me, uint32_t g, double timeout_s,
                       double stop_limit_s, uint64_t barrier_no, uint64_t t0) {
  /* since t0 it spun and yielded for up to YIELD_NS; no deadline, or one
   * of 30 years or more (inf), is UINT64_MAX */
  int none = !(timeout_s > 0 && timeout_s < 1e9);
  struct wait_clock c = {none ? UINT64_MAX : t0 + (uint64_t)(timeout_s * 1e9), t0, YIELD_NS, 0};
  /* Liveness reads /proc (tens of us): not in the common short wait, only
   * once the wait has lasted a while, then every tick. */
  uint64_t next_check = t0 + MUSTER_LIVENESS_FIRST_NS, stopped_since = 0;
  int rc;
  for (;;) {
    if ((rc = muster__barrier_check_abort(h)) < 0) return rc;
    if (barrier_no == 1 && LD(&h->retired)) {
      /* A process dropped this group from its cache while we waited in the
       * first round of our session: the others will meet by name in a new
       * segment.  Poison this one the recognisable way (EPOISONED, no rank
       * blamed) so everyone in it moves there (group.c, relocate). */
      char reason[MUSTER_SEG_REASON_MAX];
      snprintf(reason, sizeof reason, "group %s was retired (a process dropped it from its "
               "cache) while its ranks waited", h->group);
      muster__barrier_poison(h, MUSTER_EPOISONED, -1, 0, reason);
      if (LDA(&h->generation) != g) return MUSTER_OK; /* completed meanwhile */
      return muster__barrier_check_abort(h);
    }
    uint64_t now = clock_read(&c);
    if (now >= c.deadline) {
      rc = timeout_error(h, me, g, barrier_no, (now - t0 - c.stalled) * 1e-9, c.stalled * 1e-9);
      if (rc < 0 || LDA(&h->generation) != g) return rc;
    }
    if (now >= next_check) {
      if ((rc = check_missing(h, me, g, barrier_no)) < 0) return rc;
      if (stop_limit_s > 0 &&
          (rc = check_stopped(h, me, g, barrier_no, stop_limit_s, now, &stopped_since)) < 0)
        return rc;
      next_check = now + MUSTER_LIVENESS_TICK_NS;
    }
    uint64_t wake = next_check < c.deadline ? next_check : c.deadline;
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
