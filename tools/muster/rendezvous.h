/* tools/muster/rendezvous.h - `muster rendezvous`: the participants' loops
 * (rendezvous_run.c) and the statistics (rendezvous_stats.c) behind
 * cmd_rendezvous.c. */
#ifndef MUSTER_CLI_RENDEZVOUS_H
#define MUSTER_CLI_RENDEZVOUS_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "muster.h"

#define RV_MAX_SPAWN 1024       /* participants the command will start      */
#define RV_MAX_ROUNDS 10000000  /* samples kept in memory: 80 MB at most     */
#define RV_MSG 512

enum rv_mode { RV_THREADS = 1, RV_PROCESSES = 2 };
enum rv_kind { RV_MUSTER = 1, RV_PTHREAD = 2 };

struct rv_config {
  int ranks;
  enum rv_mode mode;
  long rounds;    /* timed rounds                                   */
  long warmup;    /* untimed rounds before them                     */
  long cycles;    /* timed join+exchange+read+leave cycles (muster)  */
  size_t payload; /* bytes each rank publishes per round            */
  int json;
  int baseline;
  char group[MUSTER_MAX_NAME + 1];
  /* fault injection for tests ($MUSTER_RENDEZVOUS_TEST_CORRUPT=RANK,ROUND
   * or RANK,ROUND,baseline): that rank publishes a wrong byte in that
   * round; 0 kind: off */
  int corrupt_kind, corrupt_rank;
  long corrupt_round;
};

/* Everything the participants share: one anonymous MAP_SHARED mapping made
 * before any thread or fork, so threads and processes use the same code.
 * Layout: this header, then rc[ranks], msg[ranks][RV_MSG], round samples
 * (rounds doubles, written by rank 0), cycle samples, then the baseline's
 * payload slots [2][ranks][payload]. */
struct rv_shared {
  pthread_barrier_t bar;  /* baseline only */
  int *rc;                /* per rank: 0, or a negative MUSTER_E* / -1 */
  char (*msg)[RV_MSG];    /* per rank: what went wrong                  */
  double *round_s;
  double *cycle_s;
  unsigned char *slots;
  size_t map_bytes;
};

struct rv_stats {
  long n;
  double median_us, p99_us, mean_us, min_us, max_us;
};

/* rendezvous_run.c */
int rv_shared_map(const struct rv_config *c, struct rv_shared **out);
void rv_shared_unmap(struct rv_shared *s);
/* Run every participant of `kind` (threads or forked processes); 0 when all
 * succeeded; otherwise -1 with every failure printed to stderr. */
int rv_run(const struct rv_config *c, enum rv_kind kind, struct rv_shared *s);

/* rendezvous_stats.c: sorts `v` in place. */
void rv_stats(double *v, long n, struct rv_stats *out);

#endif
