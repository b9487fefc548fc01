/*
 * tests/gpu/bench_json.c - the benchmark's JSON report and the ranking of a
 * row's columns.  No CUDA here: the CPU tests build it too
 * (tests/unit/test_bench_json.c), and tools/plot_gpu_bench.py reads what it
 * writes (schema in docs/performance/gpu.md).
 */
#include <math.h>
#include <string.h>

#include "bench.h"
#include "json_str.h"

const char *const bench_col_name[BC_COLS] = {"default", "cusolverdn", "cusolvermg", "raw_mg", "raw_dn"};
const char *const bench_col_provider[BC_COLS] = {NULL, "cusolverdn", "cusolvermg", NULL, NULL};

void bench_rank(bench_row_t *row) {
  row->best = -1;
  row->default_over_best = 0.0;
  for (int k = 0; k < BC_COLS; k++) {
    const bench_col_t *c = &row->col[k];
    if (c->ran && c->t_med > 0 && (row->best < 0 || c->t_med < row->col[row->best].t_med)) row->best = k;
  }
  if (row->best >= 0 && row->col[BC_DEFAULT].ran)
    row->default_over_best = row->col[BC_DEFAULT].t_med / row->col[row->best].t_med;
}

/* A number, or null when it is not one (NaN, inf: JSON has neither). */
static void jnum(FILE *f, double v) {
  if (isfinite(v)) fprintf(f, "%.9g", v);
  else fputs("null", f);
}

static void jcol(FILE *f, int k, const bench_col_t *c) {
  fprintf(f, "\"%s\": {\"ran\": %s", bench_col_name[k], c->ran ? "true" : "false");
  if (c->ran) {
    fputs(", \"seconds\": ", f);
    jnum(f, c->t_med);
    fputs(", \"min\": ", f);
    jnum(f, c->t_min);
    fputs(", \"times\": [", f);
    for (int i = 0; i < c->nt; i++) {
      if (i) fputs(", ", f);
      jnum(f, c->t[i]);
    }
    fputc(']', f);
  }
  if (k < BC_MUSTER_COLS) {
    fputs(", \"provider\": ", f);
    json_put_str(f, c->provider, SIZE_MAX);
    fputs(", \"reason\": ", f);
    json_put_str(f, c->reason, SIZE_MAX);
    if (c->ran) {
      fputs(", \"provider_seconds\": ", f);
      jnum(f, c->prov_med);
    }
  }
  if (c->tile > 0) fprintf(f, ", \"tile\": %lld", (long long)c->tile);
  if (c->checked) {
    fputs(", \"resid\": [", f);
    jnum(f, c->resid[0]);
    fputs(", ", f);
    jnum(f, c->resid[1]);
    fprintf(f, "], \"resid_ok\": %s", c->resid_ok ? "true" : "false");
  }
  if (c->skip[0]) {
    fputs(c->ran ? ", \"note\": " : ", \"skipped\": ", f);
    json_put_str(f, c->skip, SIZE_MAX);
  }
  fputc('}', f);
}

static void jrow(FILE *f, const bench_row_t *w) {
  fprintf(f, "{\"routine\": \"%s\", \"dtype\": \"%s\", \"n\": %lld, \"nrhs\": %lld, \"reps\": %d, "
          "\"no_factor\": %s, \"columns\": {", muster_routine_name(w->routine), muster_dtype_name(w->dtype),
          (long long)w->n, (long long)w->nrhs, w->reps, w->flags & MUSTER_NO_FACTOR ? "true" : "false");
  for (int k = 0; k < BC_COLS; k++) {
    if (k) fputs(", ", f);
    jcol(f, k, &w->col[k]);
  }
  fputs("}, \"best\": ", f);
  if (w->best >= 0) json_put_str(f, bench_col_name[w->best], SIZE_MAX);
  else fputs("null", f);
  fputs(", \"default_over_best\": ", f);
  if (w->default_over_best > 0) jnum(f, w->default_over_best);
  else fputs("null", f);
  fputc('}', f);
}

void bench_json(FILE *f, const bench_env_t *env, const bench_row_t *rows, int nrows,
                const bench_row_t *capacity) {
  fputs("{\"bench\": \"muster-gpu-bench\", \"schema\": 1, \"date\": ", f);
  json_put_str(f, env->date, SIZE_MAX);
  fputs(", \"device\": ", f);
  json_put_str(f, env->device, SIZE_MAX);
  fputs(", \"driver\": ", f);
  json_put_str(f, env->driver, SIZE_MAX);
  fprintf(f, ", \"cuda_runtime\": %d, \"cuda_driver\": %d, \"gpu_memory_bytes\": %llu, \"gpus\": %d, \"command\": ",
          env->cuda_runtime, env->cuda_driver, (unsigned long long)env->gpu_bytes, env->gpus);
  json_put_str(f, env->command, SIZE_MAX);
  fputs(",\n \"columns\": [", f);
  for (int k = 0; k < BC_COLS; k++) fprintf(f, "%s\"%s\"", k ? ", " : "", bench_col_name[k]);
  fputs("],\n \"rows\": [", f);
  for (int i = 0; i < nrows; i++) {
    fputs(i ? ",\n  " : "\n  ", f);
    jrow(f, &rows[i]);
  }
  fputs("\n ]", f);
  if (capacity) {
    fputs(",\n \"capacity\": ", f);
    jrow(f, capacity);
  }
  fputs("\n}\n", f);
}
