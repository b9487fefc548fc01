/*
 * tests/unit/test_registry_release.c - muster_providers_release: a provider
 * no call holds is unloaded (fini once) and loaded again by the next call;
 * one a running call holds is unloaded only when that call returns, with
 * its result right, and a call meanwhile takes that live instance again;
 * nothing loaded is a no-op; calls from 4 threads while
 * releases run all succeed, and every load is unloaded in the end; a
 * comm's provider is unloaded too (the comm drops its reference), and the
 * comm's next call loads it again.  The test providers count their init
 * and fini in a file (TESTPROV_LIFE, tests/providers/testprov.c).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "task.h"
#include "muster.h"
#include "providers/tp_util.h"

static char dir[256], life[300];

/* A provider folder with testprov (v1) for potrs; its loads counted. */
static void setup(void) {
  tp_env_fresh(dir, sizeof dir);
  tp_link(dir, "potrs", "testprov.so", "testprov_v1.so");
  snprintf(life, sizeof life, "%s/life", dir);
  setenv("TESTPROV_LIFE", life, 1);
}

/* How many lines of the life file are `line` ("init testprov"). */
static int count(const char *line) {
  char buf[4096] = "";
  FILE *f = fopen(life, "r");
  if (f) {
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
  }
  int k = 0;
  size_t l = strlen(line);
  for (const char *s = buf; (s = strstr(s, line)) != NULL; s += l) k += s[l] == '\n';
  return k;
}

/* One potrs call over 2 shards: the marker the provider wrote (1: v1). */
static double solve_once(void) {
  tp_problem_t p;
  tp_problem_init(&p, MUSTER_POTRS, MUSTER_F64, 8, 2, 0);
  muster_solve_result_t res;
  ASSERT_OK(muster_solve_all(&p.args, p.nshards, p.shards, &res));
  ASSERT(!strcmp(res.provider, "testprov"));
  double m = tp_marker(&p, 0) == tp_marker(&p, 1) ? tp_marker(&p, 0) : -1;
  tp_problem_free(&p);
  return m;
}

static void teardown(void) {
  unsetenv("TESTPROV_LIFE");
  test_remove_tree(dir);
}

TEST_IMPL(registry_release_unloads_and_reloads) {
  setup();
  ASSERT(solve_once() == 1.0);
  ASSERT_EQ(count("init testprov"), 1);
  ASSERT_EQ(count("fini testprov"), 0);
  ASSERT_OK(muster_providers_release());
  ASSERT_EQ(count("fini testprov"), 1); /* no call held it: unloaded before the return */
  ASSERT(!tp_maps_has("testprov_v1.so"));
  ASSERT(solve_once() == 1.0); /* loaded again, lazily, and right */
  ASSERT_EQ(count("init testprov"), 2);
  ASSERT(tp_maps_has("testprov_v1.so"));
  ASSERT(solve_once() == 1.0); /* and kept for the next call */
  ASSERT_EQ(count("init testprov"), 2);
  ASSERT_OK(muster_providers_release());
  ASSERT_OK(muster_providers_release()); /* a second one finds nothing */
  ASSERT_EQ(count("fini testprov"), 2);
  ASSERT_EQ(count("fini-bad-ctx"), 0);
  teardown();
  return 0;
}

static char gate[300], entered[300];
static double gated_marker;

/* Calls from now on stop at the gate (a file) and say they are inside
 * (TESTPROV_GATE, TESTPROV_ENTERED); unlink(gate) lets them through. */
static void gate_calls(void) {
  snprintf(gate, sizeof gate, "%s/gate", dir);
  snprintf(entered, sizeof entered, "%s/entered", dir);
  tp_write_file(gate, "");
  setenv("TESTPROV_GATE", gate, 1);
  setenv("TESTPROV_ENTERED", entered, 1);
}

static void *gated_caller(void *marker) {
  *(double *)marker = solve_once();
  return NULL;
}

TEST_IMPL(registry_release_waits_for_running_call) {
  setup();
  gate_calls();
  pthread_t t;
  ASSERT(pthread_create(&t, NULL, gated_caller, &gated_marker) == 0);
  while (access(entered, F_OK) != 0) usleep(1000); /* inside the provider's solve, at the gate */
  ASSERT_OK(muster_providers_release());
  /* the call holds it: still loaded, no fini */
  ASSERT_EQ(count("fini testprov"), 0);
  ASSERT(tp_maps_has("testprov_v1.so"));
  unlink(gate);
  pthread_join(t, NULL);
  ASSERT(gated_marker == 1.0);
  /* the call's own release was the last reference */
  ASSERT_EQ(count("init testprov"), 1);
  ASSERT_EQ(count("fini testprov"), 1);
  ASSERT(!tp_maps_has("testprov_v1.so"));
  unsetenv("TESTPROV_GATE");
  unsetenv("TESTPROV_ENTERED");
  ASSERT(solve_once() == 1.0);
  ASSERT_EQ(count("init testprov"), 2);
  teardown();
  return 0;
}

/* A release while a call holds the provider, then a second call: its load
 * takes the live instance again (one instance per file, no second init),
 * and that instance is unloaded by the next release once both calls are
 * done.  Why registry_release_under_load may see a single load. */
