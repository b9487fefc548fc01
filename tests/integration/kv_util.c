/*
 * tests/integration/kv_util.c - the test stores (kv_util.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "kv_util.h"

/* ---- in memory ------------------------------------------------------------------- */

typedef struct kv_item {
  struct kv_item *next;
  char *key;
  void *val;
  size_t len;
} kv_item_t;

struct kv_mem {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  kv_item_t *items;
};

kv_mem_t *kv_mem_new(void) {
  kv_mem_t *m = calloc(1, sizeof *m);
  pthread_mutex_init(&m->mu, NULL);
  pthread_cond_init(&m->cv, NULL);
  return m;
}

void kv_mem_free(kv_mem_t *m) {
  for (kv_item_t *i = m->items, *n; i; i = n) {
    n = i->next;
    free(i->key);
    free(i->val);
    free(i);
  }
  pthread_cond_destroy(&m->cv);
  pthread_mutex_destroy(&m->mu);
  free(m);
}

static kv_item_t **mem_find(kv_mem_t *m, const char *key) {
  kv_item_t **p = &m->items;
  while (*p && strcmp((*p)->key, key)) p = &(*p)->next;
  return p;
}

static int mem_set(void *ctx, const char *key, const void *val, size_t len, char *err, size_t errlen) {
  kv_mem_t *m = ctx;
  void *copy = malloc(len ? len : 1);
  memcpy(copy, val, len);
  pthread_mutex_lock(&m->mu);
  kv_item_t **p = mem_find(m, key);
  if (!*p) {
    *p = calloc(1, sizeof **p);
    (*p)->key = strdup(key);
  }
  free((*p)->val);
  (*p)->val = copy;
  (*p)->len = len;
  pthread_cond_broadcast(&m->cv);
  pthread_mutex_unlock(&m->mu);
  return 0;
}

static int mem_get(void *ctx, const char *key, double timeout_s, void *buf, size_t cap, size_t *len, char *err,
                   size_t errlen) {
  kv_mem_t *m = ctx;
  struct timespec until;
  clock_gettime(CLOCK_REALTIME, &until);
  long long ns = until.tv_nsec + (long long)(timeout_s * 1e9);
  until.tv_sec += ns / 1000000000;
  until.tv_nsec = ns % 1000000000;
  pthread_mutex_lock(&m->mu);
  while (!*mem_find(m, key) && timeout_s > 0 && pthread_cond_timedwait(&m->cv, &m->mu, &until) == 0) {
  }
  kv_item_t **p = mem_find(m, key); /* the list may have changed while we waited */
  int rc = *p ? 0 : MUSTER_ENOENT;
  if (*p) {
    memcpy(buf, (*p)->val, (*p)->len < cap ? (*p)->len : cap);
    *len = (*p)->len;
  }
  pthread_mutex_unlock(&m->mu);
  return rc;
}

static int mem_del(void *ctx, const char *key, char *err, size_t errlen) {
  kv_mem_t *m = ctx;
  pthread_mutex_lock(&m->mu);
  kv_item_t **p = mem_find(m, key), *i = *p;
  if (i) {
    *p = i->next;
    free(i->key);
    free(i->val);
    free(i);
  }
  pthread_mutex_unlock(&m->mu);
  return 0;
}

muster_kv_t kv_mem(kv_mem_t *m) { return (muster_kv_t){.ctx = m, .set = mem_set, .get = mem_get, .del = mem_del}; }

int kv_mem_count(kv_mem_t *m, const char *prefix) {
  int n = 0;
  pthread_mutex_lock(&m->mu);
  for (kv_item_t *i = m->items; i; i = i->next) n += !strncmp(i->key, prefix, strlen(prefix));
  pthread_mutex_unlock(&m->mu);
  return n;
}

/* ---- in a folder ------------------------------------------------------------------ */

static void file_of(const char *dir, const char *key, char *out, size_t cap) {
  int n = snprintf(out, cap, "%s/", dir);
  for (const char *k = key; *k && (size_t)n + 1 < cap; k++) out[n++] = *k == '/' ? '@' : *k;
  out[n] = '\0';
}

static int dir_set(void *ctx, const char *key, const void *val, size_t len, char *err, size_t errlen) {
  char path[512], tmp[600];
  file_of(ctx, key, path, sizeof path);
  snprintf(tmp, sizeof tmp, "%s/.tmp.%ld", (const char *)ctx, (long)syscall(SYS_gettid));
  int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0 || write(fd, val, len) != (ssize_t)len || close(fd) < 0 || rename(tmp, path) < 0) {
    snprintf(err, errlen, "file store: %s: %s", path, strerror(errno));
    return MUSTER_ESYS;
  }
  return 0;
}

static int dir_get(void *ctx, const char *key, double timeout_s, void *buf, size_t cap, size_t *len, char *err,
                   size_t errlen) {
  char path[512];
  file_of(ctx, key, path, sizeof path);
  struct timespec t0, now;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (;;) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
      off_t size = lseek(fd, 0, SEEK_END);
      ssize_t got = pread(fd, buf, cap < (size_t)size ? cap : (size_t)size, 0);
      close(fd);
      if (got < 0) {
        snprintf(err, errlen, "file store: %s: %s", path, strerror(errno));
        return MUSTER_ESYS;
      }
      *len = (size_t)size;
      return 0;
    }
    clock_gettime(CLOCK_MONOTONIC, &now);
    if ((now.tv_sec - t0.tv_sec) + (now.tv_nsec - t0.tv_nsec) * 1e-9 >= timeout_s) return MUSTER_ENOENT;
    usleep(2000);
  }
}

static int dir_del(void *ctx, const char *key, char *err, size_t errlen) {
  char path[512];
  file_of(ctx, key, path, sizeof path);
  unlink(path);
  return 0;
}

muster_kv_t kv_dir(const char *dir) {
  return (muster_kv_t){.ctx = (void *)dir, .set = dir_set, .get = dir_get, .del = dir_del};
}
