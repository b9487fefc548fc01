/*
 * tools/muster/cmd_solve.c - `muster solve ROUTINE --n N [--m M] --ranks R
 *   --mode threads|processes --dtype f32|f64|c64|c128 [--tile T] [--nrhs K]
 *   [--provider NAME] [--devices LIST] [--seed S] [--reps K] [--warmup K]
 *   [--no-vectors] [--logdet] [--json]`
 *
 * A random SPD (potrs, potri), Hermitian (syevd) or general well-conditioned
 * (getrs: n x n; gels: m x n, m >= n, default m = 2n) matrix, sharded in
 * contiguous column blocks over R ranks (every rank all rows of its
 * columns: muster_routine_shape), one collective solve (or --reps),
 * then the check: potrs, getrs ||AX-B||/(||A|| ||X||); gels the
 * normal-equations residual ||A^H (AX-B)|| / (||A|| (||A|| ||X|| + ||B||));
 * potri ||A inv_j - e_j|| /
 * (||A|| ||inv_j||) over (sampled) columns; syevd ||A v_j - l_j v_j||/||A||
 * and |V^H V - I| over (sampled) columns.  Tolerance 64 rows eps(dtype)
 * (rows: m for gels, else n).  potrs --logdet: also log det A, checked
 * against an independent Cholesky in double (check.c, O(n^3)).
 * Exit 0 when the check passes, 1 when it fails or the solve errs, 2 on
 * bad usage.
 *
 * --launcher mpi|auto: this process is one MPI rank (solve_mpi.h); the
 * same matrix, check and output, rank 0 printing.
 *
 * The provider: --provider, else $MUSTER_PROVIDER, else the runtime's
 * choice (docs/choice.md; --json prints it with its reason).  One that
 * takes host memory
 * runs as above; one that takes only CUDA memory (cusolvermg) runs in GPU
 * mode: every rank's shard in device memory of its GPU (rank r on GPU
 * r % count, or --devices), the checks on host copies of the results.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "json_str.h"
#include "cli.h"
#include "choose.h"
#include "opts.h"
#include "solve_mpi.h"
#include "solve_run.h"

static int usage_to(FILE *f) {
  fprintf(f,
          "usage: muster solve ROUTINE --n N [--m M] --ranks R --mode threads|processes\n"
          "                    --dtype f32|f64|c64|c128 [--tile T] [--nrhs K] [--provider NAME]\n"
          "                    [--devices LIST] [--seed S] [--reps K] [--warmup K] [--no-vectors]\n"
          "                    [--logdet] [--json]\n"
          "       mpirun -np R muster solve ROUTINE --launcher mpi|auto [--n N] [--dtype T] ...\n"
          "  ROUTINE: potrs, potri, syevd, getrs (a random well-conditioned general A) or\n"
          "  gels (least squares with a random tall A of m rows, n columns: --m M, M >= N,\n"
          "  default 2N; --m is gels's only).  --logdet (potrs only): also log det A, checked\n"
          "  against an independent O(n^3) Cholesky in double.\n"
          "  Defaults: --n 1024 --ranks 2 --mode threads\n"
          "  --dtype f64 --nrhs 1 --tile 0 (the provider's choice) --seed from the clock.\n"
          "  --reps K: K timed solves in one group (median shown); --warmup K: untimed ones\n"
          "  first (the first solve of a process includes loading the provider).\n"
          "  Provider: --provider, else $MUSTER_PROVIDER, else the runtime's choice: the one\n"
          "  expected fastest (estimate, cost table, else priority; docs/choice.md), printed\n"
          "  with its reason.  A GPU provider (CUDA memory only, e.g. cusolvermg) puts each rank's\n"
          "  shard on a GPU: rank r on GPU r %% count, or on LIST[r %% len] with --devices\n"
          "  LIST (comma-separated ordinals, e.g. 0,1).\n"
          "  Ranges: --n, --m and --nrhs 1..65536, --tile 0..65536, --ranks 1..64, --reps 1..64,\n"
          "  --warmup 0..100, --seed 0..18446744073709551615, --devices entries 0..4095.\n"
          "  Processes mode: every rank's fate (pid, exit status or signal, phase) is on\n"
          "  stderr when one failed, and in the JSON \"fates\"; a rank that dies fails the\n"
          "  run (exit 1) at once, and the ranks die with the command.\n"
          "  --launcher mpi: this process is one rank of a job mpirun/srun started, on any\n"
          "  node (kind mpi comm, collective providers only, e.g. scalapack); rank 0 prints\n"
          "  the result, a failing rank its error naming it.  --launcher auto: mpi when\n"
          "  OMPI_COMM_WORLD_*, PMI_* or SLURM_* say a launcher started us, else exit 2.\n"
          "  --ranks, --mode and --devices are refused with it (exit 2).  A rank stopped\n"
          "  mid-solve ends the job after MUSTER_TIMEOUT plus 4 x the provider's expected\n"
          "  time when it has one (docs/bootstrap.md).\n");
  return 2;
}

static int usage(void) { return usage_to(stderr); }


#define WHO "muster solve" /* who, in messages */
#define MAX_N 65536     /* --n, --nrhs: a dense n x n matrix in host memory */
#define MAX_WARMUP 100

