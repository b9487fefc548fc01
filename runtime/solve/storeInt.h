/*
 * runtime/solve/storeInt.h - the store bootstrap's insides (muster/store.h):
 * store.c has opening, the allgather and the abort; store_beat.c the
 * heartbeat thread and the liveness check.  docs/bootstrap.md.
 */
#ifndef MUSTER_STORE_INT_H
#define MUSTER_STORE_INT_H

#include <pthread.h>
#include <stdint.h>

#include "muster/store.h"
#include "base/error.h"

#define MUSTER__STORE_PHASE_MAX 160
#define MUSTER__STORE_MSG_MAX 600

/* What a rank writes to its beat key every beat. */
typedef struct muster__beat {
  uint32_t magic, seq;
  int32_t pid, closed; /* closed: its last beat, written by muster_store_close */
  uint64_t start, pidns;
  char host[64];
  char phase[MUSTER__STORE_PHASE_MAX];
} muster__beat_t;

typedef struct muster__speer {
  muster__beat_t last; /* its last beat read */
  int heard;
  uint64_t heard_ns;   /* when its seq last moved (monotonic), or the watch's start */
} muster__speer_t;

struct muster_store {
  muster_kv_t kv;
  char name[65];
  int rank, size;
  double timeout, beat; /* seconds; timeout 0: none */
  uint64_t k;           /* allgathers begun */
  pthread_mutex_t mu;   /* all below */
  pthread_cond_t cv;
  pthread_t tid;
  int running, stop;
  int poke;             /* a watch began: beat and read the peers now */
  uint64_t del_from, del_to; /* this rank's values of allgathers [del_from, del_to) are
                                read by every rank: the beat thread deletes them */
  uint32_t seq;
  uint64_t tick_ns;     /* the beat thread's last tick */
  uint64_t watch_ns;    /* the last liveness check: peers are read while one is recent */
  char phase[MUSTER__STORE_PHASE_MAX];
  char within[MUSTER__STORE_PHASE_MAX]; /* the call around the allgathers ("inside provider
                                           cusolvermp's collective_solve ..."), or "" */
  char host[64];
  int failed;           /* the set failed: code and message, for every later call */
  char fail_msg[MUSTER__STORE_MSG_MAX];
  muster__speer_t peers[MUSTER_MAX_RANKS];
};

/* "muster/<name>/<what>" into out. */
MUSTER_HIDDEN void muster__store_key(const muster_store_t *s, char *out, size_t cap, const char *fmt, ...)
    MUSTER_PRINTF(4, 5);

/* What this rank is doing, for its beats ("in allgather 3 (24 bytes)"). */
MUSTER_HIDDEN void muster__store_phase(muster_store_t *s, const char *fmt, ...) MUSTER_PRINTF(2, 3);
/* The call this rank is inside (fmt NULL: none), which the allgathers'
 * phases then name ("inside provider X's collective_solve (syevd n=8192),
 * in its allgather 5"): a provider bootstrapping over the set would
 * otherwise show as "between calls".  Beaten at once, so that a peer dying
 * just after it is named with it. */
MUSTER_HIDDEN void muster__store_within(muster_store_t *s, const char *fmt, ...) MUSTER_PRINTF(2, 3);

/* The heartbeat thread: start (after the first beat is written), stop. */
MUSTER_HIDDEN int muster__store_beat_start(muster_store_t *s);
MUSTER_HIDDEN void muster__store_beat_stop(muster_store_t *s);
/* Write this rank's beat now (closed: its last). */
MUSTER_HIDDEN int muster__store_beat_write(muster_store_t *s, int closed, char *err, size_t errlen);

/* Every rank has read this rank's values of allgathers before `k`: the
 * beat thread deletes them (off the caller's path: a store round trip
 * each), and muster_store_close what is left. */
MUSTER_HIDDEN void muster__store_forget(muster_store_t *s, uint64_t k);
/* Delete the values muster__store_forget named (s->mu held; released
 * around each delete). */
MUSTER_HIDDEN void muster__store_delete_read(muster_store_t *s);

/* The peers' liveness (no store access): 0, or the error of the first peer
 * gone (message set).  awaited: the rank being waited for (its closing
 * counts), or -1. */
MUSTER_HIDDEN int muster__store_live(muster_store_t *s, int awaited);

/* Record the set's failure (once), write it to the abort key unless it
 * came from there, and return code. */
MUSTER_HIDDEN int muster__store_fail(muster_store_t *s, int code, int publish, const char *msg);

/* The collective watchdog's check over a store comm (collective.h's
 * muster__watch_fn): muster_store_check. */
MUSTER_HIDDEN int muster__store_watch(void *store);

#endif
