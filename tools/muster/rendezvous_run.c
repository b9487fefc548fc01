/*
 * tools/muster/rendezvous_run.c - the participants of `muster rendezvous`.
 *
 * One rank's loop is the same code in threads and in processes mode; the
 * difference is only how the R participants are started (pthread_create or
 * fork) and reaped.  Participants are started behind a gate so that either
 * all of them run or none does (a failed fork or pthread_create must not
 * leave the others waiting for a peer that will never come).
 *
 * A round is: write this round's payload, exchange (publish + wait for all),
 * read and verify every peer's payload of this round.  The payload encodes
 * (rank, round) in every byte, so a stale or torn read is caught, not timed.
 * The pthread baseline does the same through payload slots in shared memory
 * and one pthread_barrier_wait per round; slots alternate by round parity,
 * which is enough because no one can be more than one round ahead of a
 * reader (it would have to pass the next barrier, which the reader has not
 * reached).
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "launch.h"
#include "rendezvous.h"
#include "muster/clock.h"

/* check-and-goto with one cleanup label, as in the runtime */
#define RV_CHECK(call)                                                         \
  do {                                                                         \
    rc = (call);                                                               \
    if (rc != 0) goto out;                                                     \
  } while (0)

#define RV_GRACE_S 5.0        /* after a first failure, time the others get to
                                 notice it themselves before they are killed */
#define RV_MAX_REPORTED 8     /* failure lines printed before summarising      */

static size_t align64(size_t x) { return (x + 63) & ~(size_t)63; }

