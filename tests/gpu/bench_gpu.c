/*
 * tests/gpu/bench_gpu.c - the GPU benchmark, main (docs/performance/gpu.md).
 *
 *   muster-gpu-bench [--gpus R] [--routine LIST] [--dtype LIST] [--n LIST] [--quick]
 *                    [--reps K] [--json FILE] [--capacity] [--capacity-n N] [--list] [--no-factor]
 *                    [--columns LIST]
 *   muster-gpu-bench --sweep [--gpus R]      tile sweep of raw cuSolverMg (docs/tiles.md)
 *
 * One row per (routine, dtype, N), on fresh random matrices, the columns of
 * bench.h side by side in one process: the runtime's default choice, each
 * provider forced (bench_muster.c, results checked), raw cuSolverMg at the
 * tile cusolvermg used and raw cusolverDn on one GPU (raw.c), and default /
 * best.  A column an engine refuses (memory, ...) is skipped with its
 * reason; the run goes on.  Medians of the repetitions.  Prints one line
 * per row as it goes and the table last; --json rewrites FILE after every
 * row, so a run cut short keeps what it measured.
 *
 * Exit status: 0; 1 when a result failed its check or the default column
 * did not run in some row; 2 on a bad option; 3 when the GPUs are missing.
 */
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda_runtime_api.h>

#include "bench.h"
#include "muster/parse.h"
#include "raw.h"

#define MAX_ROWS 128
#define MAX_NS 16
#define WARM_N 1024 /* the first muster solve of a (routine, dtype, column): handles, kernels */

typedef struct opts {
  int gpus, quick, reps, sweep, capacity, list, no_factor;
  unsigned routines, dtypes;   /* bits (1u << value); 0: the default set */
  unsigned columns;            /* bits (1u << BC_*) of the columns to run */
  int dorder[4];               /* --dtype's order (muster_dtype_t)       */
  int ndt;
  int64_t ns[MAX_NS];          /* --n; nn == 0: the default sizes         */
  int nn;
  int64_t cap_n;
  const char *json;
} opts_t;

/* "block" or "cyclic:T" (T >= 1) into bench_cyclic_tile; nonzero when malformed. */
static int parse_layout(const char *v) {
  char *end = NULL;
  if (!strcmp(v, "block")) {
    bench_cyclic_tile = 0;
    return 0;
  }
  if (strncmp(v, "cyclic:", 7)) return 1;
  long long t = strtoll(v + 7, &end, 10);
  if (*end || t < 1 || t > (1 << 20)) return 1;
  bench_cyclic_tile = t;
  return 0;
}

static int usage(void) {
  fprintf(stderr,
          "usage: muster-gpu-bench [--gpus R] [--routine LIST] [--dtype LIST] [--n LIST] [--quick]\n"
          "                        [--reps K] [--json FILE] [--capacity] [--capacity-n N] [--list]\n"
          "                        [--no-factor] [--columns LIST] [--provider NAME] [--layout block|cyclic:T]\n"
          "       muster-gpu-bench --sweep [--gpus R]\n"
          "  --no-factor: potrs with MUSTER_NO_FACTOR (what muster_jax and muster solve ask for)\n"
          "  --columns: a subset of default,cusolverdn,cusolvermg,raw_mg,raw_dn (plot_gpu_bench.py merges runs)\n"
          "  --provider NAME: the default column forces provider NAME (e.g. tiled)\n"
          "  --layout cyclic:T: muster's columns 1-D block-cyclic with tile T (default block; the\n"
          "    tiled engine works in place when T is its tile: the capacity runs need that)\n"
          "  --list: print the rows and repetitions the options select, touch no GPU\n"
          "  LIST: comma-separated, e.g. --routine potrs,syevd --dtype f64,c128 --n 4096,8192\n"
          "  default rows: potrs, potri, syevd x f64 at N = 4096 .. 65536 (syevd to 32768),\n"
          "  f32 and c128 at 8192 and 32768; --quick: those with N <= 8192 (a few minutes on one GPU)\n");
  return 2;
}

