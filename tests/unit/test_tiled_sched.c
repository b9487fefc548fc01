/* tests/unit/test_tiled_sched.c - the tiled provider's schedule
 * (providers/tiled/tsched.h), on the host, for many (n, T, G): every tile
 * operation exactly once on the right GPU and stream, every wait on an
 * event recorded earlier, the happens-before order every operation needs
 * (vector clocks over streams and events), the lookahead order for every
 * depth L, every column's writers ordered (the panel and compute streams
 * of a GPU race otherwise), panels sent only where used and never
 * overwritten while read; then the schedule run
 * numerically on host buffers (one "GPU" = its tile columns and panel
 * slots) with the streams interleaved at random, as far as the events
 * allow, against a plain Cholesky; each for every lookahead depth, with
 * and without the panel's own stream, with and without A moved in by the
 * schedule (MUSTER_TILED_OVERLAP=1: every column's first op after its
 * MOVE; in the numeric run the columns start as garbage, so an op that
 * ran before its column arrived shows in the result). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "task.h"
#include "tiled/tsched.h"

typedef struct hb {
  const ts_sched_t *s;
  int ns;       /* streams: G * ts_streams                  */
  int *clock;   /* [op * ns + stream]                       */
  int *seq;     /* [op]: 1-based position on its stream     */
  int *sid;     /* [op]: its stream                         */
} hb_t;

static int stream_id(const ts_sched_t *s, const ts_op_t *op) { return op->dev * ts_streams(s) + op->stream; }

/* Vector clocks; fails when a wait names an event not recorded earlier or
 * an event is recorded twice. */
static void hb_build(hb_t *h, const ts_sched_t *s) {
  h->s = s;
  h->ns = s->G * ts_streams(s);
  h->clock = calloc((size_t)s->nops * h->ns, sizeof(int));
  h->seq = calloc((size_t)s->nops, sizeof(int));
  h->sid = calloc((size_t)s->nops, sizeof(int));
  int *last = malloc((size_t)h->ns * sizeof(int)), *rec_op = malloc((size_t)(s->nev + 1) * sizeof(int));
  int *count = calloc((size_t)h->ns, sizeof(int));
  ASSERT(h->clock && h->seq && h->sid && last && rec_op && count);
  for (int i = 0; i < h->ns; i++) last[i] = -1;
  for (int e = 0; e < s->nev; e++) rec_op[e] = -1;
  for (int i = 0; i < s->nops; i++) {
    const ts_op_t *op = &s->ops[i];
    int sid = stream_id(s, op), *c = &h->clock[(size_t)i * h->ns];
    ASSERT(op->dev >= 0 && op->dev < s->G && op->stream >= 0 && op->stream < ts_streams(s));
    if (last[sid] >= 0) memcpy(c, &h->clock[(size_t)last[sid] * h->ns], (size_t)h->ns * sizeof(int));
    for (int w = 0; w < op->nwait; w++) {
      int e = op->wait[w];
      ASSERT(e >= 0 && e < s->nev);
      ASSERT_GE(rec_op[e], 0); /* recorded before this wait is issued */
      const int *src = &h->clock[(size_t)rec_op[e] * h->ns];
      for (int x = 0; x < h->ns; x++)
        if (src[x] > c[x]) c[x] = src[x];
    }
    c[sid] = h->seq[i] = ++count[sid];
    h->sid[i] = sid;
    last[sid] = i;
    if (op->rec >= 0) {
      ASSERT(op->rec < s->nev);
      ASSERT_EQ(rec_op[op->rec], -1); /* recorded once */
      ASSERT_EQ(s->ev_dev[op->rec], op->dev);
      rec_op[op->rec] = i;
    }
  }
  for (int e = 0; e < s->nev; e++) ASSERT_GE(rec_op[e], 0);
  free(last);
  free(rec_op);
  free(count);
}

static int hb(const hb_t *h, int a, int b) { return h->clock[(size_t)b * h->ns + h->sid[a]] >= h->seq[a]; }

static void hb_free(hb_t *h) {
  free(h->clock);
  free(h->seq);
  free(h->sid);
}

