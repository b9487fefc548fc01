/*
 * tests/gpu/gpu_test.c - the GPU test command (docs/gpu-testing.md).
 *
 *   gpu-test [--provider cusolvermg|cusolverdn|cusolvermp|tiled] [--only SUBSTR] [--max-gpus R] [--no-kill]
 *            [--smoke] [--part K/N] [--list]
 *
 * Runs, through the public API (muster_solve / muster_solve_all and
 * muster_run_on_devices), the cases of one provider (default cusolvermg;
 * cusolverdn's are in gpu_dn.c, cusolvermp's in gpu_mp.c, tiled's in gpu_tiled.c), each case in a
 * forked child (gpu_case.h):
 * for cusolvermg,
 *   every routine (potrs, potri, syevd, syevd values only) x dtype (f32,
 *   f64, c64, c128) x mode (threads, processes, all = muster_solve_all) x
 *   GPU count (1, 2, 4 when there) x shape (n aligned to the tile and
 *   relayout in place; n not aligned, lda > n, relayout through a copy; the
 *   provider's own tile choice), each solved twice on fresh random matrices
 *   (the second solve must create nothing: no handle, descriptor, buffer,
 *   peer enable or IPC open), results checked by residuals that regenerate
 *   A on the GPU; getrs and potrs's log det (cmg_general_cases: residuals,
 *   A kept, log det against the lapack provider, singular and NaN inputs);
 *   a not-positive-definite matrix (ENOTPD, info 1); and, in
 *   process mode, a rank SIGKILLed in the middle of a solve (non-leader and
 *   leader): the survivor fails with an error naming the dead peer, in
 *   bounded time, and /dev/shm holds nothing of the job afterwards.
 * Cases that need more GPUs than there are (or than --max-gpus) are
 * skipped, and the count is printed.  --smoke keeps one case per routine x
 * mode x GPU count and one kill (gpu_select.h), each solved once; --part
 * K/N keeps part K of N, the parts balanced by estimated time; --list
 * prints what would run and its estimate.  Prints one line per case and
 * "N passed, M failed, K skipped (S s, G GPU(s)[, part K/N])"; exit 1 on
 * any failure.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gpu_case.h"
#include "gpu_dn.h"
#include "gpu_mp.h"
#include "gpu_select.h"
#include "gpu_tiled.h"

/* ---- cusolvermg's cases ------------------------------------------------------------ */

static const char *const cmg_stat_names[] = {"handles", "descs", "allocs", "peer", "ipc_opens", "ipc_closes",
                                             "solves", "ops"};
static const gprov_t cmg = {"cusolvermg", "muster_cusolvermg_stats", 8, cmg_stat_names, 0x1f, 6, NULL};

/* getrs and potrs with its log det, on 1 to 4 GPUs: every dtype x mode
 * on an aligned n (relayout in place; getrs copies A into work buffers) and
 * an odd one (lda > n, the provider's tile); then per GPU count and mode:
 * getrs with MUSTER_NO_FACTOR (factored in the caller's buffers: in place,
 * and through the copy plan), log det c128 on an aligned n, and the getrs
 * edges every provider runs (gc_add_getrs_edges: cyclic layout, singular,
 * NaN in A or B). */
static void cmg_general_cases(tcase_t *cases, int *nc, int maxR) {
  static const muster_dtype_t dts[4] = {MUSTER_F32, MUSTER_F64, MUSTER_C64, MUSTER_C128};
  for (int R = 1; R <= 4 && R <= maxR; R++)
    for (int mode = 0; mode < 3; mode++) {
      int64_t T = R <= 2 ? 256 : 128, n = R <= 2 ? 2 * T * R : T * R * R;
      for (int d = 0; d < 4; d++) {
        if (mode == M_ALL && (dts[d] == MUSTER_F32 || dts[d] == MUSTER_C128)) continue;
        gc_add(cases, nc, &cmg, MUSTER_GETRS, 0, dts[d], mode, R, n, 0, T, "aligned");
        gc_add(cases, nc, &cmg, MUSTER_GETRS, 0, dts[d], mode, R, 1000 + 7 * R, 5, 0, "unaligned");
        gc_add(cases, nc, &cmg, MUSTER_POTRS, MUSTER_LOGDET, dts[d], mode, R, 1000 + 7 * R, 5, 0, "unaligned");
      }
      gc_add(cases, nc, &cmg, MUSTER_GETRS, MUSTER_NO_FACTOR, MUSTER_F64, mode, R, n, 0, T, "aligned");
      gc_add(cases, nc, &cmg, MUSTER_GETRS, MUSTER_NO_FACTOR, MUSTER_C64, mode, R, 1000 + 7 * R, 5, 0, "unaligned");
      gc_add(cases, nc, &cmg, MUSTER_POTRS, MUSTER_LOGDET, MUSTER_C128, mode, R, n, 0, T, "aligned");
      if (R > 1) /* n = 1000: the copy plan (see cmg_cases), which getrs in place needs too */
        gc_add(cases, nc, &cmg, MUSTER_GETRS, MUSTER_NO_FACTOR, MUSTER_F64, mode, R, 1000, 0,
               R == 2 ? 128 : R == 3 ? 112 : 83, "copy-plan");
      gc_add_getrs_edges(cases, nc, &cmg, mode, R);
    }
}

