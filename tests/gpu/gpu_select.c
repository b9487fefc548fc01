/* tests/gpu/gpu_select.c - gpu-test's --smoke and --part K/N
 * (gpu_select.h). */
#include <stdlib.h>
#include <string.h>

#include "gpu_select.h"

/* ---- estimated seconds ----------------------------------------------------------- */

static int is_mp(const tcase_t *c) { return !strcmp(c->prov->name, "cusolvermp"); }
int gs_batched(const tcase_t *c) { return !c->special && c->mode != M_PROCS; }
/* cusolverdn's memory and workspace checks: specials without a matrix of
 * their own (n = 1) */
static int is_check_only(const tcase_t *c) { return c->special && c->special != gc_kill && c->n <= 1; }

/* The numbers behind it (H200; docs/gpu-testing.md, docs/gpu-runs.md, the logs under
 * docs/performance/data and the coordinator's runs): cusolvermg's cases
 * with n ~ 1000 take 0.01-0.1 s (syevd 0.1-0.4 s) in the threads batch,
 * 0.6-0.9 s in a process of their own on 1 GPU and 0.9-1.3 s on 2;
 * cusolverdn's alike; syevd f64 n = 12288 takes cuSolverMg 3.7 s on 2
 * GPUs; potrs n = 8192 with 2100 right-hand sides 2.5 s; a kill case
 * 1.7-4.4 s.  On 4 H200 the first 404 cases of run-gpu-tests.sh (the
 * batch, then the process cases of 1 to 3 GPUs) took 250 s.  cusolvermp
 * was not timed per case: each of its groups makes an NCCL communicator and
 * a cuSOLVERMp handle; `muster solve` on 1 rank took it 1.7 s a run (one
 * H200), and the 23 runs of 2 processes in run-mp-tests.sh more than 270 s
 * on 4 H200: 2 s + 4 s per rank past the first (run-mp-tests.sh --list
 * estimates its runs the same way). */
double gs_cost(const tcase_t *c) {
  int mp = is_mp(c), dn = !strcmp(c->prov->name, "cusolverdn"), syevd = c->routine == MUSTER_SYEVD;
  if (c->special == gc_kill) return mp ? 25.0 : 5.0; /* cusolvermp's has a warm-up solve */
  if (is_check_only(c)) return 4.0;
  /* start-up: the case's process(es), CUDA, the provider's handles */
  double start;
  if (gs_batched(c)) start = mp ? 1.5 : 0.02;
  else start = mp ? 2.0 + 4.0 * (c->R - 1) : dn ? 0.55 + 0.1 * c->R : 0.35 + 0.27 * c->R;
  /* per solve: a fixed part (cuSolverMg's grows with the GPUs, its syevd's
   * most), the factorization (n^3; m n^2 for gels), the right-hand sides
   * and their residuals (A regenerated per column panel) */
  double fixed = dn ? (syevd ? 0.08 : 0.03) : (syevd ? 0.08 : 0.02) * c->R;
  double rows = (double)(c->m > c->n ? c->m : c->n), n3 = (double)c->n * c->n * rows / (4096.0 * 4096.0 * 4096.0);
  double k = syevd ? 0.15 : c->routine == MUSTER_POTRI ? 0.05 : 0.03;
  if (c->dtype == MUSTER_C64 || c->dtype == MUSTER_C128) k *= 3.0;
  double rhs = 1.5 * (double)c->nrhs * (double)c->n * (double)c->n / (2100.0 * 8192.0 * 8192.0);
  double t = start + c->reps * (fixed + k * n3 + rhs);
  /* 3 and 4 GPUs cost more than the per-rank terms say: x1.8 brings the
   * 4-GPU run's first 404 cases to its 250 s */
  return c->ngpus >= 3 && !mp ? 1.8 * t : t;
}

/* ---- the smoke ---------------------------------------------------------------------- */

