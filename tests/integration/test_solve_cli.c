/*
 * tests/integration/test_solve_cli.c - `muster solve`, `muster providers`
 * and `muster bench` as a user runs them: exit status, JSON fields, the
 * check, errors on stderr, nothing left in /dev/shm.
 */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "task.h"
#include "providers/tp_util.h"
#include "test_shmdump_util.h"

/* Run `<build>/bin/muster ARGS`, stdout into out; returns the exit status. */
static int muster_cli(const char *args, char *out, size_t cap) {
#ifdef __SANITIZE_THREAD__
  /* OpenBLAS's own (uninstrumented) thread pool looks racy to TSan */
  setenv("OPENBLAS_NUM_THREADS", "1", 0);
#endif
  char exe[PATH_MAX], cmd[PATH_MAX + 1024];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  ASSERT(n > 0);
  exe[n] = '\0';
  *strrchr(exe, '/') = '\0';
  snprintf(cmd, sizeof cmd, "%s/../bin/muster %s 2>/dev/null", exe, args);
  FILE *p = popen(cmd, "r");
  ASSERT(p != NULL);
  size_t len = fread(out, 1, cap - 1, p);
  out[len] = '\0';
  int st = pclose(p);
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

/* `muster ARGV...` must exit 2 with `want` on stderr and nothing on stdout. */
static void refused(const char *const *argv, const char *want) {
  struct tool_result r;
  ASSERT_EQ(tool_run(&r, 30, NULL, "muster", argv), 0);
  if (r.exit_code != 2 || r.out_len != 0 || !strstr(r.err, want))
    fprintf(stderr, "muster %s %s ...: exit %d, want 2 and \"%s\"; stderr: %.400s\n", argv[0], argv[1],
            r.exit_code, want, r.err);
  ASSERT_EQ(r.exit_code, 2);
  ASSERT_EQ(r.out_len, 0);
  ASSERT_STR_CONTAINS(r.err, want);
  tool_result_free(&r);
}

TEST_IMPL(cli_solve_json_every_routine) {
  setenv("MUSTER_PROVIDER_PATH", tp_lapack_dir(), 1);
  static const char *cases[] = {
      "solve potrs --n 96 --ranks 3 --mode threads --dtype f64 --nrhs 2 --json",
      "solve potrs --n 97 --ranks 4 --mode processes --dtype c64 --json",
      "solve potri --n 64 --ranks 2 --mode processes --dtype f32 --tile 8 --json",
      "solve syevd --n 50 --ranks 3 --mode threads --dtype c128 --seed 5 --json",
      "solve syevd --n 50 --ranks 2 --mode processes --dtype f64 --no-vectors --json",
      "solve getrs --n 40 --ranks 4 --mode threads --dtype f32 --json",
      "solve getrs --n 61 --ranks 3 --mode processes --dtype c128 --nrhs 3 --json",
  };
  char out[4096];
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    int rc = muster_cli(cases[i], out, sizeof out);
    if (rc != 0) fprintf(stderr, "%s -> %d: %s\n", cases[i], rc, out);
    ASSERT_EQ(rc, 0);
    ASSERT_STR_CONTAINS(out, "\"ok\":true");
    ASSERT_STR_CONTAINS(out, "\"provider\":\"lapack\"");
    ASSERT_STR_CONTAINS(out, "\"residual\":");
    ASSERT_STR_CONTAINS(out, "\"seconds\":");
    ASSERT_STR_CONTAINS(out, "\"tile\":");
  }
  ASSERT_STR_CONTAINS(out, "\"mode\":\"processes\"");
  ASSERT_EQ(test_count_job_segments(test_job()), 0);
  return 0;
}

