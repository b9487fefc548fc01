/*
 * runtime/shard.h - host shards that another process can map (process mode).
 *
 * muster_shard_alloc() gives memory backed by an anonymous memfd: it never
 * has a name in /dev/shm, so nothing can remain there whoever dies, and it
 * is gone when the allocator frees it (or exits) and no leader maps it any
 * more.  A peer publishes (pid, fd, inode, offset); the leader opens
 * /proc/<pid>/fd/<fd> (same uid), checks the inode, maps it and caches the
 * mapping per (pid, inode).
 */
#ifndef MUSTER_SHARD_H
#define MUSTER_SHARD_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "error.h"

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

/* Leader: address in this process of `ref` published by process pid
 * (cached).  MUSTER_EACCES / MUSTER_ENOENT / MUSTER_ECORRUPT with a message. */
MUSTER_HIDDEN int muster__shard_map_peer(pid_t pid, const muster__shard_ref_t *ref, void **out);

/* Drop cached mappings of pid (0: those of dead processes only). */
MUSTER_HIDDEN void muster__shard_forget(pid_t pid);

#endif
