/* tests/util.c - helpers shared by tests (see task.h). */
#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "muster/segment.h"
#include "task.h"

uint64_t test_seed(const char *env_var) {
  const char *s = getenv(env_var);
  uint64_t seed = s ? strtoull(s, NULL, 10) : (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
  return seed ? seed : 1;
}

uint64_t test_rand(uint64_t *state) {
  uint64_t x = *state ? *state : 1;
  x ^= x >> 12, x ^= x << 25, x ^= x >> 27;
  *state = x;
  return x * 2685821657736338717ull;
}

double test_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int test_timing_checked(void) {
  const char *v = getenv("MUSTER_TEST_NO_TIMING");
  return !(v && v[0] && strcmp(v, "0") != 0);
}

int test_count_dir(const char *path) {
  DIR *d = opendir(path);
  if (!d) return -1;
  int n = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) n += e->d_name[0] != '.';
  closedir(d);
  return n;
}

int test_count_fds(void) {
  int n = test_count_dir("/proc/self/fd");
  return n < 0 ? n : n - 1; /* the DIR's own fd */
}

int test_count_muster_maps(void) {
  FILE *f = fopen("/proc/self/maps", "r");
  if (!f) return -1;
  char line[1024];
  int n = 0;
  while (fgets(line, sizeof line, f))
    if (strstr(line, "/dev/shm/muster.")) n++;
  fclose(f);
  return n;
}

int test_count_job_segments(const char *job) {
  /* any group name counts (hostile ones too), of any pid namespace */
  int n = muster_segment_list(MUSTER_SEGMENT_DIR, MUSTER_SEGMENT_MINE, job, NULL, 0);
  return n < 0 ? -1 : n;
}

const char *test_job(void) {
  const char *j = getenv("MUSTER_JOB");
  return j ? j : "default";
}

const char *test_tmp_base(void) {
  const char *base = getenv("TMPDIR");
  return base && *base ? base : "/tmp";
}

void test_tmp_path(char *out, size_t cap, const char *name) {
  ASSERT((size_t)snprintf(out, cap, "%s/%s", test_tmp_base(), name) < cap);
}

void test_tmp_dir(char *out, size_t cap) {
  test_tmp_path(out, cap, "d.XXXXXX");
  ASSERT(mkdtemp(out) != NULL);
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
  (void)st;
  (void)flag;
  (void)ftw;
  remove(path);
  return 0; /* go on: remove all that can be */
}

void test_remove_tree(const char *dir) { nftw(dir, remove_one, 16, FTW_DEPTH | FTW_PHYS); }

/* The folder of this executable (<build>/tests for run-tests) into out[PATH_MAX]. */
static void exe_dir(char *out) {
  ssize_t n = readlink("/proc/self/exe", out, PATH_MAX - 1);
  ASSERT(n > 0);
  out[n] = '\0';
  char *slash = strrchr(out, '/');
  ASSERT(slash);
  *slash = '\0';
}

void test_data_path(char *out, size_t cap, const char *rel) {
  char dir[PATH_MAX];
  exe_dir(dir);
  ASSERT((size_t)snprintf(out, cap, "%s/data/%s", dir, rel) < cap);
}

void *test_provider_dlopen(const char *backend) {
  char exe[PATH_MAX], path[PATH_MAX + 64];
  exe_dir(exe); /* <build>/tests */
  snprintf(path, sizeof path, "%s/../lib/muster/providers/%s.so", exe, backend);
  if (access(path, F_OK) != 0) {
    /* built without CUDA (no nvcc): nothing to load, and nothing claims it */
    fprintf(stderr, "  (no %s: built without nvcc)\n", path);
    return NULL;
  }
  void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    /* a build folder copied to a machine without the CUDA toolkit */
    fprintf(stderr, "  dlopen: %s\n", dlerror());
    ASSERT(getenv("MUSTER_TEST_NO_CUDA_LIBS") != NULL);
  }
  return h;
}

int test_run_runner(const char *name, const char *env, char *text, size_t cap) {
  char self[PATH_MAX], log[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  ASSERT(n > 0 && cap > 1);
  self[n] = '\0';
  test_tmp_path(log, sizeof log, "runner.log");
  pid_t runner = fork();
  ASSERT(runner >= 0);
  if (runner == 0) {
    int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0) _exit(126);
    dup2(fd, 1);
    dup2(fd, 2);
    setenv(env, "1", 1);
    execl(self, self, name, (char *)NULL);
    _exit(127);
  }
  int st;
  ASSERT_EQ(waitpid(runner, &st, 0), runner);
  int fd = open(log, O_RDONLY);
  ASSERT(fd >= 0);
  ssize_t len = read(fd, text, cap - 1);
  close(fd);
  unlink(log);
  ASSERT(len > 0);
  text[len] = '\0';
  return st;
}

void test_line_after(const char *text, const char *prefix, char *out, size_t cap) {
  const char *p = strstr(text, prefix);
  ASSERT(p);
  p += strlen(prefix);
  size_t n = strcspn(p, "\n");
  ASSERT(n < cap);
  memcpy(out, p, n);
  out[n] = '\0';
}