/* "0,1,3" -> devices; 0 or -1 after printing why. */
static int parse_devices(const char *v, int *devices, int *count) {
  int64_t d[MUSTER_MAX_RANKS];
  int n = opt_i64_list(WHO, "--devices", v, 0, OPT_MAX_DEVICE, d, MUSTER_MAX_RANKS);
  if (n < 0) return -1;
  for (int i = 0; i < n; i++) devices[i] = (int)d[i];
  *count = n;
  return 0;
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

/* One run of the command: what the options asked for. */
typedef struct cli_solve {
  sr_spec_t spec;
  uint64_t seed;
  int seeded, json;
  const char *mode;     /* threads, processes; "mpi" with a launcher */
  const char *launcher; /* NULL: the command starts the ranks; "mpi", "auto" */
  const char *set_ranks, *set_mode, *set_devices; /* given: refused with a launcher */
} cli_solve_t;

/* The options into c: -1 to go on, else the exit status (0 --help, 2). */
static int parse(int argc, char **argv, cli_solve_t *c) {
  sr_spec_t *spec = &c->spec;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      usage_to(stdout);
      return 0;
    } else if (!strcmp(a, "--json")) {
      c->json = 1;
    } else if (!strcmp(a, "--no-vectors")) {
      spec->flags |= MUSTER_NO_VECTORS;
    } else if (!strcmp(a, "--logdet")) {
      spec->flags |= MUSTER_LOGDET;
    } else if (a[0] != '-') {
      if (spec->routine || muster_routine_from_name(a, &spec->routine) != 0) {
        fprintf(stderr, "muster solve: %s\n", spec->routine ? "one ROUTINE only" : muster_last_error());
        return usage();
      }
    } else if (!v) {
      fprintf(stderr, "muster solve: %s needs a value\n", a);
      return usage();
    } else if (!strcmp(a, "--n") || !strcmp(a, "--m") || !strcmp(a, "--nrhs") || !strcmp(a, "--tile")) {
      int64_t *dst = !strcmp(a, "--n") ? &spec->n : !strcmp(a, "--m") ? &spec->m
                     : !strcmp(a, "--nrhs") ? &spec->nrhs : &spec->tile;
      if (opt_i64(WHO, a, v, strcmp(a, "--tile") ? 1 : 0, MAX_N, dst) < 0) return usage();
      i++;
    } else if (!strcmp(a, "--ranks") || !strcmp(a, "--reps") || !strcmp(a, "--warmup")) {
      int rc = !strcmp(a, "--ranks") ? opt_int(WHO, a, v, 1, MUSTER_MAX_RANKS, &spec->ranks)
               : !strcmp(a, "--reps") ? opt_int(WHO, a, v, 1, SR_MAX_REPS, &spec->reps)
                                      : opt_int(WHO, a, v, 0, MAX_WARMUP, &spec->warmup);
      if (rc < 0) return usage();
      if (!strcmp(a, "--ranks")) c->set_ranks = a;
      i++;
    } else if (!strcmp(a, "--seed")) {
      if (opt_u64(WHO, a, v, &c->seed) < 0) return usage();
      c->seeded = 1;
      i++;
    } else if (!strcmp(a, "--mode")) {
      c->mode = c->set_mode = v;
      i++;
    } else if (!strcmp(a, "--launcher")) {
      if (strcmp(v, "mpi") && strcmp(v, "auto")) {
        fprintf(stderr, "muster solve: --launcher mpi or auto, not '%s'\n", v);
        return usage();
      }
      c->launcher = v;
      i++;
    } else if (!strcmp(a, "--dtype")) {
      if (muster_dtype_from_name(v, &spec->dtype) != 0) {
        fprintf(stderr, "muster solve: %s\n", muster_last_error());
        return usage();
      }
      i++;
    } else if (!strcmp(a, "--provider")) {
      if (opt_backend(WHO, a, v) < 0) return usage();
      spec->provider = v;
      i++;
    } else if (!strcmp(a, "--devices")) {
      if (parse_devices(v, spec->devices, &spec->ndevices) != 0) return usage();
      c->set_devices = a;
      i++;
    } else {
      fprintf(stderr, "muster solve: unknown option %s\n", a);
      return usage();
    }
  }
  return -1;
}

