/* providers/tiled/tsched.c - building the tiled Cholesky's schedule
 * (tsched.h): the issue order, and the waits derived from what each op
 * reads and writes.  Host-only: no CUDA. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tsched.h"

typedef struct build {
  ts_sched_t *s;
  int cap_ops, cap_ev, ns;  /* ns: streams in all, G * ts_streams       */
  int *seq;       /* [op]: 1-based position on its stream                 */
  int *count;     /* [stream]: ops issued on it                           */
  int *known;     /* [x * ns + y]: the last position on y stream x waited for */
  int *writer;    /* [j]: the last op that wrote tile column j, -1        */
  int *trsm;      /* [k]: TRSM(k), -1                                     */
  int *arrive;    /* [k * G + g]: SEND(k, g), -1                          */
  int *reader;    /* [(g * slots + slot) * 2 + panel?]: last read of the slot, -1 */
} build_t;

static int sid(const build_t *b, const ts_op_t *op) { return op->dev * ts_streams(b->s) + op->stream; }

static int add_op(build_t *b, ts_kind_t kind, int dev, int stream, int k, int j, int slot) {
  ts_sched_t *s = b->s;
  if (s->nops == b->cap_ops) {
    int cap = b->cap_ops ? 2 * b->cap_ops : 256;
    ts_op_t *o = realloc(s->ops, (size_t)cap * sizeof *o);
    int *q = o ? realloc(b->seq, (size_t)cap * sizeof *q) : NULL;
    if (o) s->ops = o;
    if (!q) return -1;
    b->seq = q;
    b->cap_ops = cap;
  }
  ts_op_t *op = &s->ops[s->nops];
  memset(op, 0, sizeof *op);
  op->kind = kind;
  op->dev = dev;
  op->stream = stream;
  op->k = k;
  op->j = j;
  op->slot = slot;
  op->rec = -1;
  b->seq[s->nops] = ++b->count[sid(b, op)];
  return s->nops++;
}

/* The event recorded after op i (on op i's GPU), created on first need. */
static int event_of(build_t *b, int i) {
  ts_sched_t *s = b->s;
  if (s->ops[i].rec >= 0) return s->ops[i].rec;
  if (s->nev == b->cap_ev) {
    int cap = b->cap_ev ? 2 * b->cap_ev : 256;
    int *d = realloc(s->ev_dev, (size_t)cap * sizeof *d);
    if (!d) return -1;
    s->ev_dev = d;
    int *x = realloc(s->ev_idx, (size_t)cap * sizeof *x);
    if (!x) return -1;
    s->ev_idx = x;
    b->cap_ev = cap;
  }
  int dev = s->ops[i].dev;
  s->ev_dev[s->nev] = dev;
  s->ev_idx[s->nev] = s->ev_count[dev]++;
  s->ops[i].rec = s->nev;
  return s->nev++;
}

/* Op i (the last issued) runs after op src (-1: nothing): a wait when src
 * is on another stream and i's stream has not waited for it or later. */
static int dep(build_t *b, int i, int src) {
  if (src < 0) return 0;
  ts_op_t *op = &b->s->ops[i];
  int x = sid(b, op), y = sid(b, &b->s->ops[src]);
  if (x == y || b->known[x * b->ns + y] >= b->seq[src]) return 0;
  int ev = event_of(b, src);
  if (ev < 0 || op->nwait == TS_MAX_WAIT) return -1;
  op->wait[op->nwait++] = ev;
  b->known[x * b->ns + y] = b->seq[src];
  return 0;
}

/* Does GPU g own a tile column after k? */
static int wants(const ts_sched_t *s, int k, int g) {
  int j = k + 1 + ((g - (k + 1) % s->G) + s->G) % s->G;
  return j < s->nt;
}

/* POTRF(k), TRSM(k), and SEND(k, g) to every GPU that owns a later column. */
static int emit_factor(build_t *b, int k) {
  ts_sched_t *s = b->s;
  int o = ts_owner(s, k), ps = ts_panel_stream(s);
  int i = add_op(b, TS_POTRF, o, ps, k, k, -1);
  if (i < 0 || dep(b, i, b->writer[k]) < 0) return -1;
  b->writer[k] = i;
  if (k == s->nt - 1) return 0; /* nothing below the last diagonal tile */
  int t = add_op(b, TS_TRSM, o, ps, k, k, -1);
  if (t < 0) return -1;
  b->writer[k] = b->trsm[k] = t;
  for (int g = 0; g < s->G; g++) {
    if (g == o || !wants(s, k, g)) continue;
    int slot = k % s->slots, *r = &b->reader[(g * s->slots + slot) * 2];
    int op = add_op(b, TS_SEND, o, TS_COPY + g, k, g, slot);
    if (op < 0 || dep(b, op, t) < 0 || dep(b, op, r[0]) < 0 || dep(b, op, r[1]) < 0) return -1;
    r[0] = r[1] = -1;
    b->arrive[k * s->G + g] = op;
  }
  return 0;
}

