/*
 * tests/integration/test_solve_cli_gpu.c - how `muster solve` chooses its
 * provider and memory, and its GPU mode where no GPU works: a CUDA-only
 * provider that cannot run here is a clear error (exit 1, the probe's
 * reason, JSON "mem":"cuda"); the default provider and $MUSTER_PROVIDER
 * decide host or GPU mode; GPU mode failing at its first CUDA call (no
 * driver, or a GPU that does not exist) ends every rank at once, in threads
 * and processes mode; --devices syntax errors are usage errors (exit 2).
 * Nothing may be left in /dev/shm.  (The GPU runs themselves:
 * tests/gpu/run-cli-gpu.sh on a GPU machine.)
 */
#include <limits.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "task.h"
#include "muster.h"
#include "providers/tp_util.h"

/* The build's entry for `name` on the current MUSTER_PROVIDER_PATH: 1 found
 * (copied to out), 0 not there (cusolvermg is built only where nvcc is). */
static int provider_entry(const char *name, muster_provider_info_t *out) {
  muster_provider_info_t list[16];
  ASSERT_OK(muster_providers_rescan());
  int n = muster_providers_list(list, 16);
  ASSERT_GE(n, 1);
  for (int i = 0; i < n && i < 16; i++)
    if (!strcmp(list[i].name, name)) {
      *out = list[i];
      return 1;
    }
  return 0;
}

TEST_IMPL(cli_solve_gpu_provider_unusable) {
  setenv("MUSTER_PROVIDER_PATH", tp_lapack_dir(), 1);
  unsetenv("MUSTER_PROVIDER");
  muster_provider_info_t cmg;
  int have = provider_entry("cusolvermg", &cmg);
  static const char *cases[] = {
      "solve potrs --n 64 --ranks 2 --mode threads --provider cusolvermg --json",
      "solve syevd --n 64 --ranks 2 --mode processes --dtype c64 --provider cusolvermg --json",
  };
  char out[4096], err[4096];
  for (int env = 0; env < 2; env++) {
    for (size_t i = 0; i < 2; i++) {
      char args[256];
      snprintf(args, sizeof args, "%s", cases[i]);
      if (env) { /* the same through $MUSTER_PROVIDER instead of --provider */
        setenv("MUSTER_PROVIDER", "cusolvermg", 1);
        *strstr(args, " --provider") = '\0';
        strcat(args, " --json");
      }
      int rc = tp_cli(args, out, sizeof out, err, sizeof err);
      fprintf(stderr, "%s -> %d\n  stdout %s  stderr %s", args, rc, out, err);
      if (have && cmg.available) { /* a machine with GPUs: it runs */
        ASSERT_EQ(rc, 0);
        ASSERT_STR_CONTAINS(out, "\"provider\":\"cusolvermg\",\"mem\":\"cuda\"");
        ASSERT_STR_CONTAINS(out, "\"ok\":true");
      } else if (have) { /* here: the probe's reason, e.g. no CUDA driver */
        ASSERT_EQ(rc, 1);
        ASSERT(cmg.why[0] != '\0');
        ASSERT_STR_CONTAINS(out, "\"provider\":\"cusolvermg\",\"mem\":\"cuda\",\"devices\":[-1,-1]");
        ASSERT_STR_CONTAINS(out, "\"ok\":false");
        ASSERT_STR_CONTAINS(out, "cannot run here");
        ASSERT_STR_CONTAINS(err, "muster solve: ");
        ASSERT_STR_CONTAINS(err, "provider 'cusolvermg'");
        ASSERT_STR_CONTAINS(err, cmg.why);
      } else { /* not built: the runtime names it */
        ASSERT_EQ(rc, 1);
        ASSERT_STR_CONTAINS(err, "'cusolvermg'");
      }
    }
    unsetenv("MUSTER_PROVIDER");
  }
  ASSERT_EQ(test_count_job_segments(test_job()), 0);
  return 0;
}

