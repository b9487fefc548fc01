/*
 * tests/integration/test_shmdump.c - build/bin/shmdump on segments crafted
 * by hand: every state it reports (stale, stuck, reused pid, truncated,
 * corrupt, other version, foreign), what --clean removes and keeps,
 * --json parsing, a fuzz run over a few hundred random/mutated files, and
 * odd file names.
 * Live groups made by the runtime itself: test_shmdump_live.c.
 */
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/proc.h"
#include "shm/segment.h"
#include "task.h"
#include "test_shmdump_util.h"

#define RUN_TIMEOUT 30.0

static int seg_exists(const char *group) {
  char path[512];
  segment_path(path, sizeof path, test_job(), group);
  return access(path, F_OK) == 0;
}

static void seg_remove(const char *group) {
  char path[512];
  segment_path(path, sizeof path, test_job(), group);
  unlink(path);
}

/* "== muster.<uid>.<pidns>.<job>.<group>  [state]" is in the text output
 * (our pid namespace, or pidns) */
static void expect_state_in(const char *out, uint64_t pidns, const char *group,
                            const char *state) {
  char name[MUSTER_SEG_NAME_MAX + 1], line[512];
  ASSERT_OK(muster_segment_name_format(name, sizeof name, (uint32_t)getuid(), pidns, test_job(), group));
  snprintf(line, sizeof line, "== %s  [%s]", name, state);
  ASSERT_STR_CONTAINS(out, line);
}

static void expect_state(const char *out, const char *group, const char *state) {
  expect_state_in(out, muster__proc_self_pidns(), group, state);
}

static void run_shmdump(struct tool_result *r, const char *a1, const char *a2, const char *a3) {
  const char *argv[] = {a1, a2, a3, NULL};
  ASSERT_EQ(tool_run(r, RUN_TIMEOUT, NULL, "shmdump", argv), 0);
  if (r->signal || r->exit_code != 0)
    fprintf(stderr, "shmdump %s %s %s: exit %d signal %d\nstdout:\n%s\nstderr:\n%s\n",
            a1 ? a1 : "", a2 ? a2 : "", a3 ? a3 : "", r->exit_code, r->signal, r->out, r->err);
  ASSERT_EQ(r->signal, 0);
  ASSERT_EQ(r->timed_out, 0);
}

TEST_IMPL(shmdump_usage_and_empty) {
  struct tool_result r;
  const char *help[] = {"--help", NULL};
  ASSERT_EQ(tool_run(&r, RUN_TIMEOUT, NULL, "shmdump", help), 0);
  ASSERT_EQ(r.exit_code, 0);
  ASSERT_STR_CONTAINS(r.out, "usage: shmdump");
  tool_result_free(&r);

  const char *bad[][3] = {{"--bogus", NULL, NULL}, {"--job", NULL, NULL}, {"--dir", "", NULL},
                          {"extra", NULL, NULL}};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    ASSERT_EQ(tool_run(&r, RUN_TIMEOUT, NULL, "shmdump", bad[i]), 0);
    ASSERT_EQ(r.exit_code, 2);
    ASSERT_STR_CONTAINS(r.err, "shmdump: ");
    ASSERT_EQ(r.out_len, 0);
    tool_result_free(&r);
  }

  const char *nodir[] = {"--dir", "/nonexistent/muster-test", NULL};
  ASSERT_EQ(tool_run(&r, RUN_TIMEOUT, NULL, "shmdump", nodir), 0);
  ASSERT_EQ(r.exit_code, 1);
  ASSERT_STR_CONTAINS(r.err, "cannot read /nonexistent/muster-test");
  tool_result_free(&r);

  /* this test's job has no segment */
  run_shmdump(&r, "--job", test_job(), NULL);
  ASSERT_EQ(r.exit_code, 0);
  ASSERT_STR_CONTAINS(r.out, "shmdump: 0 muster segments");
  tool_result_free(&r);
  run_shmdump(&r, "--json", "--job", test_job());
  ASSERT_EQ(r.exit_code, 0);
  ASSERT(json_valid(r.out));
  ASSERT_EQ(json_number(r.out, "count"), 0);
  ASSERT_STR_CONTAINS(r.out, "\"segments\":[]");
  tool_result_free(&r);
  return 0;
}

/* ---- crafted segments ------------------------------------------------------ */

