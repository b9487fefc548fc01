/* placeholder until the providers subcommand lands (replaced by its owner) */
#include <stdio.h>
#include "cli.h"
int cmd_providers(int argc, char **argv) { (void)argc; (void)argv; fprintf(stderr, "muster providers: not built yet\n"); return 2; }
