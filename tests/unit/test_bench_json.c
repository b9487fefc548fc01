/*
 * tests/unit/test_bench_json.c - the GPU benchmark's report without a GPU
 * (tests/gpu/bench_json.c, built into this binary): which column is best
 * and default / best, skipped columns, failed checks, NaN, and reasons
 * with characters JSON must escape, all in valid JSON that
 * tools/plot_gpu_bench.py reads.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "task.h"
#include "gpu/bench.h"
#include "integration/test_shmdump_util.h"

static void timed(bench_col_t *c, double t) {
  memset(c, 0, sizeof *c);
  c->ran = 1;
  c->t[0] = c->t_med = c->t_min = t;
  c->nt = 1;
}

static void skipped(bench_col_t *c, const char *why) {
  memset(c, 0, sizeof *c);
  snprintf(c->skip, sizeof c->skip, "%s", why);
}

static char *report(const bench_row_t *rows, int nrows, const bench_row_t *cap) {
  bench_env_t env;
  memset(&env, 0, sizeof env);
  snprintf(env.device, sizeof env.device, "NVIDIA H200 \"test\"");
  snprintf(env.driver, sizeof env.driver, "580.95.05");
  snprintf(env.date, sizeof env.date, "2026-11-23 12:00 UTC");
  snprintf(env.command, sizeof env.command, "muster-gpu-bench --gpus 2");
  env.gpus = 2;
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  ASSERT(f != NULL);
  bench_json(f, &env, rows, nrows, cap);
  ASSERT_EQ(fclose(f), 0);
  return buf;
}

TEST_IMPL(bench_json_rank_and_report) {
  bench_row_t rows[3];
  memset(rows, 0, sizeof rows);
  for (int i = 0; i < 3; i++) {
    rows[i].routine = MUSTER_POTRS;
    rows[i].dtype = MUSTER_F64;
    rows[i].n = 4096 << i;
    rows[i].nrhs = 1;
    rows[i].reps = 1;
  }
  /* row 0: every column ran; raw dn is best, the default 5% slower */
  rows[0].flags = MUSTER_NO_FACTOR;
  timed(&rows[0].col[BC_DEFAULT], 1.05);
  timed(&rows[0].col[BC_DN], 1.02);
  timed(&rows[0].col[BC_MG], 1.20);
  timed(&rows[0].col[BC_RAW_MG], 1.10);
  timed(&rows[0].col[BC_RAW_DN], 1.00);
  rows[0].col[BC_RAW_MG].tile = 2048;
  snprintf(rows[0].col[BC_DEFAULT].provider, 32, "cusolverdn");
  snprintf(rows[0].col[BC_DEFAULT].reason, MUSTER_MAX_REASON, "fastest: \"q\" \\ line\nnext\ttab \xc3\xa9");
  rows[0].col[BC_DEFAULT].checked = 1;
  rows[0].col[BC_DEFAULT].resid_ok = 1;
  rows[0].col[BC_DEFAULT].resid[0] = 0.25;
  /* row 1: only the default ran, and its check failed (NaN ratio) */
  timed(&rows[1].col[BC_DEFAULT], 2.0);
  rows[1].col[BC_DEFAULT].checked = 1;
  rows[1].col[BC_DEFAULT].resid[0] = NAN;
  snprintf(rows[1].col[BC_DEFAULT].skip, 512, "eigenvalues not ascending (or NaN) at 7");
  for (int k = 1; k < BC_COLS; k++) skipped(&rows[1].col[k], "estimate refused: needs 80 GiB");
  /* row 2: nothing ran */
  for (int k = 0; k < BC_COLS; k++) skipped(&rows[2].col[k], "bench buffers: cudaMalloc failed");
  for (int i = 0; i < 3; i++) bench_rank(&rows[i]);
  ASSERT_EQ(rows[0].best, BC_RAW_DN);
  ASSERT(fabs(rows[0].default_over_best - 1.05) < 1e-12);
  ASSERT_EQ(rows[1].best, BC_DEFAULT);
  ASSERT(fabs(rows[1].default_over_best - 1.0) < 1e-12);
  ASSERT_EQ(rows[2].best, -1);
  ASSERT(rows[2].default_over_best == 0.0);

  char *j = report(rows, 3, &rows[1]);
  ASSERT(json_valid(j));
  ASSERT(fabs(json_number(j, "default_over_best") - 1.05) < 1e-9);
  ASSERT(fabs(json_number(j, "gpus") - 2) < 1e-12);
  ASSERT_STR_CONTAINS(j, "\"device\": \"NVIDIA H200 \\\"test\\\"\"");
  ASSERT_STR_CONTAINS(j, "fastest: \\\"q\\\" \\\\ line\\u000anext\\u0009tab \xc3\xa9");
  ASSERT_STR_CONTAINS(j, "\"best\": \"raw_dn\"");
  ASSERT_STR_CONTAINS(j, "\"n\": 4096, \"nrhs\": 1, \"reps\": 1, \"no_factor\": true,");
  ASSERT_STR_CONTAINS(j, "\"n\": 8192, \"nrhs\": 1, \"reps\": 1, \"no_factor\": false,");
  ASSERT_STR_CONTAINS(j, "\"best\": null, \"default_over_best\": null");
  ASSERT_STR_CONTAINS(j, "\"resid\": [null, 0], \"resid_ok\": false, \"note\": \"eigenvalues not ascending");
  ASSERT_STR_CONTAINS(j, "\"raw_mg\": {\"ran\": true, \"seconds\": 1.1, \"min\": 1.1, \"times\": [1.1], \"tile\": 2048}");
  ASSERT_STR_CONTAINS(j, "\"capacity\": {\"routine\": \"potrs\"");
  /* rows 1 and 2 skip 4 + 5 columns; the capacity row (= row 1) 4 more */
  ASSERT_EQ(count_substr(j, "\"skipped\": "), 13);
  ASSERT_EQ(count_substr(j, "\"ran\": true"), 5 + 1 + 1);
  free(j);
  return 0;
}
