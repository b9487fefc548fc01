/*
 * docs/examples/provider.c - calling a provider of one's own by name: the
 * "example" provider of example_provider.c, found through
 * MUSTER_PROVIDER_PATH, run by muster_solve for R forked processes.
 *
 *   MUSTER_PROVIDER_PATH=build/examples/providers build/examples/provider [N] [R]
 *                                                         (default: 50 2)
 *
 * Processes, unlike threads, must hand the leader memory it can map: each
 * allocates its shard with muster_shard_alloc.  Each rank checks X by its
 * scaled residual and that "example" ran.  Prints "provider: ... ok"; on a
 * failure (no "example" on MUSTER_PROVIDER_PATH, say), what failed and exit
 * status 1.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "example.h"

#define NRHS 2
#define GROUP "example.provider"

typedef struct job {
  unsigned seed;
  int64_t n;
  int nranks;
} job_t;

/* One rank, in a process of its own. */
static int rank_main(int rank, void *arg) {
  const job_t *job = arg;
  int64_t n = job->n, col0, ncols;
  double *a = NULL, *b = NULL;
  muster_group_t *g = NULL;
  muster_solve_result_t res;
  double residual;
  int rc;

  CHECK(muster_layout_block_cols(n, job->nranks, rank, &col0, &ncols));
  /* Memory the leader process can map: freed by muster_shard_free or at exit. */
  CHECK(muster_shard_alloc(sizeof *a * (size_t)(n * (ncols ? ncols : 1)), (void **)&a));
  CHECK(muster_shard_alloc(sizeof *b * (size_t)(n * NRHS), (void **)&b));
  for (int64_t j = 0; j < ncols; j++)
    for (int64_t i = 0; i < n; i++) a[j * n + i] = example_a(job->seed, n, i, col0 + j);
  for (int64_t k = 0; k < NRHS; k++)
    for (int64_t i = 0; i < n; i++) b[k * n + i] = example_b(job->seed, i, k);

  muster_solve_args_t args = {.routine = MUSTER_POTRS, .dtype = MUSTER_F64, .n = n,
                              .nrhs = NRHS, .layout = MUSTER_LAYOUT_BLOCK,
                              .provider = "example" /* this one, or fail */};
  muster_shard_t mine = {.mem = MUSTER_MEM_HOST, .device = -1, .a = a, .lda = n,
                         .col0 = col0, .ncols = ncols, .b = b, .ldb = n};
  CHECK(muster_group_join(GROUP, rank, job->nranks, NULL, &g));
  CHECK(muster_solve(g, &args, &mine, &res));
  residual = example_potrs_residual(job->seed, n, NRHS, b);
  printf("rank %d (pid %d): provider %s, scaled residual %.3g\n", rank, (int)getpid(),
         res.provider, residual);
  EXPECT(strcmp(res.provider, "example") == 0, "rank %d: %s ran, not example", rank, res.provider);
  EXPECT(residual < 10, "rank %d: residual too large: X is wrong", rank);
out:
  rc = example_leave(g, rc);
  muster_shard_free(a); /* NULL is fine */
  muster_shard_free(b);
  return rc;
}

int main(int argc, char **argv) {
  job_t job = {.seed = (unsigned)time(NULL) ^ (unsigned)getpid(),
               .n = argc > 1 ? atoll(argv[1]) : 50, .nranks = argc > 2 ? atoi(argv[2]) : 2};
  if (job.n < 1 || job.nranks < 1 || job.nranks > MUSTER_MAX_RANKS) {
    fprintf(stderr, "usage: provider [N >= 1] [R (1..%d)]\n", MUSTER_MAX_RANKS);
    return 2;
  }
  if (example_fork(job.nranks, rank_main, &job)) {
    fprintf(stderr, "provider: failed (MUSTER_PROVIDER_PATH=%s)\n",
            getenv("MUSTER_PROVIDER_PATH") ? getenv("MUSTER_PROVIDER_PATH") : "(unset)");
    return 1;
  }
  printf("provider: potrs f64 n=%lld by \"example\" for %d processes (seed %u): ok\n",
         (long long)job.n, job.nranks, job.seed);
  return 0;
}
