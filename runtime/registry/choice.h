/*
 * runtime/registry/choice.h - which provider runs a call: the runtime's engine
 * choice (docs/choice.md).
 *
 * Candidates: the providers of the routine that loaded, probe available,
 * take the dtype and the memory kind, are of a kind the call can run
 * (leader: one node and every shard reachable by the leader; collective:
 * every rank calls it), support the call's span and number of ranks, and
 * whose estimate() does not refuse.  Each gets an expected time: its
 * estimate() when it gives seconds >= 0, else its cost table (cost.h),
 * else none.  Ranking: runnable first; then those with a time before those
 * without; then less time; then higher priority; then name order, so the
 * same facts always give the same winner.  A forced provider
 * (args.provider, else $MUSTER_PROVIDER for the routine) is the only
 * candidate: when it cannot run the call that is an error, not a fallback.
 *
 * The reason (one line, <= MUSTER_MAX_REASON bytes) says why the winner
 * won; MUSTER_LOG=info logs every candidate's time or exclusion too.
 */
#ifndef MUSTER_CHOICE_H
#define MUSTER_CHOICE_H

#include "registry/registry.h"

#define MUSTER__CHOICE_MAX 32

/* One provider considered for a call. */
typedef struct muster__cand {
  muster__provider_t *p;
  int ok;              /* can run the call                                  */
  int timed;           /* seconds known                                     */
  int estimated;       /* ... from its estimate() (else its cost table)     */
  double seconds;
  uint64_t peak_bytes; /* from its estimate, 0 unknown                      */
  int unreachable;     /* excluded because the leader cannot reach shards    */
  int est_noted;       /* untimed, and note holds its estimate's words      */
  char note[200];      /* how the time was found, or why it cannot run      */
} muster__cand_t;

typedef struct muster__choice_in {
  const muster_provider_query_t *q; /* q->mem 0: any memory kind; q->span 0: any span */
  const char *want;       /* the call's args.provider; NULL/"": none          */
  const char *want_by;    /* who named want, for messages (NULL: "args.provider") */
  unsigned kinds;         /* allowed kinds: bits 1u << MUSTER_PROVIDER_*      */
  const char *no_leader;  /* not NULL: why no leader provider can run it       */
  const char *leader_why; /* leader kind not in kinds: why (NULL: the default
                             sentence, "muster_solve_comm runs collective
                             providers only")                                 */
  int no_estimate;        /* 1: fitness only, do not call estimate() (a rank
                             checking a forced provider with its own facts)  */
} muster__choice_in_t;

typedef struct muster__choice {
  int n;
  muster__cand_t c[MUSTER__CHOICE_MAX]; /* ranked: c[0] is the winner      */
  char forced[32];        /* the backend forced, "" when none                  */
  const char *forced_by;  /* "args.provider" or "MUSTER_PROVIDER"             */
  char reason[MUSTER_MAX_REASON_FULL];
  int held;               /* 1: the c[].p are referenced (muster__choose)      */
} muster__choice_t;

/* The reason src into dst (cap bytes), ending in "..." when it is cut:
 * how every smaller copy of ch->reason is made (outcome, res.reason). */
MUSTER_HIDDEN void muster__reason_copy(char *dst, size_t cap, const char *src);

/* Rank the given providers for `in` (pure: takes no references, reads no
 * environment; `forced` as resolved by the caller, "" for none).  0 when
 * c[0] can run the call (ch->reason says why it won); else ENOPROVIDER
 * (nothing can run it) or EUNSUPPORTED (the forced one cannot) with a
 * message listing each candidate and why not. */
MUSTER_HIDDEN int muster__choice_rank(const muster__choice_in_t *in, const char *forced,
                                      const char *forced_by, muster__provider_t *const *provs,
                                      int n, muster__choice_t *ch);

/* The registry's providers of in->q->routine, forced by in->want or
 * $MUSTER_PROVIDER, ranked as above; ch holds a reference on each until
 * muster__choice_done.  Logs the candidates at info level. */
MUSTER_HIDDEN int muster__choose(const muster__choice_in_t *in, muster__choice_t *ch);

/* Drop the references ch holds (take one on ch->c[0].p first to keep it). */
MUSTER_HIDDEN void muster__choice_done(muster__choice_t *ch);

/* The provider named `name` for a call whose choice was made elsewhere
 * (a rank following its leader, or checking a forced one): referenced in
 * *out, or a negative code with a message when this process cannot load
 * it or it cannot take (dtype, mem, nranks).  `by` says who named it, for
 * that message ("MUSTER_PROVIDER", "the leader's choice"; NULL:
 * "args.provider"). */
MUSTER_HIDDEN int muster__provider_get(muster_routine_t routine, muster_dtype_t dtype,
                                       muster_mem_t mem, const char *name, const char *by,
                                       int nranks, muster__provider_t **out);

#endif
