/* runtime/proc.c - process identity (pid + start time) and liveness. */
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

#include "proc.h"

/* Read /proc/PID/stat and return field 22, also the state letter (field 3).
 * comm (field 2) may hold spaces and ')', so parse after the LAST ')'. */
static uint64_t read_stat(pid_t pid, char *state) {
  char path[64], buf[1024];
  snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return 0;
  buf[n] = '\0';
  char *p = strrchr(buf, ')');
  if (!p || p[1] != ' ') return 0;
  p += 2; /* field 3 */
  if (state) *state = *p;
  /* skip fields 3..21 (19 fields) to reach field 22 */
  for (int field = 3; field < 22; field++) {
    p = strchr(p, ' ');
    if (!p) return 0;
    p++;
  }
  char *end;
  errno = 0;
  unsigned long long v = strtoull(p, &end, 10);
  if (errno || end == p) return 0;
  return (uint64_t)v;
}

uint64_t muster__proc_start_time(pid_t pid) {
  if (pid <= 0) return 0;
  return read_stat(pid, NULL);
}

int muster__proc_alive(pid_t pid, uint64_t start_time) {
  if (pid <= 0) return 0;
  if (kill(pid, 0) < 0 && errno == ESRCH) return 0;
  char state = '?';
  uint64_t st = read_stat(pid, &state);
  if (st == 0) return 0;          /* vanished between the two checks */
  if (state == 'Z' || state == 'X') return 0; /* exited, not yet reaped */
  if (start_time != 0 && st != start_time) return 0; /* pid reused */
  return 1;
}

int muster__proc_stopped(pid_t pid, uint64_t start_time) {
  if (pid <= 0) return 0;
  char state = '?';
  uint64_t st = read_stat(pid, &state);
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
