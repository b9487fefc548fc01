/*
 * tools/common/cli_args.h - the one command-line option scanner of the
 * muster CLI (every subcommand) and shmdump: GNU-style long options.
 *
 *   --opt=value and --opt value    an option that takes a value
 *   --flag                         one that does not (--flag=x is refused)
 *   --                             ends the options: every later word is an
 *                                  operand, even one that starts with '-'
 *   -                              an operand (e.g. "--out -": stdout)
 *
 * A usage error is ONE line on stderr, "WHO: WHAT; see 'WHO --help'"
 * (cli_usage_error), and the command exits 2: the whole help is for --help
 * only, where a user asked for it.
 */
#ifndef MUSTER_TOOLS_CLI_ARGS_H
#define MUSTER_TOOLS_CLI_ARGS_H

/* One option a command accepts: its name with the dashes ("--n", "-h"),
 * and whether it takes a value. */
typedef struct cli_opt {
  const char *name;
  int takes_value;
} cli_opt_t;

#define CLI_OPERAND (-3) /* cli_on_word's k for a word that is no option  */

/* What a command does with one word: option k of opts (value: its value,
 * NULL for a flag), or with k == CLI_OPERAND an operand (value: the
 * word).  0 to go on, else the status to stop with, after printing why
 * (cli_usage_error returns 2). */
typedef int (*cli_on_word)(int k, const char *value, void *ctx);

#define CLI_HELP (-4) /* cli_args_each: --help or -h was given */

/* The option loop of every command, once: scan argv[1..argc)
 * (argv[0] is the command's own name) and hand each option, and each
 * operand when operands is non-zero, to on_word(k, value, ctx).  Returns
 * 0 after the last word; CLI_HELP at an option named "--help" or "-h"
 * (the caller prints its usage); 2 after a usage error, printed: "unknown
 * option '--x'", "option '--n' needs a value", "option '--json' takes no
 * value", or "unexpected argument 'W'" (an operand when operands is 0);
 * or on_word's non-zero return. */
int cli_args_each(const char *who, int argc, char **argv, const cli_opt_t *opts, int nopts, int operands,
                  cli_on_word on_word, void *ctx);

/* "WHO: <printf fmt>; see 'WHO --help'" and a newline on stderr; returns
 * 2, the exit status of bad usage. */
int cli_usage_error(const char *who, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
