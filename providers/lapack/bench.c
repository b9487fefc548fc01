/*
 * providers/lapack/bench.c - lapack-provider-bench: the lapack provider's
 * own cost (gather, checks, scatter) against LAPACKE called directly.
 *
 *   build/bin/lapack-provider-bench [N ...]        (default 1024 2048 4096)
 *   env: RANKS (default 2), REPS (default 5)
 *
 * For each N: a random SPD f64 matrix; "direct" = LAPACKE_dpotrf +
 * LAPACKE_dpotrs on a copy; "provider" = solve() on RANKS separate block
 * shards (as R devices would hold them), potrs with 1 right-hand side.
 * Prints the best of REPS for each and their ratio.  No rendezvous here:
 * `muster bench` measures the whole path.
 */
#include <dlfcn.h>
#include <lapacke.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "muster/provider.h"
#include "muster/clock.h"

static const muster_provider_v2_t *load(void) {
  char exe[PATH_MAX], path[PATH_MAX + 64];
  ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (len <= 0) return NULL;
  exe[len] = '\0';
  snprintf(path, sizeof path, "%s/../lib/muster/providers/lapack.so", dirname(exe));
  void *so = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!so) {
    fprintf(stderr, "lapack-provider-bench: %s\n", dlerror());
    return NULL;
  }
  return dlsym(so, MUSTER_PROVIDER_SYMBOL_V2);
}

static int bench(const muster_provider_v2_t *p, void *ctx, int n, int ranks, int reps) {
  size_t nn = (size_t)n * (size_t)n;
  double *A = malloc(nn * sizeof *A), *W = malloc(nn * sizeof *W), *x = malloc((size_t)n * sizeof *x);
  double *blk[MUSTER_MAX_RANKS] = {0}, *b[MUSTER_MAX_RANKS] = {0};
  int S = (n + ranks - 1) / ranks, rc = 1;
  if (!A || !W || !x) goto out;
  srand(1);
  for (int j = 0; j < n; j++)
    for (int i = j; i < n; i++) A[(size_t)j * n + i] = A[(size_t)i * n + j] = rand() / (double)RAND_MAX - 0.5;
  for (int i = 0; i < n; i++) A[(size_t)i * n + i] += n;
  muster_shard_t sh[MUSTER_MAX_RANKS];
  for (int r = 0; r < ranks; r++) {
    int c0 = r * S < n ? r * S : n, nc = n - c0 < S ? n - c0 : S;
    blk[r] = malloc((size_t)(S ? S : 1) * n * sizeof(double));
    b[r] = malloc((size_t)n * sizeof(double));
    if (!blk[r] || !b[r]) goto out;
    sh[r] = (muster_shard_t){.mem = MUSTER_MEM_HOST, .device = -1, .a = blk[r], .lda = n,
                             .col0 = c0, .ncols = nc, .b = b[r], .ldb = n};
  }
  double best_direct = 1e30, best_prov = 1e30;
  for (int rep = 0; rep < reps; rep++) {
    memcpy(W, A, nn * sizeof *W);
    for (int i = 0; i < n; i++) x[i] = 1;
    double t0 = muster_clock_s();
    if (LAPACKE_dpotrf(LAPACK_COL_MAJOR, 'L', n, W, n) ||
        LAPACKE_dpotrs(LAPACK_COL_MAJOR, 'L', n, 1, W, n, x, n))
      goto out;
    double t1 = muster_clock_s();
    if (t1 - t0 < best_direct) best_direct = t1 - t0;
    for (int r = 0; r < ranks; r++) {
      memcpy(blk[r], A + (size_t)sh[r].col0 * n, (size_t)sh[r].ncols * n * sizeof(double));
      for (int i = 0; i < n; i++) b[r][i] = 1;
    }
    int64_t info = 0;
    char err[256] = "";
    muster_provider_call_t call = {
        .args = {.routine = MUSTER_POTRS, .dtype = MUSTER_F64, .n = n, .nrhs = 1,
                 .tile = p->choose_tile(ctx, MUSTER_POTRS, MUSTER_F64, n, ranks),
                 .layout = MUSTER_LAYOUT_BLOCK},
        .nshards = ranks, .shards = sh, .info = &info, .err = err, .errlen = sizeof err};
    t0 = muster_clock_s();
    int src = p->solve(ctx, &call);
    t1 = muster_clock_s();
    if (src) {
      fprintf(stderr, "solve: %d %s\n", src, err);
      goto out;
    }
    if (t1 - t0 < best_prov) best_prov = t1 - t0;
  }
  printf("n=%d ranks=%d direct %.4f s provider %.4f s ratio %.3f\n", n, ranks, best_direct,
         best_prov, best_prov / best_direct);
  rc = 0;
out:
  for (int r = 0; r < ranks; r++) {
    free(blk[r]);
    free(b[r]);
  }
  free(A);
  free(W);
  free(x);
  return rc;
}

int main(int argc, char **argv) {
  const muster_provider_v2_t *p = load();
  if (!p) return 2;
  void *ctx = NULL;
  char err[256] = "";
  if (p->init(&ctx, err, sizeof err)) {
    fprintf(stderr, "init: %s\n", err);
    return 2;
  }
  int ranks = getenv("RANKS") ? atoi(getenv("RANKS")) : 2;
  int reps = getenv("REPS") ? atoi(getenv("REPS")) : 5;
  if (ranks < 1 || ranks > MUSTER_MAX_RANKS || reps < 1) return 2;
  static const int defaults[] = {1024, 2048, 4096};
  int rc = 0;
  if (argc > 1) {
    for (int i = 1; i < argc; i++) rc |= bench(p, ctx, atoi(argv[i]), ranks, reps);
  } else {
    for (int i = 0; i < 3; i++) rc |= bench(p, ctx, defaults[i], ranks, reps);
  }
  p->fini(ctx);
  return rc;
}