TEST_IMPL(cli_solve_errors) {
  setenv("MUSTER_PROVIDER_PATH", tp_lapack_dir(), 1);
  char out[4096];
  /* an invalid tile is an error of the solve: exit 1, JSON says why */
  ASSERT_EQ(muster_cli("solve potrs --n 30 --ranks 3 --tile 11 --json", out, sizeof out), 1);
  ASSERT_STR_CONTAINS(out, "\"ok\":false");
  ASSERT_STR_CONTAINS(out, "tile 11 invalid");
  ASSERT_EQ(muster_cli("solve potrs --n 30 --ranks 2 --mode processes --provider nosuch --json",
                       out, sizeof out), 1);
  ASSERT_STR_CONTAINS(out, "'nosuch'");
  /* bad usage: exit 2 */
  ASSERT_EQ(muster_cli("solve", out, sizeof out), 2);
  ASSERT_EQ(muster_cli("solve potrs --mode sideways", out, sizeof out), 2);
  ASSERT_EQ(muster_cli("solve gesv --n 10", out, sizeof out), 2);
  ASSERT_EQ(muster_cli("solve potrs --dtype f16", out, sizeof out), 2);
  /* gels: a wide A, and --m on a square routine */
  ASSERT_EQ(muster_cli("solve gels --n 30 --m 29 --ranks 2", out, sizeof out), 2);
  ASSERT_EQ(muster_cli("solve getrs --n 30 --m 31 --ranks 2", out, sizeof out), 2);
  ASSERT_EQ(test_count_job_segments(test_job()), 0);
  return 0;
}

/* The test provider `name` copied to dir/potrs/testprov.so. */
static void copy_provider(const char *dir, const char *name) {
  char from[PATH_MAX + 64], to[PATH_MAX + 64], buf[65536];
  snprintf(from, sizeof from, "%s/%s", tp_build_dir(), name);
  snprintf(to, sizeof to, "%s/potrs", dir);
  ASSERT_EQ(mkdir(to, 0700), 0);
  snprintf(to, sizeof to, "%s/potrs/testprov.so", dir);
  FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
  ASSERT(in && out);
  for (size_t n; (n = fread(buf, 1, sizeof buf, in)) > 0;) ASSERT_EQ(fwrite(buf, 1, n, out), n);
  fclose(in);
  ASSERT_EQ(fclose(out), 0);
}

TEST_IMPL(cli_providers_lists_refused_files) {
  char dir[256], args[600], out[8192];
  test_tmp_dir(dir, sizeof dir);
  tp_link(dir, "potrs", "testprov.so", "testprov_v1.so");
  tp_link(dir, "potrs", "abi.so", "testprov_abi999.so");
  setenv("MUSTER_PROVIDER_PATH", dir, 1);
  snprintf(args, sizeof args, "providers --json");
  ASSERT_EQ(muster_cli(args, out, sizeof out), 0);
  ASSERT_STR_CONTAINS(out, "\"name\":\"testprov\"");
  ASSERT_STR_CONTAINS(out, "\"available\":true");
  ASSERT_STR_CONTAINS(out, "says ABI version 999; it must say 1");
  ASSERT_STR_CONTAINS(out, "\"available\":1}");
  ASSERT_STR_CONTAINS(out, "\"why\":\"\",\"note\":\"\""); /* available, no note */
  ASSERT_EQ(muster_cli("providers", out, sizeof out), 0);
  ASSERT_STR_CONTAINS(out, "testprov_abi999.so");
  ASSERT_STR_CONTAINS(out, "available\n"); /* no note: nothing after the word */
  /* an available provider's probe note (cusolvermp: its libraries' versions) */
  setenv("TESTPROV_NOTE", "engine 9.1 with helper 2.30", 1);
  ASSERT_EQ(muster_cli("providers", out, sizeof out), 0);
  ASSERT_STR_CONTAINS(out, "available: engine 9.1 with helper 2.30\n");
  ASSERT_EQ(muster_cli(args, out, sizeof out), 0);
  ASSERT_STR_CONTAINS(out, "\"available\":true,\"why\":\"\",\"note\":\"engine 9.1 with helper 2.30\"");
  unsetenv("TESTPROV_NOTE");
  /* a folder whose name has a control byte, a quote, a backslash and UTF-8:
   * the JSON stays valid, each escaped (tools/common/json_str.h) */
  char odd[400];
  snprintf(odd, sizeof odd, "%s/odd\x01\"\\\xc3\xa9", dir);
  ASSERT_EQ(mkdir(odd, 0700), 0);
  copy_provider(odd, "testprov_v1.so"); /* a file, not a link: listings show the real path */
  setenv("MUSTER_PROVIDER_PATH", odd, 1);
  ASSERT_EQ(muster_cli(args, out, sizeof out), 0);
  ASSERT(json_valid(out));
  ASSERT_STR_CONTAINS(out, "/odd\\u0001\\\"\\\\\xc3\xa9/potrs/testprov.so\""); /* é as it is */
  setenv("MUSTER_PROVIDER_PATH", dir, 1);
  /* none usable: exit 1 */
  char link[400];
  snprintf(link, sizeof link, "%s/potrs/testprov.so", dir);
  unlink(link);
  ASSERT_EQ(muster_cli("providers", out, sizeof out), 1);
  test_remove_tree(dir);
  return 0;
}

