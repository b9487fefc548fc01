/*
 * tools/muster/cmd_bench.c - `muster bench [--routine R] [--dtype T]
 *   [--n 1024,2048,4096] [--m M] [--ranks R] [--nrhs K] [--reps K]
 *   [--warmup K] [--modes a,b] [--seed S] [--json]`
 *
 * Every mode (bench.h; bench_modes.c has LAPACKE directly and muster in
 * threads and processes mode) solves the same random matrix of each size
 * (SPD/Hermitian for potrs, potri, syevd; general for getrs; general m x n,
 * m = --m or 2n, for gels); reported: median/min/max of the timed reps, and
 * the ratio of each mode's median to the baseline's ("overhead" = ratio -
 * 1).  potrs, getrs and gels results are residual-checked (check.h) so
 * nobody times a failed solve.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "check.h"
#include "cli.h"
#include "cli_args.h"
#include "opts.h"
#include "solve_run.h"

#define WHO "muster bench"
#define BENCH_MAX_SIZES 32    /* --n entries */

static bench_mode_t *modes;

void bench_register(bench_mode_t *m) {
  bench_mode_t **pp = &modes;
  while (*pp && (*pp)->order <= m->order) pp = &(*pp)->next;
  m->next = *pp;
  *pp = m;
}

const bench_mode_t *bench_modes(void) { return modes; }

static int usage(FILE *f) {
  char routines[OPT_NAMES_CAP], dtypes[OPT_NAMES_CAP];
  fprintf(f,
          "usage: muster bench [--routine %s] [--dtype %s]\n"
          "                    [--n 1024,2048,4096] [--m M] [--ranks 2] [--nrhs 1] [--reps 5] [--warmup 1]\n"
          "                    [--modes NAME,NAME] [--seed 42] [--provider lapack|auto|NAME] [--json]\n"
          "  --provider: the muster modes' provider (default lapack; auto: the runtime's choice)\n"
          "  --m: gels's rows (every size's A is m x n; m >= every n), default 2n for each n;\n"
          "       gels only.  getrs, gels: a random general A (potrs: SPD); potrs, getrs and\n"
          "       gels rows show the residual (gels: the normal-equations one, check.h)\n"
          "       muster bench --calibrate --provider NAME ... --out FILE   (measures a cost\n"
          "                    table: see `muster bench --calibrate --help`)\n"
          "ranges: --n 1..32 sizes of 1..65536, --m 1..65536, --ranks 1..64, --nrhs 1..65536, --reps 1..64,\n"
          "        --warmup 0..100, --seed 0..18446744073709551615\n"
          "options take their value as --opt V or --opt=V\n"
          "modes:\n", opt_routine_names(routines, sizeof routines, "|"), opt_dtype_names(dtypes, sizeof dtypes, "|"));
  for (const bench_mode_t *m = modes; m; m = m->next)
    fprintf(f, "  %-20s %s%s\n", m->name, m->what, m->baseline ? " [baseline]" : "");
  return f == stderr ? 2 : 0;
}

static int in_list(const char *list, const char *name) {
  if (!list) return 1;
  size_t len = strlen(name);
  for (const char *s = list; *s;) {
    const char *e = strchr(s, ',');
    size_t l = e ? (size_t)(e - s) : strlen(s);
    if (l == len && !strncmp(s, name, len)) return 1;
    if (!e) break;
    s = e + 1;
  }
  return 0;
}

/* s[0..len) for a message, as the runtime's parser quotes a value: at
 * most 48 bytes, '?' for a byte that is not printable. */
static void put_quoted(const char *s, size_t len) {
  fputc('\'', stderr);
  for (size_t i = 0; i < len && i < 48; i++) fputc(s[i] >= 0x20 && s[i] < 0x7f ? s[i] : '?', stderr);
  fputc('\'', stderr);
  if (len > 48) fprintf(stderr, "... (%zu bytes)", len);
}

/* Every entry of --modes names a mode: 0, or -1 after a message quoting
 * the value and naming the first entry that does not (an unknown one used
 * to run nothing and exit 0 with an empty table). */
