/* tests/gpu/gpu_dn_util.h - what the cusolverdn cases that make their
 * inputs on the host share (gpu_dn_util.c): gpu_dn_general.c's and
 * gpu_dn_factors.c's buffers (device memory, or with GPU_DN_HOST=1 host
 * shards for the lapack provider), their ranks (threads or forked
 * processes), the counters around the second solve, and the cusolverDn
 * handle the workspace checks (gpu_dn.c, gpu_dn_factors.c) ask. */
#ifndef MUSTER_GPU_DN_UTIL_H
#define MUSTER_GPU_DN_UTIL_H

#include <cusolverDn.h>
#include <stddef.h>

#include "gpu_case.h"
#include "muster/provider.h"

/* GPU_DN_HOST=1: host shards through the lapack provider (gpu-dn-selfcheck). */
int gd_host(void);

/* A rank's buffer: device memory, or (host) memory the leader can read in
 * `mode` (muster_shard_alloc for processes).  NULL for 0 bytes or failure. */
void *gd_alloc(int host, int mode, size_t bytes);
void gd_release(int host, int mode, void *p);
/* bytes between the host (src for in = 1, dst for in = 0) and a rank's
 * buffer; 0 when it worked. */
int gd_copy(int host, void *dst, const void *src, size_t bytes, int in);

/* What one rank hands back to the case's process (in MAP_SHARED memory). */
typedef struct gd_out {
  int rc, done;           /* the last solve's result; the rank ran to its end */
  int a_kept;             /* A as it was after the solves (the case fills it) */
  int64_t info;
  char msg[400], provider[32];
  uint64_t st0[GC_MAX_STATS], st1[GC_MAX_STATS]; /* rank 0: around the last solve */
} gd_out_t;

/* One rank's solves: join `group`, then c->reps times refill(arg) (fresh
 * inputs into the shard's buffers; 0 when it worked) and muster_solve,
 * each result into o (the counters around the last solve on rank 0, not
 * with host shards), stopping at the first error; leave.  0 when the
 * solves ran (o->rc says how they went), 1 when the rank could not (o->msg
 * says why). */
int gd_solve_reps(const tcase_t *c, int host, const char *group, int rank, int device, const muster_solve_args_t *a,
                  const muster_shard_t *s, int (*refill)(void *), void *arg, gd_out_t *o);

/* fn(rank, device, arg) on each of c->R ranks: threads of this process
 * (host: no device made current) or forked processes; 0 when every rank
 * ran to its end (fn's results are fn's to hand back). */
int gd_run_ranks(const tcase_t *c, int host, int (*fn)(int, int, void *), void *arg);

/* The provider's counters around the second solve (rank 0's process):
 * nothing of c->prov->created moved, one solve, in_place solves in the
 * caller's buffer (counter `in_place_stat`).  0, or 1 with the reason on
 * stderr. */
int gd_check_counters(const tcase_t *c, const uint64_t *st0, const uint64_t *st1, int in_place_stat, int in_place);

/* A cusolverDn handle and params on GPU 0, a 64-byte dummy buffer, and
 * c->prov loaded into this process: v its estimate's struct.  0, or 1 with
 * the reason on stderr (then gd_ws_close still). */
typedef struct gd_ws {
  cusolverDnHandle_t h;
  cusolverDnParams_t p;
  void *dummy;
  const muster_provider_v2_t *v;
} gd_ws_t;
int gd_ws_open(gd_ws_t *w, const tcase_t *c);
void gd_ws_close(gd_ws_t *w);

#endif
