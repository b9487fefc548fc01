/* tools/common/cli_args.c - see cli_args.h. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cli_args.h"

void cli_args_init(cli_args_t *a, const char *who, int argc, char **argv) {
  a->who = who;
  a->argc = argc;
  a->argv = argv;
  a->next = 1;
  a->operands = 0;
}

int cli_usage_error(const char *who, const char *fmt, ...) {
  /* one fprintf per piece would let another process's line interleave */
  char what[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  fprintf(stderr, "%s: %s; see '%s --help'\n", who, what, who);
  return 2;
}

/* The option named by word's first len bytes, or -1. */
static int find(const cli_opt_t *opts, int nopts, const char *word, size_t len) {
  for (int k = 0; k < nopts; k++)
    if (strlen(opts[k].name) == len && !strncmp(opts[k].name, word, len)) return k;
  return -1;
}

int cli_args_next(cli_args_t *a, const cli_opt_t *opts, int nopts, const char **value) {
  *value = NULL;
  if (a->next >= a->argc) return CLI_END;
  const char *w = a->argv[a->next++];
  if (!a->operands && !strcmp(w, "--")) {
    a->operands = 1;
    return cli_args_next(a, opts, nopts, value);
  }
  if (a->operands || w[0] != '-' || !w[1]) { /* "-" alone is an operand (stdout, stdin) */
    *value = w;
    return CLI_OPERAND;
  }
  const char *eq = !strncmp(w, "--", 2) ? strchr(w, '=') : NULL;
  size_t len = eq ? (size_t)(eq - w) : strlen(w);
  int k = find(opts, nopts, w, len);
  if (k < 0) {
    cli_usage_error(a->who, "unknown option '%.*s'", (int)(len < 200 ? len : 200), w);
    return CLI_ERROR;
  }
  if (!opts[k].takes_value) {
    if (eq) {
      cli_usage_error(a->who, "option '%s' takes no value", opts[k].name);
      return CLI_ERROR;
    }
    return k;
  }
  if (eq) *value = eq + 1;
  else if (a->next < a->argc) *value = a->argv[a->next++];
  else {
    cli_usage_error(a->who, "option '%s' needs a value", opts[k].name);
    return CLI_ERROR;
  }
  return k;
}