/* A FIFO named like a provider in a folder of MUSTER_PROVIDER_PATH ahead
 * of the build's providers (the hostile run's case: `muster solve` and
 * `muster providers` never returned): the solve runs on lapack, and the
 * listing shows the FIFO as refused, saying why. */
TEST_IMPL(cli_fifo_in_provider_folder) {
  char dir[256], fifo[400], path[700];
  test_tmp_dir(dir, sizeof dir);
  snprintf(fifo, sizeof fifo, "%s/getrs", dir);
  ASSERT_EQ(mkdir(fifo, 0700), 0);
  snprintf(fifo, sizeof fifo, "%s/getrs/x.so", dir);
  ASSERT_EQ(mkfifo(fifo, 0600), 0);
  snprintf(path, sizeof path, "%s:%s", dir, tp_lapack_dir());
  setenv("MUSTER_PROVIDER_PATH", path, 1);
  const char *solve[] = {"solve", "getrs", "--n", "64", "--ranks", "2", "--mode", "processes",
                         "--provider", "lapack", "--json", NULL};
  const char *list[] = {"providers", "--json", NULL};
  struct tool_result r;
  ASSERT_EQ(tool_run(&r, 20, NULL, "muster", solve), 0);
  ASSERT_EQ(r.timed_out, 0);
  ASSERT_EQ(r.exit_code, 0);
  ASSERT_STR_CONTAINS(r.out, "\"ok\":true");
  tool_result_free(&r);
  ASSERT_EQ(tool_run(&r, 20, NULL, "muster", list), 0);
  ASSERT_EQ(r.timed_out, 0);
  ASSERT_EQ(r.exit_code, 0);
  ASSERT(json_valid(r.out));
  ASSERT_STR_CONTAINS(r.out, "\"name\":\"x\"");
  ASSERT_STR_CONTAINS(r.out, "/getrs/x.so is not a regular file (a FIFO)");
  tool_result_free(&r);
  test_remove_tree(dir);
  return 0;
}

/* `muster ARGS > /dev/full`: exit 1 (never 0) and a message on stderr,
 * for every command that prints (they all exited 0 with the output lost). */
TEST_IMPL(cli_stdout_unwritable) {
  setenv("MUSTER_PROVIDER_PATH", tp_lapack_dir(), 1);
  static const char *const cases[] = {
      "solve getrs --n 64 --ranks 2 --mode processes --provider lapack",
      "solve potrs --n 32 --ranks 2 --mode threads --json", "providers", "providers --json",
      "--version", "--help"};
  char exe[PATH_MAX], dir[256], cmd[PATH_MAX + 1024], err[4096];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  ASSERT(n > 0);
  exe[n] = '\0';
  *strrchr(exe, '/') = '\0';
  test_tmp_dir(dir, sizeof dir);
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    snprintf(cmd, sizeof cmd, "%s/../bin/muster %s > /dev/full 2> %s/err", exe, cases[i], dir);
    int st = system(cmd);
    snprintf(cmd, sizeof cmd, "%s/err", dir);
    FILE *f = fopen(cmd, "r");
    ASSERT(f);
    err[fread(err, 1, sizeof err - 1, f)] = '\0';
    fclose(f);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 1) fprintf(stderr, "muster %s: status 0x%x\n", cases[i], st);
    ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 1);
    ASSERT_STR_CONTAINS(err, "muster: cannot write standard output: ");
  }
  /* shmdump too */
  snprintf(cmd, sizeof cmd, "%s/../bin/shmdump > /dev/full 2> %s/err", exe, dir);
  int st = system(cmd);
  ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 1);
  test_remove_tree(dir);
  ASSERT_EQ(test_count_job_segments(test_job()), 0);
  return 0;
}

