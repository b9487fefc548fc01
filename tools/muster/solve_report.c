/*
 * tools/muster/solve_report.c - the inputs, the check and the output of a
 * `muster solve` run (solve_cli.h).  What each check computes and its
 * tolerance are check.h's; this file picks them by --check and prints.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "json_str.h"
#include "progress.h"
#include "solve_cli.h"
#include "solve_factors.h"

void mats_free(mats_t *m) {
  free(m->A);
  free(m->B);
  free(m->full);
  free(m->X);
  free(m->W);
  memset(m, 0, sizeof *m);
}

int mats_make(const cli_solve_t *c, int64_t nrhs, mats_t *m) {
  muster_dtype_t t = c->spec.dtype;
  int64_t n = c->spec.n, rows = sr_rows(&c->spec);
  size_t esz = muster_dtype_size(t);
  m->A = malloc((size_t)(rows * n) * esz), m->B = malloc((size_t)(rows * nrhs) * esz);
  m->full = malloc((size_t)(rows * n) * esz), m->X = malloc((size_t)(rows * nrhs) * esz);
  m->W = calloc((size_t)n, sizeof(double));
  if (!m->A || !m->B || !m->full || !m->X || !m->W) {
    fprintf(stderr, "muster solve: out of memory for n=%" PRId64 "\n", n);
    mats_free(m);
    return -1;
  }
  chk_rng_t rng;
  chk_seed(&rng, c->seed);
  if (sf_is_factor(c->spec.routine)) chk_random_dense(t, rows, n, &rng, m->A, rows);
  else if (c->spec.routine == MUSTER_GETRS || c->spec.routine == MUSTER_GELS)
    chk_random_general(t, rows, n, &rng, m->A, rows);
  else chk_random_hermitian(t, n, c->spec.routine != MUSTER_SYEVD, &rng, m->A, n);
  chk_random_dense(t, rows, nrhs, &rng, m->B, rows);
  return 0;
}

/* The residual of the run's result at level l (check.h), INFINITY when
 * it failed. */
static double residual_of(const sr_spec_t *spec, chk_level_t l, int64_t nrhs, const mats_t *m) {
  muster_dtype_t t = spec->dtype;
  int64_t n = spec->n, rows = sr_rows(spec), cols = chk_level_columns(l, spec->routine, n);
  if (sf_is_factor(spec->routine))
    return chk_factors(t, spec->routine, spec->flags, rows, n, m->A, m->full, m->X, m->W);
  switch (spec->routine) {
  case MUSTER_POTRS: return chk_potrs(t, n, nrhs, m->A, n, m->X, n, m->B, n);
  case MUSTER_GETRS: return chk_getrs(t, n, nrhs, m->A, n, m->X, n, m->B, n);
  case MUSTER_GELS: return chk_gels(t, rows, n, nrhs, m->A, rows, m->X, rows, m->B, rows);
  case MUSTER_POTRI: return chk_potri_cols(t, n, m->A, n, m->full, n, cols);
  default:
    return chk_syevd_cols(t, n, m->A, n, (spec->flags & MUSTER_NO_VECTORS) ? NULL : m->full, n, m->W, cols);
  }
}

/* potrs --logdet: the log det the solve returned (W's first real) against
 * its bounds (residual) or check.c's independent one (full). */
typedef struct logdet_chk {
  int asked;
  double got, ref, lo, hi, tol;
  int ok;
} logdet_chk_t;

static logdet_chk_t logdet_of(const sr_spec_t *spec, chk_level_t level, const mats_t *m, int solved) {
  logdet_chk_t l = {.asked = !!(spec->flags & MUSTER_LOGDET), .got = NAN, .ref = NAN, .lo = NAN, .hi = NAN,
                    .tol = NAN, .ok = 1};
  if (!l.asked || !solved) return l.ok = !l.asked, l;
  int64_t n = spec->n;
  l.got = chk_get_real(spec->dtype, m->W, 0);
  if (level == CHK_FULL) {
    l.ref = chk_logdet_hpd(spec->dtype, n, m->A, n);
    l.tol = chk_logdet_tolerance(spec->dtype, n, l.ref);
    l.ok = fabs(l.got - l.ref) <= l.tol;
  } else if (level == CHK_RESIDUAL) {
    chk_logdet_bounds(spec->dtype, n, m->A, n, &l.lo, &l.hi);
    l.tol = chk_logdet_tolerance(spec->dtype, n, l.hi);
    l.ok = l.got >= l.lo - l.tol && l.got <= l.hi + l.tol;
  }
  return l;
}