static int check_modes(const char *list) {
  int k = 1;
  for (const char *s = list;; k++) {
    const char *e = strchr(s, ',');
    size_t l = e ? (size_t)(e - s) : strlen(s);
    int known = 0;
    for (const bench_mode_t *m = modes; m && !known; m = m->next)
      known = strlen(m->name) == l && !strncmp(s, m->name, l);
    if (!known) {
      fprintf(stderr, "%s: --modes: ", WHO);
      put_quoted(list, strlen(list));
      if (l == 0) {
        fprintf(stderr, " has an empty entry (%d)", k);
      } else {
        fprintf(stderr, ": entry %d ", k);
        put_quoted(s, l);
        fprintf(stderr, " is not a mode");
      }
      fprintf(stderr, "; the modes are");
      for (const bench_mode_t *m = modes; m; m = m->next)
        fprintf(stderr, "%s %s", m == modes ? "" : ",", m->name);
      fprintf(stderr, "; see '%s --help'\n", WHO); /* the one-line form of cli_usage_error */
      return -1;
    }
    if (!e) return 0;
    s = e + 1;
  }
}

static void machine(char *out, size_t cap) {
  char model[160] = "unknown cpu";
  FILE *f = fopen("/proc/cpuinfo", "r");
  if (f) {
    char line[256];
    while (fgets(line, sizeof line, f))
      if (!strncmp(line, "model name", 10)) {
        char *c = strchr(line, ':');
        if (c) {
          snprintf(model, sizeof model, "%s", c + 2);
          model[strcspn(model, "\n")] = '\0';
        }
        break;
      }
    fclose(f);
  }
  snprintf(out, cap, "%s, %ld cpus", model, sysconf(_SC_NPROCESSORS_ONLN));
}

/* The residual of X (check.h), NAN for routines without one. */
static double residual_of(const bench_problem_t *p, const void *X) {
  switch (p->routine) {
  case MUSTER_POTRS: return chk_potrs(p->dtype, p->n, p->nrhs, p->A, p->n, X, p->n, p->B, p->n);
  case MUSTER_GETRS: return chk_getrs(p->dtype, p->n, p->nrhs, p->A, p->n, X, p->n, p->B, p->n);
  case MUSTER_GELS: return chk_gels(p->dtype, p->m, p->n, p->nrhs, p->A, p->m, X, p->m, p->B, p->m);
  default: return NAN;
  }
}

typedef struct row {
  int64_t n, m; /* m: rows of A (gels's m, else n) */
  const bench_mode_t *mode;
  double median, min, max, ratio, residual, inner; /* inner: median provider time, NAN unknown */
  int ok;
  char err[300];
} row_t;

enum { O_HELP, O_H, O_JSON, O_ROUTINE, O_DTYPE, O_M, O_N, O_MODES, O_RANKS, O_NRHS, O_REPS, O_WARMUP,
       O_SEED, O_PROVIDER };
static const cli_opt_t opts[] = {{"--help", 0}, {"-h", 0},       {"--json", 0},   {"--routine", 1},
                                 {"--dtype", 1}, {"--m", 1},     {"--n", 1},      {"--modes", 1},
                                 {"--ranks", 1}, {"--nrhs", 1},  {"--reps", 1},   {"--warmup", 1},
                                 {"--seed", 1},  {"--provider", 1}};

/* What the options set. */
typedef struct bench_args {
  bench_problem_t p;
  int64_t ns[BENCH_MAX_SIZES];
  int nn;
  const char *mlist;
  uint64_t seed;
  int64_t m_opt; /* --m; 0: 2n */
  int json;
} bench_args_t;

/* Option k with value v into the bench_args_t arg (a cli_on_word): 0, or
 * 2 after printing why. */
