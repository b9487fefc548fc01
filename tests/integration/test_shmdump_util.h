/*
 * tests/integration/test_shmdump_util.h - helpers for the tests that run the
 * built tools (shmdump, muster): find them next to this test binary, run
 * them with a time limit capturing stdout/stderr, check JSON, and craft
 * segments by hand.
 */
#ifndef MUSTER_TEST_TOOLS_UTIL_H
#define MUSTER_TEST_TOOLS_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct tool_result {
  int exit_code;  /* exit status, or -1 when killed by a signal */
  int signal;     /* the signal that killed it, or 0           */
  int timed_out;
  char *out, *err; /* NUL-terminated captures                 */
  size_t out_len, err_len;
  double seconds;
};

/* <dir of /proc/self/exe>/../bin/<name>, i.e. build-X/bin/NAME for
 * build-X/tests/run-tests; a name with a '/' is under build-X itself
 * ("examples/solve": build-X/examples/solve). */
void tool_path(const char *name, char *buf, size_t cap);

/* Run build tool `name` with argv (NULL-terminated, argv[0] excluded) and
 * extra environment entries env ("K=V", NULL-terminated, may be NULL).
 * Killed after timeout_s.  Returns 0, or -1 if it could not be started. */
int tool_run(struct tool_result *r, double timeout_s, const char *const *env, const char *name,
             const char *const *argv);
void tool_result_free(struct tool_result *r);
/* Run shmdump with argv until its output contains `want` (exit 0, no
 * signal), for at most 15 s; the last result stays in r. */
void shmdump_until(struct tool_result *r, const char *const *argv, const char *want);
/* The same in two steps, to act on the tool while it runs: start it
 * (stdout/stderr on out_fd/err_fd), then read both until it exits and reap
 * it (killed after timeout_s). */
int tool_spawn(const char *name, const char *const *argv, const char *const *env, pid_t *pid,
               int *out_fd, int *err_fd);
int tool_collect(struct tool_result *r, pid_t pid, int out_fd, int err_fd, double timeout_s);

/* Children of `parent` (zombies included) into out[cap], in increasing pid
 * order (fork order); returns the count (may exceed cap). */
int tool_children(pid_t parent, pid_t *out, int cap);
/* State letter of pid from /proc/PID/stat ('R', 'S', 'T' stopped, 'Z'
 * zombie...), or 0 when there is no such process. */
char tool_proc_state(pid_t pid);
/* Wait up to timeout_s until none of pids[n] exists any more (a zombie
 * counts as gone: it cannot run); returns how many still do. */
int tool_wait_gone(const pid_t *pids, int n, double timeout_s);

/* 1 if s is exactly one JSON value (surrounding whitespace allowed). */
int json_valid(const char *s);
/* The number after the first occurrence of "\"key\":" at or after `from`;
 * NAN when absent. */
double json_number(const char *s, const char *key);
/* occurrences of needle in hay */
int count_substr(const char *hay, const char *needle);

/* A pid that existed and is now reaped (a dead process). */
pid_t dead_pid(void);

/* Write a version-1 segment file /dev/shm/muster.<uid>.<pidns>.<job>.<group>
 * of our pid namespace by hand: nranks ranks, creator (pid, start, our pid
 * namespace), slots of `seated` ranks (bit r) with pid/start/pidns of the
 * creator and phase WAITING; returns 0 or -errno.
 * `mutate` (may be NULL) is called on the bytes before they are written;
 * write_len (0: all) writes only the first write_len bytes (truncation). */
int craft_segment(const char *job, const char *group, int nranks, pid_t creator,
                  uint64_t creator_start, uint64_t seated,
                  void (*mutate)(unsigned char *bytes, size_t len, void *arg), void *arg,
                  size_t write_len);
/* /dev/shm/<segment name> of our uid and pid namespace, or of pidns. */
void segment_path(char *buf, size_t cap, const char *job, const char *group);
void segment_path_in(char *buf, size_t cap, uint64_t pidns, const char *job, const char *group);

#endif
