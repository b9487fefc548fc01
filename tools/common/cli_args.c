/* tools/common/cli_args.c - see cli_args.h. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cli_args.h"

typedef struct cli_args {
  const char *who; /* "muster solve": the start of every message */
  int argc;
  char **argv;
  int next;        /* the next word to read                        */
  int operands;    /* 1 after "--": every word is an operand       */
} cli_args_t;

#define CLI_END (-1)   /* no more words                          */
#define CLI_ERROR (-2) /* a usage error, already printed: exit 2 */

static void cli_args_init(cli_args_t *a, const char *who, int argc, char **argv) {
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

/* The next word: the index in opts[0..nopts) of the option it names (with
 * *value its value, NULL for a flag), CLI_OPERAND (*value the word),
 * CLI_END, or CLI_ERROR after the usage error. */
static int cli_args_next(cli_args_t *a, const cli_opt_t *opts, int nopts, const char **value) {
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

int cli_args_each(const char *who, int argc, char **argv, const cli_opt_t *opts, int nopts, int operands,
                  cli_on_word on_word, void *ctx) {
  cli_args_t a;
  cli_args_init(&a, who, argc, argv);
  const char *v;
  for (int k; (k = cli_args_next(&a, opts, nopts, &v)) != CLI_END;) {
    if (k == CLI_ERROR) return 2;
    if (k == CLI_OPERAND && !operands) return cli_usage_error(who, "unexpected argument '%s'", v);
    if (k >= 0 && (!strcmp(opts[k].name, "--help") || !strcmp(opts[k].name, "-h"))) return CLI_HELP;
    int rc = on_word(k, v, ctx);
    if (rc != 0) return rc;
  }
  return 0;
}