/* Name -> value of one kind of list entry, -1 when unknown. */
static int routine_value(const char *s) {
  muster_routine_t r;
  return muster_routine_from_name(s, &r) == 0 ? (int)r : -1;
}
static int dtype_value(const char *s) {
  muster_dtype_t d;
  return muster_dtype_from_name(s, &d) == 0 ? (int)d : -1;
}
static int column_value(const char *s) {
  for (int k = 0; k < BC_COLS; k++)
    if (!strcmp(s, bench_col_name[k])) return k;
  return -1;
}

/* A comma-separated list of distinct names (what: the kind, for the
 * message) into bits (1u << value), their values in order[] when order is
 * not NULL.  0, or -1 after saying why. */
static int parse_list(const char *opt, const char *v, int (*value_of)(const char *), const char *what,
                      unsigned *bits, int *order, int *norder) {
  char buf[128];
  *bits = 0;
  /* strtok skips empty names: refuse them first */
  if (snprintf(buf, sizeof buf, "%s", v) >= (int)sizeof buf || !buf[0] || v[0] == ',' ||
      v[strlen(v) - 1] == ',' || strstr(v, ",,"))
    goto bad;
  for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    int value = value_of(tok);
    if (value < 0 || (*bits & (1u << value))) goto bad;
    *bits |= 1u << value;
    if (order) order[(*norder)++] = value;
  }
  return 0;
bad:
  fprintf(stderr, "muster-gpu-bench: %s: '%s' is not a list of distinct %s\n", opt, v, what);
  return -1;
}

static int parse_i64(const char *opt, const char *v, int64_t lo, int64_t hi, int64_t *out) {
  if (muster_parse_i64(v, lo, hi, out) == 0) return 0;
  fprintf(stderr, "muster-gpu-bench: %s: %s\n", opt, muster_last_error());
  return -1;
}

static int parse_opts(int argc, char **argv, opts_t *o) {
  memset(o, 0, sizeof *o);
  o->gpus = 2;
  o->cap_n = 131072;
  o->columns = (1u << BC_COLS) - 1;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    int64_t x;
    if (!strcmp(a, "--quick")) o->quick = 1;
    else if (!strcmp(a, "--sweep")) o->sweep = 1;
    else if (!strcmp(a, "--capacity")) o->capacity = 1;
    else if (!strcmp(a, "--list")) o->list = 1;
    else if (!strcmp(a, "--no-factor")) o->no_factor = 1;
    else if (!strcmp(a, "--no-capacity")) o->capacity = 0; /* the default; kept for old scripts */
    else if (!v) return usage();
    else if (!strcmp(a, "--provider") && i + 1 < argc) bench_default_provider = argv[++i];
    else if (!strcmp(a, "--layout") && i + 1 < argc) {
      if (parse_layout(argv[++i])) return usage();
    }
    else if (!strcmp(a, "--gpus")) {
      if (parse_i64(a, v, 1, 16, &x)) return 2;
      o->gpus = (int)x;
      i++;
    } else if (!strcmp(a, "--reps")) {
      if (parse_i64(a, v, 1, BENCH_MAX_REPS, &x)) return 2;
      o->reps = (int)x;
      i++;
    } else if (!strcmp(a, "--capacity-n")) {
      if (parse_i64(a, v, 1, 1 << 20, &o->cap_n)) return 2;
      o->capacity = 1;
      i++;
    } else if (!strcmp(a, "--n")) {
      if ((o->nn = muster_parse_i64_list(v, 1, 1 << 20, o->ns, MAX_NS)) < 0) {
        fprintf(stderr, "muster-gpu-bench: --n: %s\n", muster_last_error());
        return 2;
      }
      i++;
    } else if (!strcmp(a, "--routine")) {
      if (parse_list(a, v, routine_value, "routines (potrs, potri, syevd)", &o->routines, NULL, NULL)) return 2;
      i++;
    } else if (!strcmp(a, "--dtype")) {
      o->ndt = 0;
      if (parse_list(a, v, dtype_value, "dtypes (f32, f64, c64, c128)", &o->dtypes, o->dorder, &o->ndt)) return 2;
      i++;
    } else if (!strcmp(a, "--columns")) {
      if (parse_list(a, v, column_value, "columns (default, cusolverdn, cusolvermg, raw_mg, raw_dn)", &o->columns,
                     NULL, NULL))
        return 2;
      i++;
    } else if (!strcmp(a, "--json")) {
      o->json = v;
      i++;
    } else return usage();
  }
  return 0;
}

