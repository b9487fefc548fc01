/*
 * tools/muster/calibrate.c - `muster bench --calibrate --provider NAME
 *   [--routine R] [--dtype f64,f32] [--n 256,512,...] [--ranks 2,4]
 *   [--nrhs K] [--mode threads|processes] [--reps K] [--warmup K]
 *   [--devices LIST] --out FILE`
 *
 * Measures a provider's cost table (docs/choice.md "Cost tables"): for
 * every (dtype, ranks, n), the median wall time of muster_solve forced to
 * that provider, on random SPD/Hermitian matrices (getrs: general ones),
 * rank 0's clock from a barrier to muster_solve's return (what the choice
 * compares: the whole call).  gels is refused: a table row has no m, the
 * rows of gels's A.  A potrs or getrs result over tolerance, or a failed
 * solve, stops it: a
 * table must not hold the time of a wrong answer.  FILE is replaced at the
 * end (written to FILE.tmp, then renamed; "-": stdout).
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "choose.h"
#include "cli.h"
#include "cli_args.h"
#include "opts.h"

#define WHO "muster bench --calibrate"
#define MAX_POINTS 64

typedef struct cal {
  sr_spec_t spec;
  muster_dtype_t dtypes[4];
  int ndtypes;
  int64_t ns[MAX_POINTS];
  int nn;
  int ranks[MAX_POINTS];
  int nranks;
  const char *out;
} cal_t;

static int usage(FILE *f) {
  fprintf(f,
          "usage: muster bench --calibrate --provider NAME [--routine potrs|potri|syevd|getrs]\n"
          "                    [--dtype f64,f32] [--n 256,512,1024,2048] [--ranks 2] [--nrhs 1]\n"
          "                    [--mode threads|processes] [--reps 5] [--warmup 1] [--devices LIST]\n"
          "                    --out FILE\n"
          "  measures NAME's cost table: the median wall time of muster_solve forced to it for\n"
          "  every (dtype, ranks, n), written as rows 'routine dtype ndevices n nrhs seconds'\n"
          "  (docs/choice.md).  Put FILE next to the provider (<dir>/NAME.cost) or in a folder of\n"
          "  MUSTER_COST_PATH; the runtime reads it when it loads the provider.  gels is not\n"
          "  calibrated: a row has no m (the rows of its A), so a table cannot hold its times.\n");
  return f == stderr ? 2 : 0;
}

enum { O_HELP, O_H, O_CALIBRATE, O_PROVIDER, O_ROUTINE, O_DTYPE, O_N, O_RANKS, O_NRHS, O_MODE, O_REPS,
       O_WARMUP, O_OUT, O_DEVICES };
static const cli_opt_t opts[] = {{"--help", 0},  {"-h", 0},      {"--calibrate", 0}, {"--provider", 1},
                                 {"--routine", 1}, {"--dtype", 1}, {"--n", 1},         {"--ranks", 1},
                                 {"--nrhs", 1},  {"--mode", 1},  {"--reps", 1},      {"--warmup", 1},
                                 {"--out", 1},   {"--devices", 1}};

/* An int list option into out[]: its count, or -1 after printing. */
static int int_list(const char *a, const char *v, int64_t lo, int64_t hi, int *out, int cap) {
  int64_t tmp[MUSTER_MAX_RANKS > MAX_POINTS ? MUSTER_MAX_RANKS : MAX_POINTS];
  int k = opt_i64_list(WHO, a, v, lo, hi, tmp, cap);
  for (int j = 0; j < k; j++) out[j] = (int)tmp[j];
  return k;
}

/* What parse fills: c, and --dtype's and --mode's words. */
typedef struct cal_args {
  cal_t *c;
  const char *dtypes, *mode;
} cal_args_t;

