/* placeholder until the rendezvous subcommand lands (replaced by its owner) */
#include <stdio.h>
#include "cli.h"
int cmd_rendezvous(int argc, char **argv) { (void)argc; (void)argv; fprintf(stderr, "muster rendezvous: not built yet\n"); return 2; }