/* What the check found. */
typedef struct verdict {
  double residual, tol; /* NAN: not checked */
  logdet_chk_t ld;
  int ok;
} verdict_t;

static verdict_t check_run(const cli_solve_t *c, int64_t nrhs, const mats_t *m, int solved, int xsame) {
  const sr_spec_t *spec = &c->spec;
  verdict_t v = {.residual = NAN, .tol = NAN, .ok = solved && xsame};
  if (c->check != CHK_NONE) {
    prog_phase(PROG_CHECKING, 0, 0);
    v.tol = sf_is_factor(spec->routine) ? chk_factor_tolerance(spec->dtype, sr_rows(spec), spec->n)
                                        : chk_routine_tolerance(spec->routine, spec->dtype, sr_rows(spec));
    v.residual = solved ? residual_of(spec, c->check, nrhs, m) : INFINITY;
    v.ok = v.ok && v.residual < v.tol;
  }
  v.ld = logdet_of(spec, c->check, m, solved);
  v.ok = v.ok && v.ld.ok;
  return v;
}

/* a JSON number, or null when it is not finite */
static void json_num(const char *key, double v, const char *fmt) {
  printf(",\"%s\":", key);
  if (isfinite(v)) printf(fmt, v);
  else printf("null");
}

/* "fates":[{"rank":0,"pid":P,"exit":0,"signal":0,"died":false,"killed":false,
 * "fate":"..."},...]: how each rank's process ended (processes mode). */
static void json_fates(const sr_out_t *out, int ranks) {
  printf(",\"fates\":[");
  for (int r = 0; r < ranks; r++) {
    const struct ml_fate *f = &out->fates[r];
    printf("%s{\"rank\":%d,\"pid\":%d,\"exit\":%d,\"signal\":%d,\"died\":%s,\"killed\":%s,"
           "\"fate\":", r ? "," : "", r, f->pid,
           f->pid && WIFEXITED(f->status) ? WEXITSTATUS(f->status) : -1,
           f->pid && WIFSIGNALED(f->status) ? WTERMSIG(f->status) : 0, f->died ? "true" : "false",
           f->killed ? "true" : "false");
    json_put_str(stdout, f->text, SIZE_MAX);
    printf("}");
  }
  printf("]");
}

/* The tile the solve used (the runtime's res.tile: the one it resolved,
 * given or the provider's choice); before a solve ran, the one asked for;
 * 0 when neither is known. */
static int64_t tile_of(const cli_solve_t *c, const sr_out_t *out) {
  return out->res.tile > 0 ? out->res.tile : c->spec.tile;
}

/* The reason the JSON shows: pick's (solve_cli.h), else res.reason. */
static const char *reason_of(const sr_out_t *out, const pick_t *pick) {
  return pick->reason[0] ? pick->reason : out->res.reason;
}

static void print_json(const cli_solve_t *c, int64_t nrhs, const sr_out_t *out, const pick_t *pick,
                       const verdict_t *v, int xsame, double secs, double psecs) {
  const sr_spec_t *spec = &c->spec;
  printf("{\"routine\":\"%s\",\"n\":%" PRId64, muster_routine_name(spec->routine), spec->n);
  if (muster_routine_takes(spec->routine) & MUSTER_TAKES_M) printf(",\"m\":%" PRId64, sr_rows(spec));
  printf(",\"nrhs\":%" PRId64 ",\"ranks\":%d,\"mode\":\"%s\",\"dtype\":\"%s\"", nrhs, spec->ranks, c->mode,
         muster_dtype_name(spec->dtype));
  json_num("tile", tile_of(c, out) > 0 ? (double)tile_of(c, out) : NAN, "%.0f");
  printf(",\"provider\":");
  json_put_str(stdout, out->res.provider[0] ? out->res.provider : spec->provider ? spec->provider : pick->provider,
               SIZE_MAX);
  printf(",\"mem\":\"%s\",\"devices\":[", spec->cuda ? "cuda" : "host");
  for (int r = 0; r < spec->ranks; r++) printf("%s%d", r ? "," : "", out->devices[r]);
  printf("],\"reason\":");
  json_put_str(stdout, reason_of(out, pick), SIZE_MAX);
  printf(",\"seed\":%" PRIu64 ",\"reps\":%d,\"warmup\":%d,\"seconds\":%.6f,\"provider_seconds\":%.6f", c->seed,
         spec->reps, spec->warmup, secs, psecs);
  printf(",\"check\":\"%s\"", chk_level_name(c->check));
  json_num("residual", v->residual, "%.3e");
  if (v->ld.asked) {
    json_num("logdet", v->ld.got, "%.17g");
    if (c->check == CHK_FULL) json_num("logdet_reference", v->ld.ref, "%.17g");
    if (c->check == CHK_RESIDUAL) {
      json_num("logdet_lower_bound", v->ld.lo, "%.17g");
      json_num("logdet_upper_bound", v->ld.hi, "%.17g");
    }
    json_num("logdet_tolerance", v->ld.tol, "%.17g");
  }
  json_num("tolerance", v->tol, "%.3e");
  printf(",\"ranks_agree\":%s,\"ok\":%s", (out->rc == 0 && xsame && !out->disagree) ? "true" : "false",
         v->ok ? "true" : "false");
  if (out->rc != 0) {
    printf(",\"error\":");
    json_put_str(stdout, muster_strerror(out->rc), SIZE_MAX);
    printf(",\"message\":");
    json_put_str(stdout, out->msg, SIZE_MAX);
  }
  if (spec->processes) json_fates(out, spec->ranks); /* every case: "not started" too */
  printf("}\n");
}

