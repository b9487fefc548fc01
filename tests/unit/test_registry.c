/*
 * tests/unit/test_registry.c - the provider registry: lazy loading, listing,
 * refusal of broken files, MUSTER_PROVIDER, the search path, fork (rescan
 * while calls run: test_registry_rescan.c).
 * Each test builds its own MUSTER_PROVIDER_PATH folder of symlinks to the
 * test providers (tests/providers).
 */
#include <limits.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "task.h"
#include "muster.h"
#include "muster/layout.h"
#include "muster/provider.h"
#include "providers/tp_util.h"
#include "registry/cost.h"
#include "base/env.h"
#include "muster/parse.h"

static char dir[256];

static void setup(void) { tp_registry_dir(dir, sizeof dir); }

TEST_IMPL(registry_lazy_load_and_list) {
  setup();
  tp_link(dir, "potrs", "testprov.so", "testprov_v1.so");
  tp_link(dir, "syevd", "testprov.so", "testprov_v1.so");
  /* nothing is loaded before the first use of a routine */
  ASSERT(!tp_maps_has("testprov_v1.so"));
  tp_problem_t p;
  tp_problem_init(&p, MUSTER_POTRS, MUSTER_F64, 12, 3, 0);
  muster_solve_result_t res;
  ASSERT_OK(tp_solve(&p, NULL, &res));
  ASSERT(tp_maps_has("testprov_v1.so"));
  ASSERT(strcmp(res.provider, "testprov") == 0);
  ASSERT_EQ(res.tile, muster_layout_default_tile(12, 3)); /* testprov has no choose_tile */
  for (int s = 0; s < 3; s++) ASSERT(tp_marker(&p, s) == 1.0);
  /* one file behind two routine folders is one provider */
  muster_provider_info_t info[8];
  int n = muster_providers_list(info, 8);
  ASSERT_EQ(n, 1);
  ASSERT(strcmp(info[0].name, "testprov") == 0);
  ASSERT_STR_CONTAINS(info[0].path, "testprov_v1.so");
  ASSERT(info[0].available);
  ASSERT(info[0].routines & (1u << MUSTER_POTRS));
  ASSERT(info[0].dtypes & (1u << MUSTER_C128));
  ASSERT(info[0].mem_kinds & (1u << MUSTER_MEM_HOST));
  ASSERT_EQ(info[0].priority, 10);
  tp_problem_free(&p);
  test_remove_tree(dir);
  return 0;
}

TEST_IMPL(registry_refuses_broken_files) {
  setup();
  tp_link(dir, "potrs", "testprov.so", "testprov_v1.so");
  tp_link(dir, "potrs", "abi.so", "testprov_abi999.so");
  tp_link(dir, "potrs", "nosym.so", "testprov_nosym.so");
  tp_link(dir, "potrs", "notelf.so", "notelf.so");
  tp_link(dir, "potrs", "small.so", "testprov_small.so");
  tp_link(dir, "potrs", "wrongname.so", "testprov_v1.so");
  muster_provider_info_t info[16];
  int n = muster_providers_list(info, 16);
  ASSERT_EQ(n, 6);
  const muster_provider_info_t *i;
  ASSERT((i = tp_find_info(info, n, "abi")) && !i->available);
  ASSERT_STR_CONTAINS(i->why, "says ABI version 999; it must say 1");
  ASSERT_STR_CONTAINS(i->path, "testprov_abi999.so");
  ASSERT((i = tp_find_info(info, n, "nosym")) && !i->available);
  ASSERT_STR_CONTAINS(i->why, "no symbol muster_provider_v2 nor muster_provider_v1");
  ASSERT((i = tp_find_info(info, n, "notelf")) && !i->available);
  ASSERT_STR_CONTAINS(i->why, "dlopen of");
  ASSERT_STR_CONTAINS(i->why, "notelf.so"); /* dlerror names the file */
  ASSERT((i = tp_find_info(info, n, "small")) && !i->available);
  ASSERT_STR_CONTAINS(i->why, "struct_size 16 too small");
  ASSERT((i = tp_find_info(info, n, "wrongname")) && !i->available);
  ASSERT_STR_CONTAINS(i->why, "provider name 'testprov' does not match the file name 'wrongname.so'");
  ASSERT((i = tp_find_info(info, n, "testprov")) && i->available);
  ASSERT(i->routines & (1u << MUSTER_POTRS));

  /* asking for a refused one names the file and the reason */
  tp_problem_t p;
  tp_problem_init(&p, MUSTER_POTRS, MUSTER_F64, 8, 2, 0);
  muster_solve_result_t res;
  int rc = tp_solve(&p, "abi", &res);
  ASSERT_EQ(rc, MUSTER_EUNSUPPORTED);
  ASSERT_STR_CONTAINS(muster_last_error(), "testprov_abi999.so");
  ASSERT_STR_CONTAINS(muster_last_error(), "says ABI version 999; it must say 1");
  rc = tp_solve(&p, "notelf", &res);
  ASSERT_EQ(rc, MUSTER_EUNSUPPORTED);
  ASSERT_STR_CONTAINS(muster_last_error(), "notelf.so");
  /* the good one still works next to them */
  ASSERT_OK(tp_solve(&p, NULL, &res));
  ASSERT(strcmp(res.provider, "testprov") == 0);
  ASSERT(tp_marker(&p, 1) == 1.0);
  tp_problem_free(&p);
  test_remove_tree(dir);
  return 0;
}

