/* tests/gpu/gpu_mp.c - cusolvermp's cases of gpu-test (gpu_mp.h): getrs
 * and potrs with log det through muster_solve over a group, one process
 * per GPU (1 to 4; one rank also as a thread), every dtype, on an aligned
 * n (the solver's grid may hold A where the block layout does) and an odd
 * one (lda > n: relayout over NCCL), checked as cusolvermg's are
 * (gpu_case.h: residuals, A kept by getrs, log det against the lapack
 * provider on every rank); getrs with MUSTER_NO_FACTOR and from a cyclic
 * layout; an exactly singular A (MUSTER_ESINGULAR, info = the zero
 * column); NaN in A or B (MUSTER_ENONFINITE on every rank).  The provider
 * exports no counters: nothing is checked around the second solve.
 *
 * gels (gpu_case.c knows square A only: these cases run as specials, here),
 * one process (on more, every rank is refused with MUSTER_EUNSUPPORTED and
 * A and B untouched: cuSOLVERMp 0.8's QR was wrong there, version.c):
 * A m x n (m = 2n, n + 1, n; lda = m or m + 3) in column blocks, B m x 3 on
 * every rank, generated on the host (tools/muster/check.c's
 * chk_random_general: well conditioned) and checked there on every rank:
 * the normal-equations residual ||A^H (A X - B)|| relative (chk_gels)
 * under 16 sqrt(m) eps (chk_gels_tolerance), A unchanged.  Rank deficient: a zero column k (R(k,k) =
 * 0 exactly) and column k = 2 x column 1 (R(k,k) at roundoff, which plain
 * xGELS would not see): MUSTER_ESINGULAR with info k and B untouched on
 * every rank.  NaN in A or B: MUSTER_ENONFINITE, B untouched, every rank.
 *
 * A rank SIGKILLed mid-solve (gc_kill, after a warm-up solve), leader and
 * non-leader, on 2 processes.  geqrf's cases: gpu_mp_qr.c. */
#include <complex.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <math.h>

#include "gpu_mp.h"
/* the host generators and gels's residual of `muster solve` (check.o) */
#include "../../tools/muster/check.h"

static const gprov_t mp = {"cusolvermp", "muster_cusolvermp_stats", 0, NULL, 0, 0, NULL};

/* ---- gels ---------------------------------------------------------------------- */

/* A gels case's rows: its tcase's lda_extra is m - n (gels only). */
static int64_t gels_m(const tcase_t *c) { return c->n + c->lda_extra; }
static int64_t gels_lda(const tcase_t *c) {
  return gels_m(c) + (c->dtype == MUSTER_F32 || c->dtype == MUSTER_C64 ? 3 : 0);
}

/* The case's A (m x n, lda) and B (m x nrhs, ld m) on the host, the same
 * on every rank (one seed). */
static int gels_inputs(const tcase_t *c, uint64_t seed, void **a, void **b) {
  int64_t m = gels_m(c), n = c->n, lda = gels_lda(c);
  size_t esz = muster_dtype_bytes(c->dtype);
  chk_rng_t r;
  chk_seed(&r, seed);
  *a = calloc((size_t)(lda * n), esz);
  *b = calloc((size_t)(m * c->nrhs), esz);
  if (!*a || !*b) return 1;
  chk_random_general(c->dtype, m, n, &r, *a, lda);
  chk_random_dense(c->dtype, m, c->nrhs, &r, *b, m);
  int64_t k = c->zero_col - 1; /* 0-based */
  for (int64_t i = 0; k > 0 && i < m; i++) /* shift 0: zero column; else 2 x column 1 */
    chk_set(c->dtype, *a, lda, i, k, c->shift == 0 ? 0.0 : 2.0 * chk_get(c->dtype, *a, lda, i, 0));
  if (c->nan_in == 'a') chk_set(c->dtype, *a, lda, 5, 2, NAN);
  if (c->nan_in == 'b') chk_set(c->dtype, *b, m, 3, 0, NAN);
  return 0;
}

/* Where a wrong X is wrong: g = A^H (A X - B) is A^H A (X - X*), and
 * A^H A is close to m I for chk_random_general's A, so the rows of g
 * that stand out are the rows of X that are off.  Prints how many rows of
 * column 0 are above a thousandth of the largest, the first and last of
 * them, and the largest. */
