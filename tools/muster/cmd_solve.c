/*
 * tools/muster/cmd_solve.c - `muster solve ROUTINE --n N [--m M] --ranks R
 *   --mode threads|processes --dtype T [--tile T] [--nrhs K] [--provider NAME]
 *   [--devices LIST] [--seed S] [--reps K] [--warmup K] [--no-vectors]
 *   [--logdet] [--check none|residual|full] [--quiet|--progress] [--json]`:
 * the options (tools/common/cli_args.h), then the ranks, started here
 * (threads or processes) or by MPI.  The random inputs, the check and the
 * output are solve_report.c's.
 *
 * A random SPD (potrs, potri), Hermitian (syevd) or general well-conditioned
 * (getrs: n x n; gels: m x n, m >= n, default m = 2n) matrix, sharded in
 * contiguous column blocks over R ranks (every rank all rows of its
 * columns: muster_routine_shape), one collective solve (or --reps), then
 * the check (check.h: its level, tolerances and what each routine's is).
 * Exit 0 when the check passes, 1 when it fails or the solve errs, 2 on
 * bad usage.
 *
 * --launcher mpi|auto: this process is one MPI rank (solve_mpi.h); the
 * same matrix, check and output, rank 0 printing; GPU mode (below) puts
 * each rank's piece on the GPU of its local rank (--devices indexed by it).
 *
 * The provider: --provider, else $MUSTER_PROVIDER, else the runtime's
 * choice (docs/choice.md; --json prints it with its whole reason).  One
 * that takes host memory runs as above; one that takes only CUDA memory
 * (cusolvermg) runs in GPU mode: every rank's shard in device memory of its
 * GPU (rank r on GPU r % count, or --devices), the checks on host copies of
 * the results.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "cli_args.h"
#include "choose.h"
#include "opts.h"
#include "progress.h"
#include "solve_cli.h"
#include "solve_factors.h"
#include "solve_mpi.h"

static void usage(void) {
  char routines[OPT_NAMES_CAP], dtypes[OPT_NAMES_CAP];
  opt_routine_names(routines, sizeof routines, ", ", 0);
  opt_dtype_names(dtypes, sizeof dtypes, "|");
  printf("usage: muster solve ROUTINE --n N [--m M] --ranks R --mode threads|processes\n"
         "                    --dtype %s [--tile T] [--nrhs K] [--provider NAME]\n"
         "                    [--devices LIST] [--seed S] [--reps K] [--warmup K] [--no-vectors]\n"
         "                    [--full]\n"
         "                    [--logdet] [--check none|residual|full] [--quiet|--progress] [--json]\n"
         "       mpirun -np R muster solve ROUTINE --launcher mpi|auto [--n N] [--dtype T] ...\n"
         "  ROUTINE: one of %s.  getrs: a random well-conditioned general A;\n"
         "  gels: least squares with a random tall A of m rows, n columns (--m M, M >= N,\n"
         "  default 2N).  --logdet (potrs only): also log det A.\n"
         "  geqrf, gesvd, polar: QR (Q explicit), SVD, polar A = U_p H of a random m x n A\n"
         "  (--m M, default N; tall or wide); --full: the full Q (geqrf), U and V^H (gesvd);\n"
         "  --no-vectors: gesvd's values only; --nrhs is set to the columns B needs.\n"
         "  Options take their value as --opt V or --opt=V; -- ends the options.\n"
         "  Defaults: --n 1024 --ranks 2 --mode threads --dtype f64 --nrhs 1 --tile 0 (the\n"
         "  provider's choice; the tile used is printed) --seed from the clock.\n"
         "  --reps K: K timed solves in one group (median shown); --warmup K: untimed ones\n"
         "  first (the first solve of a process includes loading the provider).\n"
         "  --check: residual (default) checks the result in O(n^2) per right-hand side:\n"
         "  potrs, getrs ||AX-B||/(||A|| ||X||), gels the normal equations, potri and syevd\n"
         "  on 32 columns spread over A when n is large, log det within its Hadamard and\n"
         "  Ostrowski bounds; full: every column, and log det against an independent\n"
         "  O(n^3) Cholesky (a minute at n = 3000); none: no check.  The JSON says which\n"
         "  (\"check\").  Tolerances: 64 rows eps(dtype), gels 16 sqrt(m) eps.\n"
         "  Progress: a line per phase on stderr once a run takes over %.0f s (never on\n"
         "  stdout); --progress: from the start; --quiet: none.\n"
         "  Provider: --provider, else $MUSTER_PROVIDER, else the runtime's choice: the one\n"
         "  expected fastest (estimate, cost table, else priority; docs/choice.md), printed\n"
         "  with its reason (whole in the JSON).  A GPU provider (CUDA memory only, e.g.\n"
         "  cusolvermg) puts each rank's shard on a GPU: rank r on GPU r %% count, or on\n"
         "  LIST[r %% len] with --devices LIST (comma-separated ordinals, e.g. 0,1).\n"
         "  Ranges: --n, --m and --nrhs 1..%d, --tile 0..%d, --ranks 1..%d, --reps 1..%d,\n"
         "  --warmup 0..%d, --seed 0..18446744073709551615, --devices entries 0..%d.\n"
         "  Processes mode: every rank's fate (pid, exit status or signal, phase) is on\n"
         "  stderr when one failed, and in the JSON \"fates\"; a rank that dies fails the\n"
         "  run (exit 1) at once, and the ranks die with the command.\n"
         "  --launcher mpi: this process is one rank of a job mpirun/srun started, on any\n"
         "  node (kind mpi comm, collective providers only: scalapack on the host,\n"
         "  cusolvermp on GPUs, a rank's piece on GPU l %% count of its local rank l, or\n"
         "  LIST[l %% len] with --devices); rank 0 prints the result, a failing rank its\n"
         "  error naming it.  --launcher auto: mpi when OMPI_COMM_WORLD_*, PMI_* or\n"
         "  SLURM_* say a launcher started us, else exit 2.\n"
         "  --ranks and --mode are refused with it (exit 2).  A rank stopped\n"
         "  mid-solve ends the job after MUSTER_TIMEOUT plus 4 x the provider's expected\n"
         "  time when it has one (docs/bootstrap.md).\n"
         "exit status: 0 solved and checked; 1 the solve failed or its check did; 2 bad\n"
         "  usage (one line on stderr).\n",
         dtypes, routines, PROG_AFTER_S, OPT_MAX_N, OPT_MAX_N, MUSTER_MAX_RANKS, SR_MAX_REPS, OPT_MAX_WARMUP,
         OPT_MAX_DEVICE);
}

/* "0,1,3" -> devices; 0 or -1 after printing why. */
static int parse_devices(const char *v, int *devices, int *count) {
  int64_t d[MUSTER_MAX_RANKS];
  int n = opt_i64_list(WHO, "--devices", v, 0, OPT_MAX_DEVICE, d, MUSTER_MAX_RANKS);
  if (n < 0) return -1;
  for (int i = 0; i < n; i++) devices[i] = (int)d[i];
  *count = n;
  return 0;
}

