/* tools/muster/progress.c - see progress.h. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "progress.h"
#include "muster/clock.h"

typedef struct prog {
  char who[48];
  int phase, rep, reps, mode; /* phase, rep, reps: atomics (a forked rank writes them) */
  double t0;
  unsigned gen;     /* bumped by every prog_phase            */
  unsigned shown;   /* the gen last written (CAS: once each) */
  int stop;
} prog_t;

static prog_t *P; /* NULL: no progress */
static pthread_t watcher;
static int watching;

/* Write the current phase once, if it is due; from any process. */
static void show(prog_t *p) {
  unsigned gen = __atomic_load_n(&p->gen, __ATOMIC_ACQUIRE), seen = __atomic_load_n(&p->shown, __ATOMIC_RELAXED);
  double t = muster_clock_s() - p->t0;
  if (gen == seen || !gen || (p->mode == 0 && t < PROG_AFTER_S)) return;
  if (!__atomic_compare_exchange_n(&p->shown, &seen, gen, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED)) return;
  static const char *const names[] = {"generating", "solving", "checking"};
  int phase = __atomic_load_n(&p->phase, __ATOMIC_RELAXED), rep = __atomic_load_n(&p->rep, __ATOMIC_RELAXED),
      reps = __atomic_load_n(&p->reps, __ATOMIC_RELAXED);
  const char *name = phase >= 0 && phase < 3 ? names[phase] : "working";
  char line[160];
  int len = reps > 0 ? snprintf(line, sizeof line, "%s: %s rep %d/%d (%.1f s)\n", p->who, name, rep, reps, t)
                     : snprintf(line, sizeof line, "%s: %s (%.1f s)\n", p->who, name, t);
  if (len > 0 && write(STDERR_FILENO, line, (size_t)len < sizeof line ? (size_t)len : sizeof line - 1) < 0) {
    /* stderr gone: progress is not worth failing the run for */
  }
}

static void *watch(void *arg) {
  prog_t *p = arg;
  struct timespec tick = {0, 100 * 1000 * 1000};
  while (!__atomic_load_n(&p->stop, __ATOMIC_ACQUIRE)) {
    show(p);
    nanosleep(&tick, NULL);
  }
  return NULL;
}

void prog_pause(void) {
  prog_t *p = P;
  if (!p || !watching) return;
  __atomic_store_n(&p->stop, 1, __ATOMIC_RELEASE);
  pthread_join(watcher, NULL);
  watching = 0;
}

void prog_resume(void) {
  prog_t *p = P;
  if (!p || watching || p->mode != 0) return;
  __atomic_store_n(&p->stop, 0, __ATOMIC_RELEASE);
  watching = pthread_create(&watcher, NULL, watch, p) == 0;
}

int prog_start(const char *who, int mode) {
  if (mode < 0) return 0;
  prog_t *p = mmap(NULL, sizeof *p, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return -1;
  memset(p, 0, sizeof *p);
  snprintf(p->who, sizeof p->who, "%s", who);
  p->mode = mode;
  p->t0 = muster_clock_s();
  P = p;
  watching = mode == 0 && pthread_create(&watcher, NULL, watch, p) == 0;
  return 0;
}

void prog_phase(int phase, int rep, int reps) {
  prog_t *p = P;
  if (!p) return;
  /* a watcher reading mid-update may show a torn line once: harmless */
  __atomic_store_n(&p->phase, phase, __ATOMIC_RELAXED);
  __atomic_store_n(&p->rep, rep, __ATOMIC_RELAXED);
  __atomic_store_n(&p->reps, reps, __ATOMIC_RELAXED);
  __atomic_add_fetch(&p->gen, 1, __ATOMIC_RELEASE);
  show(p);
}

void prog_stop(void) {
  prog_t *p = P;
  if (!p) return;
  prog_pause();
  P = NULL;
  munmap(p, sizeof *p);
}
