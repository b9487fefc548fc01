/*
 * tests/unit/test_registry_v2.c - the provider ABI version table (v2 and
 * v1 side by side, v2 refusals) and the engine choice through the
 * registry: cost tables found on the provider path, the reason in the
 * result and in muster_provider_choose(), MUSTER_LOG=info, fallback past an
 * unavailable provider, a provider refusing by estimate.
 */
#include <sys/stat.h>
#include <unistd.h>

#include "task.h"
#include "muster.h"
#include "muster/provider.h"
#include "providers/tp_util.h"
#include "integration/test_v2_util.h"

static char dir[256];

static void setup(void) { tp_env_fresh(dir, sizeof dir); }

TEST_IMPL(registry_v2_versions_and_refusals) {
  setup();
  tp_link(dir, "potrs", "testprov.so", "testprov_v1.so");
  tp_link(dir, "potrs", "leadtwo.so", "testprov_lead2.so");
  tp_link(dir, "potrs", "colltwo.so", "testprov_coll2.so");
  tp_link(dir, "potrs", "badrules.so", "testprov_rules2.so");
  tp_link(dir, "potrs", "nosolve.so", "testprov_nosolve2.so");
  tp_link(dir, "potrs", "nocoll.so", "testprov_nocoll2.so");
  tp_link(dir, "potrs", "leadnodes.so", "testprov_nodes2.so");
  muster_provider_info_t info[16];
  int n = muster_providers_list(info, 16);
  ASSERT_EQ(n, 7);
  const muster_provider_info_t *i;
  ASSERT((i = tp_find_info(info, n, "testprov")) && i->available);
  ASSERT_EQ(i->abi, 1); /* a v1 provider, adapted */
  ASSERT_EQ(i->kind, MUSTER_PROVIDER_LEADER);
  ASSERT_EQ(i->spans, MUSTER_SPAN_THREADS | MUSTER_SPAN_PROCESSES);
  ASSERT((i = tp_find_info(info, n, "leadtwo")) && i->available);
  ASSERT_EQ(i->abi, 2);
  ASSERT_EQ(i->kind, MUSTER_PROVIDER_LEADER);
  ASSERT_EQ(i->priority, 30);
  ASSERT((i = tp_find_info(info, n, "colltwo")) && i->available);
  ASSERT_EQ(i->abi, 2);
  ASSERT_EQ(i->kind, MUSTER_PROVIDER_COLLECTIVE);
  ASSERT_STR_CONTAINS(i->cost, "no colltwo.cost found");
  ASSERT((i = tp_find_info(info, n, "badrules")) && !i->available);
  ASSERT_STR_CONTAINS(i->why, "built with layout rules version 999, this runtime has version 1");
  ASSERT_STR_CONTAINS(i->why, "rebuild the provider");
  ASSERT((i = tp_find_info(info, n, "nosolve")) && !i->available);
  ASSERT_STR_CONTAINS(i->why, "leader provider without a solve hook");
  ASSERT((i = tp_find_info(info, n, "nocoll")) && !i->available);
  ASSERT_STR_CONTAINS(i->why, "collective provider without a collective_solve hook");
  ASSERT((i = tp_find_info(info, n, "leadnodes")) && !i->available);
  ASSERT_STR_CONTAINS(i->why, "a leader provider cannot span nodes");
  /* asked for by name, a refused one says why */
  tp_problem_t p;
  tp_problem_init(&p, MUSTER_POTRS, MUSTER_F64, 8, 2, 0);
  muster_solve_result_t res;
  p.args.provider = "badrules";
  ASSERT_EQ(muster_solve_all(&p.args, 2, p.shards, &res), MUSTER_EUNSUPPORTED);
  ASSERT_STR_CONTAINS(muster_last_error(), "testprov_rules2.so");
  ASSERT_STR_CONTAINS(muster_last_error(), "layout rules version 999");
  /* the v2 leader provider runs (highest priority, no model) */
  p.args.provider = NULL;
  ASSERT_OK(muster_solve_all(&p.args, 2, p.shards, &res));
  ASSERT(!strcmp(res.provider, "leadtwo"));
  ASSERT(tp_marker(&p, 0) == 3.0 && tp_marker(&p, 1) == 3.0);
  ASSERT_STR_CONTAINS(res.reason, "higher priority (30, testprov has 10)");
  /* one caller cannot run a collective provider */
  p.args.provider = "colltwo";
  ASSERT_EQ(muster_solve_all(&p.args, 2, p.shards, &res), MUSTER_EUNSUPPORTED);
  ASSERT_STR_CONTAINS(muster_last_error(), "a collective provider: every rank must call it");
  tp_problem_free(&p);
  test_remove_tree(dir);
  return 0;
}

