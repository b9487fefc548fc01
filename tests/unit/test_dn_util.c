/* tests/unit/test_dn_util.c - see test_dn_util.h. */
#include <dlfcn.h>
#include <string.h>

#include "providers/tp_util.h"
#include "task.h"
#include "test_dn_util.h"

const int dn_dev01[4] = {0, 1, 0, 1}, dn_dev00[4] = {0, 0, 0, 0};

const muster_provider_v2_t *dn_open(void **h, void **ctx) {
  char err[256];
  const muster_provider_v2_t *v = tp_provider_v2("cusolverdn", MUSTER_PROVIDER_LEADER, h);
  *ctx = NULL;
  if (!v) return NULL;
  ASSERT_OK(v->init(ctx, err, sizeof err));
  return v;
}

void dn_close(const muster_provider_v2_t *v, void *h, void *ctx) {
  v->fini(ctx);
  dlclose(h);
}

void dn_query(query_t *x, muster_routine_t rt, muster_dtype_t t, int64_t n, int R, const int *devs,
             double free_gb) {
  memset(x, 0, sizeof *x);
  x->q.routine = rt;
  x->q.dtype = t;
  x->q.n = n;
  x->q.nrhs = muster_routine_nrhs(rt, 1);
  x->q.mem = MUSTER_MEM_CUDA;
  x->q.nranks = R;
  x->q.span = MUSTER_SPAN_THREADS;
  for (int r = 0; r < R; r++) {
    x->devices[r] = devs[r];
    x->free_bytes[r] = (uint64_t)(free_gb * 1e9);
    x->total_bytes[r] = (uint64_t)(141e9);
  }
  x->q.devices = x->devices;
  x->q.free_bytes = x->free_bytes;
  x->q.total_bytes = x->total_bytes;
  int ndev = 0;
  for (int r = 0; r < R; r++) {
    int seen = 0;
    for (int s = 0; s < r; s++) seen |= devs[s] == devs[r];
    ndev += !seen;
  }
  x->q.ndevices = ndev;
}
