/*
 * tests/gpu/gpu_rank.h - one rank's shard of a GPU test case (gpu_rank.c):
 * its device buffers, made and freed, filled with the case's fresh random
 * matrices (and its planted NaN or singular column), handed to muster as a
 * shard, and its results checked (residuals, eigenvalues, A and B kept
 * where they must be, log det against the lapack provider, the error code
 * and message a case expects).  gpu_case.c runs the ranks; every check
 * prints why on stderr and returns 1 when it fails, 0 when it holds.
 */
#ifndef MUSTER_GPU_RANK_H
#define MUSTER_GPU_RANK_H

#include <stdint.h>

#include "gpu_case.h"
#include "gpu_util.h"
#include "muster.h"

typedef struct rank_buf {
  int device;
  int64_t col0, ncols, real, lda; /* real: columns that hold A (cyclic: a prefix) */
  gu_cols_t cols;
  void *a, *b, *b0, *w;
} rank_buf_t;

/* rank's buffers on its device c->devs[rank], in the case's layout */
int gc_buf_alloc(const tcase_t *c, int rank, rank_buf_t *rb);
void gc_buf_free(rank_buf_t *rb);
/* Fresh random matrices every run: GPU_TEST_SEED (set once by main, from
 * the clock, inherited by every child so all ranks of a case agree), mixed
 * with the case and the repetition. */
uint64_t gc_seed_of(const tcase_t *c, int rep);
/* A, B (twice: b0 keeps B) and w (NaN) from seed, with the case's NaN or
 * singular column planted; the device synchronized. */
int gc_buf_fill(const tcase_t *c, int rank, rank_buf_t *rb, uint64_t seed);
muster_shard_t gc_shard_of(const tcase_t *c, const rank_buf_t *rb);
muster_solve_args_t gc_args_of(const tcase_t *c);
/* This rank's results after a successful solve (by routine, gpu_case.h's
 * gc_add says which). */
int gc_buf_check(const tcase_t *c, int rank, rank_buf_t *rb, uint64_t seed);
/* muster_solve's rc against the case's expectation, and the info and
 * message that go with it. */
int gc_check_rc(const tcase_t *c, int rank, int rc, const muster_solve_result_t *res);
/* This rank's A exactly as gc_buf_fill made it (getrs, which factors a
 * copy; a failed solve with c->a_kept). */
int gc_check_a_kept(const tcase_t *c, int rank, const rank_buf_t *rb, uint64_t seed);
/* A refused getrs (MUSTER_ESINGULAR): this rank's b still holds B. */
int gc_check_b_kept(const tcase_t *c, int rank, const rank_buf_t *rb);

#endif
