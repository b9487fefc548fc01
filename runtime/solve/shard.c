/*
 * runtime/solve/shard.c - muster_shard_alloc/free and the leader's peer mappings.
 *
 * Why memfd and not a named /dev/shm segment: a leader SIGKILLed mid-solve
 * (or any allocator) must leave nothing in /dev/shm.  A named segment would
 * need its name until the leader has mapped it, and a name that outlives
 * its owner is exactly the leak to avoid.  An memfd has no name at all; the
 * leader reaches it through /proc/<owner pid>/fd/<fd> (same uid, the same
 * check as reading the owner's /proc/<pid>/maps), and its memory is freed
 * by the kernel once neither the owner nor a leader maps it.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/forklock.h"
#include "base/proc.h"
#include "solve/shard.h"

typedef struct region {
  char *base;
  size_t size;
  int fd;
  uint64_t ino;
} region_t;

/* A peer's region mapped here.  pins: calls in progress using it (never
 * unmapped while > 0).  doomed: dropped (forgotten, or its fd now names
 * another region) while pinned: no longer found, unmapped at the last
 * unpin. */
typedef struct peer_map {
  pid_t pid;
  int fd;
  uint64_t ino;
  char *base;
  size_t size;
  uint64_t last_use;
  uint64_t id; /* unique: what a pin names */
  int pins;
  int doomed;
} peer_map_t;

/* Idle mappings kept for the next call: every shard of a group of
 * MUSTER_MAX_RANKS, so a group that keeps meeting maps nothing again. */
#define IDLE_MAX MUSTER__SHARD_PINS_MAX

/* fork-safe (forklock.h): a host thread may fork while another is in here */
MUSTER__FORKLOCK(table)
static region_t *regions;
static int nregions, capregions;
static peer_map_t *peers;
static int npeers, cappeers;
static uint64_t use_clock, last_id;

int muster_shard_alloc(size_t bytes, void **out) {
  if (!out) return muster__err(MUSTER_EINVAL, "muster_shard_alloc: out is NULL");
  *out = NULL;
  if (bytes == 0) return muster__err(MUSTER_EINVAL, "muster_shard_alloc: 0 bytes");
  long page = sysconf(_SC_PAGESIZE);
  size_t size = (bytes + (size_t)page - 1) / (size_t)page * (size_t)page;
  int rc = 0, fd = -1;
  void *base = MAP_FAILED;
  struct stat st;
  fd = memfd_create("muster.shard", MFD_CLOEXEC);
  if (fd < 0) {
    rc = muster__err(errno == EMFILE || errno == ENFILE ? MUSTER_ESYS : MUSTER_ENOMEM,
                     "muster_shard_alloc(%zu): memfd_create: %s", bytes, strerror(errno));
    goto out;
  }
  if (ftruncate(fd, (off_t)size) != 0 || fstat(fd, &st) != 0) {
    rc = muster__err(MUSTER_ENOMEM, "muster_shard_alloc(%zu): ftruncate: %s", bytes, strerror(errno));
    goto out;
  }
  base = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (base == MAP_FAILED) {
    rc = muster__err(MUSTER_ENOMEM, "muster_shard_alloc(%zu): mmap: %s", bytes, strerror(errno));
    goto out;
  }
  table_lock();
  if (nregions == capregions) {
    int cap = capregions ? 2 * capregions : 16;
    region_t *r = realloc(regions, (size_t)cap * sizeof *r);
    if (!r) {
      table_unlock();
      rc = muster__err(MUSTER_ENOMEM, "muster_shard_alloc: out of memory");
      goto out;
    }
    regions = r;
    capregions = cap;
  }
  regions[nregions++] = (region_t){base, size, fd, (uint64_t)st.st_ino};
  table_unlock();
  *out = base;
  return 0;
out:
  if (base != MAP_FAILED) munmap(base, size);
  if (fd >= 0) close(fd);
  return rc;
}

void muster_shard_free(void *p) {
  if (!p) return;
  region_t gone = {0};
  int found = 0;
  table_lock();
  for (int i = 0; i < nregions; i++) {
    if (regions[i].base == p) {
      gone = regions[i];
      regions[i] = regions[--nregions];
      found = 1;
      break;
    }
  }
  if (nregions == 0) {
    free(regions);
    regions = NULL;
    capregions = 0;
  }
  table_unlock();
  if (!found) {
    muster__log(MUSTER_LOG_WARN, "muster_shard_free(%p): not from muster_shard_alloc", p);
    return;
  }
  munmap(gone.base, gone.size);
  close(gone.fd);
}

void muster__shard_find(const void *p, muster__shard_ref_t *ref) {
  memset(ref, 0, sizeof *ref);
  ref->fd = -1;
  if (!p) return;
  const char *c = p;
  table_lock();
  for (int i = 0; i < nregions; i++) {
    if (c >= regions[i].base && c < regions[i].base + regions[i].size) {
      ref->fd = regions[i].fd;
      ref->ino = regions[i].ino;
      ref->offset = (uint64_t)(c - regions[i].base);
      ref->size = regions[i].size;
      break;
    }
  }
  table_unlock();
}

/* lock held */
static void unmap_peer(int i) {
  munmap(peers[i].base, peers[i].size);
  peers[i] = peers[--npeers];
  if (npeers == 0) {
    free(peers);
    peers = NULL;
    cappeers = 0;
  }
}

/* lock held: unmap now, or at the last unpin if a call uses it */
static void drop_peer(int i) {
  if (peers[i].pins > 0) peers[i].doomed = 1;
  else unmap_peer(i);
}

