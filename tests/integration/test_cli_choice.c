/*
 * tests/integration/test_cli_choice.c - the engine choice as the CLI shows
 * it: `muster solve --json` prints the provider and the reason; on a
 * stand-in CUDA runtime (fakecudart: 2 "GPUs", free memory from
 * FAKECUDA_FREE_MB) a provider whose estimate needs more memory than a GPU
 * has is passed over for one that fits, from the device facts every rank
 * published (the query counts GPUs by bus id: 3 ranks on GPUs 0,1,0 are 2
 * devices); `muster bench --calibrate` writes a cost table the runtime then
 * uses.
 */
#include <limits.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "task.h"
#include "muster.h"
#include "registry/cost.h"
#include "providers/tp_util.h"
#include "test_v2_util.h"

TEST_IMPL(cli_choice_memory_refusal_fake_cuda) {
  char dir[256], fake[PATH_MAX + 64], qlog[320], out[8192], err[8192];
  test_tmp_dir(dir, sizeof dir);
  tp_link(dir, "potrs", "bigcuda.so", "testprov_bigcuda2.so");     /* priority 300 */
  tp_link(dir, "potrs", "smallcuda.so", "testprov_smallcuda2.so"); /* priority 250 */
  setenv("MUSTER_PROVIDER_PATH", dir, 1);
  unsetenv("MUSTER_PROVIDER");
  snprintf(fake, sizeof fake, "%s/fakecuda", tp_build_dir());
  setenv("LD_LIBRARY_PATH", fake, 1);
  snprintf(qlog, sizeof qlog, "%s/query.log", dir);
  setenv("TESTPROV_QLOG", qlog, 1);
  setenv("TESTPROV_EST", "bigcuda=need500", 1);
  for (int processes = 0; processes < 2; processes++) {
    /* 100 MiB free on each GPU: bigcuda does not fit */
    setenv("FAKECUDA_FREE_MB", "100", 1);
    const char *args = processes ? "solve potrs --n 40 --ranks 3 --mode processes --json"
                                 : "solve potrs --n 40 --ranks 3 --json";
    int rc = tp_cli(args, out, sizeof out, err, sizeof err);
    fprintf(stderr, "%s -> %d\n%s%s", args, rc, out, err);
    if (processes) {
      /* the test providers cannot import device memory from other
       * processes: the chosen one names itself in the error */
      ASSERT_STR_CONTAINS(err, "provider smallcuda cannot import rank 1's device memory");
    } else {
      ASSERT_STR_CONTAINS(out, "\"provider\":\"smallcuda\",\"mem\":\"cuda\",\"devices\":[0,1,0],\"reason\":");
      ASSERT_STR_CONTAINS(out, "not bigcuda: estimate refused: needs 500 MiB, rank 0's device 0 has 100 MiB free");
      ASSERT(strstr(out, "\"error\"") == NULL);
    }
    /* the facts rank 0 chose from: 3 ranks on 2 GPUs, their free memory */
    ASSERT_GE(v2_count_lines(qlog, "bigcuda routine=1 n=40 nrhs=1 nranks=3 ndevices=2 nnodes=1 span="), 1);
    ASSERT_GE(v2_count_lines(qlog, processes ? "bigcuda routine=1 n=40 nrhs=1 nranks=3 ndevices=2 nnodes=1 "
                                               "span=2 mem=2 free0=100MiB free1=100MiB free2=100MiB"
                                             : "bigcuda routine=1 n=40 nrhs=1 nranks=3 ndevices=2 nnodes=1 "
                                               "span=1 mem=2 free0=100MiB free1=100MiB free2=100MiB"), 1);
    /* 1000 MiB: it fits, and its estimate makes it the fastest known */
    setenv("FAKECUDA_FREE_MB", "1000", 1);
    if (!processes) {
      ASSERT_EQ(tp_cli("solve potrs --n 40 --ranks 3 --json", out, sizeof out, err, sizeof err), 1);
      ASSERT_STR_CONTAINS(out, "\"provider\":\"bigcuda\"");
      ASSERT_STR_CONTAINS(out, "\"reason\":\"fastest known: 0.001 s (estimate: fits (needs 500 MiB), peak 0.49 GiB on one device); "
                               "smallcuda has no estimate or cost table\"");
    }
    unlink(qlog);
  }
  unsetenv("FAKECUDA_FREE_MB");
  unsetenv("TESTPROV_EST");
  unsetenv("TESTPROV_QLOG");
  unsetenv("LD_LIBRARY_PATH");
  test_remove_tree(dir);
  ASSERT_EQ(test_count_job_segments(test_job()), 0);
  return 0;
}