TEST_IMPL(cli_solve_default_provider_host) {
  setenv("MUSTER_PROVIDER_PATH", tp_lapack_dir(), 1);
  unsetenv("MUSTER_PROVIDER");
  muster_provider_info_t cmg;
  int gpu = provider_entry("cusolvermg", &cmg) && cmg.available;
  const char *expect = gpu ? "\"provider\":\"cusolvermg\",\"mem\":\"cuda\",\"devices\":[0,"
                           : "\"provider\":\"lapack\",\"mem\":\"host\",\"devices\":[-1,-1]";
  char out[4096], err[4096];
  static const char *cases[] = {
      "solve potrs --n 48 --ranks 2 --mode threads --json",
      "solve syevd --n 40 --ranks 2 --mode processes --dtype f32 --json",
  };
  for (size_t i = 0; i < 2; i++) {
    int rc = tp_cli(cases[i], out, sizeof out, err, sizeof err);
    if (rc != 0) fprintf(stderr, "%s -> %d: %s %s\n", cases[i], rc, out, err);
    ASSERT_EQ(rc, 0);
    ASSERT_STR_CONTAINS(out, expect);
    ASSERT_STR_CONTAINS(out, "\"ok\":true");
  }
  /* the text form names the memory only in GPU mode */
  ASSERT_EQ(tp_cli("solve potri --n 30 --ranks 3", out, sizeof out, err, sizeof err), 0);
  ASSERT_STR_CONTAINS(out, gpu ? "mem=cuda" : "provider=lapack");
  if (!gpu) ASSERT(strstr(out, "mem=") == NULL);
  /* $MUSTER_PROVIDER chooses the host provider even where a GPU one wins;
   * --devices is ignored on the host */
  setenv("MUSTER_PROVIDER", "lapack", 1);
  ASSERT_EQ(tp_cli("solve potrs --n 33 --ranks 2 --mode processes --devices 1,0 --json", out, sizeof out, err,
                sizeof err), 0);
  ASSERT_STR_CONTAINS(out, "\"provider\":\"lapack\",\"mem\":\"host\",\"devices\":[-1,-1]");
  unsetenv("MUSTER_PROVIDER");
  ASSERT_EQ(test_count_job_segments(test_job()), 0);
  return 0;
}

/* A folder with the build's lapack and the test provider cudaprov (CUDA
 * memory only, priority 200, available): the default is GPU mode. */
static void gpu_dir(char *dir, size_t cap) {
  char lapack[PATH_MAX + 64];
  test_tmp_dir(dir, cap);
  snprintf(lapack, sizeof lapack, "%s/lapack.so", tp_lapack_dir());
  static const char *routines[] = {"potrs", "potri", "syevd"};
  for (int i = 0; i < 3; i++) {
    tp_link_abs(dir, routines[i], "lapack.so", lapack);
    tp_link(dir, routines[i], "cudaprov.so", "testprov_cuda.so");
  }
  setenv("MUSTER_PROVIDER_PATH", dir, 1);
}

TEST_IMPL(cli_solve_gpu_mode_fails_cleanly) {
  char dir[256], out[4096], err[4096];
  gpu_dir(dir, sizeof dir);
  unsetenv("MUSTER_PROVIDER");
  setenv("MUSTER_TIMEOUT", "30", 1); /* a rank left waiting would show as a slow run */
  /* --devices 63: no driver here fails at cudaGetDeviceCount, and where
   * GPUs work GPU 63 does not exist: either way the stand-in provider (which
   * would write to device memory from the host) is never reached */
  static const char *cases[] = {
      "solve potrs --n 64 --ranks 2 --mode threads --devices 63 --json",
      "solve potri --n 64 --ranks 2 --mode processes --devices 63 --json",
      "solve syevd --n 64 --ranks 3 --mode processes --devices 0,63 --json",
  };
  for (size_t i = 0; i < 3; i++) {
    double t0 = test_now();
    int rc = tp_cli(cases[i], out, sizeof out, err, sizeof err);
    double dt = test_now() - t0;
    fprintf(stderr, "%s -> %d in %.2f s\n  stdout %s  stderr %s", cases[i], rc, dt, out, err);
    ASSERT_EQ(rc, 1);
    ASSERT_DBL_LT(dt, 10.0);
    ASSERT_STR_CONTAINS(out, "\"provider\":\"cudaprov\",\"mem\":\"cuda\"");
    ASSERT_STR_CONTAINS(out, "\"ok\":false");
    ASSERT_STR_CONTAINS(out, "\"error\":");
    ASSERT_STR_CONTAINS(err, "muster solve: ");
    /* the reason: the CUDA call and its error, or the missing library */
    ASSERT(strstr(err, "cudaGetDeviceCount failed: cuda") || strstr(err, "GPU 63 does not exist") ||
           strstr(err, "cannot load the CUDA runtime"));
    ASSERT_STR_CONTAINS(err, i == 0 ? "cannot use the GPUs: " : "cannot use its GPU: ");
  }
  /* per routine: potrs on cudaprov (GPU mode), syevd on the host */
  setenv("MUSTER_PROVIDER", "potrs=cudaprov,syevd=lapack", 1);
  ASSERT_EQ(tp_cli("solve syevd --n 40 --ranks 2 --mode processes --devices 63 --json", out, sizeof out, err,
                sizeof err), 0);
  ASSERT_STR_CONTAINS(out, "\"provider\":\"lapack\",\"mem\":\"host\"");
  ASSERT_EQ(tp_cli("solve potrs --n 40 --ranks 2 --devices 63 --json", out, sizeof out, err, sizeof err), 1);
  ASSERT_STR_CONTAINS(out, "\"mem\":\"cuda\"");
  /* --provider beats both */
  ASSERT_EQ(tp_cli("solve potrs --n 40 --ranks 2 --provider lapack --json", out, sizeof out, err, sizeof err), 0);
  ASSERT_STR_CONTAINS(out, "\"provider\":\"lapack\",\"mem\":\"host\"");
  unsetenv("MUSTER_PROVIDER");
  test_remove_tree(dir);
  ASSERT_EQ(test_count_job_segments(test_job()), 0);
  return 0;
}

