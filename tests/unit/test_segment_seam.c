/*
 * tests/unit/test_segment_seam.c - the public segment seam
 * (include/muster/segment.h) through the public API alone: names made and
 * taken apart and matched, a folder's segments listed, a live group's file
 * read back through muster_segment_view, recorded pids judged; and the
 * runner's leak check catching a segment of the real naming.
 */
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "muster.h"
#include "muster/segment.h"
#include "task.h"

static uint64_t self_ns(void) {
  uint64_t ns = 0;
  ASSERT_OK(muster_segment_self_pidns(&ns));
  return ns;
}

TEST_IMPL(segment_seam_names) {
  char name[MUSTER_SEGMENT_NAME_MAX + 1], want[128];
  uint64_t ns = self_ns();
  struct stat pid_ns;
  ASSERT(stat("/proc/self/ns/pid", &pid_ns) == 0 && ns == (uint64_t)pid_ns.st_ino);
  /* pidns 0: this process's; the name parses back to what made it */
  ASSERT_OK(muster_segment_name_format(name, sizeof name, 1234, 0, "j1", "potrs.17"));
  snprintf(want, sizeof want, "muster.1234.%llu.j1.potrs.17", (unsigned long long)ns);
  ASSERT(!strcmp(name, want));
  muster_segment_name_t n;
  ASSERT_OK(muster_segment_name_parse(name, &n));
  ASSERT(n.uid == 1234 && n.pidns == ns && !strcmp(n.job, "j1") && !strcmp(n.group, "potrs.17"));
  ASSERT(!strcmp(n.file, name));
  /* refused: a job with '.', an empty group or one with '/', no room */
  ASSERT_EQ(muster_segment_name_format(name, sizeof name, 0, 7, "a.b", "g"), MUSTER_EINVAL);
  ASSERT_EQ(muster_segment_name_format(name, sizeof name, 0, 7, "j", ""), MUSTER_EINVAL);
  ASSERT_EQ(muster_segment_name_format(name, sizeof name, 0, 7, "j", "a/b"), MUSTER_EINVAL);
  ASSERT_EQ(muster_segment_name_format(name, 12, 0, 7, "j", "g"), MUSTER_EINVAL);
  ASSERT_STR_CONTAINS(muster_last_error(), "too long");
  ASSERT_EQ(muster_segment_check_job("t1_2"), MUSTER_OK);
  ASSERT_EQ(muster_segment_check_job("t1.2"), MUSTER_EINVAL);

  /* matching: uid, pid namespace, job, each alone */
  char mine[MUSTER_SEGMENT_NAME_MAX + 1], other_ns[sizeof mine], other_uid[sizeof mine];
  ASSERT_OK(muster_segment_name_format(mine, sizeof mine, (uint32_t)getuid(), 0, "jm", "g.1"));
  ASSERT_OK(muster_segment_name_format(other_ns, sizeof other_ns, (uint32_t)getuid(), ns + 1,
                                       "jm", "g"));
  ASSERT_OK(muster_segment_name_format(other_uid, sizeof other_uid, (uint32_t)getuid() + 1, 0,
                                       "jm", "g"));
  const unsigned both = MUSTER_SEGMENT_MINE | MUSTER_SEGMENT_HERE;
  ASSERT_EQ(muster_segment_name_match(mine, both, "jm"), 1);
  ASSERT_EQ(muster_segment_name_match(mine, both, "jm2"), 0);
  ASSERT_EQ(muster_segment_name_match(mine, both, "j"), 0); /* a prefix is not the job */
  ASSERT_EQ(muster_segment_name_match(other_ns, both, "jm"), 0);
  ASSERT_EQ(muster_segment_name_match(other_ns, MUSTER_SEGMENT_MINE, "jm"), 1);
  ASSERT_EQ(muster_segment_name_match(other_uid, MUSTER_SEGMENT_HERE, NULL), 1);
  ASSERT_EQ(muster_segment_name_match(other_uid, MUSTER_SEGMENT_MINE, NULL), 0);
  /* the old naming (no <pidns>) and strangers never match */
  ASSERT_EQ(muster_segment_name_match("muster.0.jm.g", 0, NULL), 0);
  ASSERT_EQ(muster_segment_name_match("sem.muster.0.1.jm.g", 0, NULL), 0);
  ASSERT_EQ(muster_segment_name_match(NULL, 0, NULL), 0);
  return 0;
}

