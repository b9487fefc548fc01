/*
 * runtime/solve/solve.c - muster_solve (over a group) and muster_solve_all (one
 * caller).  See solve.h for the protocol.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "solve/bootstrap.h"
#include "registry/choice.h"
#include "solve/collective.h"
#include "base/env.h"
#include "base/exit_guard.h"
#include "group/group.h"
#include "solve/hint.h"
#include "solve/leader.h"
#include "muster/layout.h"
#include "solve/solve.h"

_Static_assert(sizeof(muster__desc_t) + 256 <= MUSTER_MAX_PAYLOAD, "descriptor too large");
_Static_assert(sizeof(muster__outcome_t) <= MUSTER_MAX_PAYLOAD, "outcome too large");

#define KIND_BIT(k) (1u << (k))
#define ALL_KINDS (KIND_BIT(MUSTER_PROVIDER_LEADER) | KIND_BIT(MUSTER_PROVIDER_COLLECTIVE))

static int is_leader_kind(const muster__provider_t *p) {
  return p && p->v->kind == MUSTER_PROVIDER_LEADER;
}

/* One rank's state during muster_solve. */
typedef struct call {
  muster_group_t *g;
  int R, me;
  const muster_solve_args_t *args;
  const muster_shard_t *mine;
  union {
    muster__desc_t d;
    unsigned char bytes[MUSTER_MAX_PAYLOAD];
  } pub;                                   /* what this rank publishes     */
  const muster__desc_t *ds[MUSTER_MAX_RANKS]; /* everyone's, last exchange */
  const void *blobs[MUSTER_MAX_RANKS];
  muster__provider_t *guess;               /* this rank's guess (ref)      */
  muster__provider_t *chosen;              /* the leader's choice (ref)    */
  uint64_t key;                            /* bootstrap key of the ranks   */
  muster__outcome_t out;                   /* the leader's decision/result */
} call_t;

/* ---- steps 1-2: describe, guess, publish, validate --------------------------------- */

/* The provider this rank expects the leader to choose (solve.h, step 1).
 * A forced one that cannot run here is this rank's problem; a remembered
 * one that cannot is no guess. */
static void guess(call_t *c) {
  muster__desc_t *d = &c->pub.d;
  if (d->problem) return;
  char name[MUSTER_MAX_BACKEND + 1] = "";
  int forced = 1;
  const char *by = d->want[0] ? "args.provider" : "MUSTER_PROVIDER"; /* who forced it, for messages */
  if (d->want[0]) {
    snprintf(name, sizeof name, "%s", d->want);
  } else if (muster__env_provider_choice(muster_routine_str(d->routine), name, sizeof name) < 0) {
    muster__desc_problem(d, MUSTER_EINVAL, "%s", muster_last_error()); /* a malformed MUSTER_PROVIDER */
    return;
  }
  if (!name[0]) {
    forced = 0;
    by = "a remembered choice";
    muster__hint_get(c->R, d, name, sizeof name);
  }
  if (!name[0]) return;
  int rc = muster__provider_get((muster_routine_t)d->routine, (muster_dtype_t)d->dtype,
                                (muster_mem_t)d->mem, name, by, c->R, &c->guess);
  if (rc < 0) {
    if (forced) muster__desc_problem(d, rc, "%s", muster_last_error());
    return;
  }
  snprintf(d->provider, sizeof d->provider, "%s", name);
}

/* Publish this rank's descriptor with an export blob for p (when it is a
 * leader provider), then read and validate everyone's. */
static int publish(call_t *c, muster__provider_t *p) {
  muster__leader_export(is_leader_kind(p) ? p : NULL, c->mine, !muster__group_all_local(c->g),
                        &c->pub.d, c->pub.bytes + sizeof(muster__desc_t));
  int rc = muster_group_exchange(c->g, c->pub.bytes, sizeof(muster__desc_t) + c->pub.d.bloblen);
  if (rc < 0) return rc;
  size_t lens[MUSTER_MAX_RANKS];
  for (int r = 0; r < c->R; r++) {
    const void *data;
    if ((rc = muster_group_payload(c->g, r, &data, &lens[r])) < 0) return rc;
    c->ds[r] = data;
    c->blobs[r] = (const char *)data + sizeof(muster__desc_t);
  }
  return muster__desc_validate(c->ds, lens, c->R);
}