/* Files that are not regular files in a routine folder: a FIFO, a link to
 * one, a link to a character device and a folder, each named like a
 * provider.  Each is refused with its kind, never opened in a way that
 * blocks (a FIFO hung every scan, hence every solve and `muster
 * providers`: the open waited for a writer), and the provider beside them
 * still works.  The cost table reader refuses a FIFO the same way. */
TEST_IMPL(registry_refuses_special_files) {
  setup();
  tp_link(dir, "potrs", "testprov.so", "testprov_v1.so");
  char path[400], fifo[400];
  snprintf(fifo, sizeof fifo, "%s/potrs/fifo.so", dir);
  ASSERT_EQ(mkfifo(fifo, 0600), 0);
  tp_link_abs(dir, "potrs", "tofifo.so", fifo);
  tp_link_abs(dir, "potrs", "null.so", "/dev/null");
  snprintf(path, sizeof path, "%s/potrs/folder.so", dir);
  ASSERT_EQ(mkdir(path, 0700), 0);
  muster_provider_info_t info[16];
  int n = muster_providers_list(info, 16);
  ASSERT_EQ(n, 5);
  static const struct { const char *name, *kind; } refused[] = {
      {"fifo", "is not a regular file (a FIFO)"},
      {"tofifo", "is not a regular file (a FIFO)"},
      {"null", "/dev/null is not a regular file (a character device)"},
      {"folder", "is not a regular file (a folder)"}};
  for (int k = 0; k < 4; k++) {
    const muster_provider_info_t *i = tp_find_info(info, n, refused[k].name);
    ASSERT(i && !i->available);
    ASSERT_STR_CONTAINS(i->why, refused[k].kind);
    ASSERT(i->routines & (1u << MUSTER_POTRS)); /* the folder that named it */
  }
  tp_problem_t p;
  tp_problem_init(&p, MUSTER_POTRS, MUSTER_F64, 8, 2, 0);
  muster_solve_result_t res;
  ASSERT_EQ(tp_solve(&p, "fifo", &res), MUSTER_EUNSUPPORTED);
  ASSERT_STR_CONTAINS(muster_last_error(), "is not a regular file (a FIFO)");
  ASSERT_OK(tp_solve(&p, NULL, &res));
  ASSERT(strcmp(res.provider, "testprov") == 0);
  tp_problem_free(&p);
  /* a cost table that is a FIFO */
  muster__cost_t *t = NULL;
  char why[256];
  ASSERT_EQ(muster__cost_read(fifo, &t, why, sizeof why), MUSTER_EINVAL);
  ASSERT_STR_CONTAINS(why, "not a regular file");
  test_remove_tree(dir);
  return 0;
}