static void gels_where(const tcase_t *c, const void *a, int64_t lda, const void *x, const void *b0) {
  int64_t m = gels_m(c), n = c->n, first = -1, last = -1, count = 0, imax = 0;
  double *g = calloc((size_t)n, sizeof *g), gmax = 0;
  double complex *r = calloc((size_t)m, sizeof *r);
  if (!g || !r) goto out;
  for (int64_t i = 0; i < m; i++) {
    double complex v = -chk_get(c->dtype, b0, m, i, 0);
    for (int64_t k = 0; k < n; k++) v += chk_get(c->dtype, a, lda, i, k) * chk_get(c->dtype, x, m, k, 0);
    r[i] = v;
  }
  for (int64_t k = 0; k < n; k++) {
    double complex v = 0;
    for (int64_t i = 0; i < m; i++) v += conj(chk_get(c->dtype, a, lda, i, k)) * r[i];
    g[k] = cabs(v);
    if (g[k] > gmax) gmax = g[k], imax = k;
  }
  for (int64_t k = 0; k < n; k++)
    if (g[k] > 1e-3 * gmax) {
      if (first < 0) first = k;
      last = k;
      count++;
    }
  fprintf(stderr, "    %s: X column 1 off in %lld of %lld rows (first %lld, last %lld, largest at %lld: %.3g)\n",
          c->name, (long long)count, (long long)n, (long long)first + 1, (long long)last + 1, (long long)imax + 1,
          gmax);
out:
  free(g);
  free(r);
}

/* What rank `rank` expects after its solve returned rc: 0 when it holds. */
static int gels_check(const tcase_t *c, int rank, int rc, const muster_solve_result_t *res, const void *a,
                      const void *b0, const void *a_after, const void *b_after, int64_t col0, int64_t ncols,
                      uint64_t seed) {
  int64_t m = gels_m(c), n = c->n, lda = gels_lda(c);
  size_t esz = muster_dtype_bytes(c->dtype);
  const char *who = c->name;
  if (rc != c->expect) {
    fprintf(stderr, "    %s rank %d (seed %llu): muster_solve returned %d (%s), expected %d: %s\n", who, rank,
            (unsigned long long)seed, rc, muster_strerror(rc), c->expect, muster_last_error());
    return 1;
  }
  if (memcmp((const char *)a + (size_t)(col0 * lda) * esz, a_after, (size_t)(ncols * lda) * esz) != 0) {
    fprintf(stderr, "    %s rank %d: its columns of A changed\n", who, rank);
    return 1;
  }
  if (rc != 0) {
    if (rc == MUSTER_ESINGULAR && res->info != c->zero_col) {
      fprintf(stderr, "    %s rank %d: info %lld, expected %lld\n", who, rank, (long long)res->info,
              (long long)c->zero_col);
      return 1;
    }
    if (memcmp(b0, b_after, (size_t)(m * c->nrhs) * esz) != 0) {
      fprintf(stderr, "    %s rank %d: B was written after a refusal\n", who, rank);
      return 1;
    }
    return 0;
  }
  double got = chk_gels(c->dtype, m, n, c->nrhs, a, lda, b_after, m, b0, m), tol = chk_gels_tolerance(c->dtype, m);
  if (!(got <= tol)) {
    fprintf(stderr, "    %s rank %d (seed %llu): ||A^H(AX-B)|| relative %.3g > %.3g\n", who, rank,
            (unsigned long long)seed, got, tol);
    if (rank == 0) gels_where(c, a, lda, b_after, b0);
    return 1;
  }
  return 0;
}

