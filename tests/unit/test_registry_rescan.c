/*
 * tests/unit/test_registry_rescan.c - muster_providers_rescan while calls
 * run: a provider file swapped back and forth under 4 calling threads (each
 * call runs one provider whole, the installed one), an unload that waits
 * for the call holding it, files dropped in, removed and renamed over.
 * Each test builds its own MUSTER_PROVIDER_PATH folder of symlinks to the
 * test providers (tests/providers).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdatomic.h>
#include <unistd.h>

#include "task.h"
#include "muster.h"
#include "providers/tp_util.h"

static char dir[256];

static void setup(void) { tp_registry_dir(dir, sizeof dir); }

static atomic_int gen;      /* odd while a swap is under way (seqlock) */
static atomic_int expect;   /* marker of the provider installed at gen */
static atomic_int stop;
static atomic_long calls_v1, calls_v2, calls_checked;

static void *caller(void *arg) {
  (void)arg;
  tp_problem_t p;
  tp_problem_init(&p, MUSTER_POTRS, MUSTER_F64, 16, 2, 0);
  while (!atomic_load(&stop)) {
    int g0 = atomic_load(&gen), want = atomic_load(&expect);
    muster_solve_result_t res;
    ASSERT_OK(muster_solve_all(&p.args, p.nshards, p.shards, &res));
    int g1 = atomic_load(&gen);
    double m0 = tp_marker(&p, 0), m1 = tp_marker(&p, 1);
    ASSERT(m0 == m1);             /* one provider wrote the whole call */
    ASSERT(m0 == 1.0 || m0 == 2.0);
    if (g0 == g1 && g0 % 2 == 0 && g0 > 0) { /* no swap during the call: the installed one ran */
      ASSERT(m0 == (double)want);
      atomic_fetch_add(&calls_checked, 1);
    }
    atomic_fetch_add(m0 == 1.0 ? &calls_v1 : &calls_v2, 1);
  }
  tp_problem_free(&p);
  return NULL;
}

TEST_IMPL(registry_rescan_swap_under_load) {
  setup();
  tp_link(dir, "potrs", "testprov.so", "testprov_v1.so");
  atomic_store(&expect, 1);
  pthread_t t[4];
  for (int i = 0; i < 4; i++) ASSERT(pthread_create(&t[i], NULL, caller, NULL) == 0);
  while (atomic_load(&calls_v1) < 100) usleep(1000);
  /* replace the file behind the name (atomic rename of the link), back and
   * forth, while 4 threads call */
  for (int swap = 0; swap < 20; swap++) {
    int v = swap % 2 ? 1 : 2;
    atomic_fetch_add(&gen, 1);
    tp_link(dir, "potrs", "testprov.so", v == 1 ? "testprov_v1.so" : "testprov_v2.so");
    ASSERT_OK(muster_providers_rescan());
    atomic_store(&expect, v);
    atomic_fetch_add(&gen, 1);
    long before = atomic_load(&calls_checked);
    while (atomic_load(&calls_checked) < before + 50) usleep(500);
  }
  atomic_store(&stop, 1);
  for (int i = 0; i < 4; i++) pthread_join(t[i], NULL);
  ASSERT_GT(atomic_load(&calls_v1), 0);
  ASSERT_GT(atomic_load(&calls_v2), 0);
  /* the last swap installed v1: v2 is unloaded once no call holds it */
  ASSERT(!tp_maps_has("testprov_v2.so"));
  ASSERT(tp_maps_has("testprov_v1.so"));
  muster_provider_info_t info[4];
  ASSERT_EQ(muster_providers_list(info, 4), 1);
  ASSERT_STR_CONTAINS(info[0].path, "testprov_v1.so");
  test_remove_tree(dir);
  return 0;
}

static char gate[300];
static atomic_int gated_started;
static double gated_marker;

static void *gated_caller(void *arg) {
  (void)arg;
  tp_problem_t p;
  tp_problem_init(&p, MUSTER_POTRS, MUSTER_F64, 8, 2, 0);
  muster_solve_result_t res;
  atomic_store(&gated_started, 1);
  ASSERT_OK(muster_solve_all(&p.args, p.nshards, p.shards, &res));
  gated_marker = tp_marker(&p, 0);
  tp_problem_free(&p);
  return NULL;
}