/* ---- steps 3-4: the leader chooses (and maybe runs), everyone hears it -------------- */

static int run_leader(call_t *c) {
  muster_shard_t *shards = calloc((size_t)c->R, sizeof *shards);
  if (!shards) return muster__err(MUSTER_ENOMEM, "leader: out of memory");
  int rc = muster__leader_run(c->chosen, c->ds, c->blobs, c->R, shards, &c->out);
  free(shards);
  return rc;
}

/* Leader: choose from the published facts; run a leader provider at once
 * when every rank guessed it.  Returns the status to announce. */
/* The whole reason of this thread's last solve (muster_solve_reason). */
static __thread char t_reason[MUSTER_MAX_REASON_FULL];

static int lead(call_t *c) {
  muster__query_t mq;
  muster__desc_query(c->ds, c->R, &mq);
  char why[400];
  muster__choice_in_t in = {.q = &mq.q, .want = c->ds[0]->want, .kinds = ALL_KINDS,
                            .no_leader = muster__desc_leader_reach(c->ds, c->R, why, sizeof why)};
  muster__choice_t ch;
  int rc = muster__choose(&in, &ch);
  if (rc == 0) {
    c->chosen = ch.c[0].p;
    muster__provider_ref(c->chosen);
    snprintf(c->out.provider, sizeof c->out.provider, "%s", c->chosen->name);
    muster__reason_copy(c->out.reason, sizeof c->out.reason, ch.reason);
    muster__reason_copy(t_reason, sizeof t_reason, ch.reason);
    c->out.kind = c->chosen->v->kind;
  }
  muster__choice_done(&ch);
  if (rc < 0) return rc;
  int all_guessed = c->guess == c->chosen;
  for (int r = 0; r < c->R; r++) all_guessed &= !strcmp(c->ds[r]->provider, c->chosen->name);
  if (!is_leader_kind(c->chosen) || !all_guessed) {
    c->out.phase = MUSTER__DECIDED;
    return 0;
  }
  c->out.phase = MUSTER__DONE;
  return run_leader(c);
}

static int announce(call_t *c, int status) {
  if (status < 0) snprintf(c->out.msg, sizeof c->out.msg, "%s", muster_last_error());
  return muster_group_set_status(c->g, status, &c->out, sizeof c->out);
}

/* Wait for the leader (liveness, no deadline: it may be computing) and
 * take its outcome.  0 with *status the leader's, or the wait's error. */
static int hear(call_t *c, int *status) {
  int rc = muster__group_barrier_ex(c->g, 0);
  if (rc < 0) return rc;
  const void *data = NULL;
  size_t len = 0;
  if ((rc = muster_group_status(c->g, status, &data, &len)) < 0) return rc;
  if (len >= sizeof c->out) {
    memcpy(&c->out, data, sizeof c->out);
    c->out.provider[sizeof c->out.provider - 1] = c->out.reason[sizeof c->out.reason - 1] =
        c->out.msg[sizeof c->out.msg - 1] = '\0';
  }
  if (*status < 0)
    return muster__err(*status, "%s", c->out.msg[0] ? c->out.msg : muster_strerror(*status));
  return 0;
}

/* ---- step 5: every rank follows the leader's choice -------------------------------------- */

static int follow_leader(call_t *c, int got) {
  muster__desc_t *d = &c->pub.d;
  if (got < 0) muster__desc_problem(d, got, "%s", muster_last_error());
  snprintf(d->provider, sizeof d->provider, "%s", c->out.provider);
  int rc = publish(c, c->chosen); /* a problem reaches every rank here */
  if (rc < 0) return rc;
  if (c->me == 0) {
    c->out.phase = MUSTER__DONE;
    if ((rc = announce(c, run_leader(c))) < 0) return rc;
  }
  int status;
  return hear(c, &status);
}

static void release_comms(call_t *c) {
  if (c->chosen && c->chosen->v->release_comms) c->chosen->v->release_comms(c->chosen->ctx, c->key);
}

