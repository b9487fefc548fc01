/*
 * runtime/base/proc.h - process identity and liveness.
 *
 * A process is identified by (pid, start time), the start time being field
 * 22 of /proc/PID/stat (clock ticks after boot).  A pid that the kernel
 * reused for another process has another start time, so it is not taken for
 * the original one.
 */
#ifndef MUSTER_RUNTIME_PROC_H
#define MUSTER_RUNTIME_PROC_H

#include <stdint.h>
#include <sys/types.h>

#include "base/error.h"

/* Start time of pid (field 22 of /proc/PID/stat); 0 when the process does
 * not exist, its stat cannot be read/parsed, or /proc is not ours
 * (muster__proc_is_ours); parsed by muster_proc_start_time of the public
 * muster/proc.h, which providers use. */
MUSTER_HIDDEN uint64_t muster__proc_start_time(pid_t pid);

/* Liveness of (pid, start_time): 1 alive, 0 dead (no such pid, a zombie, or
 * the pid now belongs to a process with another start time).  start_time 0
 * means "unknown": then only the pid's existence is checked.  When /proc is
 * not ours, only kill(pid, 0) is asked (a zombie or a reused pid then
 * counts as alive): never /proc/PID of some other process. */
MUSTER_HIDDEN int muster__proc_alive(pid_t pid, uint64_t start_time);

/* 1 if /proc shows this process's pid namespace (/proc/self is our pid),
 * cached (refreshed in a fork child).  0 when /proc is missing or was
 * mounted for another pid namespace (`unshare -pf` without --mount-proc):
 * then /proc/PID is some other process, or none. */
MUSTER_HIDDEN int muster__proc_is_ours(void);
/* 1 if (pid, start_time) is stopped (state T: SIGSTOP/SIGTSTP, or t: a
 * tracer stopped it), 0 otherwise (running, sleeping, gone, unknown, or /proc
 * is not ours). */
MUSTER_HIDDEN int muster__proc_stopped(pid_t pid, uint64_t start_time);

/* 1 if thread tid of this process still exists (tgkill(getpid(), tid, 0)). */
MUSTER_HIDDEN int muster__proc_thread_alive(pid_t tid);

/* This process's pid and start time, and this thread's tid, cached (no
 * system call after the first use; refreshed in a fork child). */
MUSTER_HIDDEN pid_t muster__proc_self_pid(void);
MUSTER_HIDDEN uint64_t muster__proc_self_start(void);
MUSTER_HIDDEN pid_t muster__proc_self_tid(void);

/* Inode of this process's pid namespace (/proc/self/ns/pid), cached; 0 if
 * unknown. */
MUSTER_HIDDEN uint64_t muster__proc_self_pidns(void);

/* 1 unless ns names a pid namespace known to differ from ours (0 means
 * unknown: assume the same, as before the field existed). */
MUSTER_HIDDEN int muster__proc_same_pidns(uint64_t ns);

/* Wall clock (CLOCK_REALTIME) and monotonic clock in ns. */
MUSTER_HIDDEN uint64_t muster__now_real_ns(void);
MUSTER_HIDDEN uint64_t muster__now_mono_ns(void);

#endif
