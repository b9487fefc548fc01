/*
 * runtime/solve/hint.h - what a rank remembers of its leader's last choice for a
 * call, per (number of ranks, call signature), to guess the provider
 * before the leader has chosen.  Not per group: adapters may name a group
 * per call (muster_jax without its slot pool names it by XLA's run id), and
 * the same call in another group is chosen the same way unless its facts
 * differ.
 *
 * Only a guess: the leader still chooses every call from fresh facts (free
 * memory changes between calls) and every rank follows it.  When all ranks
 * guessed right, a leader provider runs with the export blobs published in
 * the first exchange (2 rounds, as with a forced provider); when any guessed
 * wrong (first call, facts changed, another process's environment), the
 * leader publishes its choice and the ranks export again (4 rounds).  A
 * stale entry therefore costs two rounds, never a wrong provider.
 */
#ifndef MUSTER_HINT_H
#define MUSTER_HINT_H

#include "solve/desc.h"

/* The provider last chosen for (nranks, d's call signature) into name
 * (cap bytes): 1 when known, else 0 and "". */
MUSTER_HIDDEN int muster__hint_get(int nranks, const muster__desc_t *d, char *name, size_t cap);

/* Remember that the leader chose `name` for that call. */
MUSTER_HIDDEN void muster__hint_put(int nranks, const muster__desc_t *d, const char *name);

#endif