static void set_version_2(unsigned char *b, size_t len, void *arg) {
  ((struct muster_seg_header *)b)->version = 2;
}
static void clear_magic(unsigned char *b, size_t len, void *arg) {
  ((struct muster_seg_header *)b)->magic = 0;
}
static void other_uid(unsigned char *b, size_t len, void *arg) {
  ((struct muster_seg_header *)b)->uid += 1;
}
static void bad_phase(unsigned char *b, size_t len, void *arg) {
  muster__segment_slot((struct muster_seg_header *)b, 1)->phase = 9;
}
static void poison(unsigned char *b, size_t len, void *arg) {
  struct muster_seg_header *h = (struct muster_seg_header *)b;
  h->abort_state = MUSTER_ABORT_SET;
  h->abort_code = MUSTER_EPEERDEAD;
  h->abort_rank = 1;
  h->abort_pid = 4242;
  snprintf(h->abort_reason, sizeof h->abort_reason, "rank 1 (pid 4242) died at barrier 3");
  muster__segment_slot(h, 0)->abort_seen = 1;
}
/* creator and ranks recorded in another pid namespace */
static uint64_t other_ns(void) { return muster__proc_self_pidns() + 1; }
static void other_pidns(unsigned char *b, size_t len, void *arg) {
  struct muster_seg_header *h = (struct muster_seg_header *)b;
  h->creator_pidns = other_ns();
  for (int r = 0; r < h->nranks; r++) muster__segment_slot(h, r)->pidns = other_ns();
}

/* Move crafted segment `group` of our namespace to the name of another. */
static void move_to_other_ns(const char *group) {
  char from[512], to[512];
  segment_path(from, sizeof from, test_job(), group);
  segment_path_in(to, sizeof to, other_ns(), test_job(), group);
  ASSERT_EQ(rename(from, to), 0);
}

static int other_ns_exists(const char *group) {
  char path[512];
  segment_path_in(path, sizeof path, other_ns(), test_job(), group);
  return access(path, F_OK) == 0;
}
static void random_bytes(unsigned char *b, size_t len, void *arg) {
  unsigned *seed = arg;
  for (size_t i = 0; i < len; i++) b[i] = (unsigned char)rand_r(seed);
}