static void touch(const char *dir, const char *name) {
  char path[PATH_MAX];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
  ASSERT(fd >= 0);
  close(fd);
}

static int listed(const muster_segment_name_t *v, int n, const char *group) {
  for (int i = 0; i < n; i++)
    if (!strcmp(v[i].group, group)) return 1;
  return 0;
}

TEST_IMPL(segment_seam_list) {
  char dir[PATH_MAX], name[MUSTER_SEGMENT_NAME_MAX + 1];
  uint32_t uid = (uint32_t)getuid();
  uint64_t ns = self_ns();
  test_tmp_dir(dir, sizeof dir);
  const struct { uint32_t uid; uint64_t ns; const char *job, *group; } files[] = {
      {uid, ns, "ja", "here"}, {uid, ns + 1, "ja", "there"}, {uid + 1, ns, "ja", "theirs"},
      {uid, ns, "jb", "other.job"}, {uid, ns, "ja", "g h"}};
  for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
    ASSERT_OK(muster_segment_name_format(name, sizeof name, files[i].uid, files[i].ns,
                                         files[i].job, files[i].group));
    touch(dir, name);
  }
  touch(dir, "muster.0.ja.old"); /* builds up to 5b153d5: not ours to list */
  touch(dir, "unrelated");
  muster_segment_name_t v[8];
  int n = muster_segment_list(dir, MUSTER_SEGMENT_MINE, "ja", v, 8);
  ASSERT_EQ(n, 3); /* any pid namespace, any group */
  ASSERT(listed(v, n, "here") && listed(v, n, "there") && listed(v, n, "g h"));
  n = muster_segment_list(dir, MUSTER_SEGMENT_MINE | MUSTER_SEGMENT_HERE, "ja", v, 8);
  ASSERT(n == 2 && listed(v, n, "here") && listed(v, n, "g h"));
  ASSERT_EQ(muster_segment_list(dir, MUSTER_SEGMENT_MINE, NULL, v, 8), 4);
  ASSERT_EQ(muster_segment_list(dir, 0, NULL, NULL, 0), 5); /* a count, nothing written */
  ASSERT_EQ(muster_segment_list(dir, 0, NULL, v, 1), 5);    /* more than fit: all counted */
  test_remove_tree(dir);
  ASSERT_EQ(muster_segment_list(dir, 0, NULL, v, 8), MUSTER_ESYS);
  ASSERT_STR_CONTAINS(muster_last_error(), dir);
  return 0;
}

/* The bytes of a group's file, as a tool reads them (pread, never mapped). */
static size_t read_segment(const char *job, const char *group, void *buf, size_t cap) {
  char name[MUSTER_SEGMENT_NAME_MAX + 1], path[PATH_MAX];
  ASSERT_OK(muster_segment_name_format(name, sizeof name, (uint32_t)getuid(), 0, job, group));
  snprintf(path, sizeof path, "%s/%s", MUSTER_SEGMENT_DIR, name);
  int fd = open(path, O_RDONLY);
  ASSERT(fd >= 0);
  ssize_t n = pread(fd, buf, cap, 0);
  close(fd);
  ASSERT(n > 0);
  return (size_t)n;
}