static int default_reps(muster_routine_t rt, int64_t n, int quick) {
  if (rt == MUSTER_SYEVD) return quick ? 2 : n <= 8192 ? 3 : n <= 16384 ? 2 : 1;
  return quick ? 3 : n <= 16384 ? 5 : 3;
}

/* The rows: the set filtered by --routine and --dtype; --n replaces
 * the sizes (every selected routine x dtype at each). */
static int make_rows(const opts_t *o, bench_row_t *rows) {
  static const int64_t f64_n[] = {4096, 8192, 16384, 32768, 65536}, other_n[] = {8192, 32768};
  static const int dts[] = {MUSTER_F64, MUSTER_F32, MUSTER_C128};
  const int *dorder = o->ndt ? o->dorder : dts;
  int ndt = o->ndt ? o->ndt : 3, nrows = 0;
  for (int rt = MUSTER_POTRS; rt <= MUSTER_SYEVD; rt++) {
    if (o->routines && !(o->routines & (1u << rt))) continue;
    for (int k = 0; k < ndt; k++) {
      const int64_t *ns = o->nn ? o->ns : dorder[k] == MUSTER_F64 ? f64_n : other_n;
      int nn = o->nn ? o->nn : dorder[k] == MUSTER_F64 ? 5 : 2;
      for (int j = 0; j < nn && nrows < MAX_ROWS; j++) {
        if (!o->nn && ((rt == MUSTER_SYEVD && ns[j] > 32768) || (o->quick && ns[j] > 8192))) continue;
        bench_row_t *w = &rows[nrows++];
        memset(w, 0, sizeof *w);
        w->routine = (muster_routine_t)rt;
        w->dtype = (muster_dtype_t)dorder[k];
        w->n = ns[j];
        w->nrhs = 1;
        w->reps = o->reps ? o->reps : default_reps(w->routine, w->n, o->quick);
        if (o->no_factor && rt == MUSTER_POTRS) w->flags = MUSTER_NO_FACTOR;
      }
    }
  }
  return nrows;
}

/* A raw column: tile > 0 for raw cuSolverMg on `gpus` GPUs, else
 * cusolverDn on GPU 0. */
static void raw_col(const bench_row_t *w, bench_col_t *c, int64_t tile, int gpus, const char *no_tile) {
  raw_run_t r;
  memset(c, 0, sizeof *c);
  memset(&r, 0, sizeof r);
  r.routine = w->routine;
  r.dtype = w->dtype;
  r.n = w->n;
  r.nrhs = w->nrhs;
  r.tile = tile;
  r.ngpu = tile > 0 ? gpus : 1;
  r.reps = w->reps;
  r.seed = 99;
  if (no_tile) {
    snprintf(c->skip, sizeof c->skip, "%s", no_tile);
    return;
  }
  int rc = tile > 0 ? raw_mg(&r) : raw_dn(&r);
  for (int d = 0; d < r.ngpu; d++) { /* an out-of-memory error is not sticky: clear it */
    cudaSetDevice(d);
    (void)cudaGetLastError();
  }
  if (rc != 0) {
    snprintf(c->skip, sizeof c->skip, "%s", r.err);
    return;
  }
  if (r.info != 0) {
    snprintf(c->skip, sizeof c->skip, "the routine returned info %d", r.info);
    return;
  }
  c->ran = 1;
  c->t_med = r.t_med;
  c->t_min = r.t_min;
  c->tile = tile;
}

