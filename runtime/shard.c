/*
 * runtime/shard.c - muster_shard_alloc/free and the leader's peer mappings.
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

#include "proc.h"
#include "shard.h"

typedef struct region {
  char *base;
  size_t size;
  int fd;
  uint64_t ino;
} region_t;

typedef struct peer_map {
  pid_t pid;
  int fd;
  uint64_t ino;
  char *base;
  size_t size;
  uint64_t last_use;
} peer_map_t;

#define MAX_PEER_MAPS 64

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static region_t *regions;
static int nregions, capregions;
static peer_map_t peers[MAX_PEER_MAPS];
static int npeers;
static uint64_t use_clock;

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
  pthread_mutex_lock(&lock);
  if (nregions == capregions) {
    int cap = capregions ? 2 * capregions : 16;
    region_t *r = realloc(regions, (size_t)cap * sizeof *r);
    if (!r) {
      pthread_mutex_unlock(&lock);
      rc = muster__err(MUSTER_ENOMEM, "muster_shard_alloc: out of memory");
      goto out;
    }
    regions = r;
    capregions = cap;
  }
  regions[nregions++] = (region_t){base, size, fd, (uint64_t)st.st_ino};
  pthread_mutex_unlock(&lock);
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
  pthread_mutex_lock(&lock);
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
  pthread_mutex_unlock(&lock);
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
  pthread_mutex_lock(&lock);
  for (int i = 0; i < nregions; i++) {
    if (c >= regions[i].base && c < regions[i].base + regions[i].size) {
      ref->fd = regions[i].fd;
      ref->ino = regions[i].ino;
      ref->offset = (uint64_t)(c - regions[i].base);
      ref->size = regions[i].size;
      break;
    }
  }
  pthread_mutex_unlock(&lock);
}

/* lock held */
static void drop_peer(int i) {
  munmap(peers[i].base, peers[i].size);
  peers[i] = peers[--npeers];
}

void muster__shard_forget(pid_t pid) {
  pthread_mutex_lock(&lock);
  for (int i = npeers - 1; i >= 0; i--)
    if (pid ? peers[i].pid == pid : !muster__proc_alive(peers[i].pid, 0)) drop_peer(i);
  pthread_mutex_unlock(&lock);
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

int muster__shard_map_peer(pid_t pid, const muster__shard_ref_t *ref, void **out) {
  *out = NULL;
  if (ref->fd < 0 || ref->offset >= ref->size)
    return muster__err(MUSTER_EINVAL, "pid %d published no shard memory", (int)pid);
  pthread_mutex_lock(&lock);
  for (int i = 0; i < npeers; i++) {
    if (peers[i].pid != pid || peers[i].fd != ref->fd) continue;
    if (peers[i].ino == ref->ino && peers[i].size == ref->size) {
      peers[i].last_use = ++use_clock;
      *out = peers[i].base + ref->offset;
      pthread_mutex_unlock(&lock);
      return 0;
    }
    /* the peer freed that shard and its fd number was reused: the old
     * mapping only keeps freed memory alive */
    drop_peer(i);
    break;
  }
  pthread_mutex_unlock(&lock);
  char *base = NULL;
  int rc = map_new(pid, ref, &base);
  if (rc < 0) return rc;
  pthread_mutex_lock(&lock);
  if (npeers == MAX_PEER_MAPS) { /* evict the least recently used */
    int lru = 0;
    for (int i = 1; i < npeers; i++)
      if (peers[i].last_use < peers[lru].last_use) lru = i;
    drop_peer(lru);
  }
  peers[npeers++] = (peer_map_t){pid, ref->fd, ref->ino, base, ref->size, ++use_clock};
  pthread_mutex_unlock(&lock);
  *out = base + ref->offset;
  return 0;
}