TEST_IMPL(registry_provider_choice) {
  setup();
  tp_link(dir, "potrs", "testprov.so", "testprov_v1.so");   /* priority 10, marker 1 */
  tp_link(dir, "potrs", "otherprov.so", "testprov_other.so"); /* priority 20, marker 7, f64 only */
  tp_link(dir, "potri", "otherprov.so", "testprov_other.so");
  tp_problem_t p;
  tp_problem_init(&p, MUSTER_POTRS, MUSTER_F64, 8, 2, 0);
  muster_solve_result_t res;
  /* highest priority */
  ASSERT_OK(tp_solve(&p, NULL, &res));
  ASSERT(strcmp(res.provider, "otherprov") == 0 && tp_marker(&p, 0) == 7.0);
  /* MUSTER_PROVIDER for every routine */
  setenv("MUSTER_PROVIDER", "testprov", 1);
  ASSERT_OK(tp_solve(&p, NULL, &res));
  ASSERT(strcmp(res.provider, "testprov") == 0 && tp_marker(&p, 0) == 1.0);
  /* per routine */
  setenv("MUSTER_PROVIDER", "potri=otherprov,potrs=testprov", 1);
  ASSERT_OK(tp_solve(&p, NULL, &res));
  ASSERT(strcmp(res.provider, "testprov") == 0);
  setenv("MUSTER_PROVIDER", "potri=testprov", 1); /* says nothing about potrs */
  ASSERT_OK(tp_solve(&p, NULL, &res));
  ASSERT(strcmp(res.provider, "otherprov") == 0);
  /* the call's own choice wins over the environment */
  setenv("MUSTER_PROVIDER", "testprov", 1);
  ASSERT_OK(tp_solve(&p, "otherprov", &res));
  ASSERT(strcmp(res.provider, "otherprov") == 0);
  /* a name nobody provides */
  setenv("MUSTER_PROVIDER", "nosuch", 1);
  ASSERT_EQ(tp_solve(&p, NULL, &res), MUSTER_ENOPROVIDER);
  ASSERT_STR_CONTAINS(muster_last_error(), "'nosuch'");
  unsetenv("MUSTER_PROVIDER");
  tp_problem_free(&p);
  /* a dtype the forced provider lacks; unforced, the other one takes it */
  tp_problem_init(&p, MUSTER_POTRS, MUSTER_C64, 8, 2, 0);
  ASSERT_EQ(tp_solve(&p, "otherprov", &res), MUSTER_EUNSUPPORTED);
  ASSERT_STR_CONTAINS(muster_last_error(), "no dtype c64");
  ASSERT_OK(tp_solve(&p, NULL, &res));
  ASSERT(strcmp(res.provider, "testprov") == 0);
  tp_problem_free(&p);
  test_remove_tree(dir);
  return 0;
}

TEST_IMPL(registry_unknown_routine) {
  setup();
  tp_link(dir, "potrs", "testprov.so", "testprov_v1.so");
  tp_problem_t p;
  tp_problem_init(&p, MUSTER_POTRS, MUSTER_F64, 8, 2, 0);
  muster_solve_result_t res;
  p.args.routine = (muster_routine_t)9;
  ASSERT_EQ(muster_solve_all(&p.args, 2, p.shards, &res), MUSTER_EINVAL);
  ASSERT_STR_CONTAINS(muster_last_error(), "unknown routine 9");
  /* a known routine no folder provides */
  p.args.routine = MUSTER_SYEVD;
  ASSERT_EQ(muster_solve_all(&p.args, 2, p.shards, &res), MUSTER_ENOPROVIDER);
  ASSERT_STR_CONTAINS(muster_last_error(), "no provider of syevd");
  tp_problem_free(&p);
  test_remove_tree(dir);
  return 0;
}