/* The options, in the order of the switch in `option`. */
enum { O_HELP, O_H, O_JSON, O_NOVEC, O_FULL, O_LOGDET, O_QUIET, O_PROGRESS, O_N, O_M, O_NRHS, O_TILE, O_RANKS,
       O_REPS, O_WARMUP, O_SEED, O_MODE, O_LAUNCHER, O_DTYPE, O_PROVIDER, O_DEVICES, O_CHECK };
static const cli_opt_t opts[] = {
    {"--help", 0}, {"-h", 0}, {"--json", 0}, {"--no-vectors", 0}, {"--full", 0}, {"--logdet", 0}, {"--quiet", 0},
    {"--progress", 0}, {"--n", 1}, {"--m", 1}, {"--nrhs", 1}, {"--tile", 1}, {"--ranks", 1},
    {"--reps", 1}, {"--warmup", 1}, {"--seed", 1}, {"--mode", 1}, {"--launcher", 1}, {"--dtype", 1},
    {"--provider", 1}, {"--devices", 1}, {"--check", 1}};

/* Option k with value v into c: 0, or -1 after printing why. */
static int option(int k, const char *v, cli_solve_t *c) {
  sr_spec_t *spec = &c->spec;
  const char *a = opts[k].name;
  switch (k) {
  case O_JSON: c->json = 1; return 0;
  case O_NOVEC: spec->flags |= MUSTER_NO_VECTORS; return 0;
  case O_FULL: spec->flags |= MUSTER_FULL_MATRICES; return 0;
  case O_LOGDET: spec->flags |= MUSTER_LOGDET; return 0;
  case O_QUIET: c->progress = -1; return 0;
  case O_PROGRESS: c->progress = 1; return 0;
  case O_N: return opt_i64(WHO, a, v, 1, OPT_MAX_N, &spec->n);
  case O_M: return opt_i64(WHO, a, v, 1, OPT_MAX_N, &spec->m);
  case O_NRHS: return opt_i64(WHO, a, v, 1, OPT_MAX_N, &spec->nrhs);
  case O_TILE: return opt_i64(WHO, a, v, 0, OPT_MAX_N, &spec->tile);
  case O_RANKS: c->set_ranks = a; return opt_int(WHO, a, v, 1, MUSTER_MAX_RANKS, &spec->ranks);
  case O_REPS: return opt_int(WHO, a, v, 1, SR_MAX_REPS, &spec->reps);
  case O_WARMUP: return opt_int(WHO, a, v, 0, OPT_MAX_WARMUP, &spec->warmup);
  case O_SEED: c->seeded = 1; return opt_u64(WHO, a, v, &c->seed);
  case O_MODE: c->mode = c->set_mode = v; return 0;
  case O_PROVIDER: spec->provider = v; return opt_backend(WHO, a, v);
  case O_DEVICES: return parse_devices(v, spec->devices, &spec->ndevices);
  case O_LAUNCHER:
    c->launcher = v;
    if (!strcmp(v, "mpi") || !strcmp(v, "auto")) return 0;
    return cli_usage_error(WHO, "--launcher mpi or auto, not '%s'", v), -1;
  case O_DTYPE:
    if (muster_dtype_from_name(v, &spec->dtype) == 0) return 0;
    return cli_usage_error(WHO, "%s", muster_last_error()), -1;
  case O_CHECK:
    if (chk_level_from_name(v, &c->check) == 0) return 0;
    return cli_usage_error(WHO, "--check none, residual or full, not '%s'", v), -1;
  }
  return -1;
}

