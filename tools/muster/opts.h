/*
 * tools/muster/opts.h - option values of every subcommand (the words are
 * found by tools/common/cli_args.h), parsed by the runtime's one parser
 * (muster/parse.h) and reported the same way: a bad value prints the one
 * line "muster SUB: --opt: '<value>' is out of range 1..64; see 'muster
 * SUB --help'" (the parser's reason, cli_usage_error) on stderr, and the
 * subcommand exits 2.
 */
#ifndef MUSTER_CLI_OPTS_H
#define MUSTER_CLI_OPTS_H

#include <stddef.h>
#include <stdint.h>

/* The ranges every subcommand accepts for the options they share. */
#define OPT_MAX_N 65536       /* --n entries and --nrhs                 */
#define OPT_MAX_DEVICE 4095   /* --devices entries                      */
#define OPT_MAX_WARMUP 100    /* --warmup                               */

/* 0 with *out set, or -1 after printing "<who>: <opt>: <why>; see ...". */
int opt_i64(const char *who, const char *opt, const char *v, int64_t lo, int64_t hi,
            int64_t *out);
int opt_int(const char *who, const char *opt, const char *v, int lo, int hi, int *out);
int opt_u64(const char *who, const char *opt, const char *v, uint64_t *out);
/* A comma-separated list: the count, or -1 after printing. */
int opt_i64_list(const char *who, const char *opt, const char *v, int64_t lo, int64_t hi,
                 int64_t *out, int cap);
/* gels's --m, the one rule for `muster solve` and `muster bench`: *m (0:
 * not given) is refused for any other routine, and when it is below any of
 * ns[0..nn) (a wide A); not given, gels's m is 2n for each n (at most
 * OPT_MAX_N), which opt_gels_rows gives.  0, or -1 after printing why. */
int opt_gels_m(const char *who, int routine, int64_t m, const int64_t *ns, int nn);
/* The rows of gels's A for columns n and --m (0: not given). */
int64_t opt_gels_rows(int64_t m, int64_t n);
/* A provider name (--provider): 0 or -1 after printing. */
int opt_backend(const char *who, const char *opt, const char *v);

/* The names of every routine / dtype, from muster/types.h's tables (the
 * help is written from them, so it lists what the code takes), joined by
 * sep: "potrs|potri|syevd|getrs|gels".  Returns buf. */
const char *opt_routine_names(char *buf, size_t cap, const char *sep);
const char *opt_dtype_names(char *buf, size_t cap, const char *sep);
#define OPT_NAMES_CAP 128 /* enough for either list */

/* Every MUSTER_* variable the CLI reads (muster_env_check) and its test knobs
 * MUSTER_LAUNCH_TEST_STOP and _FORK_FAIL: 0, or -1 after printing
 * "muster: <why>". */
int opt_check_env(void);

#endif