TEST_IMPL(cli_bench_small) {
  setenv("MUSTER_PROVIDER_PATH", tp_lapack_dir(), 1);
  char out[8192];
  ASSERT_EQ(muster_cli("bench --n 64,100 --reps 2 --ranks 3 --json", out, sizeof out), 0);
  ASSERT_STR_CONTAINS(out, "\"mode\":\"lapacke\",\"baseline\":true,\"ok\":true");
  ASSERT_STR_CONTAINS(out, "\"mode\":\"muster-threads\",\"baseline\":false,\"ok\":true");
  ASSERT_STR_CONTAINS(out, "\"mode\":\"muster-processes\",\"baseline\":false,\"ok\":true");
  ASSERT_STR_CONTAINS(out, "\"ratio\":");
  ASSERT_EQ(muster_cli("bench --n 40 --reps 1 --modes muster-threads --routine syevd", out, sizeof out), 0);
  ASSERT_STR_CONTAINS(out, "muster-threads");
  ASSERT_EQ(test_count_job_segments(test_job()), 0);
  return 0;
}

/* gels through the CLI: threads and processes x 1..4 ranks x m = n, n + 1
 * and 2n (n = 23: no rank count divides it), the dtype cycling so that each
 * mode runs every dtype (24 runs of 0.2 s: the whole product would cost
 * CI 20 s for little more), and the default m = 2n; every run's JSON says
 * ok with the normal-equations residual under its tolerance (16 sqrt(m)
 * eps, chk_gels_tolerance) and
 * the m it ran. */
TEST_IMPL(cli_solve_gels_matrix) {
  setenv("MUSTER_PROVIDER_PATH", tp_lapack_dir(), 1);
  static const char *const dtypes[] = {"f32", "f64", "c64", "c128"};
  const int n = 23, ms[] = {23, 24, 46};
  char args[256], out[4096], want[32];
  int runs = 0;
  for (int proc = 0; proc < 2; proc++)
    for (int ranks = 1; ranks <= 4; ranks++)
      for (int k = 0; k < 3; k++) {
        int t = (ranks + k + proc) % 4, nrhs = 1 + (ranks + k) % 3;
        snprintf(args, sizeof args, "solve gels --n %d --m %d --nrhs %d --ranks %d --mode %s --dtype %s --json", n,
                 ms[k], nrhs, ranks, proc ? "processes" : "threads", dtypes[t]);
        int rc = muster_cli(args, out, sizeof out);
        double res = json_number(out, "residual"), tol = json_number(out, "tolerance");
        if (rc != 0 || !(res < tol)) fprintf(stderr, "%s -> %d: %s\n", args, rc, out);
        ASSERT_EQ(rc, 0);
        ASSERT_STR_CONTAINS(out, "\"ok\":true");
        ASSERT_STR_CONTAINS(out, "\"provider\":\"lapack\"");
        snprintf(want, sizeof want, "\"m\":%d,", ms[k]);
        ASSERT_STR_CONTAINS(out, want);
        ASSERT(isfinite(res) && res >= 0);
        ASSERT_DBL_LT(res, tol);
        runs++;
      }
  /* no --m: m = 2n */
  ASSERT_EQ(muster_cli("solve gels --n 30 --ranks 3 --mode processes --json", out, sizeof out), 0);
  ASSERT_STR_CONTAINS(out, "\"n\":30,\"m\":60,");
  ASSERT_STR_CONTAINS(out, "\"ok\":true");
  /* the text form names m */
  ASSERT_EQ(muster_cli("solve gels --n 12 --m 17 --ranks 2", out, sizeof out), 0);
  ASSERT_STR_CONTAINS(out, "gels f64 m=17 n=12 nrhs=1 ranks=2 mode=threads provider=lapack");
  ASSERT_STR_CONTAINS(out, "check     ok");
  fprintf(stderr, "%d gels runs ok\n", runs);
  ASSERT_EQ(test_count_job_segments(test_job()), 0);
  return 0;
}

