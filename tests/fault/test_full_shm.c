/*
 * tests/fault/test_full_shm.c - a full /dev/shm, for real: a 8 KiB tmpfs in
 * a private mount namespace (a forked child of the test; the machine's
 * /dev/shm is untouched), too small for a group of 4 ranks (11904 bytes).
 * Every rank that tries to meet must get the creator's error,
 * MUSTER_ENOSPC naming the folder, never "corrupt segment: no magic" (the
 * attachers that opened the creator's file before it gave up used to report
 * that, in 16 of 20 runs of `muster rendezvous --ranks 4`).  Repeated, since
 * it is a race; nothing may remain in the folder.
 */
#include <dirent.h>
#include <limits.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "muster.h"
#include "providers/tp_util.h"
#include "shm/segment.h"
#include "task.h"
#include "../integration/test_shmdump_util.h"

enum { RANKS = 4, ROUNDS = 40, CLI_RUNS = 20 };

/* In this (forked) process only: a private mount namespace with a tiny
 * tmpfs mounted on dir.  Exits the process with a message if it cannot
 * (CI runs as root, where this works). */
static void tiny_tmpfs(const char *dir) {
  /* type and source are ignored for a propagation change; valgrind wants them set */
  if (unshare(CLONE_NEWNS) < 0 || mount("none", "/", "none", MS_REC | MS_PRIVATE, NULL) < 0 ||
      mount("tmpfs", dir, "tmpfs", 0, "size=8k") < 0) {
    fprintf(stderr, "cannot mount a tmpfs on %s in a new mount namespace: %s\n", dir,
            strerror(errno));
    _exit(5);
  }
}

static int files_in(const char *dir) {
  DIR *d = opendir(dir);
  ASSERT(d);
  int n = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) n += e->d_name[0] != '.';
  closedir(d);
  return n;
}

/* Run fn in a forked child and require it to exit 0. */
static void in_child(void (*fn)(void)) {
  fflush(stderr);
  pid_t p = fork();
  ASSERT(p >= 0);
  if (p == 0) {
    fn();
    _exit(0);
  }
  int st = 0;
  ASSERT_EQ(waitpid(p, &st, 0), p);
  ASSERT(WIFEXITED(st));
  ASSERT_EQ(WEXITSTATUS(st), 0);
}

struct outcome {
  int rc;
  char msg[512];
};

static void rank_main(const char *group, int rank, struct outcome *o) {
  muster_group_t *g = NULL;
  muster_group_opts_t opts = {.job = NULL, .timeout_s = 5, .device = -1};
  o->rc = muster_group_join(group, rank, RANKS, &opts, &g);
  if (o->rc == 0) o->rc = muster_group_barrier(g);
  snprintf(o->msg, sizeof o->msg, "%s", o->rc ? muster_last_error() : "");
  if (g) muster_group_leave(g);
}