/* UPDATE(k, j) on owner(j): on the panel stream when it is a lookahead. */
static int emit_update(build_t *b, int k, int j, int lookahead) {
  ts_sched_t *s = b->s;
  int g = ts_owner(s, j), remote = ts_owner(s, k) != g, slot = remote ? k % s->slots : -1;
  int st = lookahead ? ts_panel_stream(s) : TS_COMPUTE;
  int i = add_op(b, TS_UPDATE, g, st, k, j, slot);
  if (i < 0 || dep(b, i, remote ? b->arrive[k * s->G + g] : b->trsm[k]) < 0 || dep(b, i, b->writer[j]) < 0) return -1;
  b->writer[j] = i;
  if (remote) b->reader[(g * s->slots + slot) * 2 + (st == TS_PANEL)] = i;
  return 0;
}

/* MOVE(j) on owner(j)'s copy stream to itself: column j's first writer. */
static int emit_move(build_t *b, int j) {
  int g = ts_owner(b->s, j), i = add_op(b, TS_MOVE, g, TS_COPY + g, j, j, -1);
  if (i < 0) return -1;
  b->writer[j] = i;
  return 0;
}

static int emit_all(build_t *b) {
  int nt = b->s->nt, L = b->s->L;
  for (int j = 0; j < nt && b->s->move; j++)
    if (emit_move(b, j) < 0) return -1;
  for (int p = 0; p < L && p < nt; p++) { /* the prologue: columns 0..L-1 */
    for (int i = 0; i < p; i++)
      if (emit_update(b, i, p, 1) < 0) return -1;
    if (emit_factor(b, p) < 0) return -1;
  }
  for (int k = 0; k + 1 < nt; k++) {
    int p = k + L;
    if (p < nt) {
      for (int i = k; i < p; i++)
        if (emit_update(b, i, p, 1) < 0) return -1;
      if (emit_factor(b, p) < 0) return -1;
    }
    for (int j = p + 1; j < nt; j++)
      if (emit_update(b, k, j, 0) < 0) return -1;
  }
  return 0;
}

static int build(build_t *b) {
  ts_sched_t *s = b->s;
  size_t nt = (size_t)s->nt, G = (size_t)s->G, kg = nt * G, rd = G * (size_t)s->slots * 2;
  b->ns = s->G * ts_streams(s);
  b->count = calloc((size_t)b->ns, sizeof(int));
  b->known = calloc((size_t)b->ns * (size_t)b->ns, sizeof(int));
  b->writer = malloc(nt * sizeof(int));
  b->trsm = malloc(nt * sizeof(int));
  b->arrive = malloc(kg * sizeof(int));
  b->reader = malloc(rd * sizeof(int));
  if (!b->count || !b->known || !b->writer || !b->trsm || !b->arrive || !b->reader) return -1;
  for (size_t i = 0; i < nt; i++) b->writer[i] = b->trsm[i] = -1;
  for (size_t i = 0; i < kg; i++) b->arrive[i] = -1;
  for (size_t i = 0; i < rd; i++) b->reader[i] = -1;
  return emit_all(b);
}

int ts_build(ts_sched_t *s, int64_t n, int64_t T, int G, int slots, int L, int prio, int move, char *why,
             size_t whylen) {
  memset(s, 0, sizeof *s);
  if (n < 1 || T < 1 || G < 1 || G > TS_MAX_GPUS || L < 1 || L > TS_MAX_LOOKAHEAD || slots < L + 1 ||
      (prio != 0 && prio != 1) || (move != 0 && move != 1)) {
    snprintf(why, whylen, "schedule: bad arguments n=%lld T=%lld G=%d slots=%d lookahead=%d prio=%d move=%d",
             (long long)n, (long long)T, G, slots, L, prio, move);
    return -1;
  }
  int64_t nt = (n + T - 1) / T;
  if (nt > 1000000) {
    snprintf(why, whylen, "schedule: %lld tile columns is too many (n=%lld, T=%lld)", (long long)nt, (long long)n,
             (long long)T);
    return -1;
  }
  s->n = n;
  s->T = T;
  s->G = G;
  s->nt = (int)nt;
  s->slots = slots;
  s->L = L;
  s->prio = prio;
  s->move = move;
  build_t b = {0};
  b.s = s;
  int rc = build(&b);
  free(b.seq);
  free(b.count);
  free(b.known);
  free(b.writer);
  free(b.trsm);
  free(b.arrive);
  free(b.reader);
  if (rc < 0) {
    ts_free(s);
    snprintf(why, whylen, "schedule: out of host memory (n=%lld, T=%lld, G=%d)", (long long)n, (long long)T, G);
  }
  return rc;
}

void ts_free(ts_sched_t *s) {
  free(s->ops);
  free(s->ev_dev);
  free(s->ev_idx);
  memset(s, 0, sizeof *s);
}
