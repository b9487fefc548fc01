/*
 * runtime/solve/comm_plan.h - a kind store comm's last choice, kept for
 * the next call on the same layout (docs/bootstrap.md, "Repeated calls").
 *
 * Rank 0's choice reads the call's descriptors (what muster__desc_query
 * and the one-node check read) and rank 0's choice context (MUSTER_PROVIDER,
 * the registry's rescans).  A call whose every descriptor, less what
 * changes from call to call without reaching the choice (the pieces'
 * addresses and shard refs), is byte-identical to the last successful
 * call's, free device memory within 1/256 of the device's of the kept
 * call's, every rank's context unchanged, gets the same choice.  So each
 * rank sends in round 1, beside its descriptor, its context and the tag of
 * what it kept (0: nothing); after round 1 every rank compares the same
 * bytes with the same kept copy and reaches the same verdict: on a hit
 * rank 0 does not choose again and round 2 is skipped.  A failed call
 * forgets what was kept (every rank: its outcome is agreed).
 */
#ifndef MUSTER_COMM_PLAN_H
#define MUSTER_COMM_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "solve/desc.h"

/* One rank's round-1 word. */
typedef struct muster__plan_word {
  muster__desc_t d; /* its descriptor                                     */
  uint64_t ctx;     /* its choice context (muster__plan_ctx)              */
  uint64_t tag;     /* what it kept (muster__plan_tag), or 0 to say "choose" */
} muster__plan_word_t;

typedef struct muster__plan muster__plan_t;

/* This process's choice context: a hash of MUSTER_PROVIDER and the count of
 * provider rescans. */
MUSTER_HIDDEN uint64_t muster__plan_ctx(void);

/* What p keeps: the tag (0: nothing) and the decision's bytes (NULL). */
MUSTER_HIDDEN uint64_t muster__plan_tag(const muster__plan_t *p);
MUSTER_HIDDEN const void *muster__plan_decision(const muster__plan_t *p);

/* 1 when every rank sent tag `mine` (nonzero) and p's tag, and every
 * rank's word matches what p kept; else 0.  The same on every rank given
 * the same words and the same kept copy. */
MUSTER_HIDDEN int muster__plan_hit(const muster__plan_t *p, const muster__plan_word_t *all, int R, uint64_t mine);

/* After a successful call: keep the words and the decision (len bytes)
 * it ran (*p allocated on first need).  0 or MUSTER_ENOMEM (nothing kept). */
MUSTER_HIDDEN int muster__plan_keep(muster__plan_t **p, const muster__plan_word_t *all, int R, const void *dec,
                                    size_t len);

/* Forget what p keeps (p may be NULL). */
MUSTER_HIDDEN void muster__plan_forget(muster__plan_t *p);
MUSTER_HIDDEN void muster__plan_free(muster__plan_t *p);

#endif