static void run_row(bench_row_t *w, int gpus, unsigned columns) {
  static unsigned char warmed[4][5][BC_MUSTER_COLS];
  if (columns & (1u << BC_RAW_DN)) raw_col(w, &w->col[BC_RAW_DN], 0, gpus, NULL);
  for (int k = 0; k < BC_MUSTER_COLS; k++) {
    if (!(columns & (1u << k))) continue;
    if (!warmed[w->routine][w->dtype][k]) { /* untimed: creating handles is not the solve's cost */
      bench_row_t small = *w;
      bench_col_t scratch;
      small.n = w->n < WARM_N ? w->n : WARM_N;
      small.reps = 1;
      bench_muster(&small, k, gpus, &scratch);
      warmed[w->routine][w->dtype][k] = 1;
    }
    bench_muster(w, k, gpus, &w->col[k]);
  }
  const bench_col_t *mg = &w->col[BC_MG], *def = &w->col[BC_DEFAULT];
  int64_t tile = mg->ran ? mg->tile : def->ran && !strcmp(def->provider, "cusolvermg") ? def->tile : 0;
  if (columns & (1u << BC_RAW_MG))
    raw_col(w, &w->col[BC_RAW_MG], tile, gpus, tile > 0 ? NULL : "cusolvermg did not run: no tile to match");
  for (int k = 0; k < BC_COLS; k++)
    if (!(columns & (1u << k))) {
      memset(&w->col[k], 0, sizeof w->col[k]);
      snprintf(w->col[k].skip, sizeof w->col[k].skip, "not selected (--columns)");
    }
  bench_rank(w);
}

/* ---- % of peak, and the tiled engine's phases ---------------------------------------- */

#define PEAK_PER_GPU 66.9e12 /* FP64 tensor-core peak of an H100/H200, flop/s (f32 alike) */
static int peak_gpus = 1;     /* the run's --gpus                                          */
const char *bench_default_provider;
int64_t bench_cyclic_tile;

/* The row's flops: potrf n^3/3 (+ 2 n^2 nrhs of solves for potrs), x4 complex. */
static double row_flops(const bench_row_t *w) {
  double n = (double)w->n, f = n * n * n / 3.0;
  if (w->routine == MUSTER_POTRS) f += 2.0 * n * n * (double)w->nrhs;
  return muster_dtype_is_complex(w->dtype) ? 4.0 * f : f;
}

static int find_sym(struct dl_phdr_info *info, size_t size, void *data) {
  void **out = data;
  (void)size;
  if (!info->dlpi_name || !info->dlpi_name[0]) return 0;
  void *h = dlopen(info->dlpi_name, RTLD_NOW | RTLD_NOLOAD);
  if (!h) return 0;
  *out = dlsym(h, "muster_tiled_timings");
  dlclose(h);
  return *out != NULL;
}

/* TF/s and % of the aggregate peak of every timed column; the tiled
 * engine's phases (its last solve) when it ran. */
static void print_peak(const bench_row_t *w) {
  /* every column against the R GPUs' peak: cusolverdn and raw dn run on one of them */
  printf("    %% of peak (%.1f TF/s x %d GPU(s), potrf n^3/3 flops):", PEAK_PER_GPU / 1e12, peak_gpus);
  for (int k = 0; k < BC_COLS; k++) {
    const bench_col_t *c = &w->col[k];
    if (!c->ran || c->t_med <= 0) continue;
    double tf = row_flops(w) / c->t_med;
    printf(" %s%s%s %.1f TF/s %.0f%%", bench_col_name[k], c->provider[0] ? "=" : "", c->provider, tf / 1e12,
           100.0 * tf / (PEAK_PER_GPU * peak_gpus));
  }
  printf("\n");
  void *fn = NULL;
  dl_iterate_phdr(find_sym, &fn);
  if (!fn) return;
  double t[8] = {0};
  int nt = ((int (*)(double *, int))fn)(t, 8);
  if (nt >= 6)
    printf("    tiled phases of its last solve (s): move in %.4f, factor %.4f, checks %.4f, solve %.4f, move out "
           "%.4f, total %.4f\n", t[0], t[1], t[2], t[3], t[4], t[5]);
}