/* The structural and ordering checks of one schedule. */
static void check_order(const ts_sched_t *s) {
  int nt = s->nt, G = s->G;
  int *potrf = malloc((size_t)nt * sizeof(int)), *trsm = malloc((size_t)nt * sizeof(int));
  int *upd = malloc((size_t)nt * nt * sizeof(int)), *send = malloc((size_t)nt * G * sizeof(int));
  int *move = malloc((size_t)nt * sizeof(int));
  ASSERT(potrf && trsm && upd && send && move);
  for (int i = 0; i < nt; i++) potrf[i] = trsm[i] = move[i] = -1;
  for (int i = 0; i < nt * nt; i++) upd[i] = -1;
  for (int i = 0; i < nt * G; i++) send[i] = -1;
  for (int i = 0; i < s->nops; i++) { /* each operation once, on the right GPU and stream */
    const ts_op_t *op = &s->ops[i];
    ASSERT(op->k >= 0 && op->k < nt);
    switch (op->kind) {
    case TS_POTRF: ASSERT_EQ(potrf[op->k], -1); potrf[op->k] = i; break;
    case TS_TRSM: ASSERT_EQ(trsm[op->k], -1); trsm[op->k] = i; break;
    case TS_SEND:
      ASSERT(op->j >= 0 && op->j < G && op->j != op->dev);
      ASSERT_EQ(op->stream, TS_COPY + op->j);
      ASSERT_EQ(op->slot, op->k % s->slots);
      ASSERT_EQ(send[op->k * G + op->j], -1);
      send[op->k * G + op->j] = i;
      break;
    case TS_UPDATE:
      ASSERT(op->j > op->k && op->j < nt);
      ASSERT_EQ(op->dev, ts_owner(s, op->j));
      ASSERT_EQ(op->slot, ts_owner(s, op->k) == op->dev ? -1 : op->k % s->slots);
      ASSERT_EQ(upd[op->k * nt + op->j], -1);
      ASSERT_EQ(op->stream, op->k >= op->j - s->L ? ts_panel_stream(s) : TS_COMPUTE); /* lookahead or bulk */
      upd[op->k * nt + op->j] = i;
      break;
    case TS_MOVE:
      ASSERT(s->move);
      ASSERT_EQ(op->j, op->k);
      ASSERT_EQ(op->dev, ts_owner(s, op->k));
      ASSERT_EQ(op->stream, TS_COPY + op->dev); /* the copy stream no SEND uses */
      ASSERT_EQ(move[op->k], -1);
      if (op->k > 0) ASSERT_GE(move[op->k - 1], 0); /* in column order */
      move[op->k] = i;
      break;
    }
    if (op->kind == TS_POTRF || op->kind == TS_TRSM) ASSERT_EQ(op->stream, ts_panel_stream(s));
    if (op->kind == TS_POTRF || op->kind == TS_TRSM || op->kind == TS_SEND) ASSERT_EQ(op->dev, ts_owner(s, op->k));
  }
  hb_t h;
  hb_build(&h, s);
  for (int k = 0; k < nt; k++) {
    ASSERT_GE(potrf[k], 0);
    if (s->move) { /* column k arrived before anything touches it */
      ASSERT_GE(move[k], 0);
      ASSERT(hb(&h, move[k], potrf[k]));
      for (int i = 0; i < k; i++) ASSERT(hb(&h, move[k], upd[i * nt + k]));
    } else ASSERT_EQ(move[k], -1);
    if (k < nt - 1) {
      ASSERT_GE(trsm[k], 0);
      ASSERT(hb(&h, potrf[k], trsm[k]));
    } else ASSERT_EQ(trsm[k], -1);
    for (int i = 0; i < k; i++) ASSERT(hb(&h, upd[i * nt + k], potrf[k])); /* every update before the factor */
    for (int i = 0; i + 1 < k; i++) { /* column k's writers one after another, in the order of i */
      ASSERT(hb(&h, upd[i * nt + k], upd[(i + 1) * nt + k]));
      ASSERT_LT(upd[i * nt + k], upd[(i + 1) * nt + k]);
    }
    for (int g = 0; g < G; g++) { /* a panel goes exactly where a later column lives */
      int wanted = 0;
      for (int j = k + 1; j < nt; j++) wanted |= ts_owner(s, j) == g && g != ts_owner(s, k);
      ASSERT_EQ(send[k * G + g] >= 0, wanted);
      if (wanted) ASSERT(hb(&h, trsm[k], send[k * G + g]));
    }
    for (int j = k + 1; j < nt; j++) {
      int u = upd[k * nt + j], g = ts_owner(s, j);
      ASSERT_GE(u, 0);
      ASSERT(hb(&h, trsm[k], u));
      if (ts_owner(s, k) == g) continue;
      int sk = send[k * G + g];
      ASSERT(hb(&h, sk, u)); /* the panel arrived */
      for (int k2 = 0; k2 < nt; k2++) { /* and no other panel lands in its slot meanwhile */
        int o = send[k2 * G + g];
        if (k2 == k || o < 0 || s->ops[o].slot != s->ops[sk].slot) continue;
        ASSERT(hb(&h, o, sk) || hb(&h, u, o));
      }
    }
    if (k + s->L < nt) { /* lookahead: column k+L factored and sent before the rest of step k */
      int p = k + s->L;
      for (int j = p + 1; j < nt; j++) {
        ASSERT_LT(potrf[p], upd[k * nt + j]);
        for (int g = 0; g < G && p + 1 < nt; g++)
          if (send[p * G + g] >= 0) ASSERT_LT(send[p * G + g], upd[k * nt + j]);
      }
    }
  }
  hb_free(&h);
  free(potrf);
  free(trsm);
  free(upd);
  free(send);
  free(move);
}

