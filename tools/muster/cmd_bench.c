/* placeholder until the bench subcommand lands (replaced by its owner) */
#include <stdio.h>
#include "cli.h"
int cmd_bench(int argc, char **argv) { (void)argc; (void)argv; fprintf(stderr, "muster bench: not built yet\n"); return 2; }
