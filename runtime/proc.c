/* runtime/proc.c - process identity (pid + start time) and liveness; the
 * /proc/PID/stat parser is muster/proc.h's, shared with the providers. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "muster/proc.h"
#include "proc.h"

uint64_t muster__proc_start_time(pid_t pid) { return muster_proc_start_time(pid, NULL); }

int muster__proc_alive(pid_t pid, uint64_t start_time) {
  if (pid <= 0) return 0;
  if (kill(pid, 0) < 0 && errno == ESRCH) return 0;
  char state = '?';
  uint64_t st = muster_proc_start_time(pid, &state);
  if (st == 0) return 0;          /* vanished between the two checks */
  if (state == 'Z' || state == 'X') return 0; /* exited, not yet reaped */
  if (start_time != 0 && st != start_time) return 0; /* pid reused */
  return 1;
}

int muster__proc_thread_alive(pid_t tid) {
  if (tid <= 0) return 0;
  if (syscall(SYS_tgkill, (int)muster__proc_self_pid(), (int)tid, 0) == 0) return 1;
  return errno != ESRCH;
}

/* Cached identity.  The pid cache is invalidated in fork children through
 * pthread_atfork; the tid cache is per thread and a fork child's thread is a
 * new thread, so it is invalidated by comparing the generation. */
static pid_t self_pid;
static uint64_t self_start;
static uint64_t self_pidns; /* a fork child may be in a new one (CLONE_NEWPID) */
static unsigned fork_gen = 1;
static __thread pid_t self_tid;
static __thread unsigned self_tid_gen;
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

static void after_fork_child(void) {
  __atomic_store_n(&self_pid, 0, __ATOMIC_RELAXED);
  __atomic_store_n(&self_start, 0, __ATOMIC_RELAXED);
  __atomic_store_n(&self_pidns, 0, __ATOMIC_RELAXED);
  __atomic_add_fetch(&fork_gen, 1, __ATOMIC_RELAXED);
}

static void install_atfork(void) { pthread_atfork(NULL, NULL, after_fork_child); }

pid_t muster__proc_self_pid(void) {
  pid_t p = __atomic_load_n(&self_pid, __ATOMIC_RELAXED);
  if (p) return p;
  pthread_once(&atfork_once, install_atfork);
  p = getpid();
  __atomic_store_n(&self_pid, p, __ATOMIC_RELAXED);
  return p;
}

uint64_t muster__proc_self_start(void) {
  uint64_t s = __atomic_load_n(&self_start, __ATOMIC_RELAXED);
  if (s) return s;
  s = muster__proc_start_time(muster__proc_self_pid());
  __atomic_store_n(&self_start, s, __ATOMIC_RELAXED);
  return s;
}

pid_t muster__proc_self_tid(void) {
  unsigned g = __atomic_load_n(&fork_gen, __ATOMIC_RELAXED);
  if (self_tid && self_tid_gen == g) return self_tid;
  pthread_once(&atfork_once, install_atfork);
  self_tid = (pid_t)syscall(SYS_gettid);
  self_tid_gen = g;
  return self_tid;
}

uint64_t muster__now_real_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t muster__now_mono_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}


uint64_t muster__proc_self_pidns(void) {
  uint64_t ns = __atomic_load_n(&self_pidns, __ATOMIC_RELAXED);
  if (ns) return ns;
  struct stat st;
  ns = stat("/proc/self/ns/pid", &st) == 0 ? (uint64_t)st.st_ino : 0;
  __atomic_store_n(&self_pidns, ns, __ATOMIC_RELAXED);
  return ns;
}

int muster__proc_same_pidns(uint64_t ns) {
  uint64_t mine = muster__proc_self_pidns();
  return ns == 0 || mine == 0 || ns == mine;
}
