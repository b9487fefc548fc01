/*
 * tests/integration/test_solve_cli.c - `muster solve`, `muster providers`
 * and `muster bench` as a user runs them: exit status, JSON fields, the
 * check, errors on stderr, nothing left in /dev/shm.
 */
#include <limits.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "task.h"
#include "providers/tp_util.h"

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
  /* gels has no --m in the CLI yet: refused as usage, not run as a square gels */
  ASSERT_EQ(muster_cli("solve gels --n 30 --ranks 2", out, sizeof out), 2);
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
  ASSERT_EQ(test_count_job_segments(test_job()), 0);
  return 0;
}

TEST_IMPL(cli_providers_lists_refused_files) {
  char dir[256], args[600], out[8192];
  tp_dir_make(dir, sizeof dir);
  tp_link(dir, "potrs", "testprov.so", "testprov_v1.so");
  tp_link(dir, "potrs", "abi.so", "testprov_abi999.so");
  setenv("MUSTER_PROVIDER_PATH", dir, 1);
  snprintf(args, sizeof args, "providers --json");
  ASSERT_EQ(muster_cli(args, out, sizeof out), 0);
  ASSERT_STR_CONTAINS(out, "\"name\":\"testprov\"");
  ASSERT_STR_CONTAINS(out, "\"available\":true");
  ASSERT_STR_CONTAINS(out, "says ABI version 999; it must say 1");
  ASSERT_STR_CONTAINS(out, "\"available\":1}");
  ASSERT_EQ(muster_cli("providers", out, sizeof out), 0);
  ASSERT_STR_CONTAINS(out, "testprov_abi999.so");
  /* none usable: exit 1 */
  char link[400];
  snprintf(link, sizeof link, "%s/potrs/testprov.so", dir);
  unlink(link);
  ASSERT_EQ(muster_cli("providers", out, sizeof out), 1);
  tp_dir_remove(dir);
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
