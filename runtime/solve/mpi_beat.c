/*
 * runtime/solve/mpi_beat.c - the heartbeat of an MPI job (mpiInt.h): liveness of
 * every rank, on any node, through MPI itself.
 *
 * A remote rank's process state is out of this node's sight, and MPI cannot
 * tell a stopped peer from a slow one.  So every rank runs a thread that,
 * every MUSTER__BEAT_TICK_MS, sends each other rank a small message on a
 * communicator of its own (a duplicate of MPI_COMM_WORLD: no application
 * message can match it) and takes theirs.  A process that is stopped
 * (SIGSTOP, a debugger) stops beating with all its threads; one that
 * computes, however long, keeps beating.  So a wait on the peers (an
 * exchange, a collective provider's call) fails when a peer has been
 * silent for MUSTER_TIMEOUT, never because the work is long: the rule of
 * the one-node group (docs/runtime.md, failure semantics).
 *
 * Each beat carries the sender's pid, start time, host and phase (what it
 * is doing), so the message names the silent rank and where it stopped,
 * and the silent rank the sender found first (its verdict), so every
 * survivor hears of it within a tick and reports it too.
 * Needs MPI_THREAD_MULTIPLE (the thread calls MPI while the caller's
 * thread is inside MPI); mpi.c starts it only then.
 */
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/env.h"
#include "solve/mpiInt.h"
#include "base/proc.h"

#define BEAT_MAGIC 0x54414542u /* "BEAT" */
#define BEAT_TAG 4242
#define TICK_NS ((uint64_t)MUSTER__BEAT_TICK_MS * 1000000ull)
#define STALL_NS 250000000ull /* a tick this much late: this process did not run */
#define PHASE_MAX MUSTER__MPI_PHASE_MAX

typedef struct beat_msg {
  uint32_t magic, seq;
  int32_t pid, verdict; /* verdict: the first rank the sender found silent, else -1 */
  uint64_t start;
  char host[64];
  char phase[PHASE_MAX];
} beat_msg_t;

typedef struct peer {
  beat_msg_t in, out;              /* the buffers of the posted receive and send */
  muster__mpi_handle_t rreq, sreq;
  int rposted, sposted;
  uint64_t heard_ns;               /* the last beat's arrival, or the start    */
  int heard;
  beat_msg_t last;                 /* the last beat: who it is and its phase   */
} peer_t;

static struct beats {
  pthread_mutex_t mu; /* all below, except the buffers only the thread uses */
  pthread_cond_t cv;
  pthread_t tid;
  int running, stop;
  muster__mpi_handle_t comm;
  int rank, size;
  double timeout;     /* MUSTER_TIMEOUT at the start; 0: none */
  peer_t *peers;
  uint64_t start_ns, tick_ns;
  int verdict;        /* the first silent rank this one found, else -1 */
  int adopted, adopted_from; /* another's verdict, and whose; -1 */
  char host[64];
} B = {.mu = PTHREAD_MUTEX_INITIALIZER, .verdict = -1, .adopted = -1, .adopted_from = -1};

static pthread_mutex_t phase_mu = PTHREAD_MUTEX_INITIALIZER;
static char phase[PHASE_MAX] = "starting MPI";

void muster__mpi_phase(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  pthread_mutex_lock(&phase_mu);
  vsnprintf(phase, sizeof phase, fmt, ap);
  pthread_mutex_unlock(&phase_mu);
  va_end(ap);
}

void muster__mpi_phase_get(char *out, size_t cap) {
  pthread_mutex_lock(&phase_mu);
  snprintf(out, cap, "%s", phase);
  pthread_mutex_unlock(&phase_mu);
}

/* ---- the thread ----------------------------------------------------------------- */

/* Take every beat that arrived from peer r; B.mu not held. */
static void take(int r, uint64_t now) {
  peer_t *p = &B.peers[r];
  for (;;) {
    if (!p->rposted) {
      if (muster__mpi_irecv(&p->in, sizeof p->in, r, BEAT_TAG, B.comm, &p->rreq) != 0) return;
      p->rposted = 1;
    }
    int done = 0;
    if (muster__mpi_test(&p->rreq, &done) != 0 || !done) return;
    p->rposted = 0;
    if (p->in.magic != BEAT_MAGIC) continue;
    p->in.host[sizeof p->in.host - 1] = p->in.phase[sizeof p->in.phase - 1] = '\0';
    pthread_mutex_lock(&B.mu);
    p->last = p->in;
    p->heard = 1;
    p->heard_ns = now;
    if (p->in.verdict >= 0 && p->in.verdict < B.size && B.adopted < 0) {
      B.adopted = p->in.verdict;
      B.adopted_from = r;
    }
    pthread_mutex_unlock(&B.mu);
  }
}

