/*
 * tools/muster/cmd_rendezvous.c - `muster rendezvous`: rendezvous latency.
 *
 *   muster rendezvous --ranks R --mode threads|processes --rounds K
 *                     [--warmup W] [--cycles C] [--payload B] [--baseline] [--json]
 *
 * R participants (threads, or processes this command forks before any group
 * call) join one group named rendezvous.<pid>, run W untimed and K timed
 * rounds of publish + barrier + read (every peer's payload is verified), then
 * C full cycles on the reused group (join of the cached group, exchange,
 * read, leave).  Prints median and p99 in microseconds, measured by rank 0.
 * --baseline runs the same rounds with glibc's pthread_barrier (process-
 * shared in processes mode) and prints the ratio muster / pthread.
 *
 * Exit status: 0 on success, 1 on a runtime error or a wrong read (the
 * runtime's message on stderr), 2 on bad usage.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "cli_args.h"
#include "opts.h"
#include "muster/parse.h"
#include "rendezvous.h"

static const char usage_text[] =
    "usage: muster rendezvous [--ranks R] [--mode threads|processes] [--rounds K]\n"
    "                         [--warmup W] [--cycles C] [--payload B] [--baseline] [--json]\n"
    "\n"
    "R participants (threads, or processes forked by this command) join one group\n"
    "and run W untimed then K timed rounds of publish + barrier + read, verifying\n"
    "every peer's payload; then C full cycles on the reused group (join of the\n"
    "cached group, exchange, read, leave).  Latencies are rank 0's, in microseconds.\n"
    "\n"
    "  --ranks R      participants, 1..%d (default 2; the runtime accepts up to %d)\n"
    "  --mode M       threads (default) or processes\n"
    "  --rounds K     timed rounds, 1..%d (default 1000)\n"
    "  --warmup W     untimed rounds first (default 20)\n"
    "  --cycles C     timed join+exchange+read+leave cycles (default K)\n"
    "  --payload B    bytes each rank publishes per round, 1..%d (default 64)\n"
    "  --baseline     also run the rounds with glibc pthread_barrier and print the ratio\n"
    "  --json         one JSON object on stdout\n"
    "\n"
    "environment: MUSTER_TIMEOUT (s), MUSTER_JOB, MUSTER_LOG (see muster --help)\n"
    "exit status: 0 ok; 1 runtime error or wrong payload read (message on stderr); 2 usage\n";

static void usage(FILE *f) {
  fprintf(f, usage_text, RV_MAX_SPAWN, MUSTER_MAX_RANKS, RV_MAX_ROUNDS, MUSTER_MAX_PAYLOAD);
}

#define WHO "muster rendezvous"

/* An option's integer value in [lo, hi]; 0, or 2 after printing why. */
static int int_option(const char *opt, const char *v, long lo, long hi, long *out) {
  int64_t x;
  if (opt_i64(WHO, opt, v, lo, hi, &x) < 0) return 2;
  *out = (long)x;
  return 0;
}

/* $MUSTER_RENDEZVOUS_TEST_CORRUPT = RANK,ROUND[,baseline]; 0 or 2. */
static int parse_corrupt(const char *inj, struct rv_config *c) {
  char copy[64], *round, *kind;
  int64_t rank, rd;
  if (strlen(inj) >= sizeof copy) goto bad;
  memcpy(copy, inj, strlen(inj) + 1);
  round = strchr(copy, ',');
  if (!round) goto bad;
  *round++ = '\0';
  kind = strchr(round, ',');
  if (kind) *kind++ = '\0';
  if ((kind && strcmp(kind, "baseline") != 0) ||
      muster_parse_i64(copy, 0, RV_MAX_SPAWN - 1, &rank) < 0 ||
      muster_parse_i64(round, 0, 3L * RV_MAX_ROUNDS, &rd) < 0)
    goto bad;
  c->corrupt_rank = (int)rank;
  c->corrupt_round = (long)rd;
  c->corrupt_kind = kind ? RV_PTHREAD : RV_MUSTER;
  return 0;
bad:
  return cli_usage_error(WHO, "MUSTER_RENDEZVOUS_TEST_CORRUPT must be RANK,ROUND[,baseline], got '%s'", inj);
}

enum { O_HELP, O_H, O_JSON, O_BASELINE, O_RANKS, O_MODE, O_ROUNDS, O_WARMUP, O_CYCLES, O_PAYLOAD };
static const cli_opt_t opts[] = {{"--help", 0},   {"-h", 0},         {"--json", 0},   {"--baseline", 0},
                                 {"--ranks", 1},  {"--mode", 1},     {"--rounds", 1}, {"--warmup", 1},
                                 {"--cycles", 1}, {"--payload", 1}};

/* What parse_args fills: c, and --cycles apart (-1: not given). */
typedef struct rv_args {
  struct rv_config *c;
  long cycles;
} rv_args_t;

/* Option k with value v into the rv_args_t arg (a cli_on_word); 0 or 2. */
static int option(int k, const char *v, void *arg) {
  struct rv_config *c = ((rv_args_t *)arg)->c;
  long x = 0;
  const char *a = opts[k].name;
  switch (k) {
  case O_JSON: c->json = 1; return 0;
  case O_BASELINE: c->baseline = 1; return 0;
  case O_RANKS: if (int_option(a, v, 1, RV_MAX_SPAWN, &x)) return 2; c->ranks = (int)x; return 0;
  case O_ROUNDS: if (int_option(a, v, 1, RV_MAX_ROUNDS, &x)) return 2; c->rounds = x; return 0;
  case O_WARMUP: if (int_option(a, v, 0, RV_MAX_ROUNDS, &x)) return 2; c->warmup = x; return 0;
  case O_CYCLES: return int_option(a, v, 0, RV_MAX_ROUNDS, &((rv_args_t *)arg)->cycles);
  case O_PAYLOAD:
    if (int_option(a, v, 1, MUSTER_MAX_PAYLOAD, &x)) return 2;
    c->payload = (size_t)x;
    return 0;
  case O_MODE:
    if (!strcmp(v, "threads")) c->mode = RV_THREADS;
    else if (!strcmp(v, "processes")) c->mode = RV_PROCESSES;
    else return cli_usage_error(WHO, "--mode must be threads or processes, got '%s'", v);
    return 0;
  }
  return 2;
}

