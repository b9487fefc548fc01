/* tools/muster/main.c - `muster SUBCOMMAND ...` dispatcher and --help. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "cli_args.h"
#include "opts.h"
#include "out_close.h"
#include "muster.h"

static const struct {
  const char *name;
  int (*fn)(int, char **);
  const char *usage;
} cmds[] = {
    /* usage: a printf format of %1$s the routines ("a|b"), %2$s the dtypes,
     * %3$s the routines bench times (not the factorizations: cmd_bench.c) */
    {"solve", cmd_solve,
     "solve ROUTINE --n N [--m M] --ranks R --mode threads|processes --dtype %2$s\n"
     "        [--tile T] [--nrhs K] [--provider NAME] [--devices LIST] [--seed S] [--logdet]\n"
     "        [--full] [--no-vectors] [--check none|residual|full] [--quiet|--progress] [--json]\n"
     "        run one collective solve (ROUTINE %1$s; gels: m x n A, --m\n"
     "        default 2n; geqrf, gesvd, polar: m x n A, --m default n, --full the full\n"
     "        factors; potrs --logdet: also log det A) on a random matrix and check it\n"
     "  mpirun -np R muster solve ROUTINE --launcher mpi|auto [--n N] [--dtype T] ...\n"
     "        the same with each MPI rank one participant, on any node (collective providers)"},
    {"providers", cmd_providers, "providers [--json]\n        list providers found, their routines, dtypes, availability"},
    {"bench", cmd_bench,
     "bench [--routine %3$s] [--m M] [--help]\n"
     "        benchmarks against LAPACKE (see `muster bench --help`)\n"
     "  bench --calibrate --provider NAME --routine R [--n LIST] [--ranks LIST] --out FILE\n"
     "        measure NAME's cost table for the engine choice (docs/choice.md)"},
    {"rendezvous", cmd_rendezvous,
     "rendezvous --ranks R --mode threads|processes --rounds K [--cycles C] [--baseline] [--json]\n"
     "        R participants run K rounds of publish + barrier + read; prints median/p99"},
};

