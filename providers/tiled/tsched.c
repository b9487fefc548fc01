/* providers/tiled/tsched.c - building the tiled Cholesky's schedule
 * (tsched.h).  Host-only: no CUDA. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tsched.h"

typedef struct build {
  ts_sched_t *s;
  int cap_ops, cap_ev;
  int *arrive;   /* [k * G + g]: event of panel k's arrival on g, -1      */
  int *waited;   /* [g]: the last k whose arrival g's compute stream waited */
  int *slot_free; /* [g * slots + slot]: event "g is done with the slot's panel", -1 */
  int *lastj;    /* [k * G + g]: the last tile column > k that g owns, -1  */
} build_t;

static ts_op_t *add_op(build_t *b, ts_kind_t kind, int dev, int stream, int k, int j, int slot) {
  ts_sched_t *s = b->s;
  if (s->nops == b->cap_ops) {
    int cap = b->cap_ops ? 2 * b->cap_ops : 256;
    ts_op_t *o = realloc(s->ops, (size_t)cap * sizeof *o);
    if (!o) return NULL;
    s->ops = o;
    b->cap_ops = cap;
  }
  ts_op_t *op = &s->ops[s->nops++];
  memset(op, 0, sizeof *op);
  op->kind = kind;
  op->dev = dev;
  op->stream = stream;
  op->k = k;
  op->j = j;
  op->slot = slot;
  op->rec = -1;
  return op;
}

/* A new event, recorded by op (on op's GPU). */
static int new_event(build_t *b, ts_op_t *op) {
  ts_sched_t *s = b->s;
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
  s->ev_dev[s->nev] = op->dev;
  s->ev_idx[s->nev] = s->ev_count[op->dev]++;
  op->rec = s->nev;
  return s->nev++;
}

static void add_wait(ts_op_t *op, int ev) {
  if (ev >= 0) op->wait[op->nwait++] = ev;
}

/* POTRF(k), TRSM(k), and SEND(k, g) to every GPU that owns a later column. */
static int emit_factor(build_t *b, int k) {
  ts_sched_t *s = b->s;
  int o = ts_owner(s, k), G = s->G;
  if (!add_op(b, TS_POTRF, o, TS_COMPUTE, k, k, -1)) return -1;
  if (k == s->nt - 1) return 0; /* nothing below the last diagonal tile */
  ts_op_t *t = add_op(b, TS_TRSM, o, TS_COMPUTE, k, k, -1);
  int done = t ? new_event(b, t) : -1;
  if (done < 0) return -1;
  for (int g = 0; g < G; g++) {
    if (g == o || b->lastj[k * G + g] < 0) continue;
    int slot = k % s->slots;
    ts_op_t *op = add_op(b, TS_SEND, o, 1 + g, k, g, slot);
    if (!op) return -1;
    add_wait(op, done);
    add_wait(op, b->slot_free[g * s->slots + slot]);
    b->slot_free[g * s->slots + slot] = -1;
    if ((b->arrive[k * G + g] = new_event(b, op)) < 0) return -1;
  }
  return 0;
}

/* UPDATE(k, j) on owner(j). */
static int emit_update(build_t *b, int k, int j) {
  ts_sched_t *s = b->s;
  int g = ts_owner(s, j), G = s->G, remote = ts_owner(s, k) != g;
  int slot = remote ? k % s->slots : -1;
  ts_op_t *op = add_op(b, TS_UPDATE, g, TS_COMPUTE, k, j, slot);
  if (!op) return -1;
  if (remote && b->waited[g] != k) {
    add_wait(op, b->arrive[k * G + g]);
    b->waited[g] = k;
  }
  if (remote && b->lastj[k * G + g] == j) { /* g's last read of this panel */
    int ev = new_event(b, op);
    if (ev < 0) return -1;
    b->slot_free[g * s->slots + slot] = ev;
  }
  return 0;
}

static int emit_all(build_t *b) {
  int nt = b->s->nt;
  if (emit_factor(b, 0) < 0) return -1;
  for (int k = 0; k + 1 < nt; k++) {
    if (emit_update(b, k, k + 1) < 0 || emit_factor(b, k + 1) < 0) return -1;
    for (int j = k + 2; j < nt; j++)
      if (emit_update(b, k, j) < 0) return -1;
  }
  return 0;
}

int ts_build(ts_sched_t *s, int64_t n, int64_t T, int G, int slots, char *why, size_t whylen) {
  memset(s, 0, sizeof *s);
  if (n < 1 || T < 1 || G < 1 || G > TS_MAX_GPUS || slots < 2) {
    snprintf(why, whylen, "schedule: bad arguments n=%lld T=%lld G=%d slots=%d", (long long)n, (long long)T, G,
             slots);
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
  build_t b = {s, 0, 0, NULL, NULL, NULL, NULL};
  size_t kg = (size_t)nt * (size_t)G;
  b.arrive = malloc(kg * sizeof(int));
  b.lastj = malloc(kg * sizeof(int));
  b.waited = malloc((size_t)G * sizeof(int));
  b.slot_free = malloc((size_t)G * (size_t)slots * sizeof(int));
  int rc = -1;
  if (b.arrive && b.lastj && b.waited && b.slot_free) {
    for (size_t i = 0; i < kg; i++) b.arrive[i] = b.lastj[i] = -1;
    for (int g = 0; g < G; g++) b.waited[g] = -1;
    for (int i = 0; i < G * slots; i++) b.slot_free[i] = -1;
    for (int k = 0; k < s->nt; k++)
      for (int j = k + 1; j < s->nt; j++) b.lastj[k * G + ts_owner(s, j)] = j;
    rc = emit_all(&b);
  }
  free(b.arrive);
  free(b.lastj);
  free(b.waited);
  free(b.slot_free);
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