static int option(int k, const char *v, void *arg) {
  bench_args_t *x = arg;
  bench_problem_t *p = &x->p;
  const char *a = opts[k].name;
  int bad = 0;
  switch (k) {
  case O_JSON: x->json = 1; break;
  case O_ROUTINE:
  case O_DTYPE:
    bad = k == O_ROUTINE ? muster_routine_from_name(v, &p->routine) != 0 : muster_dtype_from_name(v, &p->dtype) != 0;
    if (bad) cli_usage_error(WHO, "%s: %s", a, muster_last_error());
    break;
  case O_M: bad = opt_i64(WHO, a, v, 1, OPT_MAX_N, &x->m_opt) < 0; break;
  case O_N: bad = (x->nn = opt_i64_list(WHO, a, v, 1, OPT_MAX_N, x->ns, BENCH_MAX_SIZES)) < 0; break;
  case O_MODES: x->mlist = v, bad = check_modes(v) < 0; break;
  case O_RANKS: bad = opt_int(WHO, a, v, 1, MUSTER_MAX_RANKS, &p->ranks) < 0; break;
  case O_NRHS: bad = opt_i64(WHO, a, v, 1, OPT_MAX_N, &p->nrhs) < 0; break;
  case O_REPS: bad = opt_int(WHO, a, v, 1, BENCH_MAX_REPS, &p->reps) < 0; break;
  case O_WARMUP: bad = opt_int(WHO, a, v, 0, OPT_MAX_WARMUP, &p->warmup) < 0; break;
  case O_SEED: bad = opt_u64(WHO, a, v, &x->seed) < 0; break;
  case O_PROVIDER:
    bad = strcmp(v, "auto") && opt_backend(WHO, a, v) < 0;
    p->provider = strcmp(v, "auto") ? v : NULL;
    break;
  }
  return bad ? 2 : 0;
}