/* What --m and --logdet refuse: exit 2 with the reason, nothing run. */
TEST_IMPL(cli_solve_gels_refusals) {
  setenv("MUSTER_PROVIDER_PATH", tp_lapack_dir(), 1);
  const char *const m_getrs[] = {"solve", "getrs", "--n", "8", "--m", "16", NULL};
  refused(m_getrs, "--m is the row count of a non-square A (gels, geqrf, gesvd, polar); getrs's A is n x n");
  const char *const m_potrs[] = {"solve", "potrs", "--m", "16", "--n", "8", NULL};
  refused(m_potrs, "--m is the row count of a non-square A (gels, geqrf, gesvd, polar); potrs's A is n x n");
  const char *const wide[] = {"solve", "gels", "--n", "40", "--m", "39", NULL};
  refused(wide, "gels: --m 39 < --n 40: A must be tall (m >= n)");
  const char *const wide_mpi[] = {"solve", "gels", "--n", "40", "--m", "1", "--launcher", "mpi", NULL};
  refused(wide_mpi, "gels: --m 1 < --n 40");
  const char *const huge[] = {"solve", "gels", "--n", "4", "--m", "65537", NULL};
  refused(huge, "--m: '65537' is out of range 1..65536");
  const char *const huger[] = {"solve", "gels", "--n", "4", "--m", "18446744073709551617", NULL};
  refused(huger, "--m: '18446744073709551617'");
  const char *const zero[] = {"solve", "gels", "--n", "4", "--m", "0", NULL};
  refused(zero, "--m: '0' is out of range 1..65536");
  const char *const ld_getrs[] = {"solve", "getrs", "--n", "8", "--logdet", NULL};
  refused(ld_getrs, "--logdet is potrs's (log det of the SPD A it factors), not getrs's");
  const char *const ld_gels[] = {"solve", "gels", "--n", "8", "--logdet", NULL};
  refused(ld_gels, "not gels's");
  const char *const bench_m[] = {"bench", "--routine", "getrs", "--m", "9", "--n", "8", NULL};
  refused(bench_m, "--m is the row count of a non-square A (gels, geqrf, gesvd, polar); getrs's A is n x n");
  const char *const bench_wide[] = {"bench", "--routine", "gels", "--n", "8,20", "--m", "10", NULL};
  refused(bench_wide, "gels: --m 10 < --n 20");
  const char *const cal_gels[] = {"bench", "--calibrate", "--provider", "lapack", "--routine", "gels",
                                  "--out", "-", NULL};
  refused(cal_gels, "--routine gels: a cost table row");
  ASSERT_EQ(test_count_job_segments(test_job()), 0);
  return 0;
}

/* potrs --logdet --check=full: the log det the provider returned, within
 * its tolerance of check.c's independent Cholesky, in the JSON and the
 * text; by default (--check=residual) within its O(n^2) Hadamard and
 * Ostrowski bounds, no reference computed. */
TEST_IMPL(cli_solve_potrs_logdet) {
  setenv("MUSTER_PROVIDER_PATH", tp_lapack_dir(), 1);
  static const char *const cases[] = {
      "solve potrs --logdet --n 41 --ranks 3 --mode threads --dtype f32 --check=full --json",
      "solve potrs --logdet --n 41 --ranks 2 --mode processes --dtype f64 --nrhs 2 --check full --json",
      "solve potrs --logdet --n 33 --ranks 4 --mode processes --dtype c64 --check=full --json",
      "solve potrs --logdet --n 33 --ranks 1 --mode threads --dtype c128 --check=full --json",
  };
  char out[4096];
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    int rc = muster_cli(cases[i], out, sizeof out);
    double got = json_number(out, "logdet"), ref = json_number(out, "logdet_reference"),
           tol = json_number(out, "logdet_tolerance");
    if (rc != 0) fprintf(stderr, "%s -> %d: %s\n", cases[i], rc, out);
    ASSERT_EQ(rc, 0);
    ASSERT_STR_CONTAINS(out, "\"ok\":true");
    ASSERT_STR_CONTAINS(out, "\"check\":\"full\"");
    /* A = random Hermitian + n I: log det is about n log n, far from 0 */
    ASSERT(isfinite(got) && isfinite(ref) && ref > 10);
    ASSERT(fabs(got - ref) <= tol);
  }
  /* the default: bounds around it, no reference */
  ASSERT_EQ(muster_cli("solve potrs --logdet --n 41 --ranks 2 --dtype c64 --json", out, sizeof out), 0);
  ASSERT_STR_CONTAINS(out, "\"check\":\"residual\"");
  ASSERT(strstr(out, "logdet_reference") == NULL);
  double got = json_number(out, "logdet"), lo = json_number(out, "logdet_lower_bound"),
         hi = json_number(out, "logdet_upper_bound");
  ASSERT(isfinite(got) && isfinite(lo) && isfinite(hi) && lo < got && got < hi + 1e-3);
  ASSERT_EQ(muster_cli("solve potrs --logdet --n 20 --ranks 2 --check=full", out, sizeof out), 0);
  ASSERT_STR_CONTAINS(out, "  logdet    ");
  ASSERT_STR_CONTAINS(out, "(reference ");
  ASSERT_STR_CONTAINS(out, "check     ok");
  ASSERT_EQ(muster_cli("solve potrs --logdet --n 20 --ranks 2", out, sizeof out), 0);
  ASSERT_STR_CONTAINS(out, "(bounds ");
  ASSERT_STR_CONTAINS(out, "check     ok");
  ASSERT_EQ(test_count_job_segments(test_job()), 0);
  return 0;
}