static void cmg_cases(tcase_t *cases, int *nc, int maxR) {
  static const muster_dtype_t dts[4] = {MUSTER_F32, MUSTER_F64, MUSTER_C64, MUSTER_C128};
  int Rs[3] = {1, 2, 4};
  tcase_t *c;
  for (int ri = 0; ri < 3; ri++) {
    int R = Rs[ri];
    if (R > maxR) break;
    for (int mode = 0; mode < 3; mode++)
      for (int d = 0; d < 4; d++) {
        if (mode == M_ALL && (dts[d] == MUSTER_F32 || dts[d] == MUSTER_C128)) continue;
        for (int rt = 0; rt < 4; rt++) {
          muster_routine_t r = rt == 0 ? MUSTER_POTRS : rt == 1 ? MUSTER_POTRI : MUSTER_SYEVD;
          unsigned fl = rt == 3 ? MUSTER_NO_VECTORS : 0;
          /* aligned: the block width a multiple of tile*R (the runtime's
           * tile rule, jaxmg's, wants that), in-place relayout */
          int64_t T = R <= 2 ? 256 : 128;
          gc_add(cases, nc, &cmg, r, fl, dts[d], mode, R, R <= 2 ? 2 * T * R : T * R * R, 0, T, "aligned");
          /* not aligned: odd n, lda > n, the provider's tile (copy or in place) */
          gc_add(cases, nc, &cmg, r, fl, dts[d], mode, R, 1000 + 7 * R, 5, 0, "unaligned");
        }
        /* n = 1000: a rank's cyclic columns exceed its block (R=2, T=128:
         * 512 > 500; R=4, T=83: 253 > 250): the copy plan */
        if (R > 1) gc_add(cases, nc, &cmg, MUSTER_POTRS, 0, dts[d], mode, R, 1000, 0, R == 2 ? 128 : 83, "copy-plan");
      }
    /* n = 1000 / 2000: tiles that fill every block exactly, moved in place */
    if (R > 1)
      gc_add(cases, nc, &cmg, MUSTER_POTRS, 0, MUSTER_F64, M_THREADS, R, R == 2 ? 1000 : 2000, 0, R == 2 ? 100 : 125,
             "inplace-plan");
  }
  /* Past 2048 columns: cuSolverMg's own potri, and one potrs call with more
   * than 2048 right-hand sides, are wrong on 2+ GPUs (mg-rhs-probe); the
   * provider solves in panels of 2048.  Panels spanning several tiles
   * (tile 256), a panel inside one tile (tile 4096), the provider's tile
   * with lda > n, and potrs with nrhs > 2048 on a tile > 2048. */
  if (maxR >= 2) {
    gc_add(cases, nc, &cmg, MUSTER_POTRI, 0, MUSTER_C64, M_PROCS, 2, 4096, 0, 256, "rhs-panels");
    gc_add(cases, nc, &cmg, MUSTER_POTRI, 0, MUSTER_F64, M_THREADS, 2, 8192, 0, 4096, "rhs-panels");
    gc_add(cases, nc, &cmg, MUSTER_POTRI, 0, MUSTER_F64, M_PROCS, 2, 4100, 3, 0, "rhs-panels");
    c = gc_add(cases, nc, &cmg, MUSTER_POTRS, 0, MUSTER_F64, M_THREADS, 2, 8192, 0, 4096, "rhs-panels");
    c->nrhs = 2100;
  }
  /* not positive definite */
  for (int mode = 0; mode < 3; mode++)
    for (int R = 1; R <= (maxR >= 2 ? 2 : 1); R++) {
      c = gc_add(cases, nc, &cmg, MUSTER_POTRS, 0, MUSTER_F64, mode, R, 512, 0, 128, "not-PD");
      c->shift = -512;
      c->expect = MUSTER_ENOTPD;
      c = gc_add(cases, nc, &cmg, MUSTER_POTRI, 0, MUSTER_C64, mode, R, 600, 3, 0, "not-PD");
      c->shift = -600;
      c->expect = MUSTER_ENOTPD;
    }
  cmg_general_cases(cases, nc, maxR);
  /* a rank SIGKILLed in the middle of a solve: syevd f64 n = 12288 takes
   * cuSolverMg about 3.7 s on 2 H200 */
  for (int victim = 1; victim >= 0 && maxR >= 2; victim--) {
    c = gc_add(cases, nc, &cmg, MUSTER_SYEVD, 0, MUSTER_F64, M_PROCS, 2, 12288, 0, 1024, "");
    c->victim = victim;
    c->survive_s = 30.0;
    c->reps = 1;
    c->special = gc_kill;
    snprintf(c->name, sizeof c->name, "kill rank %d (%s) mid-solve: syevd f64 processes R=2 n=12288", victim,
             victim ? "non-leader" : "leader");
  }
}

