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

typedef struct cli_args {
  const char *who; /* "muster solve": the start of every message */
  int argc;
  char **argv;
  int next;        /* the next word to read                        */
  int operands;    /* 1 after "--": every word is an operand       */
} cli_args_t;

#define CLI_END (-1)     /* no more words                                   */
#define CLI_ERROR (-2)   /* a usage error, already printed: exit 2          */
#define CLI_OPERAND (-3) /* a word that is no option: *value is the word    */

/* Scan argv[1..argc) (argv[0] is the command's own name). */
void cli_args_init(cli_args_t *a, const char *who, int argc, char **argv);

/* The next word: the index in opts[0..nopts) of the option it names (with
 * *value its value, NULL for a flag), CLI_OPERAND, CLI_END, or CLI_ERROR
 * after "unknown option '--x'", "option '--n' needs a value" or "option
 * '--json' takes no value" (cli_usage_error). */
int cli_args_next(cli_args_t *a, const cli_opt_t *opts, int nopts, const char **value);

/* "WHO: <printf fmt>; see 'WHO --help'" and a newline on stderr; returns
 * 2, the exit status of bad usage. */
int cli_usage_error(const char *who, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
