/*
 * runtime/registry/choice.c - the engine choice (see choice.h and docs/choice.md).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "registry/choice.h"
#include "registry/cost.h"
#include "base/env.h"
#include "base/exit_guard.h"
#include "muster/parse.h"

static const char *mem_str(int mem) {
  return mem == MUSTER_MEM_CUDA ? "cuda" : mem == MUSTER_MEM_HOST ? "host" : "any";
}

static const char *span_str(unsigned span) {
  return span == MUSTER_SPAN_THREADS     ? "threads of one process"
         : span == MUSTER_SPAN_PROCESSES ? "processes of one node"
         : span == MUSTER_SPAN_NODES     ? "processes of several nodes"
                                         : "ranks";
}

/* ---- one candidate ------------------------------------------------------------ */

/* Can p run the call at all?  0, or a code with why in c->note. */
static int fit(const muster__choice_in_t *in, muster__cand_t *c) {
  const muster__provider_t *p = c->p;
  const muster_provider_query_t *q = in->q;
  const muster_provider_v2_t *v = p->v;
#define NOPE(...) (snprintf(c->note, sizeof c->note, __VA_ARGS__), MUSTER_EUNSUPPORTED)
  if (!v || !p->available) return NOPE("%.190s", p->why);
  if (!(v->routines & (1u << q->routine))) return NOPE("does not implement the routine");
  if ((q->flags & MUSTER_LOGDET) && !(v->routines & MUSTER_CAP_LOGDET))
    return NOPE("cannot return log det A with the solve (MUSTER_LOGDET)");
  if (!(v->dtypes & (1u << q->dtype))) return NOPE("no dtype %s", muster_dtype_str(q->dtype));
  if (q->mem && !(v->mem_kinds & (1u << q->mem))) return NOPE("no %s memory", mem_str(q->mem));
  if (!(in->kinds & (1u << v->kind)))
    return NOPE("%.195s", v->kind != MUSTER_PROVIDER_LEADER
                              ? "a collective provider: every rank must call it (muster_solve, "
                                "muster_solve_comm), not one caller (muster_solve_all)"
                          : in->leader_why ? in->leader_why
                                           : "a leader provider: muster_solve_comm runs collective providers "
                                             "only (a leader provider needs muster_solve over a group, one node)");
  if (v->kind == MUSTER_PROVIDER_LEADER && in->no_leader) {
    c->unreachable = 1;
    return NOPE("%s", in->no_leader);
  }
  if (q->span && !(v->spans & q->span)) return NOPE("does not run %s", span_str(q->span));
  if (v->max_shards > 0 && q->nranks > v->max_shards)
    return NOPE("takes at most %d ranks, the call has %d", v->max_shards, q->nranks);
#undef NOPE
  return 0;
}

/* Its expected time: estimate, else cost table, else none.  0, or the
 * estimate's refusal (note says why). */
static int time_of(const muster__choice_in_t *in, muster__cand_t *c) {
  const muster__provider_t *p = c->p;
  const muster_provider_query_t *q = in->q;
  char said[sizeof ((muster_provider_estimate_t *)0)->note] = "";
  if (p->v->estimate && !in->no_estimate) {
    muster_provider_estimate_t est;
    memset(&est, 0, sizeof est);
    est.seconds = -1;
    int rc = p->v->estimate(p->ctx, q, &est);
    est.note[sizeof est.note - 1] = '\0';
    if (rc < 0) {
      snprintf(c->note, sizeof c->note, "estimate refused: %s", est.note[0] ? est.note : muster_strerror(rc));
      return rc;
    }
    c->peak_bytes = est.peak_bytes;
    if (est.seconds >= 0) {
      c->timed = c->estimated = 1;
      c->seconds = est.seconds;
      int k = snprintf(c->note, sizeof c->note, "estimate: %s", est.note[0] ? est.note : "(no note)");
      if (est.peak_bytes && k > 0 && (size_t)k < sizeof c->note)
        snprintf(c->note + k, sizeof c->note - (size_t)k, ", peak %.2f GiB on one device",
                 est.peak_bytes / (double)(1u << 30));
      return 0;
    }
    snprintf(said, sizeof said, "%s", est.note); /* no model, but words for the reason */
  }
  char engine[32] = ""; /* the engine's version picks the table's rows (cost.h rule 1b) */
  if (p->cost && p->engine_version && p->engine_version(p->ctx, engine, sizeof engine) < 0) engine[0] = '\0';
  engine[sizeof engine - 1] = '\0';
  if (p->cost &&
      muster__cost_lookup_ver(p->cost, engine[0] ? engine : NULL, q->routine, q->dtype, q->ndevices,
                              q->nnodes > 0 ? q->nnodes : 1, q->n, q->nrhs, &c->seconds, c->note,
                              sizeof c->note) == 0) {
    c->timed = 1;
    return 0;
  }
  const char *table = p->cost ? "its cost table has no such row"
                     : p->cost_why[0] ? p->cost_why : "no cost table";
  c->est_noted = said[0] != '\0';
  if (c->est_noted)
    snprintf(c->note, sizeof c->note, "no estimate (%.119s), %.60s", said, table);
  else
    snprintf(c->note, sizeof c->note, "no estimate, %.180s", table);
  return 0;
}