static int follow_collective(call_t *c, int got) {
  if (got < 0) {
    char msg[600];
    snprintf(msg, sizeof msg, "rank %d cannot run provider %s, the leader's choice: %s", c->me,
             c->out.provider, muster_last_error());
    muster__group_abortf(c->g, got, "%s", msg);
    return muster__err(got, "%s", msg);
  }
  muster_bootstrap_t boot;
  muster__boot_group(&boot, c->g, c->key);
  muster__group_watch_t gw = {.g = c->g};
  muster__coll_in_t in = {.p = c->chosen, .args = c->args, .mine = c->mine, .rank = c->me,
                          .nranks = c->R, .boot = &boot, .watch = muster__group_watch, .watch_arg = &gw};
  int engine_rc;
  int rc = muster__collective_run(&in, &c->out, &engine_rc);
  if (engine_rc != 0) { /* the others may be stuck in the engine: stop them */
    char msg[600];
    snprintf(msg, sizeof msg, "%s", muster_last_error());
    muster__group_abortf(c->g, rc, "%s", msg);
    if (engine_rc != MUSTER__ENGINE_LEFT) release_comms(c); /* a left call still uses them */
    return muster__err(rc, "%s", msg);
  }
  int brc = muster__group_barrier_ex(c->g, 0);
  if (brc < 0) {
    release_comms(c);
    return brc;
  }
  return rc;
}

static int follow(call_t *c) {
  int got = 0;
  if (!c->chosen && c->guess && !strcmp(c->guess->name, c->out.provider)) {
    c->chosen = c->guess;
    muster__provider_ref(c->chosen);
  } else if (!c->chosen) {
    got = muster__provider_get((muster_routine_t)c->pub.d.routine, (muster_dtype_t)c->pub.d.dtype,
                               (muster_mem_t)c->pub.d.mem, c->out.provider, "the leader's choice", c->R,
                               &c->chosen);
  }
  if (c->out.kind == MUSTER_PROVIDER_LEADER) return follow_leader(c, got);
  return follow_collective(c, got);
}

/* ---- the collective solve ----------------------------------------------------------------- */

static int solve_call(muster_group_t *g, const muster_solve_args_t *args, const muster_shard_t *mine,
                      muster_solve_result_t *res) {
  if (!g) return muster__err(MUSTER_EINVAL, "muster_solve: group is NULL");
  if (res) memset(res, 0, sizeof *res);
  call_t c;
  memset(&c, 0, sizeof c);
  c.g = g;
  c.R = muster_group_size(g);
  c.me = muster_group_rank(g);
  c.args = args;
  c.mine = mine;
  int rc = 0, status = 0;
  muster__desc_describe(args, mine, &c.pub.d);
  guess(&c);
  /* a bad descriptor anywhere: everyone knows it now, nobody waits more */
  MUSTER_CHECK(publish(&c, c.guess));
  c.key = muster__boot_key(muster_group_name(g), c.ds, c.R);
  if (c.me == 0) MUSTER_CHECK(announce(&c, lead(&c)));
  MUSTER_CHECK(hear(&c, &status));
  muster__hint_put(c.R, &c.pub.d, c.out.provider);
  muster__log(MUSTER_LOG_DEBUG, "group %s rank %d: the leader chose %s (%s)%s", muster_group_name(g), c.me,
              c.out.provider, c.out.reason, c.out.phase == MUSTER__DONE ? "; every rank had guessed it: "
              "no extra round" : c.out.kind == MUSTER_PROVIDER_LEADER ? "; exporting again for it"
              : "; every rank calls it");
  if (c.out.phase == MUSTER__DECIDED) rc = follow(&c);
out:
  muster__outcome_result(&c.out, res);
  if (c.guess) muster__provider_release(c.guess);
  if (c.chosen) muster__provider_release(c.chosen);
  return rc;
}

/* ---- one caller holds every shard --------------------------------------------------- */

/* Choose a leader provider for the validated descriptors (referenced in
 * *out, reason into o). */
