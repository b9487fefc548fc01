/*
 * docs/examples/solve.c - a collective solve: A X = B with A symmetric
 * positive definite, its columns spread over R threads, one per "device"
 * (here the host, device -1).  Every thread joins the group, calls
 * muster_solve with its own shard, and gets all of X back; the leader ran
 * the provider once with every shard.
 *
 *   solve [N] [R]       (default: 103 4)
 *
 * Each rank checks its X by the scaled residual |A X - B| / (|A| |X| n eps).
 * Prints "solve: ... ok"; on a failure, what failed and exit status 1.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "example.h"

#define NRHS 3
#define GROUP "example.solve"

typedef struct job {
  unsigned seed;            /* of the random A and B                  */
  int64_t n;
  int nranks;
  double residual[MUSTER_MAX_RANKS];  /* each rank's                  */
  muster_solve_result_t res;          /* rank 0's                     */
} job_t;

/* One rank, in a thread of its own with its device current. */
static int rank_main(int rank, int device, void *arg) {
  job_t *job = arg;
  int64_t n = job->n, col0, ncols;
  double *a = NULL, *b = NULL;
  muster_group_t *g = NULL;
  muster_solve_result_t res;
  int rc;

  /* This rank's columns of A in the block layout: [col0, col0 + ncols). */
  CHECK(muster_layout_block_cols(n, job->nranks, rank, &col0, &ncols));
  a = malloc(sizeof *a * (size_t)(n * (ncols ? ncols : 1)));
  b = malloc(sizeof *b * (size_t)(n * NRHS));
  EXPECT(a && b, "rank %d: out of memory", rank);
  for (int64_t j = 0; j < ncols; j++) /* column-major, leading dimension n */
    for (int64_t i = 0; i < n; i++) a[j * n + i] = example_a(job->seed, n, i, col0 + j);
  for (int64_t k = 0; k < NRHS; k++) /* every rank holds all of B */
    for (int64_t i = 0; i < n; i++) b[k * n + i] = example_b(job->seed, i, k);

  muster_group_opts_t opts = {.job = NULL, .timeout_s = 0, .device = device};
  muster_solve_args_t args = {.routine = MUSTER_POTRS, .dtype = MUSTER_F64, .n = n,
                              .nrhs = NRHS, .tile = 0 /* the provider's choice */,
                              .layout = MUSTER_LAYOUT_BLOCK, .flags = 0,
                              .provider = NULL /* $MUSTER_PROVIDER, else the best */};
  muster_shard_t mine = {.mem = MUSTER_MEM_HOST, .device = -1, .a = a, .lda = n,
                         .col0 = col0, .ncols = ncols, .b = b, .ldb = n};
  CHECK(muster_group_join(GROUP, rank, job->nranks, &opts, &g));
  /* Every rank passes the same args; A's columns become the Cholesky
   * factor's, b becomes X on every rank. */
  CHECK(muster_solve(g, &args, &mine, &res));
  job->residual[rank] = example_potrs_residual(job->seed, n, NRHS, b);
  if (rank == 0) job->res = res;
out:
  rc = example_leave(g, rc);
  free(a);
  free(b);
  return rc;
}

int main(int argc, char **argv) {
  job_t job = {.seed = (unsigned)time(NULL) ^ (unsigned)getpid(),
               .n = argc > 1 ? atoll(argv[1]) : 103, .nranks = argc > 2 ? atoi(argv[2]) : 4};
  int devices[MUSTER_MAX_RANKS], rc;
  double worst = 0;
  if (job.n < 1 || job.nranks < 1 || job.nranks > MUSTER_MAX_RANKS) {
    fprintf(stderr, "usage: solve [N >= 1] [R (1..%d)]\n", MUSTER_MAX_RANKS);
    return 2;
  }
  for (int r = 0; r < job.nranks; r++) devices[r] = -1; /* host; a CUDA ordinal for a GPU */
  /* One thread per device; returns the first rank's failure, if any. */
  CHECK(muster_run_on_devices(job.nranks, devices, rank_main, &job));
  for (int r = 0; r < job.nranks; r++) worst = fmax(worst, job.residual[r]);
  printf("solve: potrs f64 n=%lld nrhs=%d on %d threads, provider %s, tile %lld: worst scaled "
         "residual %.3g (seed %u)\n", (long long)job.n, NRHS, job.nranks, job.res.provider,
         (long long)job.res.tile, worst, job.seed);
  EXPECT(worst < 10, "solve: residual too large: X is wrong");
  printf("solve: ok\n");
out:
  return rc == 0 ? 0 : 1;
}