/* One word into the cli_solve_t arg (a cli_on_word): an option, or the
 * ROUTINE operand; 0, or 2 after printing why. */
static int word(int k, const char *v, void *arg) {
  cli_solve_t *c = arg;
  if (k != CLI_OPERAND) return option(k, v, c) < 0 ? 2 : 0;
  if (c->spec.routine) return cli_usage_error(WHO, "one ROUTINE only, not '%s' too", v);
  if (muster_routine_from_name(v, &c->spec.routine) != 0) return cli_usage_error(WHO, "%s", muster_last_error());
  return 0;
}

/* The options into c: -1 to go on, else the exit status (0 --help, 2). */
static int parse(int argc, char **argv, cli_solve_t *c) {
  int rc = cli_args_each(WHO, argc, argv, opts, (int)(sizeof opts / sizeof opts[0]), 1, word, c);
  if (rc == CLI_HELP) {
    usage();
    return 0;
  }
  return rc != 0 ? 2 : -1;
}

/* --m (opts.h) and --logdet against the routine; gels's m when --m was
 * not given.  0, or -1 after printing why. */
static int check_shape(cli_solve_t *c) {
  sr_spec_t *spec = &c->spec;
  if (opt_gels_m(WHO, spec->routine, spec->m, &spec->n, 1) < 0) return -1;
  if ((spec->flags & MUSTER_LOGDET) && spec->routine != MUSTER_POTRS) {
    cli_usage_error(WHO, "--logdet is potrs's (log det of the SPD A it factors), not %s's",
                    muster_routine_name(spec->routine));
    return -1;
  }
  if (spec->routine == MUSTER_GELS) spec->m = opt_gels_rows(spec->m, spec->n);
  if (muster_routine_takes(spec->routine) & MUSTER_TAKES_O) return sf_shape(WHO, spec);
  if (spec->flags & MUSTER_FULL_MATRICES) {
    cli_usage_error(WHO, "--full is geqrf's and gesvd's (the full Q, U and V^H), not %s's",
                    muster_routine_name(spec->routine));
    return -1;
  }
  return 0;
}

/* What parse cannot see alone: -1 to go on, else 2. */
static int check_usage(cli_solve_t *c) {
  char routines[OPT_NAMES_CAP];
  if (!c->spec.routine)
    return cli_usage_error(WHO, "which ROUTINE (%s)?", opt_routine_names(routines, sizeof routines, ", ", 0));
  if (check_shape(c) < 0) return 2;
  if (c->launcher) {
    const char *bad = c->set_ranks ? "--ranks" : c->set_mode ? "--mode" : NULL;
    if (bad)
      return cli_usage_error(WHO, "%s makes no sense with --launcher %s: the launcher starts the ranks "
                             "(mpirun -np R), each one a process", bad, c->launcher);
    if (!strcmp(c->launcher, "auto") && !muster_launcher_detect(NULL, 0, NULL, NULL))
      return cli_usage_error(WHO, "--launcher auto: no launcher in the environment (none of "
                             "OMPI_COMM_WORLD_RANK/SIZE, PMI_RANK/SIZE, SLURM_PROCID/NTASKS): run it under "
                             "mpirun or srun, or leave --launcher out to start the ranks here");
    c->mode = "mpi";
    return -1;
  }
  if (!strcmp(c->mode, "threads")) c->spec.processes = 0;
  else if (!strcmp(c->mode, "processes")) c->spec.processes = 1;
  else return cli_usage_error(WHO, "--mode threads or processes, not '%s'", c->mode);
  return -1;
}

