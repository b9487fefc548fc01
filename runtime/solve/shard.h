/*
 * runtime/solve/shard.h - host shards that another process can map (process mode).
 *
 * muster_shard_alloc() gives memory backed by an anonymous memfd: it never
 * has a name in /dev/shm, so nothing can remain there whoever dies, and it
 * is gone when the allocator frees it (or exits) and no leader maps it any
 * more.  A peer publishes (pid, fd, inode, offset); the leader opens
 * /proc/<pid>/fd/<fd> (same uid), checks the inode, maps it and caches the
 * mapping per (pid, inode).
 *
 * A mapping that a call in progress reached is pinned until that call
 * releases it (muster__shard_unpin_all): it is never unmapped under a
 * running provider, however many ranks, shards or concurrent calls there
 * are.  Only idle (unpinned) mappings count against the cache bound.
 */
#ifndef MUSTER_SHARD_H
#define MUSTER_SHARD_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/error.h"

/* Where a host pointer lives, as another process can find it. */
typedef struct muster__shard_ref {
  int32_t fd;      /* fd in the owner process; -1: not shard memory */
  int32_t pad_;
  uint64_t ino;    /* inode of the memfd (guards against fd reuse)  */
  uint64_t offset; /* of the pointer from the start of the region   */
  uint64_t size;   /* bytes of the whole region                     */
} muster__shard_ref_t;

/* Fill *ref for p (any address inside a live muster_shard_alloc region);
 * fd = -1 when p is NULL or not inside one. */
MUSTER_HIDDEN void muster__shard_find(const void *p, muster__shard_ref_t *ref);

/* The mappings one leader call holds pinned: a, b and w of every rank. */
#define MUSTER__SHARD_PINS_MAX (3 * MUSTER_MAX_RANKS)
typedef struct muster__shard_pins {
  int n;
  uint64_t id[MUSTER__SHARD_PINS_MAX];
} muster__shard_pins_t;

/* Leader: address in this process of `ref` published by process pid
 * (cached), with its mapping pinned into *pins (start with n = 0): it stays
 * mapped until muster__shard_unpin_all(pins).  Call that once the memory is
 * no longer used, also after an error (what was pinned before it).
 * MUSTER_EACCES / MUSTER_ENOENT / MUSTER_ECORRUPT / MUSTER_ENOMEM with a
 * message; MUSTER_EINVAL when *pins is full. */
MUSTER_HIDDEN int muster__shard_map_peer(pid_t pid, const muster__shard_ref_t *ref,
                                         muster__shard_pins_t *pins, void **out);

/* Release every pin in *pins (n becomes 0).  Idle mappings beyond the cache
 * bound are unmapped, least recently used first. */
MUSTER_HIDDEN void muster__shard_unpin_all(muster__shard_pins_t *pins);

/* Drop cached mappings of pid (0: those of dead processes only); a pinned
 * one is unmapped when its last pin is released. */
MUSTER_HIDDEN void muster__shard_forget(pid_t pid);

/* Mappings of peers' shards this process holds now (tests). */
MUSTER_HIDDEN int muster__shard_peer_count(void);

#endif