/* ---- ranking -------------------------------------------------------------------- */

static int better(const muster__cand_t *a, const muster__cand_t *b) {
  if (a->ok != b->ok) return a->ok;
  if (a->timed != b->timed) return a->timed;
  if (a->timed && a->seconds != b->seconds) return a->seconds < b->seconds;
  int pa = a->p->v ? a->p->v->priority : 0, pb = b->p->v ? b->p->v->priority : 0;
  if (pa != pb) return pa > pb;
  return strcmp(a->p->name, b->p->name) < 0;
}

/* Stable insertion sort: n is small, and equal candidates keep their order. */
static void sort_cands(muster__cand_t *c, int n) {
  for (int i = 1; i < n; i++) {
    muster__cand_t x = c[i];
    int j = i;
    for (; j > 0 && better(&x, &c[j - 1]); j--) c[j] = c[j - 1];
    c[j] = x;
  }
}

static void add(char *buf, size_t cap, size_t *used, const char *fmt, ...) MUSTER_PRINTF(4, 5);
static void add(char *buf, size_t cap, size_t *used, const char *fmt, ...) {
  if (*used >= cap) return;
  va_list ap;
  va_start(ap, fmt);
  int k = vsnprintf(buf + *used, cap - *used, fmt, ap);
  va_end(ap);
  if (k > 0) *used += (size_t)k;
}

static int prio(const muster__cand_t *c) { return c->p->v ? c->p->v->priority : 0; }

static void write_reason(muster__choice_t *ch) {
  char *r = ch->reason;
  size_t cap = sizeof ch->reason, used = 0;
  const muster__cand_t *w = &ch->c[0], *second = ch->n > 1 && ch->c[1].ok ? &ch->c[1] : NULL;
  if (ch->forced[0]) {
    add(r, cap, &used, "forced by %s", ch->forced_by);
    if (w->timed) add(r, cap, &used, "; expected %.3g s (%s)", w->seconds, w->note);
  } else if (!second) {
    add(r, cap, &used, "the only provider that can run it");
    if (w->timed) add(r, cap, &used, "; expected %.3g s (%s)", w->seconds, w->note);
  } else if (w->timed && second->timed && w->seconds < second->seconds) {
    add(r, cap, &used, "fastest: %.3g s (%s) vs %s %.3g s", w->seconds, w->note, second->p->name,
        second->seconds);
  } else if (w->timed && !second->timed) {
    add(r, cap, &used, "fastest known: %.3g s (%s); %s has no estimate or cost table", w->seconds,
        w->note, second->p->name);
  } else {
    if (w->timed) add(r, cap, &used, "ties with %s at %.3g s; ", second->p->name, w->seconds);
    else add(r, cap, &used, "no estimate or cost table; ");
    if (prio(w) != prio(second))
      add(r, cap, &used, "higher priority (%d, %s has %d)", prio(w), second->p->name, prio(second));
    else
      add(r, cap, &used, "same priority (%d) as %s, name order", prio(w), second->p->name);
    if (second->est_noted) add(r, cap, &used, "; %s: %s", second->p->name, second->note);
  }
  for (int i = 1; i < ch->n; i++)
    if (!ch->c[i].ok) add(r, cap, &used, "; not %s: %s", ch->c[i].p->name, ch->c[i].note);
  if (used >= cap && cap > 4) memcpy(r + cap - 4, "...", 4);
}