TEST_IMPL(cli_bench_calibrate) {
#ifdef __SANITIZE_THREAD__
  setenv("OPENBLAS_NUM_THREADS", "1", 0);
#endif
  char dir[256], args[700], file[400], out[8192], err[8192];
  test_tmp_dir(dir, sizeof dir);
  setenv("MUSTER_PROVIDER_PATH", tp_lapack_dir(), 1);
  unsetenv("MUSTER_PROVIDER");
  unsetenv("MUSTER_COST_PATH");
  snprintf(file, sizeof file, "%s/lapack.cost", dir);
  snprintf(args, sizeof args, "bench --calibrate --provider lapack --routine potrs --dtype f64,f32 "
           "--n 16,48 --ranks 1,3 --reps 3 --warmup 0 --out %s", file);
  ASSERT_EQ(tp_cli(args, out, sizeof out, err, sizeof err), 0);
  ASSERT_STR_CONTAINS(err, "wrote ");
  muster__cost_t *t = NULL;
  char why[256];
  ASSERT_OK(muster__cost_read(file, &t, why, sizeof why));
  ASSERT_EQ(t->nrows, 2 * 2 * 2);
  int seen = 0;
  for (int i = 0; i < t->nrows; i++) {
    const muster__cost_row_t *r = &t->rows[i];
    ASSERT_EQ(r->routine, MUSTER_POTRS);
    ASSERT(r->ndevices == 1 || r->ndevices == 3); /* host memory: one "device" per rank */
    ASSERT(r->n == 16 || r->n == 48);
    ASSERT_EQ(r->nrhs, 1);
    ASSERT(r->seconds > 0 && r->seconds < 5);
    seen |= (r->dtype == MUSTER_F32) << 0 | (r->dtype == MUSTER_F64) << 1;
  }
  ASSERT_EQ(seen, 3);
  muster__cost_free(t);
  /* the runtime reads it (MUSTER_COST_PATH), and says so */
  setenv("MUSTER_COST_PATH", dir, 1);
  ASSERT_EQ(tp_cli("solve potrs --n 32 --ranks 3 --json", out, sizeof out, err, sizeof err), 0);
  ASSERT_STR_CONTAINS(out, "\"provider\":\"lapack\"");
  ASSERT_STR_CONTAINS(out, "(cost table lapack.cost: interpolated between n=16 and 48)");
  unsetenv("MUSTER_COST_PATH");
  /* --devices 0 (GPU 0, the entry a one-GPU machine needs) is a device, not a bad count */
  ASSERT_EQ(tp_cli("bench --calibrate --provider lapack --n 16 --ranks 1 --devices 0 --reps 1 "
                   "--warmup 0 --out -", out, sizeof out, err, sizeof err), 0);
  ASSERT_STR_CONTAINS(out, "potrs f64 1 16 1 ");
  /* errors: what it needs, a provider that is not there (no file left) */
  ASSERT_EQ(tp_cli("bench --calibrate --provider lapack", out, sizeof out, err, sizeof err), 2);
  ASSERT_STR_CONTAINS(err, "needs --provider and --out");
  snprintf(args, sizeof args, "bench --calibrate --provider nosuch --n 16 --out %s/x.cost", dir);
  ASSERT_EQ(tp_cli(args, out, sizeof out, err, sizeof err), 1);
  ASSERT_STR_CONTAINS(err, "'nosuch'");
  snprintf(file, sizeof file, "%s/x.cost", dir);
  struct stat st;
  ASSERT(stat(file, &st) != 0);
  ASSERT_EQ(tp_cli("bench --calibrate --help", out, sizeof out, err, sizeof err), 0);
  ASSERT_STR_CONTAINS(out, "routine dtype ndevices n nrhs seconds");
  test_remove_tree(dir);
  ASSERT_EQ(test_count_job_segments(test_job()), 0);
  return 0;
}
