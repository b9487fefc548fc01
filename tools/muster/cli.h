/* tools/muster/cli.h - subcommands of the muster CLI and shared helpers.
 * Each subcommand is `int cmd_X(int argc, char **argv)` (argv[0] is the
 * subcommand's name) in cmd_X.c, returns the process exit status, prints
 * results to stdout and errors (with muster_last_error()) to stderr. */
#ifndef MUSTER_CLI_H
#define MUSTER_CLI_H

int cmd_rendezvous(int argc, char **argv);  /* cmd_rendezvous.c */
int cmd_solve(int argc, char **argv);       /* cmd_solve.c      */
int cmd_providers(int argc, char **argv);   /* cmd_providers.c  */
int cmd_bench(int argc, char **argv);       /* cmd_bench.c      */
int cmd_calibrate(int argc, char **argv);   /* calibrate.c: bench --calibrate */

#endif
