/*
 * tests/integration/test_shmdump_live.c - build/bin/shmdump on groups made
 * by the runtime: a group stuck at its first barrier because one rank never
 * joins (MISSING shown, the others alive, --clean keeps it), the same group
 * after its ranks are SIGKILLed (stale by name: dead, --clean removes it),
 * and a formed group whose name is gone (found through /proc/PID/fd, one
 * rank late to the barrier).
 */
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "muster.h"
#include "shm/segment.h"
#include "task.h"
#include "test_shmdump_util.h"

#define RUN_TIMEOUT 30.0

/* A forked rank: join `group` as rank of nranks, publish "rank<r>:<group>",
 * then wait at the first exchange (so it is visible as waiting).  If
 * gate_fd >= 0 it first reads one byte from it after the exchange and then
 * runs one barrier more.  Exit 0 when every call succeeded. */
static pid_t fork_rank(const char *group, int rank, int nranks, int late_fd) {
  fflush(NULL);
  pid_t p = fork();
  if (p != 0) return p;
  muster_group_opts_t o = {.job = NULL, .timeout_s = 25, .device = rank};
  muster_group_t *g = NULL;
  char payload[64];
  int rc = muster_group_join(group, rank, nranks, &o, &g);
  snprintf(payload, sizeof payload, "rank%d:%s", rank, group);
  if (rc == 0) rc = muster_group_exchange(g, payload, strlen(payload));
  if (rc == 0 && late_fd >= 0) {
    char b;
    if (read(late_fd, &b, 1) != 1) rc = -1;
  }
  if (rc == 0) rc = muster_group_barrier(g);
  if (rc != 0) fprintf(stderr, "rank %d: %s\n", rank, muster_last_error());
  if (g) muster_group_leave(g);
  muster_group_cache_flush();
  _exit(rc == 0 ? 0 : 1);
}

static int seg_exists(const char *group) {
  char path[512];
  segment_path(path, sizeof path, test_job(), group);
  return access(path, F_OK) == 0;
}

/* Run shmdump --job <ours> (plus extra) until its output contains `want`
 * (the ranks need a moment to arrive); the last result stays in r. */
static void dump_until(struct tool_result *r, const char *extra, const char *want) {
  const char *argv[] = {"--job", test_job(), extra, NULL};
  shmdump_until(r, argv, want);
}

static void row(char *buf, size_t cap, int rank, pid_t pid, const char *alive) {
  snprintf(buf, cap, "   %-4d %-8d %-6s %-6d", rank, (int)pid, alive, rank);
}

TEST_IMPL(shmdump_live_stuck_and_stale) {
  char line[256];
  struct tool_result r;
  /* "stuck": ranks 0 and 1 of 3 wait at their first exchange, rank 2 never comes */
  pid_t a0 = fork_rank("stuck", 0, 3, -1), a1 = fork_rank("stuck", 1, 3, -1);
  /* "stale": the same, then SIGKILLed before the group formed */
  pid_t b0 = fork_rank("stale", 0, 2, -1);
  ASSERT(a0 > 0 && a1 > 0 && b0 > 0);

  dump_until(&r, NULL, "[stuck]");
  char name[MUSTER_SEG_NAME_MAX + 1];
  ASSERT_OK(muster__segment_name(name, sizeof name, test_job(), "stuck"));
  snprintf(line, sizeof line, "== %s  [stuck] rank ", name);
  ASSERT_STR_CONTAINS(r.out, line);
  ASSERT_STR_CONTAINS(r.out, "MISSING: rank 2 (never joined)");
  row(line, sizeof line, 0, a0, "alive");
  ASSERT_STR_CONTAINS(r.out, line);
  row(line, sizeof line, 1, a1, "alive");
  ASSERT_STR_CONTAINS(r.out, line);
  ASSERT_STR_CONTAINS(r.out, "ranks 3 expected, 2 joined");
  ASSERT_STR_CONTAINS(r.out, "72 61 6e 6b 31 3a"); /* "rank1:" published */
  tool_result_free(&r);

  kill(b0, SIGKILL);
  ASSERT_EQ(waitpid(b0, NULL, 0), b0);
  dump_until(&r, NULL, "[stale]");
  snprintf(line, sizeof line, "creator pid %d (DEAD)", (int)b0);
  ASSERT_STR_CONTAINS(r.out, line);
  row(line, sizeof line, 0, b0, "DEAD");
  ASSERT_STR_CONTAINS(r.out, line);
  tool_result_free(&r);

  /* JSON of both */
  dump_until(&r, "--json", "\"state\":\"stale\"");
  ASSERT(json_valid(r.out));
  ASSERT_EQ(json_number(r.out, "count"), 2);
  ASSERT_STR_CONTAINS(r.out, "\"missing\":[{\"rank\":2,\"why\":\"never joined\"}]");
  tool_result_free(&r);

  /* --clean removes the stale one and keeps the stuck (live) one */
  dump_until(&r, "--clean", "clean: removed 1 segment\n");
  ASSERT(!seg_exists("stale"));
  ASSERT(seg_exists("stuck"));
  tool_result_free(&r);

  /* kill the stuck group's ranks: now it is stale and goes too */
  kill(a0, SIGKILL);
  kill(a1, SIGKILL);
  ASSERT_EQ(waitpid(a0, NULL, 0), a0);
  ASSERT_EQ(waitpid(a1, NULL, 0), a1);
  dump_until(&r, "--clean", "clean: removed 1 segment\n");
  ASSERT(!seg_exists("stuck"));
  tool_result_free(&r);
  dump_until(&r, NULL, "shmdump: 0 muster segments");
  tool_result_free(&r);
  return 0;
}

