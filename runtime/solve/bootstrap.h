/*
 * runtime/solve/bootstrap.h - out-of-band bootstraps the runtime hands to
 * collective providers (muster_bootstrap_t, muster/provider_v2.h;
 * docs/bootstrap.md).  This file: the group bootstrap (the ranks of a muster
 * group, one node) and the key that names a set of ranks.  runtime/solve/mpi.c
 * has the MPI one; runtime/solve/comm.c the caller-supplied ("store") one.
 */
#ifndef MUSTER_BOOTSTRAP_H
#define MUSTER_BOOTSTRAP_H

#include "solve/desc.h"

/* A bootstrap whose allgather is a sequence of exchanges in group g
 * (rank and size are g's): each exchange carries up to
 * MUSTER_MAX_PAYLOAD - 24 bytes of every rank, with the group's deadline
 * and liveness checks.  Every rank must pass the same len (else
 * MUSTER_EMISMATCH for all).  g must outlive b. */
MUSTER_HIDDEN void muster__boot_group(muster_bootstrap_t *b, muster_group_t *g, uint64_t key);

/* The key of a set of ranks (muster_bootstrap_t.key): a hash of `what`
 * (e.g. the group's name) and each rank's (node, pid, process start time),
 * in rank order; never 0.  The same processes meeting again under the same
 * name get the same key; a rank replaced by another process changes it, so
 * a communicator cached for the old set is never used by the new one. */
MUSTER_HIDDEN uint64_t muster__boot_key(const char *what, const muster__desc_t *const *ds, int R);

#endif