void muster__reason_copy(char *dst, size_t cap, const char *src) {
  if (!cap) return;
  size_t len = strlen(src);
  snprintf(dst, cap, "%s", src);
  if (len >= cap && cap > 4) memcpy(dst + cap - 4, "...", 4);
}

/* The error when nothing can run the call, listing each candidate. */
static int no_winner(const muster__choice_in_t *in, const muster__choice_t *ch) {
  const muster_provider_query_t *q = in->q;
  const char *rname = muster_routine_str(q->routine);
  char list[900] = "";
  size_t used = 0;
  for (int i = 0; i < ch->n; i++)
    add(list, sizeof list, &used, "%s%s (%s): %s", i ? "; " : "", ch->c[i].p->name, ch->c[i].p->path,
        ch->c[i].note);
  if (ch->forced[0] && ch->n == 0)
    return muster__err(MUSTER_ENOPROVIDER, "provider '%s' (%s) does not provide %s", ch->forced,
                       ch->forced_by, rname);
  int unreachable = 0;
  for (int i = 0; i < ch->n; i++) unreachable |= ch->c[i].unreachable;
  if (unreachable) /* a provider would run it but for the caller's shards */
    return muster__err(MUSTER_EINVAL, "%s (candidates: %s)", in->no_leader, list);
  if (ch->n == 0)
    return muster__err(MUSTER_ENOPROVIDER, "no provider of %s found on the provider path "
                       "(MUSTER_PROVIDER_PATH=%s)", rname,
                       getenv("MUSTER_PROVIDER_PATH") ? getenv("MUSTER_PROVIDER_PATH") : "(default)");
  return muster__err(ch->forced[0] ? MUSTER_EUNSUPPORTED : MUSTER_ENOPROVIDER,
                     "no usable provider for %s %s on %s memory, %d rank%s: %s", rname,
                     muster_dtype_str(q->dtype), mem_str(q->mem), q->nranks, q->nranks == 1 ? "" : "s",
                     list);
}

int muster__choice_rank(const muster__choice_in_t *in, const char *forced, const char *forced_by,
                        muster__provider_t *const *provs, int n, muster__choice_t *ch) {
  /* not a memset of the whole (8 KB): a choice is made on every call */
  ch->n = ch->held = 0;
  ch->reason[0] = '\0';
  snprintf(ch->forced, sizeof ch->forced, "%s", forced ? forced : "");
  ch->forced_by = forced_by ? forced_by : "";
  for (int i = 0; i < n && ch->n < MUSTER__CHOICE_MAX; i++) {
    if (ch->forced[0] && strcmp(provs[i]->name, ch->forced) != 0) continue;
    muster__cand_t *c = &ch->c[ch->n++];
    memset(c, 0, sizeof *c);
    c->p = provs[i];
    c->ok = fit(in, c) == 0 && time_of(in, c) == 0;
  }
  sort_cands(ch->c, ch->n);
  if (ch->n == 0 || !ch->c[0].ok) return no_winner(in, ch);
  write_reason(ch);
  return 0;
}

/* ---- with the registry ------------------------------------------------------------- */

static void log_choice(const muster__choice_in_t *in, const muster__choice_t *ch, int rc) {
  if (muster__log_level() < MUSTER_LOG_INFO) return;
  const muster_provider_query_t *q = in->q;
  char what[160];
  snprintf(what, sizeof what, "%s %s n=%" PRId64 " nrhs=%" PRId64 ", %d rank%s (%s), %s memory, "
           "%d device%s", muster_routine_str(q->routine), muster_dtype_str(q->dtype), q->n, q->nrhs,
           q->nranks, q->nranks == 1 ? "" : "s", span_str(q->span), mem_str(q->mem), q->ndevices,
           q->ndevices == 1 ? "" : "s");
  for (int i = 0; i < ch->n; i++) {
    const muster__cand_t *c = &ch->c[i];
    if (c->ok && c->timed)
      muster__log(MUSTER_LOG_INFO, "choice for %s: %s (priority %d): %.4g s, %s", what, c->p->name,
                  prio(c), c->seconds, c->note);
    else
      muster__log(MUSTER_LOG_INFO, "choice for %s: %s (priority %d): %s%s", what, c->p->name,
                  prio(c), c->ok ? "" : "cannot run it: ", c->note);
  }
  if (rc == 0) muster__log(MUSTER_LOG_INFO, "choice for %s: %s wins: %s", what, ch->c[0].p->name, ch->reason);
  else muster__log(MUSTER_LOG_INFO, "choice for %s: none: %s", what, muster_last_error());
}