/* ---- running them -------------------------------------------------------------------- */

/* The case's "NAME=value[ NAME=value ...]" into this process's
 * environment (set = 1) or out. */
static void case_env(const tcase_t *c, int set) {
  for (const char *p = c->env; p && *p;) {
    char one[128];
    size_t len = strcspn(p, " ");
    snprintf(one, sizeof one, "%.*s", (int)len, p);
    p += len + (p[len] == ' ');
    char *eq = strchr(one, '=');
    if (!eq) continue;
    *eq = '\0';
    if (set) setenv(one, eq + 1, 1);
    else unsetenv(one);
  }
}

/* Threads and all-mode cases: one child runs them in turn (one CUDA
 * start-up for all); it reports each case on a pipe.  Returns the cases
 * that failed; *passed counts the others. */
static int run_batch(tcase_t *cases, int ncases, int ndev, int *passed) {
  int fd[2], expected = 0, seen = 0, failed = 0;
  for (int k = 0; k < ncases; k++) expected += gs_batched(&cases[k]);
  if (!expected || pipe(fd) < 0) return 0;
  fflush(stdout);
  pid_t p = fork();
  if (p == 0) {
    setpgid(0, 0);
    close(fd[0]);
    for (int k = 0; k < ncases; k++) {
      tcase_t *c = &cases[k];
      if (!gs_batched(c)) continue;
      double t0 = gc_now();
      case_env(c, 1);
      int ok = gc_run(c, ndev) == 0;
      case_env(c, 0);
      char line[256];
      int len = snprintf(line, sizeof line, "%s %d - %s (%.2fs)\n", ok ? "ok" : "not ok", k + 1, c->name,
                         gc_now() - t0);
      fflush(stdout);
      if (write(fd[1], line, (size_t)len) != len) _exit(3);
    }
    _exit(0);
  }
  setpgid(p, p);
  close(fd[1]);
  FILE *f = fdopen(fd[0], "r");
  char line[256];
  while (f && fgets(line, sizeof line, f)) { /* the child dies with the group on timeout */
    fputs(line, stdout);
    fflush(stdout);
    seen++;
    if (!strncmp(line, "ok", 2)) (*passed)++;
    else failed++;
  }
  if (f) fclose(f);
  int st = 0;
  if (gc_wait_limited(p, 5.0, &st) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0 || seen < expected) {
    printf("not ok - threads/all batch ended early (%d of %d cases reported)\n", seen, expected);
    failed += expected - seen > 0 ? expected - seen : 1;
  }
  return failed;
}

/* A process-mode or special case in its own child, with a time limit. */
static int run_alone(const tcase_t *c, int k, int ndev) {
  double t0 = gc_now(), limit = c->special ? 150.0 : 90.0;
  fflush(stdout);
  pid_t p = fork();
  if (p == 0) {
    setpgid(0, 0);
    case_env(c, 1);
    int rc = gc_run(c, ndev);
    fflush(stdout); /* what the case printed: _exit does not flush */
    _exit(rc);
  }
  setpgid(p, p);
  int st = 0;
  int timed_out = gc_wait_limited(p, limit, &st) < 0;
  int ok = !timed_out && WIFEXITED(st) && WEXITSTATUS(st) == 0;
  if (timed_out) fprintf(stderr, "    %s: timed out after %.0f s\n", c->name, limit);
  printf("%s %d - %s (%.2fs)\n", ok ? "ok" : "not ok", k + 1, c->name, gc_now() - t0);
  return ok;
}

static tcase_t cases[GC_MAX_CASES];

static int usage(void) {
  fprintf(stderr, "usage: gpu-test [--provider cusolvermg|cusolverdn|cusolvermp] [--only SUBSTR] "
                  "[--max-gpus R] [--no-kill] [--smoke] [--part K/N] [--list]\n");
  return 2;
}

