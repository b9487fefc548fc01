/*
 * tests/task.h - the test harness (libuv style).
 *
 * Every test is a function `int run_test_NAME(void)` defined with TEST_IMPL
 * and listed with TEST_ENTRY(NAME, TIMEOUT_S) in one of tests/list-*.h.  The
 * runner (tests/runner.c) forks each test into its own process group with a
 * time limit, gives it a private MUSTER_JOB, and after it ends fails the test
 * if any /dev/shm segment of that job (of any pid namespace) is left.  A test passes when it
 * returns 0; ASSERT failures print where and exit non-zero.
 */
#ifndef MUSTER_TEST_TASK_H
#define MUSTER_TEST_TASK_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <inttypes.h>

#define TEST_IMPL(name) int run_test_##name(void)

#define ASSERT(expr)                                                           \
  do {                                                                         \
    if (!(expr)) {                                                             \
      fprintf(stderr, "assertion failed %s:%d: %s\n", __FILE__, __LINE__,      \
              #expr);                                                          \
      fflush(stderr);                                                          \
      _exit(3);                                                                \
    }                                                                          \
  } while (0)

#define ASSERT_OP(a, op, b, fmt, cast)                                         \
  do {                                                                         \
    cast a_ = (cast)(a), b_ = (cast)(b);                                       \
    if (!(a_ op b_)) {                                                         \
      fprintf(stderr, "assertion failed %s:%d: %s %s %s (" fmt " vs " fmt     \
              ")\n", __FILE__, __LINE__, #a, #op, #b, a_, b_);                 \
      fflush(stderr);                                                          \
      _exit(3);                                                                \
    }                                                                          \
  } while (0)

#define ASSERT_EQ(a, b) ASSERT_OP(a, ==, b, "%" PRId64, int64_t)
#define ASSERT_NE(a, b) ASSERT_OP(a, !=, b, "%" PRId64, int64_t)
#define ASSERT_LT(a, b) ASSERT_OP(a, <, b, "%" PRId64, int64_t)
#define ASSERT_LE(a, b) ASSERT_OP(a, <=, b, "%" PRId64, int64_t)
#define ASSERT_GT(a, b) ASSERT_OP(a, >, b, "%" PRId64, int64_t)
#define ASSERT_GE(a, b) ASSERT_OP(a, >=, b, "%" PRId64, int64_t)
#define ASSERT_DBL_LT(a, b) ASSERT_OP(a, <, b, "%g", double)
/* A wall-clock bound ("returns promptly"): seconds < bound, unless the run
 * checks no timing (test_timing_checked(): $MUSTER_TEST_NO_TIMING, set for
 * run-all.sh's valgrind pass, which runs 10-50x slower at nice 19 beside
 * the build and may be starved of the CPU for seconds; what the test
 * checks besides the time still holds there). */
#define ASSERT_PROMPT(seconds, bound)                                          \
  do {                                                                         \
    if (test_timing_checked()) ASSERT_DBL_LT(seconds, bound);                  \
  } while (0)
#define ASSERT_STR_CONTAINS(hay, needle)                                       \
  do {                                                                         \
    const char *h_ = (hay), *n_ = (needle);                                    \
    if (!h_ || !strstr(h_, n_)) {                                              \
      fprintf(stderr, "assertion failed %s:%d: \"%s\" does not contain "       \
              "\"%s\"\n", __FILE__, __LINE__, h_ ? h_ : "(null)", n_);         \
      fflush(stderr);                                                          \
      _exit(3);                                                                \
    }                                                                          \
  } while (0)
/* A muster call that must succeed; prints muster_last_error() if not. */
#define ASSERT_OK(call)                                                        \
  do {                                                                         \
    int rc_ = (call);                                                          \
    if (rc_ != 0) {                                                            \
      fprintf(stderr, "%s:%d: %s failed: %d (%s): %s\n", __FILE__, __LINE__,   \
              #call, rc_, muster_strerror(rc_), muster_last_error());          \
      fflush(stderr);                                                          \
      _exit(3);                                                                \
    }                                                                          \
  } while (0)

#include <unistd.h>

/* Helpers shared by tests (tests/util.c). */
double test_now(void);                 /* monotonic seconds */
int test_timing_checked(void);         /* 0 when $MUSTER_TEST_NO_TIMING is set (ASSERT_PROMPT) */
/* The seeded generator of the randomized tests (xorshift64*), so that a
 * printed seed replays a run: $env_var when set, else time and pid. */
uint64_t test_seed(const char *env_var);
uint64_t test_rand(uint64_t *state);     /* next value; *state never 0  */
int test_count_dir(const char *path);  /* entries not starting with '.'; -1: unreadable */
int test_count_fds(void);              /* open fds of this process */
int test_count_muster_maps(void);      /* mappings of /dev/shm/muster.* */
/* segments of job `job` and our uid in /dev/shm, of any pid namespace
 * (muster_segment_list, include/muster/segment.h) */
int test_count_job_segments(const char *job);
const char *test_job(void);            /* this test's MUSTER_JOB */
/* "<$TMPDIR or /tmp>/<name>" into out[cap] (name may end in XXXXXX for
 * mkdtemp/mkstemp): where a test keeps its temporary files.  The runner
 * gives each test a TMPDIR of its own and fails a test that leaves
 * anything in it. */
void test_tmp_path(char *out, size_t cap, const char *name);
const char *test_tmp_base(void);       /* $TMPDIR, or /tmp when unset or empty */
/* A fresh folder in the test's TMPDIR (mkdtemp), its path in out[cap]. */
void test_tmp_dir(char *out, size_t cap);
/* rm -rf dir (links not followed); goes on past what it cannot remove. */
void test_remove_tree(const char *dir);
/* "<build>/tests/data/<rel>" into out[cap]: the data files tests read
 * (measured cost tables, the docs' measurements), which tests/SConscript
 * installs there from the same path relative to the source tree; found
 * beside the executable, so a build folder copied elsewhere, without the
 * sources, runs its tests (docs/gpu-testing.md). */
void test_data_path(char *out, size_t cap, const char *rel);
/* dlopen <build>/lib/muster/providers/<backend>.so as the registry does
 * (RTLD_NOW | RTLD_LOCAL); NULL, with a note on stderr, when the build has
 * no such file (built without nvcc) or, with MUSTER_TEST_NO_CUDA_LIBS set,
 * when it cannot load (no CUDA toolkit on this machine); any other load
 * failure fails the test. */
void *test_provider_dlopen(const char *backend);
/* Run this binary's runner on the tests named `name` with environment
 * variable env set to 1 (so a child test knows to misbehave); its stdout
 * and stderr into text[cap], NUL-terminated.  Returns its wait status. */
int test_run_runner(const char *name, const char *env, char *text, size_t cap);
/* The rest of the first line of text that holds prefix, after it, into
 * out[cap] (the test fails when there is none). */
void test_line_after(const char *text, const char *prefix, char *out, size_t cap);

#endif