TEST_IMPL(cli_solve_devices_usage) {
  setenv("MUSTER_PROVIDER_PATH", tp_lapack_dir(), 1);
  char out[4096], err[4096];
  static const char *bad[] = {"''", "a", "0,", ",0", "-1", "1,,2", "0,1x", "'0;1'", "4096",
                              "0,1,2,3,4,5,6,7,8,9,0,1,2,3,4,5,6,7,8,9,0,1,2,3,4,5,6,7,8,9,0,1,2,3,"
                              "4,5,6,7,8,9,0,1,2,3,4,5,6,7,8,9,0,1,2,3,4,5,6,7,8,9,0,1,2,3,4"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    char args[512];
    snprintf(args, sizeof args, "solve potrs --n 16 --devices %s", bad[i]);
    int rc = tp_cli(args, out, sizeof out, err, sizeof err);
    if (rc != 2) fprintf(stderr, "%s -> %d: %s\n", args, rc, err);
    ASSERT_EQ(rc, 2);
    ASSERT_STR_CONTAINS(err, "muster solve: --devices: "); /* names the option, quotes the value */
    ASSERT_STR_CONTAINS(err, "'");
    ASSERT_STR_CONTAINS(err, "; see 'muster solve --help'\n"); /* one line, no help dump */
    ASSERT(strstr(err, "usage:") == NULL);
  }
  ASSERT_EQ(tp_cli("solve potrs --n 16 --devices", out, sizeof out, err, sizeof err), 2);
  ASSERT_STR_CONTAINS(err, "option '--devices' needs a value");
  ASSERT_EQ(tp_cli("solve --help", out, sizeof out, err, sizeof err), 0);
  ASSERT_STR_CONTAINS(out, "--devices LIST");
  ASSERT_EQ(test_count_job_segments(test_job()), 0);
  return 0;
}

/* GPU mode end to end on a stand-in CUDA runtime (tests/providers/
 * fakecudart.c: 2 "GPUs" whose memory is malloc'ed) and the stand-in
 * provider cudaprov: the shards go to the ranks' GPUs and come back, and a
 * CUDA failure on one rank (cudaMalloc, cudaMemcpy) ends every rank at
 * once with that rank's message, in threads and processes mode. */
