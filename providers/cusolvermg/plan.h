/*
 * providers/cusolvermg/plan.h - the copy plan that moves a matrix between
 * the framework's block layout and cuSolverMg's 1-D block-cyclic layout.
 *
 * Pure host arithmetic (no CUDA), so it is unit-tested on machines without
 * a GPU (tests/unit/test_cmg_plan.c runs plans with memcpy on host buffers).
 *
 * A plan is a list of chains; each chain is a list of ops that must run in
 * order (one CUDA stream), and different chains are independent (they touch
 * disjoint bytes), so the executor spreads them over several streams on
 * several devices and they run concurrently.  An op copies `bytes` from one
 * place to another, or zeroes them.  A place is (buffer kind, rank, byte
 * offset): the caller's buffer of a rank (USER), a provider work buffer of a
 * rank (WORK), or the staging buffer of the stream the chain runs on (STAGE).
 *
 * Three plan kinds:
 *   identity  the cyclic layout is the block layout (one rank, or T == S):
 *             no op at all, cuSolverMg runs on the caller's buffers;
 *   in place  every rank's real cyclic columns fit in its own buffer: a
 *             permutation of u-column units (u = gcd(T, S)) between the
 *             caller's buffers, done as disjoint paths (no staging) and
 *             cycles (one unit piece parked in a bounded staging buffer);
 *             extra memory: one staging buffer per stream, <= stage_cap;
 *   copy      otherwise (the cyclic width of some rank exceeds its buffer):
 *             one op per run into / out of per-rank WORK buffers of
 *             local_cols*lda elements; extra memory: a copy of the matrix.
 * Because a tile's T columns with leading dimension lda are contiguous in
 * memory, each op is one flat copy, never a copy per column.
 */
#ifndef MUSTER_CMG_PLAN_H
#define MUSTER_CMG_PLAN_H

#include <stddef.h>
#include <stdint.h>

enum { CMG_USER = 0, CMG_WORK = 1, CMG_STAGE = 2, CMG_ZERO = 3 };
enum { CMG_PLAN_IDENTITY = 0, CMG_PLAN_INPLACE = 1, CMG_PLAN_COPY = 2 };
enum { CMG_TO_CYCLIC = 0, CMG_TO_BLOCK = 1 };

typedef struct cmg_place {
  int buf;      /* CMG_USER, CMG_WORK, CMG_STAGE (src only: CMG_ZERO = memset) */
  int rank;     /* USER/WORK: the rank; STAGE: unused (the chain's stream's) */
  int64_t off;  /* byte offset in that buffer                                */
} cmg_place_t;

typedef struct cmg_op {
  cmg_place_t src, dst;
  int64_t bytes;
} cmg_op_t;

typedef struct cmg_chain {
  int rank;       /* device (rank) whose streams run this chain             */
  int64_t first;  /* ops [first, first + count)                             */
  int64_t count;
  int staged;     /* uses the stream's staging buffer                       */
} cmg_chain_t;

typedef struct cmg_plan {
  int kind;             /* CMG_PLAN_*                                       */
  int64_t n, lda, tile;
  int nranks;
  size_t esz;
  int64_t local_cols;   /* cyclic width per rank (padded)                   */
  int64_t stage_bytes;  /* staging buffer each stream needs (0: none)       */
  int64_t work_bytes;   /* WORK buffer each rank needs (copy plans)         */
  int64_t moved_bytes;  /* total bytes copied (for logs and docs)           */
  cmg_op_t *ops;
  int64_t nops, capops;
  cmg_chain_t *chains;
  int64_t nchains, capchains;
} cmg_plan_t;

/* How to build a plan.  force: 0 auto, CMG_PLAN_INPLACE or CMG_PLAN_COPY
 * (tests; INPLACE falls back to COPY when it does not fit). */
typedef struct cmg_plan_req {
  int64_t n, lda, tile;
  int nranks;
  size_t esz;
  const int64_t *cap_cols; /* columns each rank's USER buffer holds (nranks) */
  int direction;           /* CMG_TO_CYCLIC or CMG_TO_BLOCK                  */
  int force;
  int64_t stage_cap;       /* largest staging buffer per stream, bytes       */
} cmg_plan_req_t;

/* Build *p (zeroed by the caller or from a previous cmg_plan_free).
 * 0, or -1 with a reason in why (bad shape, out of memory). */
int cmg_plan_build(cmg_plan_t *p, const cmg_plan_req_t *req, char *why, size_t whylen);
void cmg_plan_free(cmg_plan_t *p);

/* Greatest common divisor of a, b >= 0 (the relayout unit gcd(T, S); the
 * tile choice's preference for tiles sharing a large unit with S). */
int64_t cmg_gcd64(int64_t a, int64_t b);

/* Run a plan with memcpy/memset on host buffers (tests; the provider runs
 * plans with CUDA copies).  stage: one buffer of p->stage_bytes. */
void cmg_plan_run_host(const cmg_plan_t *p, void *const *user, void *const *work, void *stage);

#endif