/* "%.4f" seconds, or "-" for a skipped column. */
static const char *secs(const bench_col_t *c, char *buf, size_t cap) {
  if (!c->ran) return "-";
  snprintf(buf, cap, "%.4f%s", c->t_med, c->checked && !c->resid_ok ? " (WRONG)" : "");
  return buf;
}

static void print_row(const bench_row_t *w, int markdown) {
  char b[BC_COLS][48], ratio[32] = "-";
  if (w->default_over_best > 0) snprintf(ratio, sizeof ratio, "%.3f", w->default_over_best);
  const char *fmt = markdown ? "| %s | %s | %lld | %s | %s | %s | %s | %s | %lld | %s | %s | %s |\n"
                             : "  %s %s n=%lld: default %s (%s) | cusolverdn %s | cusolvermg %s | raw mg %s (tile %lld) "
                               "| raw dn %s | default/best %s (best: %s)\n";
  printf(fmt, muster_routine_name(w->routine), muster_dtype_name(w->dtype), (long long)w->n,
         secs(&w->col[BC_DEFAULT], b[0], 48), w->col[BC_DEFAULT].provider[0] ? w->col[BC_DEFAULT].provider : "-",
         secs(&w->col[BC_DN], b[1], 48), secs(&w->col[BC_MG], b[2], 48), secs(&w->col[BC_RAW_MG], b[3], 48),
         (long long)w->col[BC_RAW_MG].tile, secs(&w->col[BC_RAW_DN], b[4], 48), ratio,
         w->best >= 0 ? bench_col_name[w->best] : "-");
  for (int k = 0; k < BC_COLS && !markdown; k++) {
    const bench_col_t *c = &w->col[k];
    if (c->skip[0]) printf("    %s %s: %s\n", bench_col_name[k], c->ran ? "note" : "skipped", c->skip);
    if (c->checked) printf("    %s residual ratios %.3g %.3g: %s\n", bench_col_name[k], c->resid[0], c->resid[1],
                           c->resid_ok ? "ok" : "FAILED");
  }
  if (!markdown) printf("    default chose %s: %s\n", w->col[BC_DEFAULT].provider, w->col[BC_DEFAULT].reason);
  if (!markdown) print_peak(w);
  fflush(stdout);
}

static void write_json(const char *path, const bench_env_t *env, const bench_row_t *rows, int nrows,
                       const bench_row_t *cap) {
  char tmp[4096];
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  FILE *f = fopen(tmp, "w");
  if (!f) {
    perror(tmp);
    return;
  }
  bench_json(f, env, rows, nrows, cap);
  if (fclose(f) != 0 || rename(tmp, path) != 0) perror(path);
}

/* Device, driver and CUDA versions, date, command line. */
static void get_env(int argc, char **argv, int gpus, bench_env_t *env) {
  struct cudaDeviceProp prop;
  memset(env, 0, sizeof *env);
  if (cudaGetDeviceProperties(&prop, 0) == cudaSuccess) {
    snprintf(env->device, sizeof env->device, "%s", prop.name);
    env->gpu_bytes = prop.totalGlobalMem;
  }
  cudaRuntimeGetVersion(&env->cuda_runtime);
  cudaDriverGetVersion(&env->cuda_driver);
  snprintf(env->driver, sizeof env->driver, "unknown");
  FILE *f = fopen("/proc/driver/nvidia/version", "r"); /* "NVRM version: NVIDIA UNIX ... Module  580.95.05  ..." */
  char line[512], tok[64];
  if (f && fgets(line, sizeof line, f))
    for (char *p = strstr(line, "Module"); p && sscanf(p, "%63s", tok) == 1; p = strchr(p + 1, ' '))
      if (tok[0] >= '0' && tok[0] <= '9' && strchr(tok, '.')) {
        snprintf(env->driver, sizeof env->driver, "%s", tok);
        break;
      }
  if (f) fclose(f);
  env->gpus = gpus;
  time_t now = time(NULL);
  strftime(env->date, sizeof env->date, "%Y-%m-%d %H:%M UTC", gmtime(&now));
  size_t len = 0;
  for (int i = 0; i < argc && len < sizeof env->command; i++)
    len += (size_t)snprintf(env->command + len, sizeof env->command - len, "%s%s", i ? " " : "", argv[i]);
}