static muster_solve_result_t logged_res;
static int logged_rc;
static void solve_logged(void *arg) {
  tp_problem_t *p = arg;
  logged_rc = muster_solve_all(&p->args, p->nshards, p->shards, &logged_res);
}

TEST_IMPL(registry_choice_cost_table_and_log) {
  setup();
  tp_link(dir, "potrs", "testprov.so", "testprov_v1.so");    /* priority 10, marker 1 */
  tp_link(dir, "potrs", "otherprov.so", "testprov_other.so"); /* priority 20, marker 7 */
  char path[400];
  snprintf(path, sizeof path, "%s/testprov.cost", dir);
  tp_write_file(path, "# measured by hand\npotrs f64 2 8 2 0.001\npotrs f64 2 64 2 0.002\n");
  tp_problem_t p;
  tp_problem_init(&p, MUSTER_POTRS, MUSTER_F64, 16, 2, 0);
  /* the table makes testprov the one with a time: it wins over priority */
  setenv("MUSTER_LOG", "info", 1);
  char log[8192];
  v2_capture_stderr(solve_logged, &p, log, sizeof log);
  unsetenv("MUSTER_LOG");
  ASSERT_OK(logged_rc);
  ASSERT(!strcmp(logged_res.provider, "testprov"));
  ASSERT(tp_marker(&p, 0) == 1.0);
  ASSERT_STR_CONTAINS(logged_res.reason, "fastest known: 0.00126 s (cost table testprov.cost: interpolated "
                                         "between n=8 and 64); otherprov has no estimate or cost table");
  /* every candidate and the winner are logged */
  ASSERT_STR_CONTAINS(log, "choice for potrs f64 n=16 nrhs=2, 2 ranks (threads of one process), host "
                           "memory, 2 devices: testprov (priority 10): 0.00126 s, cost table");
  ASSERT_STR_CONTAINS(log, "otherprov (priority 20): no estimate, no otherprov.cost found");
  ASSERT_STR_CONTAINS(log, "testprov wins: fastest known");
  /* the public query gives the same answer, before any shard exists */
  muster_provider_query_t q;
  memset(&q, 0, sizeof q);
  q.routine = MUSTER_POTRS;
  q.dtype = MUSTER_F64;
  q.n = 16;
  q.nrhs = 2;
  q.nranks = 2;
  q.ndevices = 2;
  char name[32], reason[MUSTER_MAX_REASON];
  ASSERT_OK(muster_provider_choose(&q, NULL, name, sizeof name, reason, sizeof reason));
  ASSERT(!strcmp(name, "testprov"));
  ASSERT(!strcmp(reason, logged_res.reason));
  /* beyond the measured range the table still answers, saying so */
  q.n = 1000;
  ASSERT_OK(muster_provider_choose(&q, NULL, name, sizeof name, reason, sizeof reason));
  ASSERT_STR_CONTAINS(reason, "extrapolated above the largest measured n=64");
  /* forced */
  ASSERT_OK(muster_provider_choose(&q, "otherprov", name, sizeof name, reason, sizeof reason));
  ASSERT(!strcmp(name, "otherprov"));
  ASSERT_STR_CONTAINS(reason, "forced by args.provider");
  setenv("MUSTER_PROVIDER", "potrs=otherprov", 1);
  ASSERT_OK(muster_provider_choose(&q, NULL, name, sizeof name, reason, sizeof reason));
  ASSERT_STR_CONTAINS(reason, "forced by MUSTER_PROVIDER");
  unsetenv("MUSTER_PROVIDER");
  q.nranks = 0;
  ASSERT_EQ(muster_provider_choose(&q, NULL, name, sizeof name, NULL, 0), MUSTER_EINVAL);
  tp_problem_free(&p);
  test_remove_tree(dir);
  return 0;
}