/* Option k with value v into x (a cli_on_word): 0, or 2 after printing why. */
static int option(int k, const char *v, void *arg) {
  cal_args_t *x = arg;
  cal_t *c = x->c;
  const char *a = opts[k].name;
  switch (k) {
  case O_CALIBRATE: return 0;
  case O_PROVIDER: c->spec.provider = v; return opt_backend(WHO, a, v) < 0 ? 2 : 0;
  case O_ROUTINE:
    if (muster_routine_from_name(v, &c->spec.routine) != 0) return cli_usage_error(WHO, "%s", muster_last_error());
    if (c->spec.routine == MUSTER_GELS)
      return cli_usage_error(WHO, "--routine gels: a cost table row ('routine dtype ndevices n nrhs seconds') "
                             "has no m, the rows of gels's A, so it cannot hold gels's times; potrs, potri, "
                             "syevd, getrs");
    return 0;
  case O_DTYPE: x->dtypes = v; return 0;
  case O_N: return (c->nn = opt_i64_list(WHO, a, v, 1, OPT_MAX_N, c->ns, MAX_POINTS)) < 0 ? 2 : 0;
  case O_RANKS: return (c->nranks = int_list(a, v, 1, MUSTER_MAX_RANKS, c->ranks, MAX_POINTS)) < 0 ? 2 : 0;
  case O_NRHS: return opt_i64(WHO, a, v, 1, OPT_MAX_N, &c->spec.nrhs) < 0 ? 2 : 0;
  case O_MODE: x->mode = v; return 0;
  case O_REPS: return opt_int(WHO, a, v, 1, SR_MAX_REPS, &c->spec.reps) < 0 ? 2 : 0;
  case O_WARMUP: return opt_int(WHO, a, v, 0, OPT_MAX_WARMUP, &c->spec.warmup) < 0 ? 2 : 0;
  case O_OUT: c->out = v; return 0;
  case O_DEVICES: {
    int n = int_list(a, v, 0, OPT_MAX_DEVICE, c->spec.devices, MUSTER_MAX_RANKS);
    c->spec.ndevices = n < 0 ? 0 : n;
    return n < 0 ? 2 : 0;
  }
  }
  return 2;
}

/* 0, 2 (usage error, printed) or -1 (--help printed). */
static int parse(int argc, char **argv, cal_t *c) {
  cal_args_t x = {.c = c, .dtypes = "f64", .mode = "threads"};
  c->spec = (sr_spec_t){.routine = MUSTER_POTRS, .nrhs = 1, .reps = 5, .warmup = 1};
  int rc = cli_args_each(WHO, argc, argv, opts, (int)(sizeof opts / sizeof opts[0]), 0, option, &x);
  if (rc == CLI_HELP) return usage(stdout), -1;
  if (rc != 0) return 2;
  const char *dtypes = x.dtypes, *mode = x.mode;
  for (const char *s = dtypes; *s && c->ndtypes < 4;) {
    char name[8];
    size_t l = strcspn(s, ",");
    snprintf(name, sizeof name, "%.*s", (int)(l < 7 ? l : 7), s);
    if (muster_dtype_from_name(name, &c->dtypes[c->ndtypes++]) != 0)
      return cli_usage_error(WHO, "--dtype: %s", muster_last_error());
    s += l + (s[l] == ',');
  }
  if (!c->nn) c->nn = opt_i64_list(WHO, "--n", "256,512,1024,2048", 1, OPT_MAX_N, c->ns, MAX_POINTS);
  if (!c->nranks) c->nranks = 1, c->ranks[0] = 2;
  c->spec.processes = !strcmp(mode, "processes");
  if (!c->spec.provider || !c->out || (strcmp(mode, "threads") && strcmp(mode, "processes")))
    return cli_usage_error(WHO, "needs --provider and --out, and --mode threads or processes");
  return 0;
}

/* Distinct devices the ranks used (the query's ndevices: GPUs for CUDA
 * memory, ranks for host memory). */
static int ndevices_of(const sr_spec_t *s, const sr_out_t *o) {
  if (!s->cuda) return s->ranks;
  int n = 0;
  for (int r = 0; r < s->ranks; r++) {
    int seen = 0;
    for (int k = 0; k < r; k++) seen |= o->devices[k] == o->devices[r];
    n += !seen;
  }
  return n;
}