/* The capacity run: potrs f64 at cap_n through the runtime's choice. */
static void capacity(int64_t n, int gpus, bench_row_t *cap) {
  memset(cap, 0, sizeof *cap);
  cap->routine = MUSTER_POTRS;
  cap->dtype = MUSTER_F64;
  cap->n = n;
  cap->nrhs = 1;
  cap->reps = 1;
  bench_muster(cap, BC_DEFAULT, gpus, &cap->col[BC_DEFAULT]);
  for (int k = 1; k < BC_COLS; k++) snprintf(cap->col[k].skip, sizeof cap->col[k].skip, "not run (capacity run)");
  bench_rank(cap);
}

int main(int argc, char **argv) {
  static bench_row_t rows[MAX_ROWS], cap;
  opts_t o;
  bench_env_t env;
  int rc = parse_opts(argc, argv, &o), ndev = 0, bad = 0;
  if (rc) return rc;
  peak_gpus = o.gpus;
  int nrows = make_rows(&o, rows);
  if (o.list) {
    for (int i = 0; i < nrows; i++)
      printf("%s %s %lld reps %d\n", muster_routine_name(rows[i].routine), muster_dtype_name(rows[i].dtype),
             (long long)rows[i].n, rows[i].reps);
    return 0;
  }
  if (getenv("MUSTER_PROVIDER")) { /* it would turn the default column into a forced one */
    fprintf(stderr, "muster-gpu-bench: MUSTER_PROVIDER=%s ignored: the columns say what is forced\n",
            getenv("MUSTER_PROVIDER"));
    unsetenv("MUSTER_PROVIDER");
  }
  setenv("NCCL_NVLS_ENABLE", "0", 0);
  if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev < o.gpus) {
    fprintf(stderr, "muster-gpu-bench: need %d GPUs, found %d\n", o.gpus, ndev);
    return 3;
  }
  get_env(argc, argv, o.gpus, &env);
  printf("# muster-gpu-bench: %d x %s, driver %s, CUDA runtime %d, %s\n", o.gpus, env.device, env.driver,
         env.cuda_runtime, env.date);
  if (o.sweep) {
    bench_sweep(o.gpus);
    return 0;
  }
  double t_all = bench_now();
  for (int i = 0; i < nrows; i++) {
    run_row(&rows[i], o.gpus, o.columns);
    print_row(&rows[i], 0);
    if (o.json) write_json(o.json, &env, rows, i + 1, NULL);
  }
  if (o.capacity) {
    capacity(o.cap_n, o.gpus, &cap);
    print_row(&cap, 0);
  }
  if (o.json) write_json(o.json, &env, rows, nrows, o.capacity ? &cap : NULL);
  printf("\n# %d x %s, driver %s, %s; seconds (median), 1 rhs; total %.0f s\n", o.gpus, env.device, env.driver,
         env.date, bench_now() - t_all);
  printf("| routine | dtype | N | default | chose | cusolverdn | cusolvermg | raw mg @tile | tile | raw dn (1 GPU) "
         "| default / best | best |\n|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  for (int i = 0; i < nrows + o.capacity; i++) {
    const bench_row_t *w = i < nrows ? &rows[i] : &cap;
    print_row(w, 1);
    for (int k = 0; k < BC_MUSTER_COLS; k++) bad |= w->col[k].checked && !w->col[k].resid_ok;
    bad |= !w->col[BC_DEFAULT].ran && (i == nrows || (o.columns & (1u << BC_DEFAULT)));
  }
  return bad ? 1 : 0;
}