static void print_text(const cli_solve_t *c, int64_t nrhs, const sr_out_t *out, const verdict_t *v, int xsame,
                       double secs, double psecs) {
  const sr_spec_t *spec = &c->spec;
  printf("%s %s", muster_routine_name(spec->routine), muster_dtype_name(spec->dtype));
  if (muster_routine_takes(spec->routine) & MUSTER_TAKES_M) printf(" m=%" PRId64, sr_rows(spec));
  printf(" n=%" PRId64 " nrhs=%" PRId64 " ranks=%d mode=%s provider=%s tile=%" PRId64 " seed=%" PRIu64, spec->n,
         nrhs, spec->ranks, c->mode, out->res.provider, tile_of(c, out), c->seed);
  if (spec->cuda) {
    printf(" mem=cuda devices=");
    for (int r = 0; r < spec->ranks; r++) printf("%s%d", r ? "," : "", out->devices[r]);
  }
  printf("\n  choice    %s\n", out->res.reason); /* may end in "...": --json has it whole */
  printf("  time      %.6f s (provider %.6f s)%s\n", secs, psecs, spec->reps > 1 ? ", median" : "");
  if (c->check != CHK_NONE)
    printf("  residual  %.3e (tolerance %.3e, --check=%s)%s\n", v->residual, v->tol, chk_level_name(c->check),
           xsame ? "" : "  -- ranks got different results");
  const logdet_chk_t *ld = &v->ld;
  if (ld->asked && c->check == CHK_FULL)
    printf("  logdet    %.12g (reference %.12g, tolerance %.1e)%s\n", ld->got, ld->ref, ld->tol,
           ld->ok ? "" : "  -- off");
  else if (ld->asked && c->check == CHK_RESIDUAL)
    printf("  logdet    %.12g (bounds %.12g .. %.12g, tolerance %.1e)%s\n", ld->got, ld->lo, ld->hi, ld->tol,
           ld->ok ? "" : "  -- off");
  else if (ld->asked)
    printf("  logdet    %.12g\n", ld->got);
  if (c->check == CHK_NONE) printf("  check     none (--check=none)%s\n", v->ok ? "" : ": FAILED");
  else printf("  check     %s\n", v->ok ? "ok" : "FAILED");
}

int solve_report(const cli_solve_t *c, int64_t nrhs, const mats_t *m, sr_out_t *out, int started, int xsame,
                 const pick_t *pick) {
  const sr_spec_t *spec = &c->spec;
  int solved = started == 0 && out->rc == 0;
  verdict_t v = check_run(c, nrhs, m, solved, xsame);
  double secs = sr_median(out->seconds, out->rc == 0 ? spec->reps : 0);
  double psecs = sr_median(out->provider_seconds, out->rc == 0 ? spec->reps : 0);
  if (c->json) print_json(c, nrhs, out, pick, &v, xsame, secs, psecs);
  else if (out->rc == 0) print_text(c, nrhs, out, &v, xsame, secs, psecs);
  fflush(stdout);
  if (out->rc != 0)
    fprintf(stderr, "muster solve: %s %s n=%" PRId64 " ranks=%d mode=%s: %s: %s\n",
            muster_routine_name(spec->routine), muster_dtype_name(spec->dtype), spec->n, spec->ranks, c->mode,
            muster_strerror(out->rc), out->msg);
  if (out->rc != 0 && spec->processes && (started >= 0 || out->launch_failed))
    for (int r = 0; r < spec->ranks; r++) fprintf(stderr, "muster solve: %s\n", out->fates[r].text);
  return v.ok ? 0 : 1;
}
