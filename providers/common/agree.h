/*
 * providers/common/agree.h - the first half of a collective provider's
 * verdict agreement: every rank's fixed-size message (its code, what it
 * found, the facts the ranks must share) through the bootstrap's allgather
 * (muster/provider_v2.h), into one array every rank reads the same.  The
 * second half, which verdict wins, is the provider's (scalapack: the
 * earliest failure in column order; cusolvermp: the lowest failing rank),
 * but always a function of that array alone, so every rank returns the
 * same code.  Static inline: providers link nothing of the runtime.
 */
#ifndef MUSTER_PROVIDERS_AGREE_H
#define MUSTER_PROVIDERS_AGREE_H

#include <stdio.h>
#include <stdlib.h>

#include "muster.h"
#include "muster/provider.h"

/* *all = a fresh array of b->size messages of len bytes, rank order (the
 * caller frees it).  0; or MUSTER_ENOMEM, or the bootstrap's code, with
 * why = "rank R: the bootstrap (KIND) failed while PHASE: ..." (*all NULL).
 * A rank that cannot allocate returns without the allgather: its peers
 * then wait until a cancel or the job's end (a few KB: not seen). */
static inline int muster__agree_gather(const muster_bootstrap_t *b, const void *mine, size_t len, void **all,
                                       const char *phase, char *why, size_t whylen) {
  *all = calloc((size_t)b->size, len);
  if (!*all) {
    snprintf(why, whylen, "rank %d: cannot allocate %d messages of %zu bytes while %s", b->rank, b->size, len,
             phase);
    return MUSTER_ENOMEM;
  }
  char err[256] = "";
  int rc = b->allgather(b->ctx, mine, *all, len, err, sizeof err);
  if (rc < 0) {
    snprintf(why, whylen, "rank %d: the bootstrap (%s) failed while %s: %s", b->rank, b->kind ? b->kind : "?",
             phase, err);
    free(*all);
    *all = NULL;
  }
  return rc;
}

#endif
