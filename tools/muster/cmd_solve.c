/* placeholder until the solve subcommand lands (replaced by its owner) */
#include <stdio.h>
#include "cli.h"
int cmd_solve(int argc, char **argv) { (void)argc; (void)argv; fprintf(stderr, "muster solve: not built yet\n"); return 2; }
