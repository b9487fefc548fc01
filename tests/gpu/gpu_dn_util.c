/* tests/gpu/gpu_dn_util.c - see gpu_dn_util.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

#include "gpu_dn_util.h"

int gd_host(void) {
  const char *e = getenv("GPU_DN_HOST");
  return e && !strcmp(e, "1");
}

void *gd_alloc(int host, int mode, size_t bytes) {
  void *p = NULL;
  if (!bytes) return NULL;
  if (!host) return cudaMalloc(&p, bytes) == cudaSuccess ? p : NULL;
  if (mode == M_PROCS) return muster_shard_alloc(bytes, &p) == 0 ? p : NULL;
  return malloc(bytes);
}

void gd_release(int host, int mode, void *p) {
  if (!p) return;
  if (!host) cudaFree(p);
  else if (mode == M_PROCS) muster_shard_free(p);
  else free(p);
}

int gd_copy(int host, void *dst, const void *src, size_t bytes, int in) {
  if (!bytes) return 0;
  if (host) return memcpy(dst, src, bytes), 0;
  return cudaMemcpy(dst, src, bytes, in ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost) != cudaSuccess;
}

int gd_run_ranks(const tcase_t *c, int host, int (*fn)(int, int, void *), void *arg) {
  int none[GC_MAX_RANKS]; /* host shards: no device to make current */
  for (int r = 0; r < c->R; r++) none[r] = -1;
  if (c->mode != M_PROCS) return muster_run_on_devices(c->R, host ? none : c->devs, fn, arg);
  pid_t pids[GC_MAX_RANKS];
  for (int r = 0; r < c->R; r++) {
    pids[r] = fork();
    if (pids[r] == 0) _exit(fn(r, c->devs[r], arg));
  }
  int bad = 0;
  for (int r = 0; r < c->R; r++) {
    int st = 0;
    waitpid(pids[r], &st, 0);
    bad |= !WIFEXITED(st);
  }
  return bad;
}

int gd_solve_reps(const tcase_t *c, int host, const char *group, int rank, int device, const muster_solve_args_t *a,
                  const muster_shard_t *s, int (*refill)(void *), void *arg, gd_out_t *o) {
  muster_group_t *grp = NULL;
  muster_group_opts_t opts = {NULL, 0, device};
  muster_solve_result_t res;
  int bad = 0;
  if (muster_group_join(group, rank, c->R, &opts, &grp) != 0) {
    snprintf(o->msg, sizeof o->msg, "rank %d: join: %s", rank, muster_last_error());
    return 1;
  }
  for (int rep = 0; rep < c->reps; rep++) {
    if (refill(arg)) {
      snprintf(o->msg, sizeof o->msg, "rank %d: copies in", rank);
      bad = 1;
      break;
    }
    /* the counters around the last solve only: gc_stats walks the loaded
     * objects (dl_iterate_phdr, dlopen in its callback), which deadlocks
     * against another rank thread dlopen()ing a provider during the first
     * solve (the loader's two locks, taken in opposite orders; seen with
     * GPU_DN_HOST=1, 3 threads cases in 48 hung) */
    int count = rank == 0 && !host && rep > 0 && rep == c->reps - 1;
    if (count) gc_stats(c->prov, o->st0);
    o->rc = muster_solve(grp, a, s, &res);
    if (count) gc_stats(c->prov, o->st1);
    snprintf(o->msg, sizeof o->msg, "%s", o->rc ? muster_last_error() : "");
    o->info = res.info;
    snprintf(o->provider, sizeof o->provider, "%s", res.provider);
    if (o->rc) break;
  }
  muster_group_leave(grp);
  return bad;
}

int gd_check_counters(const tcase_t *c, const uint64_t *st0, const uint64_t *st1, int in_place_stat, int in_place) {
  for (int k = 0; k < c->prov->nstats; k++)
    if ((c->prov->created & (1u << k)) && st1[k] != st0[k]) {
      fprintf(stderr, "    %s: second solve created %s (%llu -> %llu)\n", c->name, c->prov->stat_names[k],
              (unsigned long long)st0[k], (unsigned long long)st1[k]);
      return 1;
    }
  if (st1[c->prov->solves] != st0[c->prov->solves] + 1) {
    fprintf(stderr, "    %s: provider solves did not grow by 1\n", c->name);
    return 1;
  }
  if (st1[in_place_stat] - st0[in_place_stat] != (uint64_t)in_place) {
    fprintf(stderr, "    %s: in-place solves +%llu, expected %d\n", c->name,
            (unsigned long long)(st1[in_place_stat] - st0[in_place_stat]), in_place);
    return 1;
  }
  return 0;
}

int gd_ws_open(gd_ws_t *w, const tcase_t *c) {
  memset(w, 0, sizeof *w);
  if (cudaSetDevice(0) != cudaSuccess || cudaMalloc(&w->dummy, 64) != cudaSuccess ||
      cusolverDnCreate(&w->h) != CUSOLVER_STATUS_SUCCESS || cusolverDnCreateParams(&w->p) != CUSOLVER_STATUS_SUCCESS) {
    fprintf(stderr, "    workspace: no cusolverDn handle\n");
    return 1;
  }
  muster_provider_info_t info[16];
  muster_providers_list(info, 16); /* loads the provider into this process for its estimate() */
  w->v = gc_provider_symbol(c->prov, MUSTER_PROVIDER_SYMBOL_V2);
  if (!w->v) {
    fprintf(stderr, "    workspace: the provider is not loaded\n");
    return 1;
  }
  return 0;
}

void gd_ws_close(gd_ws_t *w) {
  if (w->p) cusolverDnDestroyParams(w->p);
  if (w->h) cusolverDnDestroy(w->h);
  if (w->dummy) cudaFree(w->dummy);
  memset(w, 0, sizeof *w);
}
