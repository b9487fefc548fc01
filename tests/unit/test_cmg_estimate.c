/* tests/unit/test_cmg_estimate.c - the cusolvermg provider's ABI v2 struct
 * and its estimate() (providers/cusolvermg/estimate.c), loaded with dlopen
 * like the registry does; pure arithmetic, no GPU needed: getrs gets a
 * model scaled from the shipped potrs rows, the other routines leave the
 * choice to the cost table, and ranks sharing a GPU are refused. */
#include <dlfcn.h>
#include <limits.h>
#include <math.h>

#include "registry/cost.h"
#include "muster/layout.h"
#include "muster/provider.h"
#include "providers/tp_util.h"
#include "task.h"

static const int devs[] = {0, 1, 2, 3}, one_gpu[] = {0, 0, 0, 0};

static double est_seconds(const muster_provider_v2_t *v, void *ctx, muster_routine_t rt, muster_dtype_t dt,
                          int64_t n, int R, const int *dev, int expect_rc, char *note) {
  muster_provider_query_t q;
  memset(&q, 0, sizeof q);
  q.routine = rt;
  q.dtype = dt;
  q.n = n;
  q.nrhs = rt == MUSTER_POTRS || rt == MUSTER_GETRS;
  q.mem = MUSTER_MEM_CUDA;
  q.nranks = R;
  q.ndevices = 1;
  for (int r = 1; r < R; r++) q.ndevices += dev[r] != dev[0]; /* distinct, for the arrays used here */
  q.nnodes = 1;
  q.span = MUSTER_SPAN_THREADS;
  q.devices = dev;
  muster_provider_estimate_t est;
  memset(&est, 0, sizeof est);
  ASSERT_EQ(v->estimate(NULL, &q, &est), expect_rc);
  if (note) snprintf(note, 120, "%s", est.note);
  (void)ctx;
  return est.seconds;
}

TEST_IMPL(cmg_provider_v2_estimate) {
  const muster_provider_v2_t *v;
  void *h;
  v = tp_provider_v2("cusolvermg", MUSTER_PROVIDER_LEADER, &h);
  if (!h) return 0;
  char note[120];
  /* what it declares: getrs and potrs's log det besides the others */
  ASSERT(v->routines & (1u << MUSTER_GETRS));
  ASSERT(v->routines & MUSTER_CAP_LOGDET);
  ASSERT(!(v->routines & (1u << MUSTER_GELS)));
  ASSERT(v->estimate && v->solve && !v->collective_solve);
  const muster_provider_v1_t *v1 = dlsym(h, MUSTER_PROVIDER_SYMBOL_V1);
  ASSERT(v1 && v1->solve == v->solve && v1->routines == v->routines && v1->priority == v->priority);
  /* the routines with cost table rows: no model, the table decides */
  for (int rt = MUSTER_POTRS; rt <= MUSTER_SYEVD; rt++) {
    ASSERT(est_seconds(v, NULL, (muster_routine_t)rt, MUSTER_F64, 8192, 2, devs, 0, note) < 0);
    ASSERT_STR_CONTAINS(note, "the cost table decides");
  }
  /* getrs: a time, growing with n (about 8x per doubling at large n) */
  double prev = 0;
  for (int64_t n = 256; n <= 131072; n *= 2) {
    double t = est_seconds(v, NULL, MUSTER_GETRS, MUSTER_F64, n, 2, devs, 0, note);
    ASSERT(t > prev);
    if (n >= 65536) ASSERT(t / prev > 5.0 && t / prev < 8.5);
    prev = t;
  }
  ASSERT_STR_CONTAINS(note, "getrs model");
  /* complex: 4x the flops; f32 as f64; 4 GPUs about half of 2 */
  double f64 = est_seconds(v, NULL, MUSTER_GETRS, MUSTER_F64, 32768, 2, devs, 0, NULL);
  double c128 = est_seconds(v, NULL, MUSTER_GETRS, MUSTER_C128, 32768, 2, devs, 0, NULL);
  double f32 = est_seconds(v, NULL, MUSTER_GETRS, MUSTER_F32, 32768, 2, devs, 0, NULL);
  double four = est_seconds(v, NULL, MUSTER_GETRS, MUSTER_F64, 32768, 4, devs, 0, NULL);
  double one = est_seconds(v, NULL, MUSTER_GETRS, MUSTER_F64, 32768, 1, devs, 0, NULL);
  ASSERT_DBL_LT(fabs(c128 / f64 - 4.0), 0.05);
  ASSERT_DBL_LT(fabs(f32 / f64 - 1.0), 1e-12);
  ASSERT_DBL_LT(fabs(four / f64 - 0.5), 0.02);
  ASSERT_DBL_LT(fabs(one / f64 - 2.0), 0.02);
  /* ranks sharing a GPU: refused, for every routine, with the reason */
  for (int rt = MUSTER_POTRS; rt <= MUSTER_GETRS; rt++) {
    est_seconds(v, NULL, (muster_routine_t)rt, MUSTER_F64, 1000, 2, one_gpu, MUSTER_EUNSUPPORTED, note);
    ASSERT_STR_CONTAINS(note, "2 ranks on 1 GPU(s): cuSolverMg needs one GPU per rank");
  }
  /* the facts unknown (muster_provider_choose before any shard): assume it fits */
  muster_provider_query_t q;
  muster_provider_estimate_t est;
  memset(&q, 0, sizeof q);
  q.routine = MUSTER_GETRS;
  q.dtype = MUSTER_C64;
  q.n = 4096;
  q.nrhs = 1;
  q.nranks = 3;
  ASSERT_OK(v->estimate(NULL, &q, &est));
  ASSERT(est.seconds > 0);
  ASSERT_STR_CONTAINS(est.note, "3 GPU(s)");
  dlclose(h);
  return 0;
}

/* The getrs model is the shipped potrs rows scaled by LU's flops (2x):
 * within 10% of twice each f64 2-GPU potrs row of cusolvermg.cost.  Fails
 * when the table is re-measured and the model's fit is not. */
TEST_IMPL(cmg_estimate_scales_potrs_rows) {
  const muster_provider_v2_t *v;
  void *h;
  v = tp_provider_v2("cusolvermg", MUSTER_PROVIDER_LEADER, &h);
  if (!h) return 0;
  muster__cost_t *t = NULL;
  char why[256], note[256], table[PATH_MAX];
  test_data_path(table, sizeof table, "providers/cusolvermg/cusolvermg.cost");
  ASSERT_OK(muster__cost_read(table, &t, why, sizeof why));
  static const int64_t ns[] = {8192, 16384, 32768, 65536};
  for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++) {
    double potrs = 0, getrs = est_seconds(v, NULL, MUSTER_GETRS, MUSTER_F64, ns[i], 2, devs, 0, NULL);
    ASSERT_OK(muster__cost_lookup(t, MUSTER_POTRS, MUSTER_F64, 2, ns[i], 1, &potrs, note, sizeof note));
    ASSERT_STR_CONTAINS(note, "measured at");
    fprintf(stderr, "n=%lld: potrs row %.4f s, getrs model %.4f s (ratio %.2f)\n", (long long)ns[i], potrs, getrs,
            getrs / potrs);
    ASSERT_DBL_LT(fabs(getrs / (2.0 * potrs) - 1.0), 0.10);
  }
  muster__cost_free(t);
  dlclose(h);
  return 0;
}
