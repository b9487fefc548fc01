/*
 * tests/unit/test_cost.c - cost tables (runtime/registry/cost.c): parsing and its
 * refusals, the lookup rules (interpolation log-log in n, ndevices between
 * measured counts, nearest nrhs, outside the measured range, duplicates), where the
 * file is looked for.
 */
#include <math.h>
#include <sys/stat.h>

#include "task.h"
#include "registry/cost.h"
#include "providers/tp_util.h"

static muster__cost_t *parse_ok(const char *text) {
  muster__cost_t *t = NULL;
  char why[256] = "";
  int rc = muster__cost_parse(text, "/x/test.cost", &t, why, sizeof why);
  if (rc != 0) fprintf(stderr, "parse failed: %s\n", why);
  ASSERT_EQ(rc, 0);
  return t;
}

static void parse_bad(const char *text, const char *expect) {
  muster__cost_t *t = NULL;
  char why[256] = "";
  ASSERT_EQ(muster__cost_parse(text, "/x/test.cost", &t, why, sizeof why), MUSTER_EINVAL);
  ASSERT(t == NULL);
  ASSERT_STR_CONTAINS(why, expect);
}

static double look(const muster__cost_t *t, int r, int d, int nd, int64_t n, int64_t nrhs, char *note) {
  double s = -1;
  ASSERT_EQ(muster__cost_lookup(t, r, d, nd, n, nrhs, &s, note, 200), 0);
  return s;
}

static int close_to(double a, double b) { return fabs(a - b) <= 1e-9 * fabs(b); }

TEST_IMPL(cost_table_parse) {
  muster__cost_t *t = parse_ok("# a comment line\n"
                               "\n"
                               "potrs f64 2 1024 1 0.010   # trailing comment\n"
                               "  syevd\tc128 1 512 0 2e-3\n"
                               "potri f32 0 64 0 1");
  ASSERT_EQ(t->nrows, 3);
  ASSERT_EQ(t->rows[0].routine, MUSTER_POTRS);
  ASSERT_EQ(t->rows[0].dtype, MUSTER_F64);
  ASSERT_EQ(t->rows[0].ndevices, 2);
  ASSERT_EQ(t->rows[0].n, 1024);
  ASSERT_EQ(t->rows[0].nrhs, 1);
  ASSERT(t->rows[0].seconds == 0.010);
  ASSERT_EQ(t->rows[1].dtype, MUSTER_C128);
  ASSERT(t->rows[1].seconds == 2e-3);
  ASSERT_STR_CONTAINS(t->path, "test.cost");
  muster__cost_free(t);
  /* every bad row refuses the whole file, naming its line */
  parse_bad("potrs f64 2 1024 1 0.01\npotrs f64 2 2048 1\n", "test.cost:2: 5 fields, want 6");
  parse_bad("getrf f64 1 8 0 1\n", ":1: unknown routine 'getrf'");
  parse_bad("potrs f16 1 8 0 1\n", "unknown dtype 'f16'");
  parse_bad("# ok\npotrs f64 1 8 0 -1\n", ":2: bad number");
  parse_bad("potrs f64 1 0 0 1\n", "bad number");
  parse_bad("potrs f64 x 8 0 1\n", "bad number");
  parse_bad("potrs f64 1 8 0 nan\n", "bad number");
  parse_bad("potrs f64 1 8 0 1 extra\n", "bad nnodes 'extra'");
  parse_bad("potrs f64 1 8 0 1 1 extra\n", "8 fields, want 6 or 7");
  return 0;
}

