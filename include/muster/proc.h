/*
 * muster/proc.h - process identity for providers: pid + start time.
 *
 * A process is identified by (pid, start time), the start time being field
 * 22 of /proc/PID/stat (clock ticks after boot, the same in every pid
 * namespace).  A pid that the kernel reused for another process has another
 * start time, so it is not taken for the original one.
 *
 * static inline, so a provider uses it without linking the runtime (a
 * provider may be loaded where libmuster was dlopen()ed RTLD_LOCAL, and it
 * must not depend on libmuster's internal symbols).  The runtime's own
 * identity and liveness checks (runtime/base/proc.c) use the same parser: it is
 * the only one in the tree.
 */
#ifndef MUSTER_PROC_H
#define MUSTER_PROC_H

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

/* Field 22 (start time) of the stat file at path, and field 3 (the state
 * letter: R, S, D, T, Z, X, ...) in *state when state is not NULL.  0 when
 * the file cannot be read or parsed (*state is then left alone, or holds
 * the letter of a line too short to carry field 22).  comm (field 2) may
 * hold spaces and ')', so the fields are counted after the LAST ')'. */
static inline uint64_t muster_proc_stat_start(const char *path, char *state) {
  char buf[1024];
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
  for (int field = 3; field < 22; field++) { /* skip fields 3..21 */
    p = strchr(p, ' ');
    if (!p) return 0;
    p++;
  }
  char *end;
  int saved = errno;
  errno = 0;
  unsigned long long v = strtoull(p, &end, 10);
  int bad = errno != 0 || end == p;
  errno = saved;
  return bad ? 0 : (uint64_t)v;
}

/* Start time of process pid (/proc/PID/stat), its state letter in *state
 * when state is not NULL; 0 when pid <= 0 or no such process can be read. */
static inline uint64_t muster_proc_start_time(pid_t pid, char *state) {
  char path[64];
  if (pid <= 0) return 0;
  snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
  return muster_proc_stat_start(path, state);
}

/* This process's start time, through /proc/self (right even where /proc
 * belongs to another pid namespace than getpid()'s); 0 if unreadable. */
static inline uint64_t muster_proc_self_start_time(void) {
  return muster_proc_stat_start("/proc/self/stat", NULL);
}

#endif /* MUSTER_PROC_H */