/* bench getrs and gels: the LAPACKE baseline and both muster modes, each
 * row ok with a finite residual under tolerance (gels at m = 2n and --m). */
TEST_IMPL(cli_bench_getrs_gels) {
  setenv("MUSTER_PROVIDER_PATH", tp_lapack_dir(), 1);
  static const char *const cases[] = {
      "bench --routine getrs --n 40,57 --reps 1 --ranks 3 --nrhs 2 --json",
      "bench --routine gels --n 40 --reps 1 --ranks 2 --dtype c64 --json",
      "bench --routine gels --n 31,40 --m 41 --reps 1 --ranks 4 --dtype f32 --json",
  };
  static const char *const modes[] = {"lapacke", "muster-threads", "muster-processes"};
  char out[8192], key[64];
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    int rc = muster_cli(cases[i], out, sizeof out);
    if (rc != 0) fprintf(stderr, "%s -> %d: %s\n", cases[i], rc, out);
    ASSERT_EQ(rc, 0);
    for (size_t k = 0; k < 3; k++) {
      snprintf(key, sizeof key, "\"mode\":\"%s\",", modes[k]);
      const char *row = strstr(out, key);
      ASSERT(row != NULL);
      ASSERT_STR_CONTAINS(row, "\"ok\":true");
      double res = json_number(row, "residual");
      ASSERT(isfinite(res) && res >= 0 && res < 1e-3);
    }
  }
  ASSERT_STR_CONTAINS(out, "\"n\":31,\"m\":41,\"mode\":\"lapacke\"");
  ASSERT_EQ(muster_cli("bench --routine gels --n 40 --reps 1 --ranks 2 --json --modes lapacke", out, sizeof out), 0);
  ASSERT_STR_CONTAINS(out, "\"n\":40,\"m\":80,\"mode\":\"lapacke\"");
  ASSERT_EQ(test_count_job_segments(test_job()), 0);
  return 0;
}

/* geqrf, gesvd, polar through the CLI, on a tall, a wide and a square A,
 * one run in processes mode (the forms x dtypes x modes are
 * test_solve_factors.c's): residual under tolerance in the JSON; the
 * flags a routine does not take are refused (exit 2). */
TEST_IMPL(cli_solve_factors) {
  setenv("MUSTER_PROVIDER_PATH", tp_lapack_dir(), 1);
  static const char *const forms[] = {"geqrf --full", "gesvd", "gesvd --no-vectors", "polar"};
  static const char *const dtypes[] = {"f32", "f64", "c64", "c128"};
  const int ms[] = {40, 17, 29, 17};
  char args[256], out[4096], want[32];
  for (int f = 0; f < 4; f++) {
    snprintf(args, sizeof args, "solve %s --n 29 --m %d --ranks %d --mode %s --dtype %s --json", forms[f],
             ms[f], 1 + f % 4, f == 3 ? "processes" : "threads", dtypes[f % 4]);
    int rc = muster_cli(args, out, sizeof out);
    double res = json_number(out, "residual"), tol = json_number(out, "tolerance");
    if (rc != 0 || !(res < tol)) fprintf(stderr, "%s -> %d: %s\n", args, rc, out);
    ASSERT_EQ(rc, 0);
    ASSERT_STR_CONTAINS(out, "\"ok\":true");
    snprintf(want, sizeof want, "\"m\":%d,", ms[f]);
    ASSERT_STR_CONTAINS(out, want);
    ASSERT(isfinite(res) && res >= 0);
  }
  const char *const full_polar[] = {"solve", "polar", "--n", "8", "--full", NULL};
  refused(full_polar, "polar takes neither --full nor --no-vectors");
  const char *const novec_qr[] = {"solve", "geqrf", "--n", "8", "--no-vectors", NULL};
  refused(novec_qr, "geqrf takes --full, not --no-vectors");
  const char *const full_potrs[] = {"solve", "potrs", "--n", "8", "--full", NULL};
  refused(full_potrs, "--full is geqrf's and gesvd's");
  return 0;
}