#define GK(call)                                                                               \
  do {                                                                                         \
    if ((call) != cudaSuccess) {                                                               \
      fprintf(stderr, "    %s rank %d: %s failed\n", c->name, rank, #call);                    \
      goto out;                                                                                \
    }                                                                                          \
  } while (0)

/* One rank's process: its column block of A and all of B on its GPU, the
 * solve, the checks.  Exit status 0 when they hold. */
static int gels_rank(const tcase_t *c, const char *group, int rank, uint64_t seed) {
  int64_t m = gels_m(c), n = c->n, lda = gels_lda(c), S = (n + c->R - 1) / c->R;
  int64_t col0 = rank * S < n ? rank * S : n, ncols = n - col0 < S ? n - col0 : S;
  size_t esz = muster_dtype_bytes(c->dtype), abytes = (size_t)(lda * (ncols > 0 ? ncols : 1)) * esz;
  size_t bbytes = (size_t)(m * c->nrhs) * esz;
  void *a = NULL, *b0 = NULL, *da = NULL, *db = NULL, *a_after = malloc(abytes), *b_after = malloc(bbytes);
  muster_group_t *g = NULL;
  int fail = 1;
  if (gels_inputs(c, seed, &a, &b0) || !a_after || !b_after) goto out;
  GK(cudaSetDevice(c->devs[rank]));
  GK(cudaMalloc(&da, abytes));
  GK(cudaMalloc(&db, bbytes));
  GK(cudaMemcpy(da, (char *)a + (size_t)(col0 * lda) * esz, abytes, cudaMemcpyHostToDevice));
  GK(cudaMemcpy(db, b0, bbytes, cudaMemcpyHostToDevice));
  muster_group_opts_t opts = {NULL, 0, c->devs[rank]};
  if (muster_group_join(group, rank, c->R, &opts, &g) != 0) {
    fprintf(stderr, "    %s rank %d: join: %s\n", c->name, rank, muster_last_error());
    goto out;
  }
  muster_solve_args_t args = {.routine = MUSTER_GELS, .dtype = c->dtype, .n = n, .nrhs = c->nrhs,
                              .layout = MUSTER_LAYOUT_BLOCK, .provider = "cusolvermp"};
  muster_shard_t s = {.mem = MUSTER_MEM_CUDA, .device = c->devs[rank], .a = da, .lda = lda, .col0 = col0,
                      .ncols = ncols, .b = db, .ldb = m};
  muster_solve_result_t res;
  int rc = muster_solve(g, &args, &s, &res);
  GK(cudaMemcpy(a_after, da, abytes, cudaMemcpyDeviceToHost));
  GK(cudaMemcpy(b_after, db, bbytes, cudaMemcpyDeviceToHost));
  fail = gels_check(c, rank, rc, &res, a, b0, a_after, b_after, col0, ncols, seed);
out:
  if (g) muster_group_leave(g);
  cudaFree(da);
  cudaFree(db);
  free(a);
  free(b0);
  free(a_after);
  free(b_after);
  return fail;
}

static int gels_special(const tcase_t *c, int ndev) {
  (void)ndev;
  char group[64];
  pid_t pids[GC_MAX_RANKS];
  uint64_t seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 20);
  snprintf(group, sizeof group, "gputest.gels.%d", (int)getpid());
  for (int r = 0; r < c->R; r++) {
    pids[r] = fork();
    if (pids[r] == 0) {
      int rc = gels_rank(c, group, r, seed);
      fflush(stderr);
      _exit(rc);
    }
  }
  int fail = 0;
  for (int r = 0; r < c->R; r++) {
    int st = 0;
    if (pids[r] < 0 || gc_wait_limited(pids[r], 120.0, &st) != 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
      fprintf(stderr, "    %s: rank %d failed (status 0x%x)\n", c->name, r, st);
      fail = 1;
    }
  }
  return fail;
}

/* A gels case on R processes: A m x n (m = n + extra), B m x 3. */
static tcase_t *add_gels(tcase_t *cases, int *nc, muster_dtype_t dt, int R, int64_t n, int64_t extra,
                         const char *shape) {
  tcase_t *c = gc_add(cases, nc, &mp, MUSTER_GELS, 0, dt, M_PROCS, R, n, extra, 0, shape);
  c->nrhs = 3;
  c->reps = 1;
  c->special = gels_special;
  snprintf(c->name, sizeof c->name, "gels %s processes R=%d %s m=%lld n=%lld lda=%lld", muster_dtype_str(dt), R, shape,
           (long long)gels_m(c), (long long)n, (long long)gels_lda(c));
  return c;
}