TEST_IMPL(shmdump_crafted_segments) {
  pid_t me = getpid(), gone = dead_pid();
  uint64_t my_start = muster__proc_start_time(me);
  unsigned seed = 7;
  ASSERT(gone > 0);
  ASSERT(my_start > 0);
  /* stale: creator and both seated ranks dead; rank 2 never came */
  ASSERT_EQ(craft_segment(test_job(), "stale", 3, gone, 12345, 0x3, NULL, NULL, 0), 0);
  /* stuck: alive (this process), ranks 0 and 1 waiting 2 s, rank 2 missing */
  ASSERT_EQ(craft_segment(test_job(), "stuck", 3, me, my_start, 0x3, NULL, NULL, 0), 0);
  /* aborted, rank 0 told already; its creator (this process) alive */
  ASSERT_EQ(craft_segment(test_job(), "poisoned", 2, me, my_start, 0x3, poison, NULL, 0), 0);
  /* dead pids, but of another pid namespace (its name and its header say
   * so): liveness unknown, kept */
  ASSERT(muster__proc_self_pidns() != 0);
  ASSERT_EQ(craft_segment(test_job(), "otherns", 2, gone, 12345, 0x1, other_pidns, NULL, 0), 0);
  move_to_other_ns("otherns");
  /* named for our namespace, made in another one: corrupt */
  ASSERT_EQ(craft_segment(test_job(), "nsmismatch", 2, gone, 12345, 0x1, other_pidns, NULL, 0), 0);
  /* our pid but another start time: the pid was reused, so it is dead */
  ASSERT_EQ(craft_segment(test_job(), "reused", 2, me, my_start + 1, 0x1, NULL, NULL, 0), 0);
  ASSERT_EQ(craft_segment(test_job(), "version", 2, me, my_start, 0x1, set_version_2, NULL, 0), 0);
  ASSERT_EQ(craft_segment(test_job(), "nomagic", 2, gone, 1, 0x1, clear_magic, NULL, 0), 0);
  ASSERT_EQ(craft_segment(test_job(), "garbage", 2, gone, 1, 0x1, random_bytes, &seed, 0), 0);
  ASSERT_EQ(craft_segment(test_job(), "uid", 2, gone, 1, 0x1, other_uid, NULL, 0), 0);
  ASSERT_EQ(craft_segment(test_job(), "phase", 2, gone, 1, 0x3, bad_phase, NULL, 0), 0);
  ASSERT_EQ(craft_segment(test_job(), "trunc", 2, gone, 1, 0x1, NULL, NULL, 1000), 0);
  ASSERT_EQ(craft_segment(test_job(), "short", 2, gone, 1, 0x1, NULL, NULL, 5000), 0);
  char path[512];
  segment_path(path, sizeof path, test_job(), "empty");
  int fd = open(path, O_CREAT | O_EXCL | O_WRONLY, 0600);
  ASSERT(fd >= 0);
  close(fd);
  /* a name with a newline and an escape must not break the text output */
  ASSERT_EQ(craft_segment(test_job(), "evil\n== x\033[2J", 2, gone, 1, 0x1, NULL, NULL, 100), 0);
  int foreign = geteuid() == 0; /* only root can give a file to someone else */
  if (foreign) {
    ASSERT_EQ(craft_segment(test_job(), "foreign", 2, gone, 1, 0x1, NULL, NULL, 0), 0);
    segment_path(path, sizeof path, test_job(), "foreign");
    ASSERT_EQ(chown(path, 65534, 65534), 0);
  }

  struct tool_result r;
  char row[128];
  run_shmdump(&r, "--job", test_job(), NULL);
  ASSERT_EQ(r.exit_code, 0);
  expect_state(r.out, "stale", "stale");
  expect_state(r.out, "stuck", "stuck");
  expect_state(r.out, "reused", "stale");
  expect_state(r.out, "version", "other-version");
  expect_state(r.out, "poisoned", "poisoned");
  expect_state_in(r.out, other_ns(), "otherns", "stuck");
  snprintf(row, sizeof row, "%-4d %-8d %-6s", 0, (int)gone, "unknown");
  ASSERT_STR_CONTAINS(r.out, row);
  snprintf(row, sizeof row, "pid namespace %llu (another one: liveness unknown)",
           (unsigned long long)other_ns());
  ASSERT_STR_CONTAINS(r.out, row);
  snprintf(row, sizeof row, "pid namespace %llu (ours)",
           (unsigned long long)muster__proc_self_pidns());
  ASSERT_STR_CONTAINS(r.out, row);
  expect_state(r.out, "nsmismatch", "corrupt");
  snprintf(row, sizeof row, "header says pid namespace %llu, the name says %llu",
           (unsigned long long)other_ns(), (unsigned long long)muster__proc_self_pidns());
  ASSERT_STR_CONTAINS(r.out, row);
  ASSERT_STR_CONTAINS(r.out, "rank 1 (pid 4242) died at barrier 3");
  ASSERT_STR_CONTAINS(r.out, "(peer died), blaming rank 1 (pid 4242); error given to ranks 0\n");
  expect_state(r.out, "nomagic", "corrupt");
  expect_state(r.out, "garbage", "corrupt");
  expect_state(r.out, "uid", "corrupt");
  expect_state(r.out, "phase", "corrupt");
  expect_state(r.out, "trunc", "truncated");
  expect_state(r.out, "short", "truncated");
  expect_state(r.out, "empty", "truncated");
  if (foreign) expect_state(r.out, "foreign", "foreign");
  ASSERT_STR_CONTAINS(r.out, "layout version 2");
  ASSERT_STR_CONTAINS(r.out, "no magic");
  ASSERT_STR_CONTAINS(r.out, "header says uid");
  ASSERT_STR_CONTAINS(r.out, "phase 9 out of range");
  ASSERT_STR_CONTAINS(r.out, "MISSING: rank 2 (never joined)");
  /* the stuck group names its live ranks with their pid and payload */
  snprintf(row, sizeof row, "%-4d %-8d %-6s", 1, (int)me, "alive");
  ASSERT_STR_CONTAINS(r.out, row);
  ASSERT_STR_CONTAINS(r.out, "6 B (round 0): 68 65 6c 6c 6f 21"); /* "hello!" */
  snprintf(row, sizeof row, "%-4d %-8d %-6s", 0, (int)gone, "DEAD");
  ASSERT_STR_CONTAINS(r.out, row);
  ASSERT_EQ(count_substr(r.out, "\n== "), foreign ? 16 : 15);
  ASSERT_STR_CONTAINS(r.out, ".evil?== x?[2J  [truncated]");
  ASSERT(strchr(r.out, '\033') == NULL);
  tool_result_free(&r);

  run_shmdump(&r, "--json", "--job", test_job());
  ASSERT_EQ(r.exit_code, 0);
  ASSERT(json_valid(r.out));
  ASSERT_EQ(json_number(r.out, "count"), foreign ? 16 : 15);
  ASSERT_STR_CONTAINS(r.out, "\"alive\":null,\"pidns\":");
  snprintf(row, sizeof row, "\"pidns\":%llu,\"other_pidns\":true,",
           (unsigned long long)other_ns());
  ASSERT_STR_CONTAINS(r.out, row);
  snprintf(row, sizeof row, "{\"uid\":%u,\"pidns\":%llu,", (unsigned)getuid(),
           (unsigned long long)muster__proc_self_pidns());
  ASSERT_STR_CONTAINS(r.out, row);
  ASSERT_STR_CONTAINS(r.out, "\"abort\":{\"code\":-10,\"rank\":1,\"pid\":4242,");
  ASSERT_STR_CONTAINS(r.out, "\"abort_seen\":true");
  ASSERT_STR_CONTAINS(r.out, "evil\\u000a== x\\u001b[2J");
  ASSERT_STR_CONTAINS(r.out, "\"missing\":[{\"rank\":2,\"why\":\"never joined\"}]");
  ASSERT_STR_CONTAINS(r.out, "\"payload_hex\":\"68656c6c6f21\"");
  ASSERT_STR_CONTAINS(r.out, "\"state\":\"other-version\"");
  tool_result_free(&r);

  /* --clean: the two whose creator and members are dead; the unreadable ones
   * were written just now, so they are left for the moment */
  run_shmdump(&r, "--clean", "--job", test_job());
  ASSERT_EQ(r.exit_code, 0);
  ASSERT_STR_CONTAINS(r.out, "clean: removed 2 segments");
  ASSERT_STR_CONTAINS(r.out, "REMOVED by --clean");
  ASSERT(!seg_exists("stale"));
  ASSERT(!seg_exists("reused"));
  const char *kept[] = {"stuck", "version", "nomagic", "garbage", "uid", "phase", "trunc",
                        "short", "empty", "evil\n== x\033[2J", "nsmismatch",
                        foreign ? "foreign" : "stuck"};
  for (size_t i = 0; i < sizeof kept / sizeof kept[0]; i++) ASSERT(seg_exists(kept[i]));
  tool_result_free(&r);

  /* once unchanged for a while they go, except one a process holds open
   * (this one: "garbage"), the live one, and the foreign one */
  struct timespec old[2] = {{time(NULL) - 60, 0}, {time(NULL) - 60, 0}};
  for (size_t i = 0; i < sizeof kept / sizeof kept[0]; i++) {
    segment_path(path, sizeof path, test_job(), kept[i]);
    ASSERT_EQ(utimensat(AT_FDCWD, path, old, AT_SYMLINK_NOFOLLOW), 0);
  }
  segment_path(path, sizeof path, test_job(), "garbage");
  int held = open(path, O_RDONLY);
  ASSERT(held >= 0);
  const char *clean_json[] = {"--clean", "--json", "--job", test_job(), NULL};
  ASSERT_EQ(tool_run(&r, RUN_TIMEOUT, NULL, "shmdump", clean_json), 0);
  ASSERT_EQ(r.exit_code, 0);
  ASSERT(json_valid(r.out));
  char holder[64];
  snprintf(holder, sizeof holder, "\"holders\":[%d]", (int)me);
  ASSERT_STR_CONTAINS(r.out, holder);
  tool_result_free(&r);
  close(held);
  const char *gone_now[] = {"version", "nomagic", "uid", "phase", "trunc", "short", "empty",
                            "evil\n== x\033[2J", "nsmismatch"};
  for (size_t i = 0; i < sizeof gone_now / sizeof gone_now[0]; i++) ASSERT(!seg_exists(gone_now[i]));
  ASSERT(seg_exists("stuck")); /* alive: never removed */
  ASSERT(seg_exists("poisoned"));
  ASSERT(other_ns_exists("otherns")); /* cannot tell: never removed */
  ASSERT(seg_exists("garbage"));
  if (foreign) ASSERT(seg_exists("foreign"));
  const char *rest[] = {"stuck", "poisoned", "garbage", "foreign"};
  for (size_t i = 0; i < sizeof rest / sizeof rest[0]; i++) seg_remove(rest[i]);
  segment_path_in(path, sizeof path, other_ns(), test_job(), "otherns");
  ASSERT_EQ(unlink(path), 0);
  return 0;
}