/* ---- the numeric run ------------------------------------------------------------------ */

typedef struct sim {
  const ts_sched_t *s;
  double *col[TS_MAX_GPUS];  /* GPU g's tile columns, n rows each, ld n */
  double *slot[TS_MAX_GPUS]; /* its panel slots, n x T each            */
  const double *A;           /* the caller's matrix, n x n, ld n        */
} sim_t;

static double *colp(sim_t *m, int j) {
  return m->col[ts_owner(m->s, j)] + (size_t)ts_local_col(m->s, j) * m->s->n;
}

/* A(i, c) of column tile j (absolute row i, column c of the tile). */
#define AT(p, i, c) (p)[(size_t)(c) * n + (i)]

static void run_op(sim_t *m, const ts_op_t *op) {
  const ts_sched_t *s = m->s;
  int64_t n = s->n, T = s->T, k0 = (int64_t)op->k * T, wk = ts_width(s, op->k);
  double *K = colp(m, op->k);
  if (op->kind == TS_MOVE) { /* rows [kT, n) of the tile column */
    for (int64_t c = 0; c < wk; c++)
      memcpy(&AT(K, k0, c), m->A + (size_t)(k0 + c) * n + k0, (size_t)(n - k0) * sizeof(double));
  } else if (op->kind == TS_POTRF) { /* unblocked Cholesky of the diagonal tile */
    for (int64_t c = 0; c < wk; c++) {
      double d = AT(K, k0 + c, c);
      for (int64_t q = 0; q < c; q++) d -= AT(K, k0 + c, q) * AT(K, k0 + c, q);
      AT(K, k0 + c, c) = sqrt(d);
      for (int64_t i = c + 1; i < wk; i++) {
        double v = AT(K, k0 + i, c);
        for (int64_t q = 0; q < c; q++) v -= AT(K, k0 + i, q) * AT(K, k0 + c, q);
        AT(K, k0 + i, c) = v / AT(K, k0 + c, c);
      }
    }
  } else if (op->kind == TS_TRSM) { /* rows below: X L^T = A */
    for (int64_t i = k0 + wk; i < n; i++)
      for (int64_t c = 0; c < wk; c++) {
        double v = AT(K, i, c);
        for (int64_t q = 0; q < c; q++) v -= AT(K, i, q) * AT(K, k0 + c, q);
        AT(K, i, c) = v / AT(K, k0 + c, c);
      }
  } else if (op->kind == TS_SEND) {
    double *dst = m->slot[op->j] + (size_t)op->slot * n * T;
    for (int64_t c = 0; c < wk; c++)
      for (int64_t i = k0 + T; i < n; i++) dst[c * n + (i - k0 - T)] = AT(K, i, c);
  } else { /* UPDATE: lower part of column j from the panel's rows */
    int64_t j0 = (int64_t)op->j * T, wj = ts_width(s, op->j);
    const double *P = op->slot < 0 ? NULL : m->slot[op->dev] + (size_t)op->slot * n * T;
    double *J = colp(m, op->j);
    for (int64_t c = 0; c < wj; c++)
      for (int64_t i = j0 + c; i < n; i++) {
        double v = 0;
        for (int64_t q = 0; q < wk; q++) {
          double li = P ? P[q * n + (i - k0 - T)] : AT(K, i, q), lc = P ? P[q * n + (j0 + c - k0 - T)] : AT(K, j0 + c, q);
          v += li * lc;
        }
        AT(J, i, c) -= v;
      }
  }
}