/* --m (opts.h) and --logdet against the routine; gels's m when --m was
 * not given.  0, or -1 after printing why. */
static int check_shape(cli_solve_t *c) {
  sr_spec_t *spec = &c->spec;
  if (opt_gels_m(WHO, spec->routine, spec->m, &spec->n, 1) < 0) return -1;
  if ((spec->flags & MUSTER_LOGDET) && spec->routine != MUSTER_POTRS) {
    fprintf(stderr, "muster solve: --logdet is potrs's (log det of the SPD A it factors), not %s's\n",
            muster_routine_name(spec->routine));
    return -1;
  }
  if (spec->routine == MUSTER_GELS) spec->m = opt_gels_rows(spec->m, spec->n);
  return 0;
}

/* What parse cannot see alone: -1 to go on, else 2. */
static int check_usage(cli_solve_t *c) {
  if (!c->spec.routine) {
    fprintf(stderr, "muster solve: which ROUTINE (potrs, potri, syevd, getrs, gels)?\n");
    return usage();
  }
  if (check_shape(c) < 0) return 2;
  if (c->launcher) {
    const char *bad = c->set_ranks ? "--ranks" : c->set_mode ? "--mode" : c->set_devices;
    if (bad) {
      fprintf(stderr, "muster solve: %s makes no sense with --launcher %s: the launcher starts the ranks "
              "(mpirun -np R) and each one's matrix piece is in host memory\n", bad, c->launcher);
      return 2;
    }
    if (!strcmp(c->launcher, "auto") && !muster_launcher_detect(NULL, 0, NULL, NULL)) {
      fprintf(stderr, "muster solve: --launcher auto: no launcher in the environment (none of "
              "OMPI_COMM_WORLD_RANK/SIZE, PMI_RANK/SIZE, SLURM_PROCID/NTASKS): run it under mpirun or "
              "srun, or leave --launcher out to start the ranks here\n");
      return 2;
    }
    c->mode = "mpi";
    return -1;
  }
  if (!strcmp(c->mode, "threads")) c->spec.processes = 0;
  else if (!strcmp(c->mode, "processes")) c->spec.processes = 1;
  else {
    fprintf(stderr, "muster solve: --mode threads or processes, not '%s'\n", c->mode);
    return usage();
  }
  return -1;
}

/* The matrices of one run; all NULL after a failure (printed). */
typedef struct mats {
  void *A, *B, *full, *X, *W;
} mats_t;