static void usage(FILE *f) {
  char routines[OPT_NAMES_CAP], dtypes[OPT_NAMES_CAP], benched[OPT_NAMES_CAP];
  opt_routine_names(routines, sizeof routines, "|", 0);
  opt_routine_names(benched, sizeof benched, "|", MUSTER_TAKES_O);
  opt_dtype_names(dtypes, sizeof dtypes, "|");
  fprintf(f, "usage: muster SUBCOMMAND [options]   (muster %s)\n\nsubcommands:\n", muster_version());
  for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
    fputs("  ", f);
    fprintf(f, cmds[i].usage, routines, dtypes, benched);
    fputc('\n', f);
  }
  fputs("  options take their value as --opt V or --opt=V; -- ends the options\n", f);
  fprintf(f,
          "\nenvironment (unset: the default; set but empty or malformed: exit 2):\n"
          "  MUSTER_PROVIDER_PATH  1..16 provider folders separated by ':', none empty, each\n"
          "                        at most 3800 bytes (default: <lib>/muster/providers)\n"
          "  MUSTER_PROVIDER       force a backend: NAME, and/or ROUTINE=NAME entries separated\n"
          "                        by ',' (ROUTINE %s, each once;\n"
          "                        NAME 1..31 of [A-Za-z0-9._-]), e.g. lapack,syevd=cusolvermg;\n"
          "                        else each call goes to the provider expected fastest\n"
          "                        (docs/choice.md)\n"
          "  MUSTER_COST_PATH      1..16 folders separated by ':', none empty, searched first for\n"
          "                        <backend>.cost tables\n"
          "  MUSTER_MPI_LIB        libmpi to dlopen for the MPI bootstrap, the only one tried\n"
          "                        (default libmpi.so.40, libmpi.so.12, libmpi.so; one that does\n"
          "                        not load: exit 2 when MPI starts; docs/bootstrap.md)\n"
          "  MUSTER_TIMEOUT        rendezvous deadline in seconds, 0.001..31536000 (one year),\n"
          "                        or inf: no deadline (default 60); over MPI how long a rank may\n"
          "                        be silent (stopped) before the others end the job naming it\n"
          "  MUSTER_MPI_ABORT      1 (default): an MPI solve or exchange waiting for a silent rank\n"
          "                        is cancelled, then the job ends (MPI_Abort); 0: no check\n"
          "  MUSTER_MPI_HEARTBEAT  1 (default): the ranks beat over MPI, so a stopped rank is told\n"
          "                        from a long solve; 0: none, MPI waits get a deadline instead\n"
          "                        (MUSTER_TIMEOUT + 4 x the provider's time; docs/bootstrap.md)\n"
          "  MUSTER_JOB            job key isolating this job's groups: 1..64 printable ASCII\n"
          "                        bytes, no '/', '.' or space (default \"default\")\n"
          "  MUSTER_LOG            stderr log level: error|warn|info|debug (default silent);\n"
          "                        info logs every provider choice with each candidate's time\n"
          "  MUSTER_DN_DEVICE      cusolverdn: the GPU (leader's ordinal) it runs on (default: the leader's)\n"
          "  MUSTER_DN_POTRI       cusolverdn: potri's path, auto|potri|solve (docs/providers/cusolverdn.md)\n"
          "  MUSTER_MP_LIBDIR      cusolvermp: ':'-separated folders searched first for NCCL and cuSOLVERMp\n"
          "  MUSTER_MP_GRID, MUSTER_MP_TILE, MUSTER_MP_POTRS_NRHS, MUSTER_MP_SCRATCH_MB,\n"
          "  MUSTER_MP_NCCL_BLOCKING, MUSTER_MP_COPY, MUSTER_MP_DISABLE  cusolvermp: grid PxQ, tile,\n"
          "                        rhs per potrs call (n|all), relayout scratch, NCCL mode (0|1), force\n"
          "                        the relayout, turn it off (docs/providers/cusolvermp.md); every\n"
          "                        provider variable malformed or empty: the solve fails naming it\n"
          "  MUSTER_MP_QR_GRIDS    cusolvermp, tests of a release: 1 runs gels and geqrf on more than\n"
          "                        one process where its QR was not yet seen right there (0|1)\n"
          "  MUSTER_SCALAPACK_GRID scalapack: the process grid PxQ, P*Q = ranks (default: most square)\n"
          "  MUSTER_CMG_TILE, MUSTER_CMG_RELAYOUT  cusolvermg, measurements and tests: the tile\n"
          "                        (replaces its table), the relayout plan inplace|copy\n"
          "  MUSTER_TILED_TILE, MUSTER_TILED_TIMING  tiled, measurements: the engine's tile\n"
          "                        (replaces its rule), 1: phase times of GPU work (a sync each)\n"
          "  MUSTER_TILED_LOOKAHEAD, MUSTER_TILED_PRIORITY  tiled, measurements: the lookahead\n"
          "                        depth 1..4 (default 1), 1: the panel on a high-priority stream\n"
          "  MUSTER_TILED_OVERLAP  tiled, measurements: 1 moves A in beside the factorization and L\n"
          "                        out beside the solve (block layout on 2+ GPUs; default 0)\n"
          "  MUSTER_LAUNCH_TEST_STOP  tests only: the rank (0..1023) whose process stops\n"
          "                        itself before it joins, in processes mode\n"
          "  MUSTER_LAUNCH_TEST_FORK_FAIL  tests only: the rank (0..1023) whose fork fails\n"
          "                        (EAGAIN), in processes mode\n"
          "  MUSTER_RENDEZVOUS_TEST_CORRUPT  tests only: RANK,ROUND[,baseline]: that rank of\n"
          "                        muster rendezvous publishes one wrong byte in that round\n"
          "  MUSTER_COMM_TEST_FAIL_STAGE  tests only: the rank (0..63) of a kind store comm whose\n"
          "                        first staging region in the process fails (no memory)\n"
          "\nexit status: 0 on success; 1 on a failed check or runtime error, or when a rank's\n"
          "process died (processes mode); 2 on bad usage (an option or variable: one line\n"
          "on stderr).\n"
          "docs: docs/cli.md, docs/runtime.md, docs/choice.md, docs/bootstrap.md, docs/troubleshooting.md\n",
          routines);
}

static int run(int argc, char **argv) {
  if (argc < 2) {
    char names[128] = "";
    for (size_t i = 0, used = 0; i < sizeof cmds / sizeof cmds[0]; i++)
      used += (size_t)snprintf(names + used, sizeof names - used, "%s%s", i ? ", " : "", cmds[i].name);
    return cli_usage_error("muster", "which SUBCOMMAND (%s)?", names);
  }
  if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
    usage(stdout);
    return 0;
  }
  if (!strcmp(argv[1], "--version")) {
    /* the library's: the CLI links libmuster.so, which may be newer */
    printf("muster %s\n", muster_version());
    return 0;
  }
  for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
    if (strcmp(argv[1], cmds[i].name)) continue;
    /* the runtime would refuse a malformed variable later, in every rank */
    if (opt_check_env() < 0) return 2;
    return cmds[i].fn(argc - 1, argv + 1);
  }
  return cli_usage_error("muster", "unknown subcommand '%.200s'", argv[1]);
}

int main(int argc, char **argv) {
  int rc = run(argc, argv);
  return out_close("muster", rc); /* `> /dev/full` is a failure, not exit 0 */
}