int rv_shared_map(const struct rv_config *c, struct rv_shared **out) {
  size_t r = (size_t)c->ranks;
  size_t off_rc = align64(sizeof(struct rv_shared));
  size_t off_msg = align64(off_rc + r * sizeof(int));
  size_t off_round = align64(off_msg + r * RV_MSG);
  size_t off_cycle = align64(off_round + (size_t)c->rounds * sizeof(double));
  size_t off_slots = align64(off_cycle + (size_t)c->cycles * sizeof(double));
  size_t total = align64(off_slots + 2 * r * c->payload);
  unsigned char *base = mmap(NULL, total, PROT_READ | PROT_WRITE,
                             MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (base == MAP_FAILED) return -errno;
  struct rv_shared *s = (struct rv_shared *)base;
  s->rc = (int *)(base + off_rc);
  s->msg = (char (*)[RV_MSG])(base + off_msg);
  s->round_s = (double *)(base + off_round);
  s->cycle_s = (double *)(base + off_cycle);
  s->slots = base + off_slots;
  s->map_bytes = total;
  *out = s;
  return 0;
}

void rv_shared_unmap(struct rv_shared *s) {
  if (s) munmap(s, s->map_bytes);
}

static void rv_reset(const struct rv_config *c, struct rv_shared *s) {
  for (int r = 0; r < c->ranks; r++) {
    s->rc[r] = 0;
    s->msg[r][0] = '\0';
  }
}

/* Record rank's failure (the first one only: later ones are consequences). */
static int rv_fail(struct rv_shared *s, int rank, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int rv_fail(struct rv_shared *s, int rank, int code, const char *fmt, ...) {
  if (s->rc[rank] != 0) return code;
  int n = snprintf(s->msg[rank], RV_MSG, "rank %d (pid %d): ", rank, (int)getpid());
  va_list ap;
  va_start(ap, fmt);
  if (n > 0 && n < RV_MSG) vsnprintf(s->msg[rank] + n, RV_MSG - (size_t)n, fmt, ap);
  va_end(ap);
  s->rc[rank] = code ? code : -1;
  return s->rc[rank];
}

/* ---- payloads ------------------------------------------------------------ */

/* Every byte depends on (rank, round): a payload of another rank or of an
 * earlier round never matches. */
static void payload_fill(unsigned char *p, size_t len, int rank, long round) {
  uint64_t x = ((uint64_t)(uint32_t)rank << 40) ^ (uint64_t)round ^ 0x9E3779B97F4A7C15ull;
  for (size_t i = 0; i < len; i++) {
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    p[i] = (unsigned char)((x * 0x2545F4914F6CDD1Dull) >> 56);
  }
  if (len >= 12) { /* readable header for error messages */
    uint32_t r32 = (uint32_t)rank, rd = (uint32_t)round;
    memcpy(p, &r32, 4);
    memcpy(p + 4, &rd, 4);
  }
}

/* "" when p is (rank, round)'s payload; otherwise what it looks like. */
static const char *payload_check(const unsigned char *p, size_t len, size_t want,
                                 int rank, long round, char *why, size_t cap) {
  unsigned char exp[MUSTER_MAX_PAYLOAD];
  if (len != want) {
    snprintf(why, cap, "length %zu, expected %zu", len, want);
    return why;
  }
  payload_fill(exp, want, rank, round);
  if (memcmp(p, exp, want) == 0) return "";
  size_t k = 0;
  while (p[k] == exp[k]) k++;
  int n = snprintf(why, cap, "byte %zu is 0x%02x, expected 0x%02x", k, p[k], exp[k]);
  if (want >= 12 && n > 0 && (size_t)n < cap) {
    uint32_t r32, rd;
    memcpy(&r32, p, 4);
    memcpy(&rd, p + 4, 4);
    snprintf(why + n, cap - (size_t)n, " (its header says rank %u, round %u)", r32, rd);
  }
  return why;
}

/* ---- muster participant ------------------------------------------------- */

static int muster_round(const struct rv_config *c, struct rv_shared *s,
                        muster_group_t *g, int rank, long round) {
  unsigned char mine[MUSTER_MAX_PAYLOAD];
  char why[160];
  payload_fill(mine, c->payload, rank, round);
  if (c->corrupt_kind == RV_MUSTER && rank == c->corrupt_rank && round == c->corrupt_round)
    mine[c->payload - 1] ^= 0x5a; /* fault injection: the readers must notice */
  int rc = muster_group_exchange(g, mine, c->payload);
  if (rc != 0)
    return rv_fail(s, rank, rc, "muster_group_exchange failed in round %ld: %s: %s", round,
                   muster_strerror(rc), muster_last_error());
  for (int p = 0; p < c->ranks; p++) {
    const void *data = NULL;
    size_t len = 0;
    rc = muster_group_payload(g, p, &data, &len);
    if (rc != 0)
      return rv_fail(s, rank, rc, "muster_group_payload(rank %d) failed in round %ld: %s: %s", p,
                     round, muster_strerror(rc), muster_last_error());
    const char *bad = payload_check(data, len, c->payload, p, round, why, sizeof why);
    if (*bad) {
      rv_fail(s, rank, MUSTER_EMISMATCH, "read a wrong payload of rank %d in round %ld: %s", p,
              round, bad);
      /* so that the others stop at once instead of waiting for us */
      muster_group_abort(g, MUSTER_EMISMATCH, s->msg[rank]);
      return MUSTER_EMISMATCH;
    }
  }
  return 0;
}

static int muster_join(const struct rv_config *c, struct rv_shared *s, int rank,
                       muster_group_t **g) {
  muster_group_opts_t o = {.job = NULL, .timeout_s = 0, .device = -1};
  int rc = muster_group_join(c->group, rank, c->ranks, &o, g);
  if (rc != 0)
    return rv_fail(s, rank, rc, "muster_group_join(\"%s\", rank %d of %d) failed: %s: %s",
                   c->group, rank, c->ranks, muster_strerror(rc), muster_last_error());
  return 0;
}

static int muster_leave(struct rv_shared *s, int rank, muster_group_t **g) {
  int rc = muster_group_leave(*g);
  *g = NULL;
  if (rc != 0)
    return rv_fail(s, rank, rc, "muster_group_leave failed: %s: %s", muster_strerror(rc),
                   muster_last_error());
  return 0;
}

static int muster_rank(const struct rv_config *c, struct rv_shared *s, int rank) {
  muster_group_t *g = NULL;
  long total = c->warmup + c->rounds;
  int rc;
  RV_CHECK(muster_join(c, s, rank, &g));
  for (long i = 0; i < total; i++) {
    double t0 = muster_clock_s();
    RV_CHECK(muster_round(c, s, g, rank, i));
    if (rank == 0 && i >= c->warmup) s->round_s[i - c->warmup] = muster_clock_s() - t0;
  }
  RV_CHECK(muster_leave(s, rank, &g));
  /* The full collective cycle on a reused group: the join finds the cached
   * mapping, so this is what a solver call pays for its rendezvous. */
  for (long k = 0; k < c->cycles; k++) {
    double t0 = muster_clock_s();
    RV_CHECK(muster_join(c, s, rank, &g));
    RV_CHECK(muster_round(c, s, g, rank, total + k));
    RV_CHECK(muster_leave(s, rank, &g));
    if (rank == 0) s->cycle_s[k] = muster_clock_s() - t0;
  }
out:
  if (g) {
    muster_group_abort(g, rc, s->msg[rank]);
    muster_group_leave(g);
  }
  return rc;
}

/* ---- pthread_barrier participant ---------------------------------------- */

static int pthread_rank(const struct rv_config *c, struct rv_shared *s, int rank) {
  long total = c->warmup + c->rounds;
  char why[160];
  int failed = 0;
  for (long i = 0; i < total; i++) {
    double t0 = muster_clock_s();
    unsigned char *slot = s->slots + (size_t)(i & 1) * (size_t)c->ranks * c->payload;
    payload_fill(slot + (size_t)rank * c->payload, c->payload, rank, i);
    if (c->corrupt_kind == RV_PTHREAD && rank == c->corrupt_rank && i == c->corrupt_round)
      slot[(size_t)rank * c->payload + c->payload - 1] ^= 0x5a;
    int e = pthread_barrier_wait(&s->bar);
    if (e != 0 && e != PTHREAD_BARRIER_SERIAL_THREAD)
      return rv_fail(s, rank, -1, "pthread_barrier_wait failed in round %ld: %s", i, strerror(e));
    /* After a wrong read keep arriving at the barrier (it cannot be aborted:
     * leaving would hang the others forever) but stop checking. */
    for (int p = 0; p < c->ranks && !failed; p++) {
      const char *bad = payload_check(slot + (size_t)p * c->payload, c->payload, c->payload, p,
                                      i, why, sizeof why);
      if (*bad) {
        rv_fail(s, rank, MUSTER_EMISMATCH, "pthread baseline read a wrong payload of rank %d "
                "in round %ld: %s", p, i, bad);
        failed = 1;
      }
    }
    if (rank == 0 && i >= c->warmup) s->round_s[i - c->warmup] = muster_clock_s() - t0;
  }
  return failed ? MUSTER_EMISMATCH : 0;
}

static int rank_main(const struct rv_config *c, enum rv_kind kind, struct rv_shared *s,
                     int rank) {
  return kind == RV_MUSTER ? muster_rank(c, s, rank) : pthread_rank(c, s, rank);
}

/* ---- reporting ---------------------------------------------------------- */

static int report_failures(const struct rv_config *c, const struct rv_shared *s) {
  int failed = 0;
  for (int r = 0; r < c->ranks; r++) {
    if (s->rc[r] == 0) continue;
    if (failed < RV_MAX_REPORTED)
      fprintf(stderr, "muster rendezvous: %s\n", s->msg[r][0] ? s->msg[r] : "failed");
    failed++;
  }
  if (failed > RV_MAX_REPORTED)
    fprintf(stderr, "muster rendezvous: ... and %d more ranks failed\n", failed - RV_MAX_REPORTED);
  return failed ? -1 : 0;
}

/* ---- threads ------------------------------------------------------------ */

struct rv_gate {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int state; /* 0 closed, 1 go, -1 abandoned */
};

struct rv_thread {
  const struct rv_config *c;
  struct rv_shared *s;
  struct rv_gate *gate;
  enum rv_kind kind;
  int rank;
};

static void *thread_main(void *arg) {
  struct rv_thread *t = arg;
  pthread_mutex_lock(&t->gate->mu);
  while (t->gate->state == 0) pthread_cond_wait(&t->gate->cv, &t->gate->mu);
  int go = t->gate->state == 1;
  pthread_mutex_unlock(&t->gate->mu);
  if (go) rank_main(t->c, t->kind, t->s, t->rank);
  return NULL;
}

static void gate_open(struct rv_gate *gate, int state) {
  pthread_mutex_lock(&gate->mu);
  gate->state = state;
  pthread_cond_broadcast(&gate->cv);
  pthread_mutex_unlock(&gate->mu);
}

static int run_threads(const struct rv_config *c, enum rv_kind kind, struct rv_shared *s) {
  struct rv_gate gate = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0};
  struct rv_thread *ts = calloc((size_t)c->ranks, sizeof *ts);
  pthread_t *tid = calloc((size_t)c->ranks, sizeof *tid);
  pthread_attr_t attr;
  muster_launch_t *hold = NULL;
  int started = 0, rc = 0;
  if (!ts || !tid) {
    fprintf(stderr, "muster rendezvous: out of memory\n");
    rc = -1;
    goto out;
  }
  /* the group has no name: a signal that ends us leaves nothing */
  if (kind == RV_MUSTER && ml_hold_threads(c->group, c->ranks, &hold) < 0) {
    fprintf(stderr, "muster rendezvous: cannot open group %s for %d ranks: %s\n", c->group,
            c->ranks, muster_last_error());
    rc = -1;
    goto out;
  }
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, 256 * 1024); /* many ranks, shallow stacks */
  for (; started < c->ranks; started++) {
    ts[started] = (struct rv_thread){c, s, &gate, kind, started};
    int e = pthread_create(&tid[started], &attr, thread_main, &ts[started]);
    if (e != 0) {
      fprintf(stderr, "muster rendezvous: cannot start the thread of rank %d: %s\n", started,
              strerror(e));
      rc = -1;
      break;
    }
  }
  pthread_attr_destroy(&attr);
  gate_open(&gate, rc == 0 ? 1 : -1);
  for (int r = 0; r < started; r++) pthread_join(tid[r], NULL);
  if (hold) muster_launch_close(hold);
  if (kind == RV_MUSTER) muster_group_cache_flush();
  if (rc == 0) rc = report_failures(c, s);
out:
  free(ts);
  free(tid);
  return rc;
}