static void mats_free(mats_t *m) {
  free(m->A);
  free(m->B);
  free(m->full);
  free(m->X);
  free(m->W);
  memset(m, 0, sizeof *m);
}

/* The random inputs from c->seed: the same on every rank that calls it.
 * A is rows x n, B rows x nrhs (rows: sr_rows, m for gels). */
static int mats_make(const cli_solve_t *c, int64_t nrhs, mats_t *m) {
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
  if (c->spec.routine == MUSTER_GETRS || c->spec.routine == MUSTER_GELS)
    chk_random_general(t, rows, n, &rng, m->A, rows);
  else chk_random_hermitian(t, n, c->spec.routine != MUSTER_SYEVD, &rng, m->A, n);
  chk_random_dense(t, rows, nrhs, &rng, m->B, rows);
  return 0;
}

/* The residual of the run's result (check.h), INFINITY when it failed. */
static double residual_of(const sr_spec_t *spec, int64_t nrhs, const mats_t *m) {
  muster_dtype_t t = spec->dtype;
  int64_t n = spec->n, rows = sr_rows(spec);
  switch (spec->routine) {
  case MUSTER_POTRS: return chk_potrs(t, n, nrhs, m->A, n, m->X, n, m->B, n);
  case MUSTER_GETRS: return chk_getrs(t, n, nrhs, m->A, n, m->X, n, m->B, n);
  case MUSTER_GELS: return chk_gels(t, rows, n, nrhs, m->A, rows, m->X, rows, m->B, rows);
  case MUSTER_POTRI: return chk_potri(t, n, m->A, n, m->full, n);
  default: return chk_syevd(t, n, m->A, n, (spec->flags & MUSTER_NO_VECTORS) ? NULL : m->full, n, m->W);
  }
}

/* potrs --logdet: the log det the solve returned (W's first real) against
 * check.c's independent one. */
typedef struct logdet_chk {
  int asked;
  double got, ref, tol;
  int ok;
} logdet_chk_t;

static logdet_chk_t logdet_of(const sr_spec_t *spec, const mats_t *m, int solved) {
  logdet_chk_t l = {.asked = !!(spec->flags & MUSTER_LOGDET), .got = NAN, .ref = NAN, .tol = NAN, .ok = 1};
  if (!l.asked) return l;
  l.ok = 0;
  if (!solved) return l;
  l.got = chk_get_real(spec->dtype, m->W, 0);
  l.ref = chk_logdet_hpd(spec->dtype, spec->n, m->A, spec->n);
  l.tol = chk_logdet_tolerance(spec->dtype, spec->n, l.ref);
  l.ok = fabs(l.got - l.ref) <= l.tol;
  return l;
}

/* a JSON number, or null when it is not finite */
static void json_num(const char *key, double v) {
  if (isfinite(v)) printf(",\"%s\":%.17g", key, v);
  else printf(",\"%s\":null", key);
}

/* The run's outcome on stdout (text or JSON) and its error on stderr; the
 * exit status.  started: sr_run's (or sm_run's) return, -1 when the run
 * never started. */
