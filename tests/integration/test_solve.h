/*
 * tests/integration/test_solve.h - a harness that runs one collective solve
 * the way a framework would: R ranks (threads of this process, or forked
 * processes with muster_shard_alloc shards), each holding a contiguous
 * column block of a random SPD/Hermitian matrix, each calling muster_solve.
 * Results come back through a MAP_SHARED area so the test process checks
 * them (residuals with tools/muster/check.c) in both modes.
 */
#ifndef MUSTER_TEST_SOLVE_H
#define MUSTER_TEST_SOLVE_H

#include "muster.h"
#include "../../tools/muster/check.h"

typedef struct sv_rank_out {
  int rc;
  char msg[600];
  muster_solve_result_t res;
  double t_return;    /* test_now() when muster_solve returned */
  int done;
} sv_rank_out_t;

typedef struct sv_run sv_run_t;
/* Change what one rank passes (bad-input tests). */
typedef void (*sv_tweak_fn)(sv_run_t *run, int rank, muster_solve_args_t *args,
                            muster_shard_t *shard);

struct sv_run {
  /* inputs */
  muster_solve_args_t args;
  int R;
  int processes;
  uint64_t seed;
  int64_t m;            /* gels: rows of A and B (ldb = m); 0: 2n for gels */
  int64_t pad;          /* extra rows in lda/ldb (gels: lda only) */
  int make_nan;         /* put a NaN in A(n-1, n-1) (lower triangle) */
  int not_spd;          /* make A fail at a known place: indefinite
                           (potrs, potri), exactly singular (getrs: a zero
                           column), rank deficient (gels: a column repeated) */
  double dup;           /* getrs: column n/2 := dup x column 1 (0: off),
                           numerically singular: U's pivot there is at
                           rounding level, not 0 (info n/2 + 1) */
  int plain;            /* getrs: A of random entries only, without
                           chk_random_general's diagonal shift (the GPU
                           tests' matrices: LU really pivots) */
  double col_decades;   /* general A: column j scaled by 10^(d (2j/(n-1)
                           - 1)), d = col_decades (0: off): 8 gives 1e-8
                           .. 1e8, well conditioned but badly scaled */
  int64_t bad_minor;    /* out: the info the failure must give */
  sv_tweak_fn tweak;
  double kill_leader_after_s; /* processes: SIGKILL rank 0 this long after start */
  const char *env_leader;     /* "NAME=VALUE" set in rank 0 only (processes) */
  int leader_dies;            /* rank 0 is expected not to return */
  /* generated: the original matrices (rows x n, rows x nrhs), column-major,
   * ld rows (rows: m for gels, else n) */
  void *A, *B;
  /* shared with the ranks */
  sv_rank_out_t *out;   /* R entries */
  void *full;           /* rows x n: A's shards after the solve, reassembled */
  void *X;              /* R blocks of rows x nrhs: each rank's b after */
  void *W;              /* R blocks of n doubles: each rank's w after (potrs
                           with MUSTER_LOGDET: log det A in its first real) */
  size_t shared_bytes;
  double t_kill;
};

/* Generate, run, wait.  Returns 0 (the ranks' codes are in run->out). */
int sv_run(sv_run_t *run);
/* 0 if every rank got the same rc and message (prints the first difference). */
int sv_same_outcome(const sv_run_t *run);
/* Rows of A and B of the run: m for gels, else n. */
int64_t sv_rows(const sv_run_t *run);
/* Residual of a successful run (every rank's b/w checked equal to rank 0's;
 * with MUSTER_LOGDET also log det A against chk_logdet_hpd: INFINITY when
 * it is off by more than chk_logdet_tolerance). */
double sv_residual(const sv_run_t *run);
void sv_free(sv_run_t *run);
/* One bad-input case: n = 30 f64 over 3 ranks, tweak applied by each rank;
 * every rank must return `code` with `needle` in its message, in < 5 s,
 * and nothing may be left in /dev/shm. */
void sv_expect_error(const char *name, muster_routine_t routine, unsigned flags, sv_tweak_fn tweak,
                     int code, const char *needle, int processes);
/* A valid explicit tile for (n, R) that does not divide n, when there is one. */
int64_t sv_odd_tile(int64_t n, int R);
/* One full case: run + same outcome + residual under tolerance. */
void sv_expect_ok(muster_routine_t r, muster_dtype_t t, int64_t n, int R, int processes,
                  int64_t tile, uint64_t seed);
/* The same with flags (MUSTER_LOGDET) and gels's m (0: 2n). */
void sv_expect_ok_x(muster_routine_t r, muster_dtype_t t, int64_t n, int64_t m, unsigned flags,
                    int R, int processes, int64_t tile, uint64_t seed);

#endif