/* Send peer r this rank's beat unless the last one is still on its way. */
static void give(int r, uint32_t seq, const char *ph, int verdict) {
  peer_t *p = &B.peers[r];
  int done = 0;
  if (p->sposted && (muster__mpi_test(&p->sreq, &done) != 0 || !done)) return;
  p->sposted = 0;
  p->out = (beat_msg_t){.magic = BEAT_MAGIC, .seq = seq, .pid = (int32_t)muster__proc_self_pid(),
                        .verdict = verdict, .start = muster__proc_self_start()};
  snprintf(p->out.host, sizeof p->out.host, "%s", B.host);
  snprintf(p->out.phase, sizeof p->out.phase, "%s", ph);
  if (muster__mpi_isend(&p->out, sizeof p->out, r, BEAT_TAG, B.comm, &p->sreq) == 0) p->sposted = 1;
}

static void tick(uint32_t seq) {
  uint64_t now = muster__now_mono_ns();
  char ph[PHASE_MAX];
  muster__mpi_phase_get(ph, sizeof ph);
  pthread_mutex_lock(&B.mu);
  if (now - B.tick_ns > TICK_NS + STALL_NS) { /* this process did not run: that time does not count */
    uint64_t lost = now - B.tick_ns - TICK_NS;
    for (int r = 0; r < B.size; r++) B.peers[r].heard_ns += lost;
  }
  B.tick_ns = now;
  int verdict = B.verdict;
  pthread_mutex_unlock(&B.mu);
  for (int r = 0; r < B.size; r++) {
    if (r == B.rank) continue;
    take(r, now);
    give(r, seq, ph, verdict);
  }
}

static void *beat_main(void *arg) {
  (void)arg;
  uint32_t seq = 0;
  pthread_mutex_lock(&B.mu);
  while (!B.stop) {
    pthread_mutex_unlock(&B.mu);
    tick(++seq);
    pthread_mutex_lock(&B.mu);
    struct timespec until;
    muster__mono_deadline(&until, MUSTER__BEAT_TICK_MS * 1e-3);
    if (!B.stop) pthread_cond_timedwait(&B.cv, &B.mu, &until);
  }
  pthread_mutex_unlock(&B.mu);
  return NULL;
}

int muster__mpi_beat_start(muster__mpi_handle_t comm, int rank, int size) {
  double timeout = 0;
  int rc = muster__env_timeout(&timeout);
  if (rc < 0) return rc;
  if (size < 2) return 0; /* nobody to hear */
  peer_t *peers = calloc((size_t)size, sizeof *peers);
  if (!peers)
    return muster__err(MUSTER_ENOMEM, "bootstrap mpi: no memory for the heartbeat of %d ranks", size);
  muster__cond_init_mono(&B.cv);
  gethostname(B.host, sizeof B.host - 1);
  B.comm = comm;
  B.rank = rank;
  B.size = size;
  B.timeout = timeout;
  B.peers = peers;
  B.start_ns = B.tick_ns = muster__now_mono_ns();
  for (int r = 0; r < size; r++) peers[r].heard_ns = B.start_ns;
  sigset_t all, old;
  sigfillset(&all); /* signals are for the program's threads */
  pthread_sigmask(SIG_SETMASK, &all, &old);
  int err = pthread_create(&B.tid, NULL, beat_main, NULL);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  if (err) {
    free(peers);
    B.peers = NULL;
    return muster__err(MUSTER_ESYS, "bootstrap mpi: cannot start the heartbeat thread (pthread_create)");
  }
  pthread_mutex_lock(&B.mu);
  B.running = 1;
  pthread_mutex_unlock(&B.mu);
  return 0;
}

int muster__mpi_beat_on(void) {
  pthread_mutex_lock(&B.mu);
  int on = B.running;
  pthread_mutex_unlock(&B.mu);
  return on;
}