static int report(const cli_solve_t *c, int64_t nrhs, const mats_t *m, sr_out_t *out, int started,
                  int xsame, const char *chosen, const char *reason) {
  const sr_spec_t *spec = &c->spec;
  muster_dtype_t t = spec->dtype;
  int64_t n = spec->n, rows = sr_rows(spec);
  double residual = INFINITY, tol = chk_routine_tolerance(spec->routine, t, rows);
  int ok = 0, solved = started == 0 && out->rc == 0;
  if (solved) {
    residual = residual_of(spec, nrhs, m);
    ok = xsame && residual < tol;
  }
  logdet_chk_t ld = logdet_of(spec, m, solved);
  ok = ok && ld.ok;
  double secs = sr_median(out->seconds, out->rc == 0 ? spec->reps : 0);
  double psecs = sr_median(out->provider_seconds, out->rc == 0 ? spec->reps : 0);
  const char *routine = muster_routine_name(spec->routine);
  if (c->json) {
    printf("{\"routine\":\"%s\",\"n\":%" PRId64, routine, n);
    if (spec->routine == MUSTER_GELS) printf(",\"m\":%" PRId64, rows);
    printf(",\"nrhs\":%" PRId64 ",\"ranks\":%d,\"mode\":\"%s\",\"dtype\":\"%s\",\"tile\":%" PRId64
           ",\"provider\":", nrhs, spec->ranks, c->mode, muster_dtype_name(t), out->res.tile);
    json_put_str(stdout, out->res.provider[0] ? out->res.provider : (spec->provider ? spec->provider : chosen), SIZE_MAX);
    printf(",\"mem\":\"%s\",\"devices\":[", spec->cuda ? "cuda" : "host");
    for (int r = 0; r < spec->ranks; r++) printf("%s%d", r ? "," : "", out->devices[r]);
    printf("],\"reason\":");
    json_put_str(stdout, out->res.provider[0] ? out->res.reason : reason, SIZE_MAX);
    printf(",\"seed\":%" PRIu64 ",\"reps\":%d,\"warmup\":%d,\"seconds\":%.6f,"
           "\"provider_seconds\":%.6f,", c->seed, spec->reps, spec->warmup, secs, psecs);
    if (isfinite(residual)) printf("\"residual\":%.3e", residual);
    else printf("\"residual\":null");
    if (ld.asked) {
      json_num("logdet", ld.got);
      json_num("logdet_reference", ld.ref);
      json_num("logdet_tolerance", ld.tol);
    }
    printf(",\"tolerance\":%.3e,\"ranks_agree\":%s,\"ok\":%s", tol,
           (out->rc == 0 && xsame && !out->disagree) ? "true" : "false", ok ? "true" : "false");
    if (out->rc != 0) {
      printf(",\"error\":");
      json_put_str(stdout, muster_strerror(out->rc), SIZE_MAX);
      printf(",\"message\":");
      json_put_str(stdout, out->msg, SIZE_MAX);
    }
    if (spec->processes) json_fates(out, spec->ranks); /* every case: "not started" too */
    printf("}\n");
  } else if (out->rc == 0) {
    printf("%s %s", routine, muster_dtype_name(t));
    if (spec->routine == MUSTER_GELS) printf(" m=%" PRId64, rows);
    printf(" n=%" PRId64 " nrhs=%" PRId64 " ranks=%d mode=%s provider=%s tile=%" PRId64 " seed=%" PRIu64, n,
           nrhs, spec->ranks, c->mode, out->res.provider, out->res.tile, c->seed);
    if (spec->cuda) {
      printf(" mem=cuda devices=");
      for (int r = 0; r < spec->ranks; r++) printf("%s%d", r ? "," : "", out->devices[r]);
    }
    printf("\n");
    printf("  choice    %s\n", out->res.reason);
    printf("  time      %.6f s (provider %.6f s)%s\n", secs, psecs, spec->reps > 1 ? ", median" : "");
    printf("  residual  %.3e (tolerance %.3e)%s\n", residual, tol,
           xsame ? "" : "  -- ranks got different results");
    if (ld.asked)
      printf("  logdet    %.12g (reference %.12g, tolerance %.1e)%s\n", ld.got, ld.ref, ld.tol,
             ld.ok ? "" : "  -- off");
    printf("  check     %s\n", ok ? "ok" : "FAILED");
  }
  fflush(stdout);
  if (out->rc != 0)
    fprintf(stderr, "muster solve: %s %s n=%" PRId64 " ranks=%d mode=%s: %s: %s\n", routine,
            muster_dtype_name(t), n, spec->ranks, c->mode, muster_strerror(out->rc), out->msg);
  if (out->rc != 0 && spec->processes && (started >= 0 || out->launch_failed))
    for (int r = 0; r < spec->ranks; r++) fprintf(stderr, "muster solve: %s\n", out->fates[r].text);
  return ok ? 0 : 1;
}