TEST_IMPL(registry_unload_waits_for_running_call) {
  setup();
  tp_link(dir, "potrs", "testprov.so", "testprov_v1.so");
  snprintf(gate, sizeof gate, "%s/gate", dir);
  FILE *f = fopen(gate, "w");
  ASSERT(f != NULL);
  fclose(f);
  setenv("TESTPROV_GATE", gate, 1);
  pthread_t t;
  ASSERT(pthread_create(&t, NULL, gated_caller, NULL) == 0);
  while (!atomic_load(&gated_started)) usleep(1000);
  while (!tp_maps_has("testprov_v1.so")) usleep(1000);
  usleep(50000); /* inside v1's solve, waiting on the gate */
  tp_link(dir, "potrs", "testprov.so", "testprov_v2.so");
  ASSERT_OK(muster_providers_rescan());
  /* the running call still holds v1: it must stay mapped; v2 is loaded on
   * its first use only */
  ASSERT(tp_maps_has("testprov_v1.so"));
  ASSERT(!tp_maps_has("testprov_v2.so"));
  unlink(gate);
  pthread_join(t, NULL);
  ASSERT(gated_marker == 1.0);
  /* its release was the last reference */
  ASSERT(!tp_maps_has("testprov_v1.so"));
  tp_problem_t p;
  tp_problem_init(&p, MUSTER_POTRS, MUSTER_F64, 8, 2, 0);
  muster_solve_result_t res;
  ASSERT_OK(muster_solve_all(&p.args, p.nshards, p.shards, &res));
  ASSERT(tp_marker(&p, 0) == 2.0);
  ASSERT(tp_maps_has("testprov_v2.so"));
  tp_problem_free(&p);
  unsetenv("TESTPROV_GATE");
  test_remove_tree(dir);
  return 0;
}

TEST_IMPL(registry_rescan_picks_up_new_and_removed) {
  setup();
  tp_link(dir, "potrs", "testprov.so", "testprov_v1.so");
  tp_problem_t p;
  tp_problem_init(&p, MUSTER_POTRS, MUSTER_F64, 8, 2, 0);
  muster_solve_result_t res;
  ASSERT_OK(muster_solve_all(&p.args, p.nshards, p.shards, &res));
  ASSERT(strcmp(res.provider, "testprov") == 0);
  /* dropped in later: unseen until a rescan */
  tp_link(dir, "potrs", "otherprov.so", "testprov_other.so");
  ASSERT_OK(muster_solve_all(&p.args, p.nshards, p.shards, &res));
  ASSERT(strcmp(res.provider, "testprov") == 0);
  ASSERT_OK(muster_providers_rescan());
  ASSERT_OK(muster_solve_all(&p.args, p.nshards, p.shards, &res));
  ASSERT(strcmp(res.provider, "otherprov") == 0);
  /* removed: gone after a rescan, and unloaded */
  char link[400];
  snprintf(link, sizeof link, "%s/potrs/otherprov.so", dir);
  ASSERT(unlink(link) == 0);
  ASSERT_OK(muster_providers_rescan());
  ASSERT(!tp_maps_has("testprov_other.so"));
  ASSERT_OK(muster_solve_all(&p.args, p.nshards, p.shards, &res));
  ASSERT(strcmp(res.provider, "testprov") == 0);
  /* a file renamed over the same path (no link change) is reloaded too */
  char real[400], tmp[400], cmd[2400];
  snprintf(real, sizeof real, "%s/real.so", dir);
  snprintf(tmp, sizeof tmp, "%s/real.so.tmp", dir);
  snprintf(cmd, sizeof cmd, "cp %s/testprov_v1.so %s", tp_build_dir(), real);
  ASSERT(system(cmd) == 0);
  tp_link_abs(dir, "potrs", "testprov.so", real);
  ASSERT_OK(muster_providers_rescan());
  ASSERT_OK(muster_solve_all(&p.args, p.nshards, p.shards, &res));
  ASSERT(tp_marker(&p, 0) == 1.0);
  snprintf(cmd, sizeof cmd, "cp %s/testprov_v2.so %s && mv %s %s", tp_build_dir(), tmp, tmp, real);
  ASSERT(system(cmd) == 0);
  ASSERT_OK(muster_providers_rescan());
  ASSERT_OK(muster_solve_all(&p.args, p.nshards, p.shards, &res));
  ASSERT(tp_marker(&p, 0) == 2.0);
  tp_problem_free(&p);
  test_remove_tree(dir);
  return 0;
}
