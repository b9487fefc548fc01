/*
 * tools/muster/solve_run.h - run one collective solve the way a framework
 * would, for `muster solve` and `muster bench`: R ranks as threads
 * (muster_run_on_devices with host "devices" -1) or as forked processes
 * (shards from muster_shard_alloc), each holding a contiguous column block
 * of A and a copy of B, each calling muster_solve; `reps` times in one
 * group, each rep timed on rank 0 from a barrier to muster_solve's return
 * (refilling the shards is not timed).
 *
 * cuda != 0 (a GPU provider): each rank's A block, B (potrs) and W (syevd)
 * live in cudaMalloc'ed memory of its GPU (libcudart through cuda_dl.h),
 * filled from the host matrices before every rep and copied back after the
 * last; threads: muster_run_on_devices with the ranks' GPUs; processes:
 * every forked rank finds its GPU itself (the driver never starts in the
 * parent, since CUDA does not survive fork).  A rank that cannot set up
 * still joins the group and aborts it, so the others fail at once instead
 * of waiting for it until the timeout.
 */
#ifndef MUSTER_SOLVE_RUN_H
#define MUSTER_SOLVE_RUN_H

#include <stddef.h>
#include "launch.h"
#include "muster.h"

#define SR_MAX_REPS 64

typedef struct sr_spec {
  muster_routine_t routine;
  muster_dtype_t dtype;
  int64_t n, nrhs, tile;
  int64_t m;            /* gels: rows of A and B, >= n (muster_routine_shape);
                           0 for every other routine                     */
  unsigned flags;       /* MUSTER_NO_VECTORS, MUSTER_LOGDET, ...          */
  int ranks;
  int processes;        /* 0 threads, 1 processes */
  const char *provider; /* NULL: default choice */
  int reps;             /* timed repetitions, 1..SR_MAX_REPS */
  int warmup;           /* untimed repetitions before them   */
  int cuda;             /* 1: shards in CUDA device memory   */
  int ndevices;         /* cuda: entries of devices[]; 0: rank r on GPU
                           r % cudaGetDeviceCount()          */
  int devices[MUSTER_MAX_RANKS]; /* rank r on GPU devices[r % ndevices] */
  int nodes;            /* --launcher mpi: the hosts the ranks are on (the
                           choice's query, choose.h); 0 otherwise      */
  /* NULL, or called by rank 0 (in its own process in processes mode)
   * before solve i of n (1-based; warmup ones first) */
  void (*on_rep)(int i, int n);
} sr_spec_t;

typedef struct sr_out {
  int rc;                   /* rank 0's (all ranks agree, or rc says why not) */
  char msg[600];
  muster_solve_result_t res; /* of the last rep */
  char reason[MUSTER_MAX_REASON_FULL]; /* res.reason whole (muster_solve_reason) */
  double seconds[SR_MAX_REPS]; /* rank 0's wall time per rep */
  double provider_seconds[SR_MAX_REPS];
  int disagree;             /* ranks returned different codes */
  int devices[MUSTER_MAX_RANKS]; /* the GPU each rank used; -1: host or unknown */
  int died;                 /* processes: a rank's process was killed, or ended
                               without reporting; then rc != 0 and msg is the
                               fate of the first one reaped                    */
  int launch_failed;        /* processes: the ranks could not be started (none
                               ran): rc and msg are why (ml_error)             */
  struct ml_fate fates[MUSTER_MAX_RANKS]; /* processes: how each one ended,
                               also when they could not be started         */
} sr_out_t;

/* The rows of A and B of spec (sr_rows): m for gels, else n.  Every rank
 * holds all rows of its columns of A and all of B (muster/layout.h). */
int64_t sr_rows(const sr_spec_t *spec);

/* Run spec on the full matrices A (rows x n) and B (rows x nrhs),
 * column-major, ld rows (rows = sr_rows(spec)).  After the last rep: full
 * (rows x n, may be NULL) gets A's shards reassembled, X (rows x nrhs, may
 * be NULL; gels: the solution in its first n rows) rank 0's b, W (n reals,
 * may be NULL: syevd's eigenvalues, potrs's log det with MUSTER_LOGDET in
 * W's first real) rank 0's w; xsame is set to 1 when every rank's b/w
 * equals rank 0's.  Returns 0, or -1 when the ranks could not be started
 * (message in out). */
int sr_run(const sr_spec_t *spec, const void *A, const void *B, sr_out_t *out, void *full,
           void *X, void *W, int *xsame);

/* out before a run: no result, every device -1, every fate "rank R: not
 * started" (what stays of a run that never started; sr_run calls it). */
void sr_out_init(sr_out_t *out);

/* The GPU of rank r (--launcher mpi: of local rank r) among count:
 * devices[r % ndevices] (--devices), else r % count.  0, or -1 with why
 * ("no CUDA device ...", "GPU 7 does not exist ..."; the caller names the
 * rank). */
int sr_device_of(const sr_spec_t *spec, int r, int count, int *device, char *why, size_t len);

/* median of v[0..n) (sorts v) */
double sr_median(double *v, int n);

#endif