static int same_key(const tcase_t *a, const tcase_t *b) {
  return a->routine == b->routine && a->mode == b->mode && a->ngpus == b->ngpus &&
         (a->special == gc_kill) == (b->special == gc_kill);
}

static int smoke_candidate(const tcase_t *c) {
  if (c->ngpus != 1 && c->ngpus != 2 && c->ngpus != 4) return 0;
  if (c->special == gc_kill) return c->victim == 0;
  /* a refusal (cusolvermp's gels on several processes) is what that routine
   * does there: the smoke keeps it; other expected failures are fault cases */
  if (is_check_only(c) || (c->expect && c->expect != MUSTER_EUNSUPPORTED) || c->nan_in || c->zero_col) return 0;
  return !is_mp(c) || c->mode == M_PROCS; /* cusolvermp: one process per GPU */
}

int gs_smoke(tcase_t *cases, int n) {
  static const muster_dtype_t rot[4] = {MUSTER_F32, MUSTER_F64, MUSTER_C64, MUSTER_C128};
  static int keys[GC_MAX_CASES], sel[GC_MAX_CASES];
  int nkeys = 0, nsel = 0, turn = 0, killed = 0;
  for (int i = 0; i < n; i++) {
    if (!smoke_candidate(&cases[i])) continue;
    int seen = 0;
    for (int k = 0; k < nkeys && !seen; k++) seen = same_key(&cases[keys[k]], &cases[i]);
    if (seen) continue;
    keys[nkeys++] = i;
    if (cases[i].special == gc_kill) {
      if (!killed++) sel[nsel++] = i;
      continue;
    }
    /* the key's first case in the next dtype of the rotation it has */
    int pick = -1;
    for (int d = 0; d < 4 && pick < 0; d++)
      for (int j = i; j < n && pick < 0; j++)
        if (smoke_candidate(&cases[j]) && same_key(&cases[j], &cases[i]) && cases[j].dtype == rot[(turn + d) % 4]) {
          pick = j;
          turn += d + 1;
        }
    sel[nsel++] = pick;
  }
  /* back into list order (a pick may lie after a later key's first case) */
  for (int a = 1; a < nsel; a++)
    for (int b = a; b > 0 && sel[b - 1] > sel[b]; b--) {
      int t = sel[b];
      sel[b] = sel[b - 1];
      sel[b - 1] = t;
    }
  for (int k = 0; k < nsel; k++) { /* sel ascending, sel[k] >= k: moving down is safe */
    cases[k] = cases[sel[k]];
    if (cases[k].special != gc_kill) cases[k].reps = 1;
  }
  return nsel;
}

/* ---- parts -------------------------------------------------------------------------- */

static double *sort_cost; /* qsort has no context argument */

static int by_cost_desc(const void *pa, const void *pb) {
  int a = *(const int *)pa, b = *(const int *)pb;
  if (sort_cost[a] != sort_cost[b]) return sort_cost[a] > sort_cost[b] ? -1 : 1;
  return a - b;
}

int gs_part(tcase_t *cases, int n, int k, int parts, double *est_s) {
  static int order[GC_MAX_CASES], part_of[GC_MAX_CASES];
  static double cost[GC_MAX_CASES];
  double load[64] = {0};
  if (parts < 1 || parts > 64 || k < 1 || k > parts) return -1;
  for (int i = 0; i < n; i++) {
    order[i] = i;
    cost[i] = gs_cost(&cases[i]);
  }
  sort_cost = cost;
  qsort(order, (size_t)n, sizeof order[0], by_cost_desc);
  for (int i = 0; i < n; i++) {
    int best = 0;
    for (int p = 1; p < parts; p++)
      if (load[p] < load[best]) best = p;
    part_of[order[i]] = best;
    load[best] += cost[order[i]];
  }
  int keep = 0;
  for (int i = 0; i < n; i++)
    if (part_of[i] == k - 1) cases[keep++] = cases[i];
  *est_s = load[k - 1];
  return keep;
}