static uint64_t rng = 88172645463325252ull;
static uint64_t rnd(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}

/* Run every stream's ops in order, streams picked at random among those
 * whose next op's events are recorded; compare with a plain Cholesky. */
static void check_numeric(const ts_sched_t *s) {
  int64_t n = s->n, T = s->T;
  int G = s->G, ns = G * ts_streams(s);
  sim_t m = {s, {0}, {0}, NULL};
  double *A = malloc((size_t)(n * n) * sizeof(double));
  ASSERT(A);
  for (int64_t c = 0; c < n; c++) /* SPD: small random + n on the diagonal */
    for (int64_t i = c; i < n; i++) A[c * n + i] = A[i * n + c] = (i == c ? (double)n : 0.0) + (double)(rnd() % 1000) / 1000.0;
  for (int g = 0; g < G; g++) {
    m.col[g] = calloc((size_t)(ts_local_tiles(s, g) + 1) * T * n, sizeof(double));
    m.slot[g] = calloc((size_t)s->slots * T * n, sizeof(double));
    ASSERT(m.col[g] && m.slot[g]);
  }
  m.A = A;
  for (int j = 0; j < s->nt; j++) /* without move, A is in place before the run; with it, garbage until MOVE */
    for (int64_t c = 0; c < ts_width(s, j); c++)
      for (int64_t i = 0; i < n; i++) colp(&m, j)[c * n + i] = s->move ? 1e6 + (double)i : A[(j * T + c) * n + i];
  int **q = calloc((size_t)ns, sizeof(int *)), *len = calloc((size_t)ns, sizeof(int)), *pos = calloc((size_t)ns, sizeof(int));
  char *done = calloc((size_t)s->nev + 1, 1);
  ASSERT(q && len && pos && done);
  for (int x = 0; x < ns; x++) ASSERT((q[x] = malloc((size_t)s->nops * sizeof(int))) != NULL);
  for (int i = 0; i < s->nops; i++) {
    int x = stream_id(s, &s->ops[i]);
    q[x][len[x]++] = i;
  }
  for (int ran = 0; ran < s->nops;) {
    int ready[TS_MAX_GPUS * (TS_COPY + TS_MAX_GPUS)], nr = 0;
    for (int x = 0; x < ns; x++) {
      if (pos[x] == len[x]) continue;
      const ts_op_t *op = &s->ops[q[x][pos[x]]];
      int ok = 1;
      for (int w = 0; w < op->nwait; w++) ok &= done[op->wait[w]];
      if (ok) ready[nr++] = x;
    }
    ASSERT_GT(nr, 0); /* no deadlock */
    int x = ready[rnd() % (uint64_t)nr];
    const ts_op_t *op = &s->ops[q[x][pos[x]++]];
    run_op(&m, op);
    if (op->rec >= 0) done[op->rec] = 1;
    ran++;
  }
  /* reference: plain Cholesky of A, lower */
  for (int64_t c = 0; c < n; c++) {
    for (int64_t q2 = 0; q2 < c; q2++) A[c * n + c] -= A[q2 * n + c] * A[q2 * n + c];
    A[c * n + c] = sqrt(A[c * n + c]);
    for (int64_t i = c + 1; i < n; i++) {
      for (int64_t q2 = 0; q2 < c; q2++) A[c * n + i] -= A[q2 * n + i] * A[q2 * n + c];
      A[c * n + i] /= A[c * n + c];
    }
  }
  double worst = 0;
  for (int j = 0; j < s->nt; j++)
    for (int64_t c = 0; c < ts_width(s, j); c++)
      for (int64_t i = j * T + c; i < n; i++) {
        double d = fabs(colp(&m, j)[c * n + i] - A[(j * T + c) * n + i]);
        worst = d < worst ? worst : d; /* a NaN (sqrt of garbage) counts, unlike fmax */
      }
  ASSERT_DBL_LT(worst, 1e-9);
  for (int x = 0; x < ns; x++) free(q[x]);
  free(q);
  free(len);
  free(pos);
  free(done);
  for (int g = 0; g < G; g++) {
    free(m.col[g]);
    free(m.slot[g]);
  }
  free(A);
}

