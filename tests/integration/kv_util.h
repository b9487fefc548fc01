/*
 * tests/integration/kv_util.h - key-value stores for the store bootstrap's
 * tests (muster/store.h): one in memory (threads of one process), one in a
 * folder (forked processes: each key a file, written by rename).
 */
#ifndef KV_UTIL_H
#define KV_UTIL_H

#include <stddef.h>

#include "muster/store.h"

typedef struct kv_mem kv_mem_t;
kv_mem_t *kv_mem_new(void);
void kv_mem_free(kv_mem_t *m);
muster_kv_t kv_mem(kv_mem_t *m);     /* with del */
int kv_mem_count(kv_mem_t *m, const char *prefix); /* keys starting with prefix */

/* A store in folder dir (made by the caller): every key a file. */
muster_kv_t kv_dir(const char *dir);

#endif