/* The ranks started here, as threads or processes (solve_run.h). */
static int run_local(cli_solve_t *c, int64_t nrhs) {
  sr_spec_t *spec = &c->spec;
  mats_t m;
  if (mats_make(c, nrhs, &m) < 0) return 1;
  sr_out_t out;
  int xsame = 0, started = -1;
  char why[600], chosen[32] = "", reason[MUSTER_MAX_REASON] = "";
  if (cli_choose_memory(spec, &spec->cuda, chosen, sizeof chosen, reason, sizeof reason, why, sizeof why) < 0) {
    sr_out_init(&out);
    out.rc = MUSTER_ENOPROVIDER;
    snprintf(out.msg, sizeof out.msg, "%s", why);
  } else {
    started = sr_run(spec, m.A, m.B, &out, m.full, m.X, m.W, &xsame);
  }
  int rc = report(c, nrhs, &m, &out, started, xsame, chosen, reason);
  mats_free(&m);
  return rc;
}

/* This process is one rank of an MPI job (solve_mpi.h): rank 0 checks and
 * reports; another rank says only its own failure, naming itself. */
static int run_mpi(cli_solve_t *c, int64_t nrhs) {
  sm_job_t j;
  char host[64] = "?";
  gethostname(host, sizeof host - 1);
  int rc = sm_open(&j);
  if (rc == 0) {
    c->spec.ranks = j.size;
    rc = sm_agree_seed(&j, &c->seed); /* rank 0's, unless --seed gave every rank the same */
  }
  if (rc < 0) {
    if (!j.comm) muster_launcher_detect(NULL, 0, &j.rank, NULL); /* MPI's is not known */
    fprintf(stderr, "muster solve: rank %d (pid %d on %s): %s\n", j.rank, (int)getpid(), host,
            muster_last_error());
    sm_close(&j);
    sm_end(rc); /* a timeout in MPI's start: a thread is left inside MPI */
    /* the options were checked: only a variable (MUSTER_MPI_LIB) is invalid here */
    return rc == MUSTER_EINVAL ? 2 : 1;
  }
  mats_t m;
  int status = 1;
  sr_out_t out;
  int xsame = 0;
  /* a rank without its inputs still takes its part in the exchanges
   * (sm_run tells the others): a missing rank would leave them waiting */
  if (mats_make(c, nrhs, &m) < 0) memset(&m, 0, sizeof m);
  rc = sm_run(&j, &c->spec, m.A, m.B, &out, m.full, m.X, m.W, &xsame);
  if (rc < 0) {
    fprintf(stderr, "muster solve: rank %d (pid %d on %s): %s\n", j.rank, (int)getpid(), host,
            muster_last_error());
  } else if (j.rank == 0) {
    status = report(c, nrhs, &m, &out, 0, xsame, "", "");
  } else {
    if (out.rc != 0)
      fprintf(stderr, "muster solve: rank %d of %d (pid %d on %s): %s: %s\n", j.rank, j.size,
              (int)getpid(), host, muster_strerror(out.rc), out.msg);
    status = out.rc != 0;
  }
  mats_free(&m);
  sm_close(&j);
  if ((rc = muster__mpi_finish()) < 0) {
    fprintf(stderr, "muster solve: rank %d of %d (pid %d on %s): %s\n", j.rank, j.size, (int)getpid(), host,
            muster_last_error());
    sm_end(rc);
    status = 1;
  }
  return status;
}

int cmd_solve(int argc, char **argv) {
  cli_solve_t c = {.spec = {.routine = 0, .dtype = MUSTER_F64, .n = 1024, .nrhs = 1, .ranks = 2, .reps = 1},
                   .seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 20),
                   .mode = "threads"};
  int rc = parse(argc, argv, &c);
  if (rc < 0) rc = check_usage(&c);
  if (rc >= 0) return rc;
  int64_t nrhs = muster_routine_takes(c.spec.routine) & MUSTER_TAKES_B ? c.spec.nrhs : 1;
  return c.launcher ? run_mpi(&c, nrhs) : run_local(&c, nrhs);
}