static void gels_cases(tcase_t *cases, int *nc, int R) {
  static const muster_dtype_t dts[4] = {MUSTER_F32, MUSTER_F64, MUSTER_C64, MUSTER_C128};
  int64_t n = 300 + 7 * R;
  if (R > 1) { /* refused (plan.h: mp_refused), A and B untouched, every rank */
    for (int d = 0; d < 4; d++) add_gels(cases, nc, dts[d], R, n, n, "m=2n refused")->expect = MUSTER_EUNSUPPORTED;
    return;
  }
  for (int d = 0; d < 4; d++) {
    add_gels(cases, nc, dts[d], R, n, n, "m=2n");
    add_gels(cases, nc, dts[d], R, n, 1, "m=n+1");
    add_gels(cases, nc, dts[d], R, n, 0, "m=n");
  }
  add_gels(cases, nc, MUSTER_F64, R, 1000, 1000, "m=2n");
  tcase_t *c = add_gels(cases, nc, MUSTER_F64, R, n, n, "zero-column");
  c->zero_col = n / 2 + 2;
  c->shift = 0; /* a zero column: R(k,k) = 0 */
  c->expect = MUSTER_ESINGULAR;
  c = add_gels(cases, nc, MUSTER_C128, R, n, 3, "column=2xcolumn1");
  c->zero_col = n / 3 + 1;
  c->shift = 1; /* 2 x column 1: R(k,k) at roundoff, under m eps max|R(i,i)| */
  c->expect = MUSTER_ESINGULAR;
  for (int k = 0; k < 2; k++) {
    c = add_gels(cases, nc, MUSTER_F64, R, n, n, k ? "NaN-in-B" : "NaN-in-A");
    c->shift = 0;
    c->nan_in = k ? 'b' : 'a';
    c->expect = MUSTER_ENONFINITE;
  }
}

void mp_cases(tcase_t *cases, int *nc, int maxR) {
  static const muster_dtype_t dts[4] = {MUSTER_F32, MUSTER_F64, MUSTER_C64, MUSTER_C128};
  for (int R = 1; R <= 4 && R <= maxR; R++) {
    for (int mode = M_THREADS; mode <= M_PROCS; mode++) {
      if (mode == M_THREADS && R > 1) continue; /* one process per GPU */
      int64_t n = 512 * R;
      for (int d = 0; d < 4; d++) {
        gc_add(cases, nc, &mp, MUSTER_GETRS, 0, dts[d], mode, R, n, 0, 0, "aligned");
        gc_add(cases, nc, &mp, MUSTER_GETRS, 0, dts[d], mode, R, 1000 + 7 * R, 5, 0, "unaligned");
        gc_add(cases, nc, &mp, MUSTER_POTRS, MUSTER_LOGDET, dts[d], mode, R, 1000 + 7 * R, 5, 0, "unaligned");
      }
      gc_add(cases, nc, &mp, MUSTER_POTRS, MUSTER_LOGDET, MUSTER_F64, mode, R, n, 0, 0, "aligned");
      gc_add(cases, nc, &mp, MUSTER_GETRS, MUSTER_NO_FACTOR, MUSTER_F64, mode, R, n, 0, 0, "aligned");
      gc_add(cases, nc, &mp, MUSTER_GETRS, MUSTER_NO_FACTOR, MUSTER_C128, mode, R, 1000 + 7 * R, 5, 0, "unaligned");
      gc_add_getrs_edges(cases, nc, &mp, mode, R);
    }
    gels_cases(cases, nc, R);
  }
  mp_qr_cases(cases, nc, &mp, maxR);
  /* a rank SIGKILLed in the middle of a solve (syevd f64 n = 12288, the
   * other providers' kill); one solve first, so that the kill lands in the
   * solve and not in the communicator's creation, which NCCL cannot abort:
   * the dead leader's peer gets MUSTER_EPEERDEAD once the watchdog aborted
   * the communicator */
  for (int victim = 1; victim >= 0 && maxR >= 2; victim--) {
    tcase_t *c = gc_add(cases, nc, &mp, MUSTER_SYEVD, 0, MUSTER_F64, M_PROCS, 2, 12288, 0, 0, "");
    c->victim = victim;
    c->survive_s = 10.0;
    c->reps = 2;
    c->special = gc_kill;
    snprintf(c->name, sizeof c->name, "kill rank %d (%s) mid-solve: syevd f64 processes R=2 n=12288 (after one solve)",
             victim, victim ? "non-leader" : "leader");
  }
}
