/* runtime/base/proc.c - process identity (pid + start time) and liveness; the
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
#include "base/proc.h"

uint64_t muster__proc_start_time(pid_t pid) {
  if (pid <= 0 || !muster__proc_is_ours()) return 0;
  return muster_proc_start_time(pid, NULL);
}

int muster__proc_alive(pid_t pid, uint64_t start_time) {
  if (pid <= 0) return 0;
  if (kill(pid, 0) < 0 && errno == ESRCH) return 0;
  if (!muster__proc_is_ours()) return 1; /* its existence is all we can tell */
  char state = '?';
  uint64_t st = muster_proc_start_time(pid, &state);
  if (st == 0) return 0;          /* vanished between the two checks */
  if (state == 'Z' || state == 'X') return 0; /* exited, not yet reaped */
  if (start_time != 0 && st != start_time) return 0; /* pid reused */
  return 1;
}

int muster__proc_stopped(pid_t pid, uint64_t start_time) {
  if (pid <= 0 || !muster__proc_is_ours()) return 0;
  char state = '?';
  uint64_t st = muster_proc_start_time(pid, &state);
  if (st == 0 || (start_time != 0 && st != start_time)) return 0;
  return state == 'T' || state == 't';
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
static int self_proc;       /* muster__proc_is_ours: 0 not known yet, 1 yes, -1 no */
static unsigned fork_gen = 1;
static __thread pid_t self_tid;
static __thread unsigned self_tid_gen;
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

static void after_fork_child(void) {
  __atomic_store_n(&self_pid, 0, __ATOMIC_RELAXED);
  __atomic_store_n(&self_start, 0, __ATOMIC_RELAXED);
  __atomic_store_n(&self_pidns, 0, __ATOMIC_RELAXED);
  __atomic_store_n(&self_proc, 0, __ATOMIC_RELAXED);
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

int muster__proc_is_ours(void) {
  int v = __atomic_load_n(&self_proc, __ATOMIC_RELAXED);
  if (v) return v > 0;
  char buf[32];
  ssize_t n = readlink("/proc/self", buf, sizeof buf - 1);
  v = -1;
  if (n > 0) {
    buf[n] = '\0';
    char *end;
    long pid = strtol(buf, &end, 10);
    if (*end == '\0' && pid == (long)muster__proc_self_pid()) v = 1;
  }
  __atomic_store_n(&self_proc, v, __ATOMIC_RELAXED);
  return v > 0;
}