/* ---- fuzz ------------------------------------------------------------------- */

struct fuzz {
  unsigned seed;
  int kind;
};

/* Flip a few bytes anywhere, or overwrite a few 32-bit fields of the header
 * and first slot with random values (hits ranges, sizes, phases, lengths). */
static void fuzz_mutate(unsigned char *b, size_t len, void *arg) {
  struct fuzz *f = arg;
  int n = 1 + rand_r(&f->seed) % 6;
  for (int i = 0; i < n; i++) {
    if (f->kind == 1) {
      b[(size_t)rand_r(&f->seed) % len] ^= (unsigned char)(1 + rand_r(&f->seed) % 255);
    } else {
      size_t off = ((size_t)rand_r(&f->seed) % (MUSTER_SEG_HEADER_SIZE + 256)) & ~(size_t)3;
      uint32_t v = (uint32_t)rand_r(&f->seed) * 2654435761u;
      if (off + 4 <= len) memcpy(b + off, &v, 4);
    }
  }
}

#define FUZZ_FILES 300

TEST_IMPL(shmdump_fuzz_random_segments) {
  unsigned seed = (unsigned)time(NULL) ^ (unsigned)getpid();
  fprintf(stderr, "shmdump fuzz seed %u\n", seed);
  pid_t gone = dead_pid();
  char group[32], path[512];
  for (int i = 0; i < FUZZ_FILES; i++) {
    snprintf(group, sizeof group, "f%03d", i);
    int nranks = 1 + rand_r(&seed) % 4;
    struct fuzz f = {rand_r(&seed), i % 3};
    if (f.kind == 0) { /* random bytes of a random length, some tiny */
      size_t len = (size_t)(i % 10 == 0 ? rand_r(&seed) % 24 : rand_r(&seed) % 12000);
      unsigned char *b = malloc(len + 1);
      ASSERT(b != NULL);
      for (size_t k = 0; k < len; k++) b[k] = (unsigned char)rand_r(&seed);
      segment_path(path, sizeof path, test_job(), group);
      int fd = open(path, O_CREAT | O_EXCL | O_WRONLY, 0600);
      ASSERT(fd >= 0);
      ASSERT_EQ(write(fd, b, len), (ssize_t)len);
      close(fd);
      free(b);
    } else {
      size_t cut = rand_r(&seed) % 4 == 0 ? (size_t)rand_r(&seed) % muster__segment_size(nranks) : 0;
      ASSERT_EQ(craft_segment(test_job(), group, nranks, gone, 1, (uint64_t)rand_r(&seed) & 0xf,
                              fuzz_mutate, &f, cut), 0);
    }
  }
  struct tool_result r;
  run_shmdump(&r, "--job", test_job(), NULL);
  ASSERT_EQ(r.exit_code, 0);
  ASSERT_EQ(count_substr(r.out, "\n== "), FUZZ_FILES);
  /* the mutations reach every judgement, including fully decoded ones */
  int stale = count_substr(r.out, "  [stale]");
  fprintf(stderr, "fuzz: %d stale, %d corrupt, %d truncated, %d other-version\n",
          count_substr(r.out, "  [stale]"), count_substr(r.out, "  [corrupt]"),
          count_substr(r.out, "  [truncated]"), count_substr(r.out, "  [other-version]"));
  ASSERT_GT(stale, 0);
  ASSERT_GT(count_substr(r.out, "  [corrupt]"), 0);
  ASSERT_GT(count_substr(r.out, "  [truncated]"), 0);
  tool_result_free(&r);
  run_shmdump(&r, "--json", "--job", test_job());
  ASSERT_EQ(r.exit_code, 0);
  ASSERT(json_valid(r.out));
  ASSERT_EQ(json_number(r.out, "count"), FUZZ_FILES);
  tool_result_free(&r);
  const char *clean[] = {"--json", "--clean", "--job", test_job(), NULL};
  ASSERT_EQ(tool_run(&r, RUN_TIMEOUT, NULL, "shmdump", clean), 0);
  ASSERT_EQ(r.signal, 0);
  ASSERT_EQ(r.exit_code, 0);
  ASSERT(json_valid(r.out));
  tool_result_free(&r);
  for (int i = 0; i < FUZZ_FILES; i++) {
    snprintf(group, sizeof group, "f%03d", i);
    seg_remove(group);
  }
  return 0;
}