TEST_IMPL(cost_table_lookup) {
  char note[200];
  muster__cost_t *t = parse_ok("potrs f64 2 1000 1 0.001\n"
                               "potrs f64 2 2000 1 0.008\n"   /* slope 3 */
                               "potrs f64 2 4000 1 0.032\n"   /* slope 2 */
                               "potrs f64 4 2000 1 0.005\n"
                               "potrs f64 2 2000 8 0.02\n"
                               "syevd f64 1 100 0 0.5\n"
                               "syevd f64 1 200 0 0.6\n"      /* slope ~0.26: clamped to 2 */
                               "potri f64 1 100 0 0.1\n"
                               "potri f64 1 200 0 1.6\n");    /* slope 4: clamped to 3 */
  /* a measured point */
  ASSERT(close_to(look(t, MUSTER_POTRS, MUSTER_F64, 2, 2000, 1, note), 0.008));
  ASSERT_STR_CONTAINS(note, "measured at n=2000");
  ASSERT_STR_CONTAINS(note, "cost table test.cost");
  /* log-log between 1000 and 2000: t = 0.001 * (1500/1000)^3 */
  ASSERT(close_to(look(t, MUSTER_POTRS, MUSTER_F64, 2, 1500, 1, note), 0.001 * pow(1.5, 3)));
  ASSERT_STR_CONTAINS(note, "interpolated between n=1000 and 2000");
  /* ... and between 2000 and 4000 with slope 2 */
  ASSERT(close_to(look(t, MUSTER_POTRS, MUSTER_F64, 2, 3000, 1, note), 0.008 * pow(1.5, 2)));
  /* below the smallest n: that point's time */
  ASSERT(close_to(look(t, MUSTER_POTRS, MUSTER_F64, 2, 10, 1, note), 0.001));
  ASSERT_STR_CONTAINS(note, "below the smallest measured n=1000");
  /* above the largest: the last slope (2) */
  ASSERT(close_to(look(t, MUSTER_POTRS, MUSTER_F64, 2, 8000, 1, note), 0.032 * 4));
  ASSERT_STR_CONTAINS(note, "extrapolated above the largest measured n=4000 with slope 2.00");
  /* last slopes out of [2, 3] are clamped */
  ASSERT(close_to(look(t, MUSTER_SYEVD, MUSTER_F64, 1, 400, 0, note), 0.6 * 4));
  ASSERT(close_to(look(t, MUSTER_POTRI, MUSTER_F64, 1, 400, 0, note), 1.6 * 8));
  ASSERT_STR_CONTAINS(note, "slope 3.00");
  /* ndevices not measured: from 2 and 4 (test_cost_model.c has the rules):
   * 3 between them; 9 beyond, where 4 (one point: n^3 above it, 0.04 s) is
   * slower than 2 (0.032 s): slope clamped to 0, 2's time */
  ASSERT(close_to(look(t, MUSTER_POTRS, MUSTER_F64, 3, 2000, 1, note), 0.008 * pow(1.5, log(0.625) / log(2))));
  ASSERT_STR_CONTAINS(note, "interpolated in ndevices from 2 and 4");
  ASSERT(close_to(look(t, MUSTER_POTRS, MUSTER_F64, 9, 4000, 1, note), 0.032));
  ASSERT_STR_CONTAINS(note, "extrapolated in ndevices from 2 and 4 (slope 0.00");
  /* nearest nrhs: 6 -> 8 */
  ASSERT(close_to(look(t, MUSTER_POTRS, MUSTER_F64, 2, 2000, 6, note), 0.02));
  ASSERT_STR_CONTAINS(note, "nearest measured nrhs=8");
  /* nothing for (routine, dtype) */
  double s = 0;
  ASSERT_EQ(muster__cost_lookup(t, MUSTER_POTRS, MUSTER_F32, 2, 2000, 1, &s, note, sizeof note), MUSTER_ENOENT);
  ASSERT_STR_CONTAINS(note, "no row for potrs f32");
  muster__cost_free(t);
  /* a point measured again: the last row counts */
  t = parse_ok("potrs f64 1 100 1 0.5\npotrs f64 1 200 1 0.9\npotrs f64 1 100 1 0.25\n");
  ASSERT(close_to(look(t, MUSTER_POTRS, MUSTER_F64, 1, 100, 1, note), 0.25));
  ASSERT(close_to(look(t, MUSTER_POTRS, MUSTER_F64, 1, 50, 1, note), 0.25));
  muster__cost_free(t);
  return 0;
}

TEST_IMPL(cost_table_files) {
  char d1[256], d2[256], d3[256], path[600], found[600], why[256];
  test_tmp_dir(d1, sizeof d1);
  test_tmp_dir(d2, sizeof d2);
  test_tmp_dir(d3, sizeof d3);
  char so[600];
  snprintf(so, sizeof so, "%s/real.so", d3);
  unsetenv("MUSTER_COST_PATH");
  ASSERT_EQ(muster__cost_find("prov", d2, so, found, sizeof found), 0);
  /* beside the real file, then the listed folder, then MUSTER_COST_PATH */
  snprintf(path, sizeof path, "%s/prov.cost", d3);
  tp_write_file(path, "potrs f64 1 8 1 3\n");
  ASSERT_EQ(muster__cost_find("prov", d2, so, found, sizeof found), 1);
  ASSERT(strcmp(found, path) == 0);
  snprintf(path, sizeof path, "%s/prov.cost", d2);
  tp_write_file(path, "potrs f64 1 8 1 2\n");
  ASSERT_EQ(muster__cost_find("prov", d2, so, found, sizeof found), 1);
  ASSERT(strcmp(found, path) == 0);
  snprintf(path, sizeof path, "%s/prov.cost", d1);
  tp_write_file(path, "potrs f64 1 8 1 1\n");
  char env[600];
  snprintf(env, sizeof env, "/nonexistent:%s", d1);
  setenv("MUSTER_COST_PATH", env, 1);
  ASSERT_EQ(muster__cost_find("prov", d2, so, found, sizeof found), 1);
  ASSERT(strcmp(found, path) == 0);
  muster__cost_t *t = NULL;
  ASSERT_EQ(muster__cost_read(found, &t, why, sizeof why), 0);
  ASSERT(t->rows[0].seconds == 1);
  muster__cost_free(t);
  snprintf(path, sizeof path, "%s/nothere.cost", d1);
  ASSERT_EQ(muster__cost_read(path, &t, why, sizeof why), MUSTER_ENOENT);
  ASSERT_STR_CONTAINS(why, "nothere.cost");
  unsetenv("MUSTER_COST_PATH");
  test_remove_tree(d1);
  test_remove_tree(d2);
  test_remove_tree(d3);
  return 0;
}
