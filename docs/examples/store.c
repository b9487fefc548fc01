/*
 * docs/examples/store.c - the store bootstrap (muster/store.h): processes
 * that share no /dev/shm and no MPI meet over a key-value store of the
 * caller's; here the simplest one, a folder where every key is a file
 * (written to a temporary name, then renamed, so a reader sees all of a
 * value or nothing).  jax.distributed's and torch.distributed's stores are
 * used the same way by the adapters (docs/multinode.md).
 *
 *   store RANKS        forked processes: each opens its end, allgathers its
 *                      pid, passes a barrier, and checks every rank's pid
 *                      arrived in rank order; rank 0 prints them
 *
 * A collective provider would then solve over muster_comm_open(kind
 * "store", allgather = muster_store_allgather, ctx = the store).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "example.h"
#include "muster/store.h"

static char dir[256]; /* $TMPDIR/muster-store-example.XXXXXX */

/* The file of key: the folder, then the key with '/' as '@'. */
static void file_of(const char *key, char *out, size_t cap) {
  int n = snprintf(out, cap, "%s/", dir);
  for (; *key && (size_t)n + 1 < cap; key++) out[n++] = *key == '/' ? '@' : *key;
  out[n] = '\0';
}

static int kv_set(void *ctx, const char *key, const void *val, size_t len, char *err, size_t errlen) {
  char path[300], tmp[320];
  file_of(key, path, sizeof path);
  snprintf(tmp, sizeof tmp, "%s.%d.tmp", path, (int)getpid());
  int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  if (fd < 0 || write(fd, val, len) != (ssize_t)len || close(fd) < 0 || rename(tmp, path) < 0) {
    snprintf(err, errlen, "folder store: %s: %s", path, strerror(errno));
    return MUSTER_ESYS;
  }
  return 0;
}

/* Poll for the file until timeout_s: a real store would block on its server. */
static int kv_get(void *ctx, const char *key, double timeout_s, void *buf, size_t cap, size_t *len,
                  char *err, size_t errlen) {
  char path[300];
  file_of(key, path, sizeof path);
  for (double waited = 0;; waited += 0.002) {
    int fd = open(path, O_RDONLY);
    if (fd >= 0) {
      ssize_t got = read(fd, buf, cap);
      *len = got > 0 ? (size_t)got : 0;
      off_t size = lseek(fd, 0, SEEK_END);
      close(fd);
      if (size > (off_t)cap) *len = (size_t)size; /* too big for buf: say how big */
      return 0;
    }
    if (waited >= timeout_s) return MUSTER_ENOENT;
    nanosleep(&(struct timespec){0, 2000000}, NULL);
  }
}

static int kv_del(void *ctx, const char *key, char *err, size_t errlen) {
  char path[300];
  file_of(key, path, sizeof path);
  unlink(path);
  return 0;
}

static int rank_main(int rank, void *arg) {
  int nranks = *(int *)arg, rc = 0;
  muster_kv_t kv = {.set = kv_set, .get = kv_get, .del = kv_del};
  muster_store_opts_t o = {.name = "example", .rank = rank, .size = nranks, .timeout_s = 10};
  muster_store_t *s = NULL;
  int32_t mine = (int32_t)getpid(), all[64];
  CHECK(muster_store_open(&kv, &o, &s));
  CHECK(muster_store_allgather(s, &mine, all, sizeof mine, NULL, 0));
  CHECK(muster_store_barrier(s));
  EXPECT(all[rank] == mine, "rank %d: its own pid is not at its place", rank);
  for (int r = 0; r < nranks && rank == 0; r++) printf("store: rank %d is pid %d\n", r, (int)all[r]);
out:
  if (s) muster_store_close(s);
  return rc;
}

/* The store is the caller's: its keys go with it (muster leaves the last
 * values and the beats, which no rank deletes: nobody knows when the others
 * have read them). */
static int remove_store(void) {
  DIR *d = opendir(dir);
  if (!d) return 1;
  char path[600];
  for (struct dirent *e; (e = readdir(d)) != NULL;)
    if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
      snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
      unlink(path);
    }
  closedir(d);
  return rmdir(dir) != 0;
}

int main(int argc, char **argv) {
  int nranks = argc > 1 ? atoi(argv[1]) : 3;
  if (nranks < 1 || nranks > 64) {
    fprintf(stderr, "usage: store [RANKS 1..64]\n");
    return 2;
  }
  const char *tmp = getenv("TMPDIR");
  snprintf(dir, sizeof dir, "%s/muster-store-example.XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if (!mkdtemp(dir)) {
    perror("mkdtemp");
    return 1;
  }
  int failed = example_fork(nranks, rank_main, &nranks);
  failed |= remove_store();
  if (!failed) printf("store: ok\n");
  return failed;
}