TEST_IMPL(cli_solve_gpu_mode_fake_cuda) {
  char dir[256], fake[PATH_MAX + 64], out[4096], err[4096];
  gpu_dir(dir, sizeof dir);
  unsetenv("MUSTER_PROVIDER");
  setenv("MUSTER_TIMEOUT", "30", 1);
  snprintf(fake, sizeof fake, "%s/fakecuda", tp_build_dir());
  setenv("LD_LIBRARY_PATH", fake, 1);
  /* threads: the provider ran on device memory (rank r on GPU r % 2, or
   * --devices); it writes markers, not a solution, so the check fails (exit
   * 1) but without an error, and X came back from the "GPUs" (a zero X
   * would give residual null) */
  ASSERT_EQ(tp_cli("solve potrs --n 40 --ranks 3 --json", out, sizeof out, err, sizeof err), 1);
  fprintf(stderr, "%s%s", out, err);
  ASSERT_STR_CONTAINS(out, "\"provider\":\"cudaprov\",\"mem\":\"cuda\",\"devices\":[0,1,0]");
  ASSERT_STR_CONTAINS(out, "\"ranks_agree\":true,\"ok\":false}");
  ASSERT(strstr(out, "\"residual\":null") == NULL);
  ASSERT_EQ(tp_cli("solve syevd --n 40 --ranks 3 --devices 1,1,0 --json", out, sizeof out, err, sizeof err), 1);
  ASSERT_STR_CONTAINS(out, "\"devices\":[1,1,0]");
  ASSERT(strstr(out, "\"error\"") == NULL);
  ASSERT_EQ(tp_cli("solve potrs --n 40 --ranks 2 --devices 0,2 --json", out, sizeof out, err, sizeof err), 1);
  ASSERT_STR_CONTAINS(err, "cannot use the GPUs: rank 1: GPU 2 does not exist (cudaGetDeviceCount gave 2)");
  /* processes: every child sets its GPU and allocates there; the leader
   * then needs the provider's leader_import, which cudaprov lacks */
  ASSERT_EQ(tp_cli("solve potri --n 40 --ranks 2 --mode processes --json", out, sizeof out, err, sizeof err), 1);
  ASSERT_STR_CONTAINS(out, "\"mem\":\"cuda\",\"devices\":[0,1]");
  ASSERT_STR_CONTAINS(err, "cannot import rank 1's device memory");
  static const struct {
    const char *env, *args, *msg;
  } fails[] = {
      {"FAKECUDA_FAIL_MALLOC", "solve potri --n 40 --ranks 3 --json",
       "rank 1 (pid %d, device 1): cannot allocate its shard: cudaMalloc("},
      {"FAKECUDA_FAIL_MALLOC", "solve potri --n 40 --ranks 3 --mode processes --json",
       "rank 1 (pid %d, device 1): cannot allocate its shard: cudaMalloc("},
      {"FAKECUDA_FAIL_MEMCPY", "solve potrs --n 40 --ranks 2 --json",
       "rank 1 (pid %d, device 1): copying its shard to the GPU: cudaMemcpy("},
      {"FAKECUDA_FAIL_MEMCPY", "solve syevd --n 40 --ranks 2 --mode processes --json",
       "rank 1 (pid %d, device 1): copying its shard to the GPU: cudaMemcpy("},
  };
  for (size_t i = 0; i < sizeof fails / sizeof fails[0]; i++) {
    setenv(fails[i].env, "1", 1);
    double t0 = test_now();
    int rc = tp_cli(fails[i].args, out, sizeof out, err, sizeof err);
    double dt = test_now() - t0;
    unsetenv(fails[i].env);
    fprintf(stderr, "%s=1 %s -> %d in %.2f s: %s", fails[i].env, fails[i].args, rc, dt, err);
    ASSERT_EQ(rc, 1);
    ASSERT_DBL_LT(dt, 10.0); /* nobody waited for the failed rank */
    ASSERT_STR_CONTAINS(out, "\"error\":\"CUDA error\"");
    /* the failed rank's own words, in every mode (pid: whatever it was) */
    const char *cut = strstr(fails[i].msg, "pid %d");
    char before[64], after[128];
    snprintf(before, sizeof before, "%.*s", (int)(cut - fails[i].msg), fails[i].msg);
    snprintf(after, sizeof after, "%s", cut + strlen("pid %d"));
    ASSERT_STR_CONTAINS(err, before);
    ASSERT_STR_CONTAINS(err, after);
    ASSERT_STR_CONTAINS(err, "(fake)");
  }
  unsetenv("LD_LIBRARY_PATH");
  test_remove_tree(dir);
  ASSERT_EQ(test_count_job_segments(test_job()), 0);
  return 0;
}
