/*
 * docs/examples/group.c - a group: N participants meet under one name, each
 * publishes a payload and reads everyone's, the leader publishes a status,
 * all pass a barrier, and leave.
 *
 *   group [threads|processes] [NRANKS]      (default: threads 4)
 *
 * threads: the ranks are threads of this process; processes: forked
 * processes.  A rank's code is the same either way: the group is a segment
 * in /dev/shm that threads and processes share alike.  Prints a line per
 * rank, then "group: ... ok"; on a failure, what failed and exit status 1.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "example.h"

/* The group's name.  Groups live under $MUSTER_JOB (default "default"), so
 * two jobs using the same name never meet. */
#define GROUP "example.group"

/* What each rank publishes: up to MUSTER_MAX_PAYLOAD bytes of anything. */
typedef struct hello {
  int rank;
  int pid;
} hello_t;

static int rank_main(int rank, void *arg) {
  int nranks = *(const int *)arg;
  hello_t mine = {rank, (int)getpid()};
  muster_group_t *g = NULL;
  const void *data;
  size_t len;
  long sum = 0, leaders = -1;
  int rc = 0, status;

  /* The first to arrive creates the group, the others attach; join does not
   * wait for anybody (opts NULL: $MUSTER_TIMEOUT or 60 s for the waits). */
  CHECK(muster_group_join(GROUP, rank, nranks, NULL, &g));

  /* Publish, and wait until every rank has published in this round; then
   * all their payloads are readable until our next exchange or barrier. */
  CHECK(muster_group_exchange(g, &mine, sizeof mine));
  for (int r = 0; r < nranks; r++) {
    hello_t theirs;
    CHECK(muster_group_payload(g, r, &data, &len));
    EXPECT(len == sizeof theirs, "rank %d: rank %d published %zu bytes", rank, r, len);
    memcpy(&theirs, data, sizeof theirs);
    EXPECT(theirs.rank == r, "rank %d: slot %d holds rank %d", rank, r, theirs.rank);
    sum += theirs.rank;
  }

  /* The leader (rank 0) publishes a status and data; everybody's next
   * barrier makes them visible to all. */
  if (rank == 0) CHECK(muster_group_set_status(g, 0, &sum, sizeof sum));
  CHECK(muster_group_barrier(g));
  CHECK(muster_group_status(g, &status, &data, &len));
  EXPECT(status == 0 && len == sizeof leaders, "rank %d: status %d, %zu bytes", rank, status, len);
  memcpy(&leaders, data, sizeof leaders);
  EXPECT(leaders == sum, "rank %d: my sum %ld, the leader's %ld", rank, sum, leaders);
  printf("rank %d of %d (pid %d): read all %d payloads, sum %ld, as the leader's\n", rank, nranks,
         mine.pid, nranks, sum);
out:
  return example_leave(g, rc);
}

/* ---- threads ------------------------------------------------------------- */

typedef struct thread_rank {
  pthread_t tid;
  int rank, nranks, rc;
} thread_rank_t;

static void *thread_main(void *p) {
  thread_rank_t *t = p;
  t->rc = rank_main(t->rank, &t->nranks);
  return NULL;
}

/* Run every rank in a thread of its own; 0 if all succeeded, else 1. */
static int run_threads(int nranks) {
  thread_rank_t t[MUSTER_MAX_RANKS];
  int started = 0, failed = 0;
  for (; started < nranks; started++) {
    t[started] = (thread_rank_t){.rank = started, .nranks = nranks};
    if (pthread_create(&t[started].tid, NULL, thread_main, &t[started]) != 0) {
      fprintf(stderr, "pthread_create failed for rank %d\n", started);
      failed = 1; /* the started ranks fail at their timeout, waiting for it */
      break;
    }
  }
  for (int r = 0; r < started; r++) {
    pthread_join(t[r].tid, NULL);
    failed |= t[r].rc != 0;
  }
  return failed;
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "threads";
  int nranks = argc > 2 ? atoi(argv[2]) : 4;
  int processes = strcmp(mode, "processes") == 0;
  if ((!processes && strcmp(mode, "threads") != 0) || nranks < 1 || nranks > MUSTER_MAX_RANKS) {
    fprintf(stderr, "usage: group [threads|processes] [NRANKS (1..%d)]\n", MUSTER_MAX_RANKS);
    return 2;
  }
  if (processes ? example_fork(nranks, rank_main, &nranks) : run_threads(nranks)) {
    fprintf(stderr, "group: failed\n");
    return 1;
  }
  printf("group: %d %s met, exchanged, agreed with the leader and left: ok\n", nranks, mode);
  return 0;
}