/* "K/N" with 1 <= K <= N <= 64 into *k, *n; 0 when it is one. */
static int parse_part(const char *s, int *k, int *n) {
  char *end;
  long a = strtol(s, &end, 10);
  if (end == s || *end != '/') return -1;
  const char *t = end + 1;
  long b = strtol(t, &end, 10);
  if (end == t || *end || b < 1 || b > 64 || a < 1 || a > b) return -1;
  *k = (int)a;
  *n = (int)b;
  return 0;
}

int main(int argc, char **argv) {
  const char *only = NULL, *prov = "cusolvermg";
  int maxR = 4, kills = 1, list = 0, smoke = 0, part_k = 1, part_n = 1, ncases = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--only") && i + 1 < argc) only = argv[++i];
    else if (!strcmp(argv[i], "--provider") && i + 1 < argc) prov = argv[++i];
    else if (!strcmp(argv[i], "--max-gpus") && i + 1 < argc) maxR = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--no-kill")) kills = 0;
    else if (!strcmp(argv[i], "--list")) list = 1;
    else if (!strcmp(argv[i], "--smoke")) smoke = 1;
    else if (!strcmp(argv[i], "--part") && i + 1 < argc) {
      if (parse_part(argv[++i], &part_k, &part_n)) {
        fprintf(stderr, "gpu-test: --part %s: K/N with 1 <= K <= N <= 64\n", argv[i]);
        return 2;
      }
    } else return usage();
  }
  if (strcmp(prov, "cusolvermg") && strcmp(prov, "cusolverdn") && strcmp(prov, "cusolvermp") && strcmp(prov, "tiled")) {
    fprintf(stderr, "gpu-test: --provider %s: cusolvermg, cusolverdn, cusolvermp or tiled\n", prov);
    return 2;
  }
  char job[64];
  snprintf(job, sizeof job, "gputest%d", (int)getpid());
  setenv("MUSTER_JOB", job, 0);
  setenv("MUSTER_PROVIDER", prov, 0);
  setenv("NCCL_NVLS_ENABLE", "0", 0);
  char seed[32];
  snprintf(seed, sizeof seed, "%llu", (unsigned long long)time(NULL) * 2654435761ull ^ (unsigned long long)getpid());
  setenv("GPU_TEST_SEED", seed, 0);
  printf("# provider %s GPU_TEST_SEED=%s MUSTER_JOB=%s\n", prov, getenv("GPU_TEST_SEED"), getenv("MUSTER_JOB"));
  int ndev = list ? 4 : gc_gpu_count();
  if (!list && ndev < 1) {
    fprintf(stderr, "gpu-test: no CUDA device here\n");
    return 1;
  }
  if (maxR > ndev) maxR = ndev;
  if (!strcmp(prov, "cusolvermg")) cmg_cases(cases, &ncases, maxR);
  else if (!strcmp(prov, "cusolvermp")) mp_cases(cases, &ncases, maxR);
  else if (!strcmp(prov, "tiled")) tl_cases(cases, &ncases, maxR, kills);
  else dn_cases(cases, &ncases, kills);
  int passed = 0, failed = 0, skipped = 0, keep = 0;
  for (int k = 0; k < ncases; k++) { /* what this machine cannot run, and what was not asked for */
    if (cases[k].ngpus > maxR) skipped++;
    else if ((kills || cases[k].special != gc_kill) && (!only || strstr(cases[k].name, only))) cases[keep++] = cases[k];
  }
  ncases = keep;
  if (skipped)
    printf("# skipped %d case(s) that need more GPUs than the %d used here (--max-gpus or the machine)\n", skipped,
           maxR);
  if (smoke) ncases = gs_smoke(cases, ncases);
  double est = 0;
  char part[32] = "";
  if (part_n > 1) {
    ncases = gs_part(cases, ncases, part_k, part_n, &est);
    snprintf(part, sizeof part, ", part %d/%d", part_k, part_n);
  } else
    for (int k = 0; k < ncases; k++) est += gs_cost(&cases[k]);
  printf("# %d case(s)%s%s, estimated %.0f s on an H200\n", ncases, smoke ? " (smoke)" : "", part, est);
  double t_all = gc_now();
  if (list) {
    for (int k = 0; k < ncases; k++) printf("%s (~%.2fs)\n", cases[k].name, gs_cost(&cases[k]));
    return 0;
  }
  failed += run_batch(cases, ncases, ndev, &passed);
  for (int k = 0; k < ncases; k++)
    if (!gs_batched(&cases[k])) run_alone(&cases[k], k, ndev) ? passed++ : failed++;
  printf("%d passed, %d failed, %d skipped (%.1f s, %d GPU(s)%s)\n", passed, failed, skipped, gc_now() - t_all, ndev,
         part);
  return failed ? 1 : 0;
}