TEST_IMPL(registry_release_held_instance_reused) {
  setup();
  gate_calls();
  pthread_t first, second;
  double marker[2] = {0, 0};
  ASSERT(pthread_create(&first, NULL, gated_caller, &marker[0]) == 0);
  while (access(entered, F_OK) != 0) usleep(1000);
  ASSERT_OK(muster_providers_release());
  unlink(entered);
  ASSERT(pthread_create(&second, NULL, gated_caller, &marker[1]) == 0);
  while (access(entered, F_OK) != 0) usleep(1000); /* the second call is inside too */
  ASSERT_EQ(count("init testprov"), 1);
  unlink(gate);
  pthread_join(first, NULL);
  pthread_join(second, NULL);
  ASSERT(marker[0] == 1.0 && marker[1] == 1.0);
  ASSERT_EQ(count("fini testprov"), 0); /* the table holds it again */
  ASSERT_OK(muster_providers_release());
  ASSERT_EQ(count("init testprov"), 1);
  ASSERT_EQ(count("fini testprov"), 1);
  ASSERT(!tp_maps_has("testprov_v1.so"));
  unsetenv("TESTPROV_GATE");
  unsetenv("TESTPROV_ENTERED");
  teardown();
  return 0;
}

TEST_IMPL(registry_release_nothing_loaded) {
  setup();
  ASSERT_OK(muster_providers_release()); /* before any use of the registry */
  ASSERT_OK(muster_providers_rescan());
  ASSERT_OK(muster_providers_release()); /* a table, nothing loaded */
  ASSERT_EQ(count("init testprov"), 0);
  ASSERT_EQ(count("fini testprov"), 0);
  ASSERT(solve_once() == 1.0);
  ASSERT_EQ(count("init testprov"), 1);
  teardown();
  return 0;
}

static atomic_int stop;
static atomic_long calls;

static void *caller(void *arg) {
  (void)arg;
  while (!atomic_load(&stop)) {
    ASSERT(solve_once() == 1.0);
    atomic_fetch_add(&calls, 1);
  }
  return NULL;
}

TEST_IMPL(registry_release_under_load) {
  setup();
  pthread_t t[4];
  for (int i = 0; i < 4; i++) ASSERT(pthread_create(&t[i], NULL, caller, NULL) == 0);
  for (int k = 0; k < 20; k++) {
    long before = atomic_load(&calls);
    while (atomic_load(&calls) < before + 10) usleep(500);
    ASSERT_OK(muster_providers_release());
  }
  atomic_store(&stop, 1);
  for (int i = 0; i < 4; i++) pthread_join(t[i], NULL);
  ASSERT_OK(muster_providers_release());
  /* Every load unloaded once.  How many loads there were depends on the
   * scheduling: a release while a call holds the provider leaves it live,
   * and the next call's load takes that live instance again (no init), so
   * under valgrind, where a caller is nearly always inside a call, the
   * whole run can be one load.  Nothing holds it now: the next call is a
   * fresh load. */
  int inits = count("init testprov");
  ASSERT_GE(inits, 1);
  ASSERT_EQ(count("fini testprov"), inits);
  ASSERT(!tp_maps_has("testprov_v1.so"));
  ASSERT(solve_once() == 1.0);
  ASSERT_EQ(count("init testprov"), inits + 1);
  ASSERT_OK(muster_providers_release());
  ASSERT_EQ(count("fini testprov"), inits + 1);
  teardown();
  return 0;
}

/* ---- a comm's provider ------------------------------------------------------------ */

/* The allgather of a comm of one rank. */
static int self_allgather(void *ctx, const void *mine, void *all, size_t len, char *err, size_t errlen) {
  (void)ctx, (void)err, (void)errlen;
  memcpy(all, mine, len);
  return 0;
}

/* potrs over the comm, the collective test provider forced: its marker (4). */
static double comm_solve(muster_comm_t *c) {
  const int64_t n = 10;
  double a[100] = {0}, b[20] = {0}, w[10];
  muster_shard_t s = {.mem = MUSTER_MEM_HOST, .device = -1, .a = a, .lda = n, .ncols = n, .b = b, .ldb = n, .w = w};
  muster_solve_args_t args = {.routine = MUSTER_POTRS, .dtype = MUSTER_F64, .n = n, .nrhs = 2, .provider = "colltwo"};
  muster_solve_result_t res;
  ASSERT_OK(muster_solve_comm(c, &args, &s, &res));
  return b[0] == b[2 * n - 1] ? b[0] : -1;
}

TEST_IMPL(registry_release_comm_provider) {
  setup();
  tp_link(dir, "potrs", "colltwo.so", "testprov_coll2.so");
  char rlog[300];
  snprintf(rlog, sizeof rlog, "%s/released", dir);
  setenv("TESTPROV_RELEASE_LOG", rlog, 1);
  muster_comm_opts_t o = {.kind = "store", .rank = 0, .size = 1, .name = "release-test",
                          .allgather = self_allgather};
  muster_comm_t *c = NULL;
  ASSERT_OK(muster_comm_open(&o, &c));
  ASSERT(comm_solve(c) == 4.0);
  ASSERT_EQ(count("init colltwo"), 1);
  /* the comm held it (to release its key's communicators at close): it
   * drops it, and the provider is unloaded, release_comms(0) first */
  ASSERT_OK(muster_providers_release());
  ASSERT_EQ(count("fini colltwo"), 1);
  ASSERT(!tp_maps_has("testprov_coll2.so"));
  char buf[256] = "";
  FILE *f = fopen(rlog, "r");
  ASSERT(f != NULL);
  buf[fread(buf, 1, sizeof buf - 1, f)] = '\0';
  fclose(f);
  ASSERT(!strcmp(buf, "release 0\n"));
  /* the comm's next call loads it again */
  ASSERT(comm_solve(c) == 4.0);
  ASSERT_EQ(count("init colltwo"), 2);
  ASSERT_OK(muster_comm_close(c)); /* releases its key, drops its reference */
  ASSERT_OK(muster_providers_release());
  ASSERT_EQ(count("fini colltwo"), 2);
  unsetenv("TESTPROV_RELEASE_LOG");
  teardown();
  return 0;
}