/* lock held: unmap the least recently used idle mappings beyond IDLE_MAX */
static void trim_idle(void) {
  for (;;) {
    int idle = 0, lru = -1;
    for (int i = 0; i < npeers; i++) {
      if (peers[i].pins > 0) continue;
      idle++;
      if (lru < 0 || peers[i].last_use < peers[lru].last_use) lru = i;
    }
    if (idle <= IDLE_MAX) return;
    unmap_peer(lru);
  }
}

void muster__shard_forget(pid_t pid) {
  table_lock();
  for (int i = npeers - 1; i >= 0; i--)
    if (!peers[i].doomed && (pid ? peers[i].pid == pid : !muster__proc_alive(peers[i].pid, 0)))
      drop_peer(i);
  table_unlock();
}

int muster__shard_peer_count(void) {
  table_lock();
  int n = npeers;
  table_unlock();
  return n;
}

/* Open and map the peer's region; no lock held. */
static int map_new(pid_t pid, const muster__shard_ref_t *ref, char **base) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/fd/%d", (int)pid, ref->fd);
  int rc = 0;
  int fd = open(path, O_RDWR | O_CLOEXEC);
  if (fd < 0) {
    int e = errno;
    return muster__err(e == ENOENT ? MUSTER_ENOENT : e == EACCES || e == EPERM ? MUSTER_EACCES
                                                                             : MUSTER_ESYS,
                       "cannot open shard memory of pid %d (%s): %s%s", (int)pid, path,
                       strerror(e), e == EACCES || e == EPERM
                                        ? " (process mode needs peers of the same uid that are "
                                          "dumpable)" : "");
  }
  struct stat st;
  if (fstat(fd, &st) != 0 || (uint64_t)st.st_ino != ref->ino || (uint64_t)st.st_size != ref->size) {
    rc = muster__err(MUSTER_ECORRUPT, "shard of pid %d (%s) changed: inode %llu size %lld, "
                     "published inode %llu size %llu", (int)pid, path,
                     (unsigned long long)st.st_ino, (long long)st.st_size,
                     (unsigned long long)ref->ino, (unsigned long long)ref->size);
    goto out;
  }
  void *m = mmap(NULL, ref->size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (m == MAP_FAILED) {
    rc = muster__err(MUSTER_ENOMEM, "mmap of shard of pid %d (%llu bytes): %s", (int)pid,
                     (unsigned long long)ref->size, strerror(errno));
    goto out;
  }
  *base = m;
out:
  close(fd);
  return rc;
}

/* lock held: the live mapping of (pid, ref), or -1.  One of (pid, fd) that
 * names another region now is dropped: the peer freed that shard and the
 * fd number was reused, the old mapping only keeps freed memory alive. */
static int find_peer(pid_t pid, const muster__shard_ref_t *ref) {
  for (int i = 0; i < npeers; i++) {
    if (peers[i].doomed || peers[i].pid != pid || peers[i].fd != ref->fd) continue;
    if (peers[i].ino == ref->ino && peers[i].size == ref->size) return i;
    drop_peer(i);
    return -1;
  }
  return -1;
}

/* lock held: pin mapping i for the caller and return the address of ref */
static void *pin_peer(int i, const muster__shard_ref_t *ref, muster__shard_pins_t *pins) {
  peers[i].pins++;
  peers[i].last_use = ++use_clock;
  pins->id[pins->n++] = peers[i].id;
  return peers[i].base + ref->offset;
}

/* lock held: add a new pinned mapping; -1 if out of memory */
static int add_peer(pid_t pid, const muster__shard_ref_t *ref, char *base) {
  if (npeers == cappeers) {
    int cap = cappeers ? 2 * cappeers : 16;
    peer_map_t *p = realloc(peers, (size_t)cap * sizeof *p);
    if (!p) return -1;
    peers = p;
    cappeers = cap;
  }
  peers[npeers] = (peer_map_t){pid, ref->fd, ref->ino, base, ref->size, 0, ++last_id, 0, 0};
  return npeers++;
}

int muster__shard_map_peer(pid_t pid, const muster__shard_ref_t *ref, muster__shard_pins_t *pins,
                           void **out) {
  *out = NULL;
  if (ref->fd < 0 || ref->offset >= ref->size)
    return muster__err(MUSTER_EINVAL, "pid %d published no shard memory", (int)pid);
  if (pins->n < 0 || pins->n >= MUSTER__SHARD_PINS_MAX)
    return muster__err(MUSTER_EINVAL, "a call pinned more than %d shard mappings",
                       MUSTER__SHARD_PINS_MAX);
  table_lock();
  int i = find_peer(pid, ref);
  if (i >= 0) *out = pin_peer(i, ref, pins);
  table_unlock();
  if (*out) return 0;
  char *base = NULL;
  int rc = map_new(pid, ref, &base);
  if (rc < 0) return rc;
  table_lock();
  i = find_peer(pid, ref); /* a concurrent call mapped it meanwhile: use that one */
  if (i >= 0) munmap(base, ref->size);
  else i = add_peer(pid, ref, base);
  if (i >= 0) *out = pin_peer(i, ref, pins);
  table_unlock();
  if (i < 0) {
    munmap(base, ref->size);
    return muster__err(MUSTER_ENOMEM, "mapping the shard of pid %d: out of memory", (int)pid);
  }
  return 0;
}

void muster__shard_unpin_all(muster__shard_pins_t *pins) {
  table_lock();
  for (int k = 0; k < pins->n; k++) {
    for (int i = 0; i < npeers; i++) {
      if (peers[i].id != pins->id[k]) continue;
      if (--peers[i].pins == 0 && peers[i].doomed) unmap_peer(i);
      break;
    }
  }
  pins->n = 0;
  trim_idle();
  table_unlock();
}