/* One point: 0 with its median into *secs, or -1 with the reason printed. */
static int measure(sr_spec_t *s, double *secs, int *ndev) {
  int64_t n = s->n, nrhs = muster_routine_takes(s->routine) & MUSTER_TAKES_B ? s->nrhs : 1;
  size_t esz = muster_dtype_size(s->dtype);
  void *A = malloc((size_t)(n * n) * esz), *B = malloc((size_t)(n * nrhs) * esz),
       *X = malloc((size_t)(n * nrhs) * esz);
  int rc = -1, same = 0;
  if (!A || !B || !X) {
    fprintf(stderr, "muster bench --calibrate: out of memory for n=%" PRId64 "\n", n);
    goto out;
  }
  chk_rng_t rng;
  chk_seed(&rng, 42 + (uint64_t)n);
  if (s->routine == MUSTER_GETRS) chk_random_general(s->dtype, n, n, &rng, A, n);
  else chk_random_hermitian(s->dtype, n, s->routine != MUSTER_SYEVD, &rng, A, n);
  chk_random_dense(s->dtype, n, nrhs, &rng, B, n);
  sr_out_t o;
  if (sr_run(s, A, B, &o, NULL, X, NULL, &same) != 0 || o.rc != 0) {
    fprintf(stderr, "muster bench --calibrate: %s %s n=%" PRId64 " ranks=%d: %s: %s\n",
            muster_routine_name(s->routine), muster_dtype_name(s->dtype), n, s->ranks, muster_strerror(o.rc),
            o.msg);
    goto out;
  }
  if (strcmp(o.res.provider, s->provider) != 0 || !same) {
    fprintf(stderr, "muster bench --calibrate: n=%" PRId64 ": %s\n", n,
            same ? "another provider ran" : "ranks got different results");
    goto out;
  }
  if (s->routine == MUSTER_POTRS || s->routine == MUSTER_GETRS) {
    double res = chk_potrs(s->dtype, n, nrhs, A, n, X, n, B, n); /* chk_getrs is the same check */
    if (!(res < chk_tolerance(s->dtype, n))) {
      fprintf(stderr, "muster bench --calibrate: n=%" PRId64 ": residual %.3e over tolerance\n", n, res);
      goto out;
    }
  }
  *secs = sr_median(o.seconds, s->reps);
  *ndev = ndevices_of(s, &o);
  rc = 0;
out:
  free(A);
  free(B);
  free(X);
  return rc;
}

static void machine(char *out, size_t cap) {
  char host[64] = "?";
  gethostname(host, sizeof host - 1);
  snprintf(out, cap, "%s, %ld cpus", host, sysconf(_SC_NPROCESSORS_ONLN));
}

int cmd_calibrate(int argc, char **argv) {
  cal_t c;
  memset(&c, 0, sizeof c);
  int rc = parse(argc, argv, &c);
  if (rc) return rc < 0 ? 0 : rc; /* -1: --help was printed */
  char name[32], reason[MUSTER_MAX_REASON], why[600];
  c.spec.n = c.ns[0];
  c.spec.ranks = c.ranks[0];
  c.spec.dtype = c.dtypes[0];
  if (cli_choose_memory(&c.spec, &c.spec.cuda, name, sizeof name, reason, sizeof reason, why, sizeof why) < 0) {
    fprintf(stderr, "muster bench --calibrate: %s\n", why);
    return 1;
  }
  char tmp[4096];
  FILE *f = stdout;
  if (strcmp(c.out, "-")) {
    snprintf(tmp, sizeof tmp, "%s.tmp", c.out);
    if (!(f = fopen(tmp, "w"))) {
      perror(tmp);
      return 1;
    }
  }
  time_t now = time(NULL);
  char date[32], mach[128];
  strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
  machine(mach, sizeof mach);
  fprintf(f, "# muster cost table of provider %s, measured by `muster bench --calibrate` on %s\n"
          "# machine %s; %s mode, %s memory; median of %d timed calls (+%d warmup), wall time of muster_solve\n"
          "# routine dtype ndevices n nrhs seconds\n", c.spec.provider, date, mach,
          c.spec.processes ? "processes" : "threads", c.spec.cuda ? "cuda" : "host", c.spec.reps, c.spec.warmup);
  int failed = 0;
  for (int t = 0; t < c.ndtypes && !failed; t++)
    for (int r = 0; r < c.nranks && !failed; r++)
      for (int k = 0; k < c.nn && !failed; k++) {
        c.spec.dtype = c.dtypes[t];
        c.spec.ranks = c.ranks[r];
        c.spec.n = c.ns[k];
        double secs;
        int ndev;
        if (measure(&c.spec, &secs, &ndev) < 0) {
          failed = 1;
          break;
        }
        fprintf(f, "%s %s %d %" PRId64 " %" PRId64 " %.6g\n", muster_routine_name(c.spec.routine),
                muster_dtype_name(c.spec.dtype), ndev, c.spec.n,
                c.spec.routine == MUSTER_POTRS ? c.spec.nrhs : (int64_t)0, secs);
        fflush(f);
      }
  if (f != stdout) {
    if (fclose(f) != 0 || failed) {
      unlink(tmp);
      return 1;
    }
    if (rename(tmp, c.out) != 0) {
      perror(c.out);
      return 1;
    }
    fprintf(stderr, "muster bench --calibrate: wrote %s\n", c.out);
  }
  return failed;
}
