/*
 * tests/gpu/bench.h - the GPU benchmark's rows and columns
 * (docs/performance/gpu.md), shared by its parts:
 *   bench_gpu.c     main: options, the row list, running the columns, the table
 *   bench_muster.c  the muster columns (muster_solve in threads mode, checked)
 *   bench_json.c    the JSON report (no CUDA: also built into the CPU tests)
 *   bench_sweep.c   --sweep: the tile sweep of raw cuSolverMg (docs/tiles.md)
 */
#ifndef MUSTER_BENCH_H
#define MUSTER_BENCH_H

#include <stdint.h>
#include <stdio.h>

#include "muster.h"

/* The columns, in table order.  The muster columns run muster_solve; the raw
 * ones call cuSOLVER directly (raw.h). */
enum {
  BC_DEFAULT,  /* muster_solve, no provider forced: the runtime's choice  */
  BC_DN,       /* muster_solve, provider "cusolverdn" forced             */
  BC_MG,       /* muster_solve, provider "cusolvermg" forced             */
  BC_RAW_MG,   /* raw cuSolverMg at the tile cusolvermg used             */
  BC_RAW_DN,   /* raw cusolverDn on GPU 0                                */
  BC_COLS
};
#define BC_MUSTER_COLS 3 /* BC_DEFAULT .. BC_MG */
#define BENCH_MAX_REPS 16

/* Column names (the JSON keys and the table's headings) and, for the forced
 * muster columns, the provider forced (NULL for the default). */
extern const char *const bench_col_name[BC_COLS];
extern const char *const bench_col_provider[BC_COLS];
/* --provider NAME: the default column forces NAME instead (e.g. tiled, not
 * measured yet, so never the runtime's choice); NULL: the runtime's choice. */
extern const char *bench_default_provider;
/* --layout cyclic:T: the shards 1-D column-cyclic with tile T (0: block columns) */
extern int64_t bench_cyclic_tile;

typedef struct bench_col {
  int ran;                 /* 1: timed (t_med valid); 0: skipped, see skip   */
  double t[BENCH_MAX_REPS];/* seconds of each timed repetition               */
  int nt;
  double t_med, t_min;
  double tp[BENCH_MAX_REPS];/* muster: muster_solve_result_t.seconds of each  */
  double prov_med;         /* their median                                   */
  int64_t tile;            /* muster: res.tile; raw_mg: the tile run         */
  char provider[32];       /* muster: res.provider                           */
  char reason[MUSTER_MAX_REASON]; /* muster: res.reason                      */
  int checked;             /* muster: 1 when the result was checked          */
  double resid[2];         /* its residual ratios (gu_resid_ratios)          */
  int resid_ok;            /* both below GU_TOL (and eigenvalues ascending)  */
  char skip[512];          /* why not timed: the engine's refusal, ...       */
} bench_col_t;

typedef struct bench_row {
  muster_routine_t routine;
  muster_dtype_t dtype;
  int64_t n, nrhs;
  int reps;
  unsigned flags;          /* muster columns' args.flags (MUSTER_NO_FACTOR)  */
  bench_col_t col[BC_COLS];
  int best;                /* column with the least t_med, -1: none ran      */
  double default_over_best;/* col[BC_DEFAULT].t_med / best's; 0: unknown    */
} bench_row_t;

/* The run's facts for the report. */
typedef struct bench_env {
  char device[256];        /* GPU 0's name                                   */
  char driver[64];         /* NVIDIA driver version, "unknown" if unread     */
  int cuda_runtime, cuda_driver; /* cudaRuntimeGetVersion, cudaDriverGetVersion */
  uint64_t gpu_bytes;      /* GPU 0's total memory                           */
  int gpus;
  char date[64];           /* "YYYY-MM-DD HH:MM UTC"                         */
  char command[1024];      /* the command line                               */
} bench_env_t;

/* A muster column's run of one row on GPUs 0..gpus-1: row->reps timed
 * solves of fresh random matrices, then the last one's result checked on
 * the GPU.  Fills c: c->ran = 0 and c->skip = the reason on a refusal or
 * failure (never exits); a check that fails leaves c->ran = 1 with
 * c->resid_ok = 0 (and c->skip saying why when it is not a ratio). */
void bench_muster(const bench_row_t *row, int col, int gpus, bench_col_t *c);

/* Fill row->best and row->default_over_best from the columns. */
void bench_rank(bench_row_t *row);

/* Write the report as JSON to f (schema: docs/performance/gpu.md).
 * capacity: NULL, or the capacity run as a row. */
void bench_json(FILE *f, const bench_env_t *env, const bench_row_t *rows, int nrows,
                const bench_row_t *capacity);

/* --sweep: the tile sweep of raw cuSolverMg on `gpus` GPUs. */
void bench_sweep(int gpus);

double bench_now(void);

#endif