TEST_IMPL(registry_choice_bad_cost_table) {
  setup();
  char path[400];
  snprintf(path, sizeof path, "%s/testprov.cost", dir);
  tp_write_file(path, "potrs f64 2 8 2 0.001\npotrs f64 two 64 2 0.002\n");
  tp_link(dir, "potrs", "testprov.so", "testprov_v1.so");
  tp_link(dir, "potrs", "otherprov.so", "testprov_other.so");
  muster_provider_info_t info[4];
  ASSERT_EQ(muster_providers_list(info, 4), 2);
  const muster_provider_info_t *i = tp_find_info(info, 2, "testprov");
  ASSERT(i && i->available);
  ASSERT_STR_CONTAINS(i->cost, "cost table refused: ");
  ASSERT_STR_CONTAINS(i->cost, "testprov.cost:2: bad number");
  /* without its table, priority decides */
  tp_problem_t p;
  tp_problem_init(&p, MUSTER_POTRS, MUSTER_F64, 16, 2, 0);
  muster_solve_result_t res;
  ASSERT_OK(muster_solve_all(&p.args, 2, p.shards, &res));
  ASSERT(!strcmp(res.provider, "otherprov"));
  tp_problem_free(&p);
  test_remove_tree(dir);
  return 0;
}

TEST_IMPL(registry_choice_fallback_and_estimate) {
  setup();
  /* otherprov (priority 20) says it is unavailable when loaded */
  setenv("TESTPROV_UNAVAILABLE", "otherprov", 1);
  tp_link(dir, "potrs", "testprov.so", "testprov_v1.so");
  tp_link(dir, "potrs", "otherprov.so", "testprov_other.so");
  tp_link(dir, "potrs", "refuser.so", "testprov_refuse2.so"); /* priority 100, always refuses */
  tp_link(dir, "potrs", "notelf.so", "notelf.so");           /* fails to load */
  tp_problem_t p;
  tp_problem_init(&p, MUSTER_POTRS, MUSTER_F64, 10, 2, 0);
  muster_solve_result_t res;
  ASSERT_OK(muster_solve_all(&p.args, 2, p.shards, &res));
  ASSERT(!strcmp(res.provider, "testprov"));
  ASSERT(tp_marker(&p, 0) == 1.0);
  ASSERT_STR_CONTAINS(res.reason, "the only provider that can run it");
  ASSERT_STR_CONTAINS(res.reason, "not refuser: estimate refused: refused: test provider TP_REFUSE");
  ASSERT_STR_CONTAINS(res.reason, "not otherprov: probe: TESTPROV_UNAVAILABLE names otherprov");
  /* forcing the refusing one is an error that says why, not a fallback */
  p.args.provider = "refuser";
  ASSERT_EQ(muster_solve_all(&p.args, 2, p.shards, &res), MUSTER_EUNSUPPORTED);
  ASSERT_STR_CONTAINS(muster_last_error(), "estimate refused: refused: test provider TP_REFUSE");
  p.args.provider = "notelf";
  ASSERT_EQ(muster_solve_all(&p.args, 2, p.shards, &res), MUSTER_EUNSUPPORTED);
  ASSERT_STR_CONTAINS(muster_last_error(), "dlopen of");
  unsetenv("TESTPROV_UNAVAILABLE");
  tp_problem_free(&p);
  test_remove_tree(dir);
  return 0;
}