int cmd_bench(int argc, char **argv) {
  bench_args_t x = {.p = {.routine = MUSTER_POTRS, .dtype = MUSTER_F64, .nrhs = 1, .ranks = 2, .reps = 5,
                          .warmup = 1, .provider = "lapack"},
                    .ns = {1024, 2048, 4096}, .nn = 3, .seed = 42};
  for (int i = 1; i < argc; i++)
    if (!strcmp(argv[i], "--calibrate")) return cmd_calibrate(argc, argv);
  int rc = cli_args_each(WHO, argc, argv, opts, (int)(sizeof opts / sizeof opts[0]), 0, option, &x);
  if (rc == CLI_HELP) return usage(stdout);
  if (rc != 0) return 2;
  bench_problem_t p = x.p;
  int64_t *ns = x.ns, m_opt = x.m_opt;
  int nn = x.nn, json = x.json;
  const char *mlist = x.mlist;
  uint64_t seed = x.seed;
  if (opt_gels_m(WHO, p.routine, m_opt, ns, nn) < 0) return 2;
  row_t rows[256];
  int nrows = 0, failed = 0;
  char mach[256];
  machine(mach, sizeof mach);
  char mtext[40] = ""; /* gels: its rows */
  if (p.routine == MUSTER_GELS && m_opt) snprintf(mtext, sizeof mtext, " m=%" PRId64, m_opt);
  else if (p.routine == MUSTER_GELS) snprintf(mtext, sizeof mtext, " m=2n");
  if (!json)
    printf("muster bench: %s %s%s nrhs=%" PRId64 " ranks=%d, median of %d reps (+%d warmup); %s\n"
           "%6s  %-18s %10s %10s %10s %9s %11s %10s\n",
           muster_routine_name(p.routine), muster_dtype_name(p.dtype), mtext, p.nrhs, p.ranks, p.reps,
           p.warmup, mach, "n", "mode", "median_s", "min_s", "max_s", "overhead", "provider_s",
           "residual");
  for (int size = 0; size < nn && nrows < 256; size++) {
    int64_t n = ns[size];
    int64_t mrows = p.routine == MUSTER_GELS ? opt_gels_rows(m_opt, n) : n;
    size_t esz = muster_dtype_size(p.dtype);
    void *A = malloc((size_t)(mrows * n) * esz), *B = malloc((size_t)(mrows * p.nrhs) * esz),
         *X = malloc((size_t)(mrows * p.nrhs) * esz);
    if (!A || !B || !X) {
      fprintf(stderr, "muster bench: out of memory for n=%" PRId64 "\n", n);
      return 1;
    }
    chk_rng_t rng;
    chk_seed(&rng, seed + (uint64_t)n);
    if (p.routine == MUSTER_GETRS || p.routine == MUSTER_GELS)
      chk_random_general(p.dtype, mrows, n, &rng, A, mrows);
    else chk_random_hermitian(p.dtype, n, p.routine != MUSTER_SYEVD, &rng, A, n);
    chk_random_dense(p.dtype, mrows, p.nrhs, &rng, B, mrows);
    p.n = n;
    p.m = mrows;
    p.A = A;
    p.B = B;
    double base = 0;
    for (const bench_mode_t *m = modes; m && nrows < 256; m = m->next) {
      if (!in_list(mlist, m->name)) continue;
      row_t *r = &rows[nrows++];
      memset(r, 0, sizeof *r);
      r->n = n;
      r->m = mrows;
      r->mode = m;
      r->residual = NAN;
      double secs[BENCH_MAX_REPS], inner[BENCH_MAX_REPS];
      for (int k = 0; k < BENCH_MAX_REPS; k++) inner[k] = NAN;
      p.inner = inner;
      r->inner = NAN;
      if (m->available && m->available(&p, r->err, sizeof r->err) < 0) {
        if (!json) printf("%6" PRId64 "  %-18s unavailable: %s\n", n, m->name, r->err);
        continue;
      }
      if (m->run(&p, secs, X, r->err, sizeof r->err) < 0) {
        failed = 1;
        if (!json) printf("%6" PRId64 "  %-18s FAILED: %s\n", n, m->name, r->err);
        continue;
      }
      r->ok = 1;
      r->min = r->max = secs[0];
      for (int k = 0; k < p.reps; k++) {
        if (secs[k] < r->min) r->min = secs[k];
        if (secs[k] > r->max) r->max = secs[k];
      }
      r->median = sr_median(secs, p.reps);
      if (isfinite(inner[0])) r->inner = sr_median(inner, p.reps);
      if (muster_routine_takes(p.routine) & MUSTER_TAKES_B) {
        r->residual = residual_of(&p, X);
        if (!(r->residual < chk_routine_tolerance(p.routine, p.dtype, mrows))) {
          r->ok = 0;
          failed = 1;
          snprintf(r->err, sizeof r->err, "residual %.3e over tolerance", r->residual);
        }
      }
      if (m->baseline) base = r->median;
      r->ratio = base > 0 ? r->median / base : NAN;
      if (!json) {
        char ov[16] = "-";
        if (!m->baseline && base > 0) snprintf(ov, sizeof ov, "%+.1f%%", (r->ratio - 1) * 100);
        char in[16] = "-";
        if (isfinite(r->inner)) snprintf(in, sizeof in, "%.6f", r->inner);
        printf("%6" PRId64 "  %-18s %10.6f %10.6f %10.6f %9s %11s %10.2e%s\n", n, m->name, r->median,
               r->min, r->max, ov, in, r->residual, r->ok ? "" : "  CHECK FAILED");
        fflush(stdout);
      }
    }
    free(A);
    free(B);
    free(X);
  }
  if (json) {
    time_t now = time(NULL);
    char date[32];
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    printf("{\"routine\":\"%s\",\"dtype\":\"%s\",\"nrhs\":%" PRId64 ",\"ranks\":%d,\"reps\":%d,"
           "\"warmup\":%d,\"machine\":\"%s\",\"date\":\"%s\",\"results\":[",
           muster_routine_name(p.routine), muster_dtype_name(p.dtype), p.nrhs, p.ranks, p.reps,
           p.warmup, mach, date);
    for (int i = 0; i < nrows; i++) {
      const row_t *r = &rows[i];
      printf("%s{\"n\":%" PRId64, i ? "," : "", r->n);
      if (p.routine == MUSTER_GELS) printf(",\"m\":%" PRId64, r->m);
      printf(",\"mode\":\"%s\",\"baseline\":%s,\"ok\":%s", r->mode->name, r->mode->baseline ? "true" : "false",
             r->ok ? "true" : "false");
      if (r->ok || r->median > 0)
        printf(",\"median_s\":%.6f,\"min_s\":%.6f,\"max_s\":%.6f", r->median, r->min, r->max);
      if (isfinite(r->ratio)) printf(",\"ratio\":%.4f", r->ratio);
      if (isfinite(r->inner)) printf(",\"provider_s\":%.6f", r->inner);
      if (isfinite(r->residual)) printf(",\"residual\":%.3e", r->residual);
      if (r->err[0]) printf(",\"error\":\"%s\"", r->err);
      printf("}");
    }
    printf("]}\n");
  }
  return failed ? 1 : 0;
}