int muster__choose(const muster__choice_in_t *in, muster__choice_t *ch) {
  const char *rname = muster_routine_str(in->q->routine);
  char forced[MUSTER_MAX_BACKEND + 1] = "";
  const char *by = "";
  if (in->want && *in->want) {
    int rc = muster_parse_backend(in->want, strlen(in->want));
    if (rc < 0) {
      ch->n = ch->held = 0;
      return muster__err_prefix(rc, "provider requested for %s", rname ? rname : "?");
    }
    snprintf(forced, sizeof forced, "%s", in->want);
    by = in->want_by ? in->want_by : "args.provider";
  } else if (rname) {
    int rc = muster__env_provider_choice(rname, forced, sizeof forced);
    if (rc < 0) {
      ch->n = ch->held = 0;
      return rc;
    }
    by = "MUSTER_PROVIDER";
  }
  muster__provider_t *provs[MUSTER__CHOICE_MAX];
  int n = muster__provider_collect(in->q->routine, forced, (int)in->q->mem, provs,
                                   MUSTER__CHOICE_MAX);
  if (n < 0) {
    ch->n = ch->held = 0;
    return n;
  }
  int rc = muster__choice_rank(in, forced, by, provs, n, ch);
  ch->held = 1;
  /* every provider collected is in ch->c (the forced filter matched what
   * collect returned), so choice_done releases each exactly once */
  log_choice(in, ch, rc);
  return rc;
}

void muster__choice_done(muster__choice_t *ch) {
  if (!ch->held) return;
  for (int i = 0; i < ch->n; i++) muster__provider_release(ch->c[i].p);
  ch->n = 0;
  ch->held = 0;
}

int muster__provider_get(muster_routine_t routine, muster_dtype_t dtype, muster_mem_t mem,
                         const char *name, const char *by, int nranks, muster__provider_t **out) {
  *out = NULL;
  muster_provider_query_t q;
  memset(&q, 0, sizeof q);
  q.routine = routine;
  q.dtype = dtype;
  q.mem = mem;
  q.nranks = nranks;
  muster__choice_in_t in = {.q = &q, .want = name, .want_by = by, .kinds = ~0u, .no_estimate = 1};
  muster__choice_t ch;
  int rc = muster__choose(&in, &ch);
  if (rc == 0) {
    *out = ch.c[0].p;
    muster__provider_ref(*out);
  }
  muster__choice_done(&ch);
  return rc;
}

/* ---- public ------------------------------------------------------------------------- */

static int provider_choose_call(const muster_provider_query_t *q, const char *want, char *name,
                                size_t cap, char *reason, size_t rcap) {
  if (!q || !name || cap == 0)
    return muster__err(MUSTER_EINVAL, "muster_provider_choose: %s", q ? "no name buffer" : "query is NULL");
  name[0] = '\0';
  if (reason && rcap) reason[0] = '\0';
  if (!muster_routine_str(q->routine) || !muster_dtype_str(q->dtype) || q->n < 1 || q->nranks < 1 ||
      q->nranks > MUSTER_MAX_RANKS)
    return muster__err(MUSTER_EINVAL, "muster_provider_choose: routine %d, dtype %d, n %" PRId64
                       ", nranks %d: not a call", (int)q->routine, (int)q->dtype, q->n, q->nranks);
  muster__choice_in_t in = {.q = q, .want = want, .kinds = ~0u};
  muster__choice_t ch;
  int rc = muster__choose(&in, &ch);
  if (rc == 0) {
    snprintf(name, cap, "%s", ch.c[0].p->name);
    if (reason && rcap) muster__reason_copy(reason, rcap, ch.reason);
  }
  muster__choice_done(&ch);
  return rc;
}

/* muster_provider_choose with exit() safe meanwhile (exit_guard.h) */
int muster_provider_choose(const muster_provider_query_t *q, const char *want, char *name,
                           size_t cap, char *reason, size_t rcap) {
  int rc = muster__exit_guard_enter("muster_provider_choose");
  if (rc < 0) return rc;
  rc = provider_choose_call(q, want, name, cap, reason, rcap);
  muster__exit_guard_leave();
  return rc;
}