/* A forced provider is the only one loaded; the default choice loads all. */
TEST_IMPL(registry_forced_loads_only_that_one) {
  setup();
  tp_link(dir, "potrs", "testprov.so", "testprov_v1.so");
  tp_link(dir, "potrs", "otherprov.so", "testprov_other.so");
  tp_problem_t p;
  tp_problem_init(&p, MUSTER_POTRS, MUSTER_F64, 8, 2, 0);
  muster_solve_result_t res;
  ASSERT_OK(tp_solve(&p, "testprov", &res));
  ASSERT(tp_maps_has("testprov_v1.so"));
  ASSERT(!tp_maps_has("testprov_other.so"));
  setenv("MUSTER_PROVIDER", "potrs=testprov", 1);
  ASSERT_OK(tp_solve(&p, NULL, &res));
  ASSERT(!tp_maps_has("testprov_other.so"));
  unsetenv("MUSTER_PROVIDER");
  ASSERT_OK(tp_solve(&p, NULL, &res));
  ASSERT(strcmp(res.provider, "otherprov") == 0);
  ASSERT(tp_maps_has("testprov_other.so"));
  tp_problem_free(&p);
  test_remove_tree(dir);
  return 0;
}

/* MUSTER_PROVIDER parsing (runtime/base/env.c); malformed values: see
 * env_variables_refused (test_env.c). */
static const char *choice(const char *routine) {
  static char out[MUSTER_MAX_BACKEND + 1];
  ASSERT_OK(muster__env_provider_choice(routine, out, sizeof out));
  return out;
}

TEST_IMPL(registry_env_choice_parsing) {
  setenv("MUSTER_PROVIDER", "lapack", 1);
  ASSERT(!strcmp(choice("potrs"), "lapack"));
  setenv("MUSTER_PROVIDER", "potrs=cusolvermg,syevd=lapack", 1);
  ASSERT(!strcmp(choice("potrs"), "cusolvermg"));
  ASSERT(!strcmp(choice("syevd"), "lapack"));
  ASSERT(!strcmp(choice("potri"), ""));
  /* a bare name is the default for routines not named */
  setenv("MUSTER_PROVIDER", "potrs=cusolvermg,lapack", 1);
  ASSERT(!strcmp(choice("potri"), "lapack"));
  ASSERT(!strcmp(choice("potrs"), "cusolvermg"));
  setenv("MUSTER_PROVIDER", "lapack,potrs=other", 1);
  ASSERT(!strcmp(choice("potrs"), "other"));
  /* a prefix of a routine name is not that routine: refused, not ignored */
  setenv("MUSTER_PROVIDER", "pot=x", 1);
  char out[MUSTER_MAX_BACKEND + 1];
  ASSERT_EQ(muster__env_provider_choice("potrs", out, sizeof out), MUSTER_EINVAL);
  ASSERT_STR_CONTAINS(muster_last_error(), "MUSTER_PROVIDER: entry 1 'pot=x' names no routine");
  unsetenv("MUSTER_PROVIDER");
  ASSERT(!strcmp(choice("potrs"), ""));
  return 0;
}

/* The first folder on MUSTER_PROVIDER_PATH wins for a backend name; a
 * missing folder is skipped; a path change is picked up by a rescan. */
TEST_IMPL(registry_search_path_order) {
  char d1[256], d2[256], path[700];
  test_tmp_dir(d1, sizeof d1);
  test_tmp_dir(d2, sizeof d2);
  tp_link(d1, "potrs", "testprov.so", "testprov_v1.so");
  tp_link(d2, "potrs", "testprov.so", "testprov_v2.so");
  snprintf(path, sizeof path, "/nonexistent/muster:%s:%s", d1, d2);
  setenv("MUSTER_PROVIDER_PATH", path, 1);
  unsetenv("MUSTER_PROVIDER");
  tp_problem_t p;
  tp_problem_init(&p, MUSTER_POTRS, MUSTER_F64, 8, 2, 0);
  muster_solve_result_t res;
  ASSERT_OK(muster_solve_all(&p.args, p.nshards, p.shards, &res));
  ASSERT(tp_marker(&p, 0) == 1.0);
  snprintf(path, sizeof path, "%s:%s", d2, d1);
  setenv("MUSTER_PROVIDER_PATH", path, 1);
  ASSERT_OK(muster_providers_rescan());
  ASSERT_OK(muster_solve_all(&p.args, p.nshards, p.shards, &res));
  ASSERT(tp_marker(&p, 0) == 2.0);
  muster_provider_info_t info[4];
  ASSERT_EQ(muster_providers_list(info, 4), 1);
  ASSERT_STR_CONTAINS(info[0].path, "testprov_v2.so");
  tp_problem_free(&p);
  test_remove_tree(d1);
  test_remove_tree(d2);
  return 0;
}

