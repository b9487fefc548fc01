/*
 * tools/muster/solve_piece.h - one rank's piece of a `muster solve
 * --launcher mpi` job (solve_mpi.h): its contiguous column block of A (the
 * block layout of the other modes, muster_layout_block_*), a copy of B and
 * room for W.  In host memory, or, when spec->cuda (the provider takes
 * only CUDA memory: cusolvermp), on the rank's GPU, with host copies of
 * the results for the hashes, the gather and rank 0's check.
 *
 * The GPU of a rank whose local rank (its place among the job's ranks on
 * its node, solve_mpi.h) is l: sr_device_of(spec, l, ...): --devices
 * LIST[l % len], else l % cudaGetDeviceCount().  libcudart is dlopen()ed
 * (cuda_dl.h): the CLI links no CUDA.
 *
 * Every function returns 0, or a negative MUSTER_E* code with a message in
 * why (len bytes) that starts with who ("rank 1 (pid 4242 on node2)") and,
 * once it has one, names the GPU.
 */
#ifndef MUSTER_SOLVE_PIECE_H
#define MUSTER_SOLVE_PIECE_H

#include "muster/layout.h"
#include "solve_run.h"

typedef struct piece {
  muster_shard_t s;       /* what the solve gets: host or device memory   */
  void *a, *b, *w;        /* host: s's own in host mode, else the results
                             copied back by piece_collect                */
  muster_layout_geom_t L; /* the block layout: L.tile 1 */
  size_t a_bytes, b_bytes, w_bytes;
  int cuda;
} piece_t;

/* Rank `rank` of `size`, local rank `local`: its GPU set current (spec->cuda),
 * then the buffers.  p is zeroed first: piece_free is safe after a failure. */
int piece_alloc(const sr_spec_t *spec, int64_t nrhs, int rank, int size, int local, const char *who, piece_t *p,
                char *why, size_t len);

/* The inputs from the global A and B again (the solve overwrote them). */
int piece_fill(const sr_spec_t *spec, piece_t *p, const void *A, const void *B, const char *who, char *why,
               size_t len);

/* GPU mode: the results (A block, B, W) back into p->a, p->b, p->w. */
int piece_collect(piece_t *p, const char *who, char *why, size_t len);

void piece_free(piece_t *p);

#endif