/* ---- processes ---------------------------------------------------------- */

struct rv_proc {
  const struct rv_config *c;
  enum rv_kind kind;
  struct rv_shared *s;
};

static int process_rank(int rank, void *arg) {
  const struct rv_proc *p = arg;
  int rc = rank_main(p->c, p->kind, p->s, rank);
  if (p->kind == RV_MUSTER) muster_group_cache_flush();
  return rc;
}

/* Every rank's fate, when one failed (the launcher knows the ones that died
 * without a word: their signal and phase). */
static void report_fates(const struct rv_config *c, const struct ml_fate *f) {
  int shown = 0;
  for (int r = 0; r < c->ranks; r++) {
    if (!f[r].died) continue;
    if (shown++ < RV_MAX_REPORTED) fprintf(stderr, "muster rendezvous: %s\n", f[r].text);
  }
  if (shown > RV_MAX_REPORTED)
    fprintf(stderr, "muster rendezvous: ... and %d more ranks ended badly\n", shown - RV_MAX_REPORTED);
}

static int run_processes(const struct rv_config *c, enum rv_kind kind, struct rv_shared *s) {
  struct rv_proc p = {c, kind, s};
  struct ml_spec ml = {.who = "muster rendezvous", .group = kind == RV_MUSTER ? c->group : NULL,
                       .ranks = c->ranks, .fn = process_rank, .arg = &p, .grace_s = RV_GRACE_S};
  struct ml_fate *f = calloc((size_t)c->ranks, sizeof *f);
  if (!f) {
    fprintf(stderr, "muster rendezvous: out of memory\n");
    return -1;
  }
  struct ml_error err;
  int rc = ml_run(&ml, f, &err);
  if (rc < 0) fprintf(stderr, "muster rendezvous: %s: %s\n", muster_strerror(err.code), err.msg);
  if (rc > 0) {
    report_failures(c, s);
    report_fates(c, f);
  }
  free(f);
  return rc == 0 ? 0 : -1;
}

int rv_run(const struct rv_config *c, enum rv_kind kind, struct rv_shared *s) {
  int rc;
  rv_reset(c, s);
  if (kind == RV_PTHREAD) {
    pthread_barrierattr_t a;
    pthread_barrierattr_init(&a);
    pthread_barrierattr_setpshared(&a, c->mode == RV_PROCESSES ? PTHREAD_PROCESS_SHARED
                                                               : PTHREAD_PROCESS_PRIVATE);
    int e = pthread_barrier_init(&s->bar, &a, (unsigned)c->ranks);
    pthread_barrierattr_destroy(&a);
    if (e != 0) {
      fprintf(stderr, "muster rendezvous: pthread_barrier_init: %s\n", strerror(e));
      return -1;
    }
  }
  rc = c->mode == RV_THREADS ? run_threads(c, kind, s) : run_processes(c, kind, s);
  /* not after a failure: glibc's destroy waits for the waiters to leave,
   * and a rank killed inside the barrier never does */
  if (kind == RV_PTHREAD && rc == 0) pthread_barrier_destroy(&s->bar);
  return rc;
}