static int choose_for_all(const muster__desc_t *const *ds, int R, muster__provider_t **out,
                          muster__outcome_t *o) {
  muster__query_t mq;
  muster__desc_query(ds, R, &mq);
  muster__choice_in_t in = {.q = &mq.q, .want = ds[0]->want, .kinds = KIND_BIT(MUSTER_PROVIDER_LEADER)};
  muster__choice_t ch;
  int rc = muster__choose(&in, &ch);
  if (rc == 0) {
    *out = ch.c[0].p;
    muster__provider_ref(*out);
    snprintf(o->provider, sizeof o->provider, "%s", (*out)->name);
    muster__reason_copy(o->reason, sizeof o->reason, ch.reason);
    muster__reason_copy(t_reason, sizeof t_reason, ch.reason);
  }
  muster__choice_done(&ch);
  return rc;
}

static int solve_all_call(const muster_solve_args_t *args, int nshards, const muster_shard_t *shards,
                          muster_solve_result_t *res) {
  if (res) memset(res, 0, sizeof *res);
  if (nshards < 1 || nshards > MUSTER_MAX_RANKS)
    return muster__err(MUSTER_EINVAL, "muster_solve_all: nshards=%d (1..%d)", nshards, MUSTER_MAX_RANKS);
  if (!shards) return muster__err(MUSTER_EINVAL, "muster_solve_all: shards is NULL");
  muster__desc_t *d = calloc((size_t)nshards, sizeof *d);
  muster_shard_t *usable = calloc((size_t)nshards, sizeof *usable);
  unsigned char *blob = malloc(MUSTER__BLOB_CAP);
  muster__provider_t *prov = NULL;
  const muster__desc_t *ds[MUSTER_MAX_RANKS];
  muster__outcome_t out;
  memset(&out, 0, sizeof out);
  int rc = 0;
  if (!d || !usable || !blob) {
    rc = muster__err(MUSTER_ENOMEM, "muster_solve_all: out of memory");
    goto out;
  }
  for (int r = 0; r < nshards; r++) {
    muster__desc_describe(args, &shards[r], &d[r]);
    ds[r] = &d[r];
  }
  MUSTER_CHECK(muster__desc_validate(ds, NULL, nshards));
  MUSTER_CHECK(choose_for_all(ds, nshards, &prov, &out));
  /* all ranks are this process: export hooks still run (they synchronize
   * each shard's stream) */
  for (int r = 0; r < nshards; r++) {
    muster__leader_export(prov, &shards[r], 0, &d[r], blob);
    d[r].bloblen = 0;
    if (d[r].problem) {
      rc = muster__err(d[r].problem, "shard %d: %s", r, d[r].msg);
      goto out;
    }
  }
  MUSTER_CHECK(muster__leader_run(prov, ds, NULL, nshards, usable, &out));
out:
  muster__outcome_result(&out, res);
  if (prov) muster__provider_release(prov);
  free(blob);
  free(usable);
  free(d);
  return rc;
}

/* A rank other than the leader keeps the reason it was sent (cut). */
static void keep_reason(const muster_solve_result_t *res) {
  if (!t_reason[0]) snprintf(t_reason, sizeof t_reason, "%s", res->reason);
}

/* muster_solve with exit() safe meanwhile (exit_guard.h) */
int muster_solve(muster_group_t *g, const muster_solve_args_t *args, const muster_shard_t *mine,
                 muster_solve_result_t *res) {
  if (res) memset(res, 0, sizeof *res);
  int rc = muster__exit_guard_enter("muster_solve");
  if (rc < 0) return rc;
  t_reason[0] = '\0';
  muster_solve_result_t mine_res;
  rc = solve_call(g, args, mine, res ? res : &mine_res);
  keep_reason(res ? res : &mine_res);
  muster__exit_guard_leave();
  return rc;
}

/* muster_solve_all with exit() safe meanwhile (exit_guard.h) */
int muster_solve_all(const muster_solve_args_t *args, int nshards, const muster_shard_t *shards,
                     muster_solve_result_t *res) {
  if (res) memset(res, 0, sizeof *res);
  int rc = muster__exit_guard_enter("muster_solve_all");
  if (rc < 0) return rc;
  t_reason[0] = '\0';
  rc = solve_all_call(args, nshards, shards, res);
  muster__exit_guard_leave();
  return rc;
}

size_t muster_solve_reason(char *buf, size_t cap) {
  size_t len = strlen(t_reason);
  if (buf && cap) muster__reason_copy(buf, cap, t_reason);
  return len;
}