/* A provider's max_shards is enforced for every rank. */
TEST_IMPL(registry_max_shards) {
  setup();
  tp_link(dir, "potrs", "testprov.so", "testprov_max2.so");
  tp_problem_t p;
  tp_problem_init(&p, MUSTER_POTRS, MUSTER_F64, 9, 3, 0);
  muster_solve_result_t res;
  /* the only provider cannot take 3 ranks: nothing can run the call */
  ASSERT_EQ(muster_solve_all(&p.args, 3, p.shards, &res), MUSTER_ENOPROVIDER);
  ASSERT_STR_CONTAINS(muster_last_error(), "testprov (");
  ASSERT_STR_CONTAINS(muster_last_error(), "takes at most 2 ranks, the call has 3");
  /* forced, the same is the forced provider's refusal */
  p.args.provider = "testprov";
  ASSERT_EQ(muster_solve_all(&p.args, 3, p.shards, &res), MUSTER_EUNSUPPORTED);
  ASSERT_STR_CONTAINS(muster_last_error(), "takes at most 2 ranks, the call has 3");
  p.args.provider = NULL;
  tp_problem_free(&p);
  tp_problem_init(&p, MUSTER_POTRS, MUSTER_F64, 9, 2, 0);
  ASSERT_OK(muster_solve_all(&p.args, 2, p.shards, &res));
  tp_problem_free(&p);
  test_remove_tree(dir);
  return 0;
}

/* ---- fork after use ------------------------------------------------------ */

/* In a forked child: can the registry find a provider for r (a routine the
 * parent never used, so the child scans and loads: it takes the registry's
 * lock)?  alarm: a child that waits forever for that lock dies of SIGALRM. */
static int child_chooses(muster_routine_t r) {
  alarm(10);
  muster_provider_query_t q;
  memset(&q, 0, sizeof q);
  q.routine = r;
  q.dtype = MUSTER_F64;
  q.n = 16;
  q.nrhs = r == MUSTER_SYEVD ? 0 : 1;
  q.nranks = 2;
  char name[32], why[512];
  return muster_provider_choose(&q, NULL, name, sizeof name, why, sizeof why) == 0 &&
         strcmp(name, "testprov") == 0;
}

/* fork and wait; the wait status of a child that ran fn(r), exit 0 if true */
static int fork_and_wait(int (*fn)(muster_routine_t), muster_routine_t r) {
  pid_t pid = fork();
  if (pid == 0) _exit(fn(r) ? 0 : 1);
  int st = -1;
  if (pid < 0 || waitpid(pid, &st, 0) != pid) return -1;
  return st;
}

/* a child that loads potri, then forks a grandchild that loads syevd */
static int child_chooses_then_forks(muster_routine_t r) {
  return child_chooses(r) && fork_and_wait(child_chooses, MUSTER_SYEVD) == 0;
}

/* A process that used the registry forks, and the child loads another
 * routine's provider: the child inherited the registry's lock, held (by the
 * fork handler) under the parent's thread id; unlocking it in the child
 * failed and the child hung on its first load (solve_general_keeps_a with
 * threads first: a threads getrs, then the forked ranks of a gels). */
TEST_IMPL(registry_fork_child_loads_another_routine) {
  setup();
  tp_link(dir, "potrs", "testprov.so", "testprov_v1.so");
  tp_link(dir, "potri", "testprov.so", "testprov_v1.so");
  tp_link(dir, "syevd", "testprov.so", "testprov_v1.so");
  tp_problem_t p;
  tp_problem_init(&p, MUSTER_POTRS, MUSTER_F64, 12, 3, 0);
  muster_solve_result_t res;
  ASSERT_OK(tp_solve(&p, NULL, &res));
  /* exit status 0; SIGALRM (14) on the old code */
  ASSERT_EQ(fork_and_wait(child_chooses_then_forks, MUSTER_POTRI), 0);
  /* the parent's lock still works after its handlers ran */
  ASSERT_EQ(child_chooses(MUSTER_SYEVD), 1);
  alarm(0);
  tp_problem_free(&p);
  test_remove_tree(dir);
  return 0;
}