TEST_IMPL(segment_seam_view) {
  muster_group_opts_t o = {NULL, 20, 3};
  muster_group_t *g = NULL;
  ASSERT_OK(muster_group_join("seam.view", 1, 2, &o, &g)); /* rank 1 of 2: named until 0 comes */
  size_t cap = muster_segment_size(MUSTER_MAX_RANKS);
  ASSERT(cap > 0 && muster_segment_size(0) == 0 && muster_segment_size(MUSTER_MAX_RANKS + 1) == 0);
  unsigned char *buf = calloc(1, cap);
  static muster_segment_view_t v;
  muster_segment_verdict_t vd;
  size_t len = read_segment(test_job(), "seam.view", buf, cap);
  ASSERT_EQ(len, muster_segment_size(2));
  ASSERT_OK(muster_segment_view(buf, len, &v, &vd));
  ASSERT(!vd.truncated && vd.why[0] == '\0');
  ASSERT(v.nranks == 2 && v.uid == (uint32_t)getuid() && v.creator_pid == getpid());
  ASSERT(!strcmp(v.job, test_job()) && !strcmp(v.group, "seam.view"));
  ASSERT(v.creator_pidns == self_ns() && v.total_size == len && !v.formed && !v.aborted);
  ASSERT(v.seated == 1 && v.seen_mask == 0x2);
  ASSERT(v.ranks[1].phase == MUSTER_SEGMENT_PHASE_JOINED && v.ranks[1].pid == getpid());
  ASSERT(v.ranks[1].device == 3 && v.ranks[0].phase == MUSTER_SEGMENT_PHASE_FREE);
  ASSERT_EQ(muster_segment_pid_alive(v.creator_pid, v.creator_start, v.creator_pidns),
            MUSTER_SEGMENT_ALIVE);
  ASSERT_EQ(muster_segment_pid_alive(v.creator_pid, v.creator_start + 1, 0), MUSTER_SEGMENT_DEAD);
  ASSERT_EQ(muster_segment_pid_alive(v.creator_pid, v.creator_start, self_ns() + 1),
            MUSTER_SEGMENT_UNKNOWN);
  /* refused: short of its header's size (truncated), of a header
   * (truncated), bad magic (corrupt, not truncated); out stays untouched */
  v.nranks = -5;
  ASSERT_EQ(muster_segment_view(buf, len - 1, &v, &vd), MUSTER_ECORRUPT);
  ASSERT(vd.truncated && v.nranks == -5);
  ASSERT_EQ(muster_segment_view(buf, 100, &v, &vd), MUSTER_ECORRUPT);
  ASSERT(vd.truncated);
  buf[0] ^= 0xff;
  ASSERT_EQ(muster_segment_view(buf, len, &v, &vd), MUSTER_ECORRUPT);
  ASSERT(!vd.truncated);
  ASSERT_STR_CONTAINS(vd.why, "magic");
  ASSERT_EQ(muster_segment_view(NULL, 0, &v, NULL), MUSTER_ECORRUPT);
  free(buf);
  ASSERT_OK(muster_group_leave(g)); /* the last one out of an unformed group removes it */
  muster_group_cache_flush();
  ASSERT_EQ(test_count_job_segments(test_job()), 0);
  return 0;
}

/* Run by the one below in a runner of its own: leave a segment file of the
 * real naming behind, of another pid namespace (a rank in a container). */
TEST_IMPL(runner_child_leaks_segment) {
  if (!getenv("MUSTER_RUNNER_LEAK_SHM")) return 0; /* in the plain suite: nothing */
  char name[MUSTER_SEGMENT_NAME_MAX + 1];
  ASSERT_OK(muster_segment_name_format(name, sizeof name, (uint32_t)getuid(), self_ns() + 1,
                                       test_job(), "planted.0"));
  touch(MUSTER_SEGMENT_DIR, name);
  return 0;
}

TEST_IMPL(runner_segment_leak_fails_test) {
  char text[8192];
  int st = test_run_runner("runner_child_leaks_segment", "MUSTER_RUNNER_LEAK_SHM", text,
                           sizeof text);
  ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 1);
  ASSERT_STR_CONTAINS(text, "leaked /dev/shm segment (exit 0)");
  ASSERT_STR_CONTAINS(text, ".planted.0\n");
  /* the runner named it and removed it */
  char leaked[PATH_MAX];
  test_line_after(text, "leaked segment: ", leaked, sizeof leaked);
  ASSERT_EQ(muster_segment_name_match(strrchr(leaked, '/') + 1, MUSTER_SEGMENT_MINE, NULL), 1);
  ASSERT(access(leaked, F_OK) != 0);
  return 0;
}