/* Complete or cancel r's requests, within about a second. */
static int settle(peer_t *p) {
  if (p->rposted) muster__mpi_cancel(&p->rreq);
  for (int i = 0; i < 1000 && (p->rposted || p->sposted); i++) {
    int done = 0;
    if (p->rposted && (muster__mpi_test(&p->rreq, &done) != 0 || done)) p->rposted = 0;
    if (p->sposted && (muster__mpi_test(&p->sreq, &done) != 0 || done)) p->sposted = 0;
    if (p->rposted || p->sposted) usleep(1000);
  }
  return !p->rposted && !p->sposted;
}

void muster__mpi_beat_stop(void) {
  pthread_mutex_lock(&B.mu);
  if (!B.running || B.stop) {
    pthread_mutex_unlock(&B.mu);
    return;
  }
  B.stop = 1;
  pthread_cond_signal(&B.cv);
  pthread_mutex_unlock(&B.mu);
  pthread_join(B.tid, NULL);
  int all = 1;
  for (int r = 0; r < B.size; r++) all &= r == B.rank || settle(&B.peers[r]);
  pthread_mutex_lock(&B.mu);
  B.running = 0;
  if (all) free(B.peers); /* else MPI may still write a buffer: left to the process's end */
  B.peers = NULL;
  pthread_mutex_unlock(&B.mu);
  pthread_cond_destroy(&B.cv);
}

/* ---- the check -------------------------------------------------------------------- */

/* "rank 1 (pid 447 on vm)", and what this node can tell of it. */
static void describe(int r, char *out, size_t cap, const char **state) {
  const peer_t *p = &B.peers[r];
  *state = "it is stopped (SIGSTOP, a debugger) or stuck, or its node or the network failed";
  if (!p->heard) {
    snprintf(out, cap, "rank %d (never heard: its pid and host are unknown)", r);
    return;
  }
  snprintf(out, cap, "rank %d (pid %d on %s)", r, (int)p->last.pid, p->last.host);
  if (!strcmp(p->last.host, B.host) && muster__proc_stopped(p->last.pid, p->last.start))
    *state = "it is stopped (SIGSTOP or a debugger)";
}

static int silent(uint64_t now) {
  for (int r = 0; r < B.size; r++)
    if (r != B.rank && B.timeout > 0 && (now - B.peers[r].heard_ns) * 1e-9 > B.timeout) return r;
  return -1;
}

int muster__mpi_beat_check(void) {
  pthread_mutex_lock(&B.mu);
  uint64_t now = muster__now_mono_ns();
  /* the thread has not ticked lately: this process was stopped or starved,
   * and its view of the others is stale until it catches up */
  if (!B.running || now - B.tick_ns > TICK_NS + STALL_NS) {
    pthread_mutex_unlock(&B.mu);
    return 0;
  }
  int r = silent(now), from = -1, rc = 0;
  if (r >= 0 && B.verdict < 0) B.verdict = r; /* the next beats tell the others */
  if (r < 0 && B.adopted >= 0) {
    r = B.adopted;
    from = B.adopted_from;
  }
  if (r >= 0) {
    char who[160];
    const char *state;
    const peer_t *p = &B.peers[r];
    if (r == B.rank) {
      rc = muster__err(MUSTER_ETIMEDOUT, "rank %d found this rank (%d, pid %d on %s) silent for more than "
                       "MUSTER_TIMEOUT (%g s): this process was stopped (SIGSTOP, a debugger) or could not "
                       "run", from, B.rank, (int)muster__proc_self_pid(), B.host, B.timeout);
    } else {
      describe(r, who, sizeof who, &state);
      char heard[PHASE_MAX + 40];
      snprintf(heard, sizeof heard, "when last heard it was %s", p->heard ? p->last.phase : "starting");
      if (from >= 0)
        rc = muster__err(MUSTER_ETIMEDOUT, "%s has sent rank %d no heartbeat for more than MUSTER_TIMEOUT "
                         "(%g s): %s; %s", who, from, B.timeout, state, heard);
      else
        rc = muster__err(MUSTER_ETIMEDOUT, "%s has sent no heartbeat for %.1f s, more than MUSTER_TIMEOUT "
                         "(%g s): %s; %s", who, (now - p->heard_ns) * 1e-9, B.timeout, state, heard);
    }
  }
  pthread_mutex_unlock(&B.mu);
  return rc;
}