TEST_IMPL(shmdump_live_formed_group_via_proc) {
  int late[2];
  ASSERT_EQ(pipe(late), 0);
  pid_t p0 = fork_rank("formed", 0, 2, -1);
  pid_t p1 = fork_rank("formed", 1, 2, late[0]);
  close(late[0]);
  struct tool_result r;
  char line[256];
  /* rank 0 waits at the barrier after the exchange; rank 1 is held back */
  dump_until(&r, NULL, "has not reached the barrier of generation");
  ASSERT_STR_CONTAINS(r.out, "(deleted) (name removed: found through /proc)");
  snprintf(line, sizeof line, "held by pids %d,%d", (int)(p0 < p1 ? p0 : p1),
           (int)(p0 < p1 ? p1 : p0));
  ASSERT_STR_CONTAINS(r.out, line);
  snprintf(line, sizeof line, "MISSING: rank 1 (pid %d has not reached the barrier of generation 1; "
           "it is past its last barrier (reading or computing))", (int)p1);
  ASSERT_STR_CONTAINS(r.out, line);
  ASSERT_STR_CONTAINS(r.out, "formed yes");
  row(line, sizeof line, 0, p0, "alive");
  ASSERT_STR_CONTAINS(r.out, line);
  ASSERT_STR_CONTAINS(r.out, "72 61 6e 6b 30 3a"); /* "rank0:" */
  ASSERT(!seg_exists("formed"));
  tool_result_free(&r);
  const char *argv[] = {"--json", "--job", test_job(), NULL};
  ASSERT_EQ(tool_run(&r, RUN_TIMEOUT, NULL, "shmdump", argv), 0);
  ASSERT(json_valid(r.out));
  ASSERT_STR_CONTAINS(r.out, "\"by_name\":false");
  ASSERT_STR_CONTAINS(r.out, "\"formed\":true");
  tool_result_free(&r);
  /* --clean never touches it */
  const char *clean[] = {"--clean", "--job", test_job(), NULL};
  ASSERT_EQ(tool_run(&r, RUN_TIMEOUT, NULL, "shmdump", clean), 0);
  ASSERT_STR_CONTAINS(r.out, "clean: removed 0 segments");
  tool_result_free(&r);

  /* release rank 1: both pass the barrier, leave and exit cleanly */
  ASSERT_EQ(write(late[1], "g", 1), 1);
  close(late[1]);
  int st0, st1;
  ASSERT_EQ(waitpid(p0, &st0, 0), p0);
  ASSERT_EQ(waitpid(p1, &st1, 0), p1);
  ASSERT(WIFEXITED(st0) && WEXITSTATUS(st0) == 0);
  ASSERT(WIFEXITED(st1) && WEXITSTATUS(st1) == 0);
  dump_until(&r, NULL, "shmdump: 0 muster segments");
  tool_result_free(&r);
  return 0;
}

/* A group running flat out changes under every read: shmdump must still
 * judge it a healthy group each time (its private snapshot validated),
 * never corrupt or truncated, and name nobody MISSING. */
TEST_IMPL(shmdump_live_busy_group) {
  const char *argv[] = {"rendezvous", "--ranks", "3", "--mode", "processes", "--rounds",
                        "10000000", "--cycles", "0", NULL};
  pid_t pid;
  int out_fd, err_fd, seen = 0;
  ASSERT_EQ(tool_spawn("muster", argv, NULL, &pid, &out_fd, &err_fd), 0);
  double t0 = test_now();
  struct tool_result r;
  for (int i = 0; i < 40 && test_now() - t0 < 20; i++) {
    const char *dump[] = {"--job", test_job(), NULL};
    ASSERT_EQ(tool_run(&r, RUN_TIMEOUT, NULL, "shmdump", dump), 0);
    ASSERT_EQ(r.signal, 0);
    ASSERT_EQ(r.exit_code, 0);
    if (strstr(r.out, "group rendezvous.")) {
      seen++;
      if (!strstr(r.out, "  [live]") && !strstr(r.out, "  [forming]"))
        fprintf(stderr, "unexpected:\n%s\n", r.out);
      ASSERT(strstr(r.out, "  [live]") || strstr(r.out, "  [forming]"));
      /* a group caught while its ranks are still arriving ([forming]) may
       * name ranks that have not joined yet; once formed, nobody is
       * MISSING however busy the group is */
      const char *m = strstr(r.out, "MISSING");
      if (m && strstr(r.out, "  [forming]")) ASSERT(strncmp(m, "MISSING: rank ", 14) == 0 && strstr(m, "(never joined)"));
      else ASSERT(m == NULL);
    }
    ASSERT(!strstr(r.out, "[corrupt]") && !strstr(r.out, "[truncated]"));
    tool_result_free(&r);
  }
  ASSERT_GT(seen, 10);
  kill(pid, SIGKILL); /* its ranks die with it (PR_SET_PDEATHSIG) */
  ASSERT_EQ(tool_collect(&r, pid, out_fd, err_fd, RUN_TIMEOUT), 0);
  tool_result_free(&r);
  /* the ranks are gone and, the group having formed, so is its name */
  dump_until(&r, NULL, "shmdump: 0 muster segments");
  tool_result_free(&r);
  return 0;
}
