/*
 * providers/tiled/tsched.h - the tiled Cholesky's schedule: which tile
 * operation runs on which GPU and stream, in which order, after which
 * events.  Host-only C (no CUDA): the provider executes it (factor.c), the
 * CPU tests check it (tests/unit/test_tiled_sched.c).  (Not sched.h: on
 * the include path that would shadow the system's, which pthread.h includes.)
 *
 * The matrix (n x n, lower triangle) is cut into nt = ceil(n/T) tile
 * columns; tile column j (columns [jT, jT + w_j), w_j = min(T, n - jT))
 * lives on GPU j % G (1-D block-cyclic), rows 0..n-1 of it, and is only
 * ever written by that GPU.  Right-looking, with lookahead depth 1:
 *
 *   POTRF(k)      owner(k): L_kk = chol(A_kk)                 compute stream
 *   TRSM(k)       owner(k): L_ik = A_ik L_kk^-H, rows below   compute stream
 *   SEND(k, g)    owner(k) -> g: rows [(k+1)T, n) of column k into one of
 *                 g's `slots` panel buffers (slot k % slots)  copy stream g
 *   UPDATE(k, j)  owner(j): A_jj -= L_jk L_jk^H (syrk/herk), rows below
 *                 A_ij -= L_ik L_jk^H (gemm), from column k itself when
 *                 owner(k) == owner(j), else from g's slot   compute stream
 *
 * Issue order (the order the host issues, and the order on every stream):
 *   POTRF(0) TRSM(0) SEND(0, *)
 *   for k = 0 .. nt-2:
 *     UPDATE(k, k+1)  POTRF(k+1) TRSM(k+1) SEND(k+1, *)   (the lookahead)
 *     UPDATE(k, j) for j = k+2 .. nt-1                     (the rest)
 * so the next panel is factored and on its way before the bulk of the
 * current trailing update, and the owner's GPU reaches it first.
 *
 * Dependencies are events: SEND(k, *) waits for TRSM(k) (event recorded on
 * owner(k)'s compute stream); g's first UPDATE(k, *) waits for SEND(k, g)'s
 * arrival (recorded on the sender's copy stream); SEND(k, g) into a slot
 * also waits until g's last UPDATE that read the slot's previous panel
 * finished.  A panel goes only to GPUs that own a later tile column.  Every
 * event is recorded once, and every wait names an event recorded by an
 * op issued before it, so no wait is ever a no-op and the dependency graph
 * (stream order plus waits) only points forward: it cannot deadlock.
 */
#ifndef MUSTER_TILED_TSCHED_H
#define MUSTER_TILED_TSCHED_H

#include <stddef.h>
#include <stdint.h>

#define TS_MAX_GPUS 16
#define TS_MAX_WAIT 2
#define TS_COMPUTE 0 /* stream 0 of a GPU; stream 1 + g: its copies to GPU g */

typedef enum { TS_POTRF, TS_TRSM, TS_SEND, TS_UPDATE } ts_kind_t;

typedef struct ts_op {
  ts_kind_t kind;
  int dev;    /* the GPU (0..G-1) whose stream runs it                      */
  int stream; /* TS_COMPUTE, or 1 + destination GPU for a SEND              */
  int k;      /* the panel (tile column) it factors, sends or applies      */
  int j;      /* UPDATE: the tile column updated; SEND: the destination GPU */
  int slot;   /* SEND: slot written on j; UPDATE: slot read on dev, or -1
                 when the panel is dev's own column k                      */
  int nwait;
  int wait[TS_MAX_WAIT]; /* event ids waited for before the op               */
  int rec;               /* event id recorded after it, -1 none             */
} ts_op_t;

typedef struct ts_sched {
  int64_t n, T;
  int G, nt, slots;
  int nops;
  ts_op_t *ops;
  int nev;
  int *ev_dev;             /* event id -> the GPU whose stream records it    */
  int *ev_idx;             /* event id -> its index in that GPU's pool       */
  int ev_count[TS_MAX_GPUS]; /* events each GPU's pool needs                 */
} ts_sched_t;

/* Build the schedule of (n, T, G, slots >= 2) into *s (zeroed first).  One
 * slot cannot work with lookahead: panel k+1 is sent while panel k is still
 * read.  0,
 * or -1 with the reason in why (bad arguments, out of memory). */
int ts_build(ts_sched_t *s, int64_t n, int64_t T, int G, int slots, char *why, size_t whylen);
void ts_free(ts_sched_t *s);

static inline int ts_owner(const ts_sched_t *s, int j) { return j % s->G; }
static inline int64_t ts_width(const ts_sched_t *s, int j) {
  int64_t left = s->n - (int64_t)j * s->T;
  return left < s->T ? left : s->T;
}
/* The first local column of tile column j in its owner's buffer. */
static inline int64_t ts_local_col(const ts_sched_t *s, int j) { return (int64_t)(j / s->G) * s->T; }
/* Tile columns GPU g owns: ceil((nt - g) / G), 0 when g >= nt. */
static inline int ts_local_tiles(const ts_sched_t *s, int g) { return g >= s->nt ? 0 : (s->nt - g + s->G - 1) / s->G; }

#endif