/* ---- odd names ------------------------------------------------------------- */

/* Files whose names start like a segment's but are not one of ours (names
 * of builds up to 5b153d5 without the pid namespace, fields out of range,
 * hostile groups, a folder, a link), in a private folder (--dir): each is
 * listed, the tool never crashes, --job picks the names of that job. */
TEST_IMPL(shmdump_odd_names) {
  char dir[PATH_MAX], path[PATH_MAX + 512], longname[256];
  test_tmp_dir(dir, sizeof dir);
  ASSERT_EQ(craft_segment(test_job(), "oddsrc", 2, dead_pid(), 1, 0x1, NULL, NULL, 0), 0);
  size_t len = muster__segment_size(2);
  unsigned char *img = malloc(len);
  segment_path(path, sizeof path, test_job(), "oddsrc");
  int fd = open(path, O_RDONLY);
  ASSERT(img && fd >= 0 && read(fd, img, len) == (ssize_t)len);
  close(fd);
  unlink(path);
  snprintf(longname, sizeof longname, "muster.0.1.j.%0*d", 255 - 13, 7);
  const char *names[] = {"muster.", "muster..", "muster.0", "muster.0.1", "muster.0.1.j",
                         "muster.0.1.j.", "muster.00.1.j.g", "muster.0.01.j.g",
                         "muster.99999999999999999999.1.j.g", "muster.0.18446744073709551616.j.g",
                         "muster.0.job.grp", "muster.0.1.j.g\n== x\033[2J", "muster.0.1.j.g",
                         longname};
  int n = (int)(sizeof names / sizeof names[0]);
  for (int i = 0; i < n; i++) {
    snprintf(path, sizeof path, "%s/%s", dir, names[i]);
    fd = open(path, O_CREAT | O_EXCL | O_WRONLY, 0600);
    ASSERT(fd >= 0);
    ASSERT_EQ(write(fd, img, i % 2 ? len : 100), (ssize_t)(i % 2 ? len : 100));
    close(fd);
  }
  snprintf(path, sizeof path, "%s/muster.0.1.j.dir", dir);
  ASSERT_EQ(mkdir(path, 0700), 0);
  snprintf(path, sizeof path, "%s/muster.0.1.j.link", dir);
  ASSERT_EQ(symlink("/etc/passwd", path), 0);

  struct tool_result r;
  run_shmdump(&r, "--dir", dir, NULL);
  ASSERT_EQ(r.exit_code, 0);
  ASSERT_EQ(count_substr(r.out, "\n== "), n + 2);
  ASSERT_STR_CONTAINS(r.out, "== muster.0.job.grp  [");
  ASSERT_STR_CONTAINS(r.out, "name not of the form muster.<uid>.<pidns>.<job>.<group>");
  ASSERT_STR_CONTAINS(r.out, "pid namespace 1 (another one: liveness unknown)");
  ASSERT(strchr(r.out, '\033') == NULL);
  tool_result_free(&r);
  const char *json[] = {"--json", "--clean", "--dir", dir, "--job", "j", NULL};
  ASSERT_EQ(tool_run(&r, RUN_TIMEOUT, NULL, "shmdump", json), 0);
  ASSERT(r.signal == 0 && r.exit_code == 0);
  ASSERT(json_valid(r.out));
  ASSERT_EQ(json_number(r.out, "count"), 5); /* j.g, the hostile one, the long one, dir, link */
  tool_result_free(&r);
  for (int i = 0; i < n; i++) {
    snprintf(path, sizeof path, "%s/%s", dir, names[i]);
    unlink(path);
  }
  snprintf(path, sizeof path, "%s/muster.0.1.j.dir", dir);
  rmdir(path);
  snprintf(path, sizeof path, "%s/muster.0.1.j.link", dir);
  unlink(path);
  ASSERT_EQ(rmdir(dir), 0);
  free(img);
  return 0;
}
