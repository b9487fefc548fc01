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
 * ever written by that GPU.  Right-looking, with lookahead depth L (1..4):
 *
 *   POTRF(k)      owner(k): L_kk = chol(A_kk)                 panel stream
 *   TRSM(k)       owner(k): L_ik = A_ik L_kk^-H, rows below   panel stream
 *   SEND(k, g)    owner(k) -> g: rows [(k+1)T, n) of column k into one of
 *                 g's `slots` panel buffers (slot k % slots)  copy stream g
 *   UPDATE(k, j)  owner(j): A_jj -= L_jk L_jk^H (syrk/herk), rows below
 *                 A_ij -= L_ik L_jk^H (gemm), from column k itself when
 *                 owner(k) == owner(j), else from g's slot.  A lookahead
 *                 update (k >= j - L: it leads to the factor of column j)
 *                 runs on the panel stream, the others (the bulk) on the
 *                 compute stream.
 *   MOVE(j)       owner(j): tile column j, rows [jT, n), from the caller's
 *                 layout into the owner's buffer (only when ts_build's
 *                 move is 1)                                  copy stream owner(j)
 * The panel stream is a GPU's second, high-priority compute stream when
 * ts_build's prio is 1, else the compute stream itself.  MOVE runs on a
 * GPU's copy stream to itself, which no SEND uses.
 *
 * Issue order (the order the host issues, and the order on every stream):
 *   MOVE(j) for j = 0 .. nt-1                  (with move: A arriving)
 *   for p = 0 .. L-1:                                      (the prologue)
 *     UPDATE(i, p) for i = 0 .. p-1;  POTRF(p) TRSM(p) SEND(p, *)
 *   for k = 0 .. nt-2:
 *     p = k + L; if p < nt:                                (the lookahead)
 *       UPDATE(i, p) for i = k .. p-1;  POTRF(p) TRSM(p) SEND(p, *)
 *     UPDATE(k, j) for j = p+1 .. nt-1                     (the rest)
 * so panel k+L is factored and on its way before the bulk of step k: the
 * panel has L steps of trailing update to hide behind.  Column j receives
 * UPDATE(i, j) for i <= j-L-1 in the bulk of step i, the last L in its
 * lookahead: each once, in the order of i.  With move, a MOVE is column
 * j's first writer, so the first op that touches column j (POTRF(0) for
 * column 0, else UPDATE(0, j), in the lookahead or the bulk) waits for
 * MOVE(j)'s event instead of the whole of A arriving before step 0: the
 * panel 0 starts once column 0 is in, and the columns arrive, in order,
 * while step 0 works through them.
 *
 * Dependencies are events, derived from what each op reads and writes: an
 * op waits for the ops on other streams it depends on (the last writer of
 * the column it updates, TRSM(k) or the arrival SEND(k, g) of the panel it
 * reads; a SEND also for g's last reads, on each of g's streams, of the
 * panel that was in its slot), once per stream pair unless a later op is
 * needed.  Such an op gets an event recorded after it (one per op at most,
 * added when a later op first needs it).  Every event is recorded once,
 * every wait names an event recorded by an op issued before it, so no wait
 * is ever a no-op and the dependency graph (stream order plus waits) only
 * points forward: it cannot deadlock.  A slot is written again only after
 * every read of its previous panel was issued, which needs slots >= L + 1.
 */
#ifndef MUSTER_TILED_TSCHED_H
#define MUSTER_TILED_TSCHED_H

#include <stddef.h>
#include <stdint.h>

#define TS_MAX_GPUS 16
#define TS_MAX_WAIT 4
#define TS_MAX_LOOKAHEAD 4
#define TS_COMPUTE 0 /* stream 0 of a GPU: the bulk updates                   */
#define TS_PANEL 1   /* stream 1: the panel (only used when prio is 1)        */
#define TS_COPY 2    /* stream TS_COPY + g: its copies to GPU g               */

typedef enum { TS_POTRF, TS_TRSM, TS_SEND, TS_UPDATE, TS_MOVE } ts_kind_t;

typedef struct ts_op {
  ts_kind_t kind;
  int dev;    /* the GPU (0..G-1) whose stream runs it                      */
  int stream; /* TS_COMPUTE, TS_PANEL, or TS_COPY + destination GPU (SEND,
                 MOVE: its own GPU)                                        */
  int k;      /* the panel (tile column) it factors, sends, applies or moves */
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
  int L;    /* lookahead depth                                             */
  int prio; /* the panel on its own stream (TS_PANEL)                      */
  int move; /* A moved in by MOVE ops (the caller's layout is not ours)    */
  int nops;
  ts_op_t *ops;
  int nev;
  int *ev_dev;             /* event id -> the GPU whose stream records it    */
  int *ev_idx;             /* event id -> its index in that GPU's pool       */
  int ev_count[TS_MAX_GPUS]; /* events each GPU's pool needs                 */
} ts_sched_t;

/* Build the schedule of (n, T, G, slots, lookahead L in 1..TS_MAX_LOOKAHEAD,
 * prio 0|1, move 0|1) into *s (zeroed first).  slots >= L + 1: panel k+L is sent
 * while panel k is still read.  0, or -1 with the reason in why (bad
 * arguments, out of memory). */
int ts_build(ts_sched_t *s, int64_t n, int64_t T, int G, int slots, int L, int prio, int move, char *why,
             size_t whylen);
void ts_free(ts_sched_t *s);

/* Streams per GPU (compute, panel, one copy stream per GPU). */
static inline int ts_streams(const ts_sched_t *s) { return TS_COPY + s->G; }
/* The stream a panel op (POTRF, TRSM, lookahead UPDATE) runs on. */
static inline int ts_panel_stream(const ts_sched_t *s) { return s->prio ? TS_PANEL : TS_COMPUTE; }
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