/* 0, 1 (--help printed) or 2 (bad usage, printed). */
static int parse_args(int argc, char **argv, struct rv_config *c) {
  rv_args_t x = {.c = c, .cycles = -1};
  *c = (struct rv_config){.ranks = 2, .mode = RV_THREADS, .rounds = 1000, .warmup = 20,
                          .payload = 64};
  int rc = cli_args_each(WHO, argc, argv, opts, (int)(sizeof opts / sizeof opts[0]), 0, option, &x);
  if (rc == CLI_HELP) {
    usage(stdout);
    return 1;
  }
  if (rc != 0) return 2;
  long cycles = x.cycles;
  c->cycles = cycles >= 0 ? cycles : c->rounds;
  /* tests prove that a wrong read is caught (docs/cli-rendezvous.md) */
  const char *inj = getenv("MUSTER_RENDEZVOUS_TEST_CORRUPT");
  if (inj && *inj && parse_corrupt(inj, c) != 0) return 2;
  snprintf(c->group, sizeof c->group, "rendezvous.%d", (int)getpid());
  return 0;
}

static void print_stats_json(const char *key, const struct rv_stats *st) {
  printf("\"%s\":{\"n\":%ld,\"median\":%.3f,\"p99\":%.3f,\"mean\":%.3f,\"min\":%.3f,\"max\":%.3f}",
         key, st->n, st->median_us, st->p99_us, st->mean_us, st->min_us, st->max_us);
}

static void print_json(const struct rv_config *c, const struct rv_stats *round,
                       const struct rv_stats *cycle, const struct rv_stats *base) {
  printf("{\"ranks\":%d,\"mode\":\"%s\",\"rounds\":%ld,\"warmup\":%ld,\"cycles\":%ld,"
         "\"payload_bytes\":%zu,\"group\":\"%s\",\"unit\":\"us\",",
         c->ranks, c->mode == RV_THREADS ? "threads" : "processes", c->rounds, c->warmup,
         c->cycles, c->payload, c->group);
  print_stats_json("round_us", round);
  printf(",");
  print_stats_json("cycle_us", cycle);
  if (base) {
    printf(",\"baseline\":{\"kind\":\"pthread_barrier\",");
    print_stats_json("round_us", base);
    printf("},\"ratio_median\":%.3f,\"ratio_p99\":%.3f",
           base->median_us > 0 ? round->median_us / base->median_us : 0.0,
           base->p99_us > 0 ? round->p99_us / base->p99_us : 0.0);
  }
  printf("}\n");
}

static void print_text(const struct rv_config *c, const struct rv_stats *round,
                       const struct rv_stats *cycle, const struct rv_stats *base) {
  printf("muster rendezvous: %d rank%s, %s, %ld rounds (+%ld warmup), %ld cycles, "
         "payload %zu B, group %s\n",
         c->ranks, c->ranks == 1 ? "" : "s", c->mode == RV_THREADS ? "threads" : "processes",
         c->rounds, c->warmup, c->cycles, c->payload, c->group);
  printf("  %-28s median %9.2f us   p99 %9.2f us\n", "muster round", round->median_us,
         round->p99_us);
  if (cycle->n > 0)
    printf("  %-28s median %9.2f us   p99 %9.2f us\n", "muster cycle (reused group)",
           cycle->median_us, cycle->p99_us);
  if (base) {
    printf("  %-28s median %9.2f us   p99 %9.2f us\n", "pthread_barrier round",
           base->median_us, base->p99_us);
    printf("  %-28s median %9.2fx   p99 %9.2fx\n", "ratio muster / pthread",
           base->median_us > 0 ? round->median_us / base->median_us : 0.0,
           base->p99_us > 0 ? round->p99_us / base->p99_us : 0.0);
  }
}

int cmd_rendezvous(int argc, char **argv) {
  struct rv_config c;
  struct rv_shared *s = NULL;
  struct rv_stats round = {0}, cycle = {0}, base = {0};
  int rc = parse_args(argc, argv, &c);
  if (rc == 1) return 0; /* --help */
  if (rc != 0) return rc;
  int e = rv_shared_map(&c, &s);
  if (e != 0) {
    fprintf(stderr, "muster rendezvous: cannot map %ld samples: %s\n", c.rounds + c.cycles,
            strerror(-e));
    return 1;
  }
  rc = 1;
  if (rv_run(&c, RV_MUSTER, s) != 0) goto out;
  rv_stats(s->round_s, c.rounds, &round);
  rv_stats(s->cycle_s, c.cycles, &cycle);
  if (c.baseline) {
    if (rv_run(&c, RV_PTHREAD, s) != 0) goto out;
    rv_stats(s->round_s, c.rounds, &base);
  }
  if (c.json) print_json(&c, &round, &cycle, c.baseline ? &base : NULL);
  else print_text(&c, &round, &cycle, c.baseline ? &base : NULL);
  rc = fflush(stdout) == 0 ? 0 : 1;
out:
  rv_shared_unmap(s);
  return rc;
}
