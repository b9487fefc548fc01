/* tests/unit/test_dn_util.h - what the cusolverdn provider's tests share
 * (test_dn_provider.c: its structs and solve()'s checks; test_dn_estimate.c:
 * estimate()'s memory rule and time model): the provider opened with a
 * context, a query for estimate(). */
#ifndef MUSTER_TEST_DN_UTIL_H
#define MUSTER_TEST_DN_UTIL_H

#include <stdint.h>

#include "muster/provider.h"

typedef struct query {
  muster_provider_query_t q;
  int devices[8];
  uint64_t free_bytes[8], total_bytes[8];
} query_t;

/* routine, dtype and n on R ranks of the given devices (threads), each
 * device with `free_gb` free. */
void dn_query(query_t *x, muster_routine_t rt, muster_dtype_t t, int64_t n, int R, const int *devs,
             double free_gb);

/* The build's cusolverdn.so as a v2 leader provider (tp_provider_v2's
 * checks) with a context from its init: *h its handle, *ctx the context;
 * NULL when built without nvcc.  dn_close: fini, then dlclose. */
const muster_provider_v2_t *dn_open(void **h, void **ctx);
void dn_close(const muster_provider_v2_t *v, void *h, void *ctx);

/* devices of 4 ranks: two GPUs (0, 1, 0, 1), or all on GPU 0 */
extern const int dn_dev01[4], dn_dev00[4];

#endif