static void check_case(int64_t n, int64_t T, int G, int slots, int L, int prio, int move, int numeric) {
  ts_sched_t s;
  char why[160];
  ASSERT_EQ(ts_build(&s, n, T, G, slots, L, prio, move, why, sizeof why), 0);
  ASSERT_EQ(s.L, L);
  ASSERT_EQ(s.prio, prio);
  ASSERT_EQ(s.move, move);
  ASSERT_EQ(s.nt, (int)((n + T - 1) / T));
  int evs = 0;
  for (int g = 0; g < G; g++) evs += s.ev_count[g];
  ASSERT_EQ(evs, s.nev);
  check_order(&s);
  if (numeric) check_numeric(&s);
  ts_free(&s);
}

TEST_IMPL(tiled_sched_order) {
  static const int64_t ns[] = {1, 2, 5, 7, 16, 33, 64, 100, 257};
  static const int64_t ts[] = {1, 3, 4, 8, 16, 32, 300};
  int v = 0; /* rotates the slots and the panel stream over the shapes */
  for (size_t a = 0; a < sizeof ns / sizeof ns[0]; a++)
    for (size_t b = 0; b < sizeof ts / sizeof ts[0]; b++)
      for (int G = 1; G <= 8; G++)
        for (int L = 1; L <= TS_MAX_LOOKAHEAD; L++, v++)
          if ((ns[a] + ts[b] - 1) / ts[b] <= 64)
            check_case(ns[a], ts[b], G, L + 1 + v % 3, L, (v / 3) % 2, (v / 6) % 2, 0);
  for (int L = 1; L <= TS_MAX_LOOKAHEAD; L++)
    for (int prio = 0; prio < 2; prio++)
      for (int move = 0; move < 2; move++) {
        check_case(65536, 1024, 4, L + 2, L, prio, move, 0); /* the benchmark's shape */
        check_case(196608, 2048, 16, L + 1, L, prio, move, 0);
      }
  char why[160];
  ts_sched_t s;
  ASSERT_EQ(ts_build(&s, 0, 8, 2, 2, 1, 0, 0, why, sizeof why), -1);
  ASSERT_EQ(ts_build(&s, 8, 8, 17, 2, 1, 0, 0, why, sizeof why), -1);
  ASSERT_EQ(ts_build(&s, 8, 2, 2, 1, 1, 0, 0, why, sizeof why), -1); /* one slot races the lookahead */
  ASSERT_EQ(ts_build(&s, 8, 2, 2, 2, 2, 0, 0, why, sizeof why), -1); /* depth 2 needs 3 */
  ASSERT_EQ(ts_build(&s, 8, 2, 2, 9, 0, 0, 0, why, sizeof why), -1);
  ASSERT_EQ(ts_build(&s, 8, 2, 2, 9, TS_MAX_LOOKAHEAD + 1, 0, 0, why, sizeof why), -1);
  ASSERT_EQ(ts_build(&s, 8, 2, 2, 9, 1, 2, 0, why, sizeof why), -1);
  ASSERT_EQ(ts_build(&s, 8, 2, 2, 9, 1, 0, 2, why, sizeof why), -1);
  ASSERT_STR_CONTAINS(why, "bad arguments");
  return 0;
}

TEST_IMPL(tiled_sched_numeric) {
  static const struct { int64_t n, T; int G, slots; } cs[] = {
      {1, 4, 1, 2},  {3, 4, 2, 2},  {4, 4, 4, 2},  {9, 4, 1, 2},  {9, 4, 2, 2},  {9, 4, 3, 2},   {23, 4, 2, 2},
      {23, 4, 4, 3}, {23, 5, 3, 2}, {40, 4, 4, 4}, {40, 4, 4, 2}, {37, 3, 5, 2}, {64, 8, 4, 3}, {31, 2, 8, 2},
      {50, 7, 2, 2}, {50, 7, 3, 3}, {17, 16, 2, 2}, {100, 6, 4, 2}};
  for (int rep = 0; rep < 2; rep++) /* several random interleavings each */
    for (int L = 1; L <= TS_MAX_LOOKAHEAD; L++)
      for (int prio = 0; prio < 2; prio++)
        for (int move = 0; move < 2; move++)
          for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) /* the case's spare slots above the least */
            check_case(cs[i].n, cs[i].T, cs[i].G, cs[i].slots - 1 + L, L, prio, move, 1);
  return 0;
}