static void ranks_on_full_dir(void) {
  char dir[PATH_MAX];
  test_tmp_dir(dir, sizeof dir);
  tiny_tmpfs(dir);
  muster__segment_test_set_dir(dir);
  struct outcome *out = mmap(NULL, sizeof *out * RANKS, PROT_READ | PROT_WRITE,
                             MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  ASSERT(out != MAP_FAILED);
  for (int round = 0; round < ROUNDS; round++) {
    char group[32];
    snprintf(group, sizeof group, "full%d", round);
    memset(out, 0, sizeof *out * RANKS);
    pid_t pids[RANKS];
    for (int r = 0; r < RANKS; r++) {
      pids[r] = fork();
      ASSERT(pids[r] >= 0);
      if (pids[r] == 0) {
        rank_main(group, r, &out[r]);
        _exit(0);
      }
    }
    for (int r = 0; r < RANKS; r++) {
      int st;
      ASSERT_EQ(waitpid(pids[r], &st, 0), pids[r]);
      ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    }
    for (int r = 0; r < RANKS; r++) {
      if (out[r].rc != MUSTER_ENOSPC)
        fprintf(stderr, "round %d rank %d: rc %d: %s\n", round, r, out[r].rc, out[r].msg);
      ASSERT_EQ(out[r].rc, MUSTER_ENOSPC);
      ASSERT_STR_CONTAINS(out[r].msg, "no space for group");
      ASSERT_STR_CONTAINS(out[r].msg, dir);
    }
    ASSERT_EQ(files_in(dir), 0);
  }
  umount(dir);
  rmdir(dir);
}

TEST_IMPL(fault_full_shm_processes) {
  in_child(ranks_on_full_dir);
  return 0;
}

/* The reported command itself, with the tiny tmpfs over /dev/shm.  The
 * CLI's launcher opens the group before it starts any rank (runtime/group/launch.c),
 * so the full folder is one clear error from the launcher and no rank runs. */
static void cli_on_full_shm(void) {
  tiny_tmpfs("/dev/shm");
  const char *argv[] = {"rendezvous", "--ranks", "4", "--mode", "processes", "--rounds", "10",
                        NULL};
  for (int run = 0; run < CLI_RUNS; run++) {
    struct tool_result r;
    ASSERT_EQ(tool_run(&r, 30, NULL, "muster", argv), 0);
    if (r.exit_code != 1 || count_substr(r.err, "no space for group") != 1 ||
        !strstr(r.err, "as their launcher") || strstr(r.err, "corrupt"))
      fprintf(stderr, "run %d: exit %d:\n%s\n", run, r.exit_code, r.err);
    ASSERT_EQ(r.exit_code, 1);
    ASSERT_EQ(count_substr(r.err, "no space for group"), 1);
    ASSERT(strstr(r.err, "as their launcher") != NULL);
    ASSERT(strstr(r.err, "corrupt") == NULL);
    ASSERT_EQ(files_in("/dev/shm"), 0);
    tool_result_free(&r);
  }
}

TEST_IMPL(cli_rendezvous_full_shm) {
  in_child(cli_on_full_shm);
  return 0;
}

/* `muster solve` in processes mode on the full /dev/shm: the summary is
 * the cause, "no space in /dev/shm" naming the group and the folder, in
 * text and JSON, with every rank's fate "not started" (it was "peer died:
 * the ranks could not be started", the cause only on an earlier line, and
 * no "fates"). */
static void cli_solve_on_full_shm(void) {
  tiny_tmpfs("/dev/shm");
  const char *argv[] = {"solve", "getrs", "--n", "64", "--ranks", "4", "--mode", "processes",
                        "--provider", "lapack", "--json", NULL};
  struct tool_result r;
  ASSERT_EQ(tool_run(&r, 30, NULL, "muster", argv), 0);
  if (r.exit_code != 1 || !strstr(r.out, "\"error\":\"no space in /dev/shm\""))
    fprintf(stderr, "exit %d\nstdout: %s\nstderr: %s\n", r.exit_code, r.out, r.err);
  ASSERT_EQ(r.exit_code, 1);
  ASSERT(json_valid(r.out));
  ASSERT_STR_CONTAINS(r.out, "\"error\":\"no space in /dev/shm\",\"message\":\"cannot open group cli");
  ASSERT_STR_CONTAINS(r.out, "as their launcher: no space for group");
  for (int k = 0; k < RANKS; k++) {
    char want[128];
    snprintf(want, sizeof want, "{\"rank\":%d,\"pid\":0,", k);
    ASSERT_STR_CONTAINS(r.out, want);
  }
  ASSERT_EQ(count_substr(r.out, "not started: the launch failed before its fork"), RANKS);
  ASSERT_STR_CONTAINS(r.err, "muster solve: getrs f64 n=64 ranks=4 mode=processes: no space in "
                      "/dev/shm: cannot open group cli");
  ASSERT(strstr(r.out, "peer died") == NULL && strstr(r.err, "peer died") == NULL);
  ASSERT_EQ(files_in("/dev/shm"), 0);
  tool_result_free(&r);
}

TEST_IMPL(cli_solve_full_shm) {
  setenv("MUSTER_PROVIDER_PATH", tp_lapack_dir(), 1);
  in_child(cli_solve_on_full_shm);
  return 0;
}