static void on_rep(int i, int n) { prog_phase(PROG_SOLVING, i, n); }

/* The ranks started here, as threads or processes (solve_run.h). */
static int run_local(cli_solve_t *c, int64_t nrhs) {
  sr_spec_t *spec = &c->spec;
  mats_t m;
  prog_phase(PROG_GENERATING, 0, 0);
  if (mats_make(c, nrhs, &m) < 0) return 1;
  sr_out_t out;
  int xsame = 0, started = -1;
  char why[600];
  static pick_t pick; /* 2 KB: off the stack */
  if (cli_choose_memory(spec, &spec->cuda, pick.provider, sizeof pick.provider, pick.reason, sizeof pick.reason,
                        why, sizeof why) < 0) {
    sr_out_init(&out);
    out.rc = MUSTER_ENOPROVIDER;
    snprintf(out.msg, sizeof out.msg, "%s", why);
  } else {
    spec->on_rep = on_rep;
    if (spec->processes) prog_pause(); /* the ranks are forked single-threaded (progress.h) */
    started = sr_run(spec, m.A, m.B, &out, m.full, m.X, m.W, &xsame);
    prog_resume();
    if (out.res.provider[0] && out.reason[0]) snprintf(pick.reason, sizeof pick.reason, "%s", out.reason);
  }
  int rc = solve_report(c, nrhs, &m, &out, started, xsame, &pick);
  mats_free(&m);
  return rc;
}

/* This process is one rank of an MPI job (solve_mpi.h): rank 0 checks and
 * reports; another rank says only its own failure, naming itself. */
static int run_mpi(cli_solve_t *c, int64_t nrhs) {
  sm_job_t j;
  int rc = sm_open(&j);
  if (rc == 0) {
    c->spec.ranks = j.size;
    rc = sm_agree_seed(&j, &c->seed); /* rank 0's, unless --seed gave every rank the same */
  }
  if (rc == 0) rc = sm_place(&j);
  if (rc == 0) rc = sm_memory(&j, &c->spec); /* host, or every piece on a GPU */
  if (rc < 0) {
    if (!j.comm) muster_launcher_detect(NULL, 0, &j.rank, NULL); /* MPI's is not known */
    fprintf(stderr, "muster solve: rank %d (pid %d on %s): %s\n", j.rank, (int)getpid(), j.host,
            sm_last_error());
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
  if (j.rank == 0) prog_phase(PROG_GENERATING, 0, 0);
  if (mats_make(c, nrhs, &m) < 0) memset(&m, 0, sizeof m);
  if (j.rank == 0) prog_phase(PROG_SOLVING, 0, 0);
  rc = sm_run(&j, &c->spec, m.A, m.B, &out, m.full, m.X, m.W, &xsame);
  if (rc < 0) {
    fprintf(stderr, "muster solve: rank %d (pid %d on %s): %s\n", j.rank, (int)getpid(), j.host,
            sm_last_error());
  } else if (j.rank == 0) {
    static const pick_t none; /* the choice is the ranks' own */
    status = solve_report(c, nrhs, &m, &out, 0, xsame, &none);
  } else {
    if (out.rc != 0)
      fprintf(stderr, "muster solve: rank %d of %d (pid %d on %s): %s: %s\n", j.rank, j.size,
              (int)getpid(), j.host, muster_strerror(out.rc), out.msg);
    status = out.rc != 0;
  }
  mats_free(&m);
  sm_close(&j);
  if ((rc = sm_finish()) < 0) {
    fprintf(stderr, "muster solve: rank %d of %d (pid %d on %s): %s\n", j.rank, j.size, (int)getpid(), j.host,
            sm_last_error());
    sm_end(rc);
    status = 1;
  }
  return status;
}

int cmd_solve(int argc, char **argv) {
  cli_solve_t c = {.spec = {.routine = 0, .dtype = MUSTER_F64, .n = 1024, .nrhs = 1, .ranks = 2, .reps = 1},
                   .seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 20),
                   .check = CHK_RESIDUAL, .mode = "threads"};
  int rc = parse(argc, argv, &c);
  if (rc < 0) rc = check_usage(&c);
  if (rc >= 0) return rc;
  int64_t nrhs = muster_routine_takes(c.spec.routine) & MUSTER_TAKES_B ? c.spec.nrhs : 1;
  prog_start(WHO, c.progress); /* none, should it fail: the run goes on */
  rc = c.launcher ? run_mpi(&c, nrhs) : run_local(&c, nrhs);
  prog_stop();
  return rc;
}
