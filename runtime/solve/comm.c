/*
 * runtime/solve/comm.c - muster_comm_t and muster_solve_comm: solves whose ranks
 * share no /dev/shm, over an out-of-band bootstrap (docs/bootstrap.md).
 *
 * Protocol, every round an allgather of the comm's bootstrap (the same one
 * the provider then builds its communicator with):
 *   1. descriptors (desc.h, no blob), validated the same way on every rank;
 *   2. rank 0 chooses and every rank gets its decision (the other ranks'
 *      slots are unused): among the collective providers, and over a kind
 *      store comm whose ranks can all meet in a muster group on this node
 *      (comm_local.h) the one-node (leader) providers too, with the name
 *      and job of the comm's group when one of those won.  Kind store:
 *      skipped when round 1 showed a call like the last successful one
 *      (comm_plan.h): every rank reuses the choice it kept;
 *   3. collective: every rank says whether it could load the chosen
 *      provider, so that none enters the engine when one cannot.  One-node:
 *      every rank says whether it took its seat in the group (and staged
 *      the pieces the leader cannot reach, comm_stage.h); skipped with a
 *      kept choice, whose group every rank sits in already (round 1's tags
 *      say so): a rank that cannot stage poisons the group instead;
 *   4. collective_solve on every rank (under the watchdog for kind group);
 *      one-node: muster_solve over the group, the provider forced to rank
 *      0's choice (its own rounds: the leader runs it, liveness as in any
 *      group);
 *   5. every rank's end (code, info, message), so all return the same: a
 *      rank that failed makes the others fail with its message (one-node:
 *      an exchange over the group, not the bootstrap).  Skipped
 *      when the engine itself failed: the provider returns the same code on
 *      every rank (ABI v2), and a rank still inside a stuck engine would
 *      never reach the round.  A one-node call that failed (any rank, this
 *      round's outcome) leaves the group on every rank: the next call
 *      meets in a new one.
 */
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "solve/bootstrap.h"
#include "registry/choice.h"
#include "solve/collective.h"
#include "solve/comm_local.h"
#include "solve/comm_plan.h"
#include "base/exit_guard.h"
#include "group/group.h"
#include "solve/mpi.h"
#include "solve/comm_used.h"
#include "solve/storeInt.h"

struct muster_comm {
  char kind[8];
  int rank, size;
  char name[MUSTER_MAX_NAME + 1];
  muster_group_t *g;             /* kind group */
  muster__mpi_t *mpi;            /* kind mpi */
  muster_allgather_fn allgather; /* kind store */
  void *ctx;
  uint64_t key;                  /* of this set of ranks, from the first solve */
  char job[MUSTER_MAX_JOB + 1];  /* opts->job: kind group's, kind store's one-node group's */
  double timeout_s;              /* opts->timeout_s (store: the store's when it is muster's) */
  muster__local_t *local;        /* kind store: the one-node group (comm_local.h) */
  muster__plan_t *plan;          /* kind store: the last call's choice, kept (comm_plan.h) */
  muster__used_t used;           /* providers that ran here; on the open list (comm_used.h) */
};

/* What rank 0 decided (round 2). */
typedef struct decision {
  int32_t status;
  uint32_t kind;
  int32_t expect_src, pad_; /* the winner's expected seconds, as the choice */
  double expect_s;          /* had them (collective.h: the deadline)       */
  char provider[32];
  char reason[MUSTER_MAX_REASON];
  char msg[400];
  muster__local_plan_t local; /* a leader provider's: the group to meet in */
} decision_t;

/* One rank's word after rounds 3 and 5. */
typedef struct verdict {
  int32_t rc, pad_;
  int64_t info;
  char msg[400];
} verdict_t;

/* ---- opening --------------------------------------------------------------------- */

static int open_store(const muster_comm_opts_t *o, muster_comm_t *c) {
  if (!o->allgather) return muster__err(MUSTER_EINVAL, "muster_comm_open: kind store needs an allgather");
  if (o->size < 1 || o->size > MUSTER_MAX_RANKS || o->rank < 0 || o->rank >= o->size)
    return muster__err(MUSTER_EINVAL, "muster_comm_open: rank %d of size %d (size 1..%d)", o->rank, o->size,
                       MUSTER_MAX_RANKS);
  c->rank = o->rank;
  c->size = o->size;
  c->allgather = o->allgather;
  c->ctx = o->ctx;
  return 0;
}

static int open_group(const muster_comm_opts_t *o, muster_comm_t *c) {
  if (!o->name) return muster__err(MUSTER_EINVAL, "muster_comm_open: kind group needs a name");
  muster_group_opts_t go = {.job = o->job, .timeout_s = o->timeout_s, .device = o->device};
  int rc = muster_group_join(o->name, o->rank, o->size, &go, &c->g);
  if (rc < 0) return rc;
  c->rank = o->rank;
  c->size = o->size;
  return 0;
}

static int open_mpi(muster_comm_t *c) {
  int rc = muster__mpi_open(&c->mpi, &c->rank, &c->size);
  if (rc < 0) return rc;
  if (c->size > MUSTER_MAX_RANKS)
    return muster__err(MUSTER_EINVAL, "muster_comm_open: MPI_COMM_WORLD has %d ranks; muster takes at most "
                       "%d", c->size, MUSTER_MAX_RANKS);
  return 0;
}

int muster_comm_open(const muster_comm_opts_t *opts, muster_comm_t **out) {
  if (!opts || !out) return muster__err(MUSTER_EINVAL, "muster_comm_open: %s is NULL", opts ? "out" : "opts");
  *out = NULL;
  const char *kind = opts->kind && *opts->kind ? opts->kind : "auto";
  char launcher[16];
  if (!strcmp(kind, "auto")) {
    if (!muster_launcher_detect(launcher, sizeof launcher, NULL, NULL))
      return muster__err(MUSTER_ENOENT, "muster_comm_open: kind auto, but no launcher found in the "
                         "environment (OMPI_COMM_WORLD_*, PMI_*, SLURM_*); say kind group or store");
    kind = "mpi";
  }
  muster_comm_t *c = calloc(1, sizeof *c);
  if (!c) return muster__err(MUSTER_ENOMEM, "muster_comm_open: out of memory");
  snprintf(c->name, sizeof c->name, "%s", opts->name ? opts->name : kind);
  snprintf(c->job, sizeof c->job, "%s", opts->job ? opts->job : "");
  c->timeout_s = opts->timeout_s;
  muster__used_open(&c->used);
  int rc;
  if (!strcmp(kind, "group")) rc = open_group(opts, c);
  else if (!strcmp(kind, "store")) rc = open_store(opts, c);
  else if (!strcmp(kind, "mpi")) rc = open_mpi(c);
  else rc = muster__err(MUSTER_EINVAL, "muster_comm_open: unknown kind '%.20s' (group, mpi, store, auto)", kind);
  if (rc < 0) {
    muster_comm_close(c);
    return rc;
  }
  snprintf(c->kind, sizeof c->kind, "%s", kind);
  *out = c;
  return 0;
}

int muster_comm_close(muster_comm_t *c) {
  if (!c) return muster__err(MUSTER_EINVAL, "muster_comm_close: NULL comm");
  muster__used_close(&c->used, c->key);
  muster__local_close(c->local);
  muster__plan_free(c->plan);
  int rc = c->g ? muster_group_leave(c->g) : 0;
  muster__mpi_close(c->mpi);
  free(c);
  return rc;
}

int muster_comm_rank(const muster_comm_t *c) { return c ? c->rank : MUSTER_EINVAL; }
int muster_comm_size(const muster_comm_t *c) { return c ? c->size : MUSTER_EINVAL; }
const char *muster_comm_kind(const muster_comm_t *c) { return c ? c->kind : ""; }

/* ---- rounds ---------------------------------------------------------------------- */

static void make_boot(muster_comm_t *c, muster_bootstrap_t *b) {
  if (c->g) {
    muster__boot_group(b, c->g, c->key);
  } else if (c->mpi) {
    muster__mpi_boot(c->mpi, b, c->key);
  } else {
    memset(b, 0, sizeof *b);
    b->rank = c->rank;
    b->size = c->size;
    b->kind = "store";
    b->key = c->key;
    b->ctx = c->ctx;
    b->allgather = c->allgather;
  }
}

static int gather(muster_comm_t *c, const void *mine, void *all, size_t len, const char *what) {
  muster_bootstrap_t b;
  make_boot(c, &b);
  char err[600] = "", was[MUSTER__MPI_PHASE_MAX];
  muster__mpi_phase_get(was, sizeof was);
  if (c->mpi) muster__mpi_phase("in comm %s's exchange: %s", c->name, what);
  int rc = b.allgather(b.ctx, mine, all, len, err, sizeof err);
  if (c->mpi) muster__mpi_phase("%s", was);
  if (rc < 0)
    return muster__err(rc, "comm %s (kind %s), rank %d, %s: %s", c->name, c->kind,
                       c->rank, what, err[0] ? err : muster_strerror(rc));
  return 0;
}

int muster_comm_allgather(muster_comm_t *c, const void *mine, void *all, size_t len, const char *what) {
  if (!c || !mine || !all || !len)
    return muster__err(MUSTER_EINVAL, "muster_comm_allgather: %s", !c ? "comm is NULL" : !mine ? "mine is NULL"
                       : !all ? "all is NULL" : "len is 0");
  return gather(c, mine, all, len, what && *what ? what : "muster_comm_allgather");
}

/* Rank 0: choose a provider from the descriptors: a collective one, or
 * over a kind store comm of one node a one-node one too (comm_local.h). */
static void decide(muster_comm_t *c, const muster__desc_t *const *ds, int R, decision_t *dec) {
  muster__query_t mq;
  muster__desc_query(ds, R, &mq);
  char why[200];
  const char *no_local = c->allgather ? muster__local_why(ds, R, why, sizeof why) : NULL;
  muster__choice_in_t in = {.q = &mq.q, .want = ds[0]->want, .kinds = 1u << MUSTER_PROVIDER_COLLECTIVE,
                            .leader_why = no_local};
  if (c->allgather && !no_local) in.kinds |= 1u << MUSTER_PROVIDER_LEADER;
  muster__choice_t ch;
  dec->status = muster__choose(&in, &ch);
  if (dec->status == 0 && ch.c[0].p->v->kind == MUSTER_PROVIDER_LEADER)
    dec->status = muster__local_plan(&c->local, c->name, c->key, c->job[0] ? c->job : NULL, R, &dec->local);
  if (dec->status == 0) {
    snprintf(dec->provider, sizeof dec->provider, "%s", ch.c[0].p->name);
    muster__reason_copy(dec->reason, sizeof dec->reason, ch.reason);
    dec->kind = ch.c[0].p->v->kind;
    /* its time for the kind mpi deadline: the choice asked its estimate
     * already (a forced one's too), so every rank gets it from here */
    dec->expect_src = !ch.c[0].timed      ? MUSTER__EXPECT_NONE
                      : ch.c[0].estimated ? MUSTER__EXPECT_ESTIMATE
                                          : MUSTER__EXPECT_COST;
    dec->expect_s = ch.c[0].seconds;
  } else {
    snprintf(dec->msg, sizeof dec->msg, "%s", muster_last_error());
  }
  muster__choice_done(&ch);
}

/* The first failing rank's verdict of a round, as this rank's error (0
 * when all are fine). */
static int verdict_of(muster_comm_t *c, verdict_t *all) {
  for (int r = 0; r < c->size; r++)
    if (all[r].rc < 0) {
      all[r].msg[sizeof all[r].msg - 1] = '\0';
      return r == c->rank ? muster__err(all[r].rc, "%s", all[r].msg)
                          : muster__err(all[r].rc, "rank %d of comm %s: %s", r, c->name, all[r].msg);
    }
  return 0;
}

/* Round 3 or 5: share this rank's verdict; the first failing rank's is
 * everyone's (0 when all are fine). */
static int agree(muster_comm_t *c, verdict_t *mine, verdict_t *all, const char *what) {
  int rc = gather(c, mine, all, sizeof *mine, what);
  return rc < 0 ? rc : verdict_of(c, all);
}

/* The store bootstrap under a kind store comm (muster/store.h), whose peers'
 * heartbeat the collective watchdog then checks; NULL for another allgather. */
static muster_store_t *store_of(const muster_comm_t *c) {
  return c->allgather == muster_store_allgather ? c->ctx : NULL;
}

static void remember(muster_comm_t *c, muster__provider_t *p) { muster__used_add(&c->used, p); }

/* Rounds 3-5 once a provider is chosen. */
static int run_chosen(muster_comm_t *c, const muster_solve_args_t *args, const muster_shard_t *mine,
                      const muster_dist_t *dist, const decision_t *dec, verdict_t *all, muster__outcome_t *out) {
  verdict_t v;
  memset(&v, 0, sizeof v);
  muster__provider_t *p = NULL;
  v.rc = muster__provider_get(args->routine, args->dtype, mine->mem, dec->provider, "rank 0's choice",
                              c->size, &p);
  if (v.rc < 0) snprintf(v.msg, sizeof v.msg, "cannot run provider %s, rank 0's choice: %s", dec->provider,
                         muster_last_error());
  int rc = agree(c, &v, all, "agreeing on the provider");
  if (rc < 0) goto out;
  remember(c, p);
  muster_bootstrap_t boot;
  make_boot(c, &boot);
  muster__group_watch_t gw = {.g = c->g};
  muster_store_t *st = store_of(c);
  if (st) muster__store_within(st, "inside provider %s's collective_solve (%s n=%" PRId64 ")", p->name,
                               muster_routine_name(args->routine), args->n);
  muster__coll_in_t in = {.p = p, .args = args, .mine = mine, .dist = dist, .rank = c->rank, .nranks = c->size,
                          .boot = &boot, .watch = c->g ? muster__group_watch : st ? muster__store_watch : NULL,
                          .watch_arg = st ? (void *)st : (void *)&gw,
                          .expect_src = dec->expect_src, .expect_s = dec->expect_s};
  int engine_rc;
  rc = muster__collective_run(&in, out, &engine_rc);
  if (st) {
    muster__store_within(st, NULL);
    muster__store_phase(st, "in muster_solve_comm, after provider %s's collective_solve", p->name);
  }
  if (engine_rc != 0) {
    char msg[600];
    snprintf(msg, sizeof msg, "%s", muster_last_error());
    if (c->g) muster__group_abortf(c->g, rc, "%s", msg); /* the others may be stuck in the engine */
    if (st) muster_store_abort(st, rc, msg);
    if (engine_rc != MUSTER__ENGINE_LEFT && p->v->release_comms) /* a left call still uses them */
      p->v->release_comms(p->ctx, c->key);
    rc = muster__err(rc, "%s", msg);
    goto out;
  }
  memset(&v, 0, sizeof v);
  v.rc = rc;
  v.info = out->info;
  if (rc < 0) snprintf(v.msg, sizeof v.msg, "%s", muster_last_error());
  rc = agree(c, &v, all, "agreeing on the result");
  if (rc < 0 && p->v->release_comms) p->v->release_comms(p->ctx, c->key); /* a rank failed after all */
out:
  if (p) muster__provider_release(p);
  return rc;
}

/* The one-node group's timeout: the store's (how long a silent peer is
 * waited for) over muster's store, else the comm's option. */
static double local_timeout(const muster_comm_t *c) {
  const muster_store_t *st = store_of(c);
  if (st) return st->timeout > 0 ? st->timeout : INFINITY;
  return c->timeout_s;
}

/* Rounds 3-5 once rank 0 chose a one-node provider (comm_local.h).  kept:
 * the kept choice ran (comm_plan.h), whose tags said every rank sits in
 * its group already: no meeting round; a rank whose staging failed
 * poisons the group instead, so that the others leave the group's call,
 * and all hear why in the result round. */
static int run_local(muster_comm_t *c, const muster_solve_args_t *args, const muster_shard_t *mine,
                     const muster__desc_t *d, int64_t leader_pid, const decision_t *dec, int kept, verdict_t *all,
                     muster__outcome_t *out) {
  verdict_t v;
  memset(&v, 0, sizeof v);
  muster_shard_t use;
  v.rc = muster__local_prepare(&c->local, &dec->local, c->rank, c->size, local_timeout(c), mine, d, leader_pid,
                               &use);
  if (v.rc < 0) snprintf(v.msg, sizeof v.msg, "%s", muster_last_error());
  if (kept && v.rc < 0) muster__local_abort(c->local, v.rc, v.msg);
  int rc = kept ? v.rc : agree(c, &v, all, "meeting in the one-node group");
  if (rc == 0 || kept) {
    /* the phase for this rank's next beats, not beaten at once (as
     * muster__store_within would, two more writes to the store per call):
     * no store round runs until the call returns, and the group names a
     * peer that dies meanwhile */
    muster_store_t *st = rc == 0 ? store_of(c) : NULL;
    if (st) muster__store_phase(st, "inside one-node engine %s (group %s, %s n=%" PRId64 ")", dec->provider,
                                dec->local.group, muster_routine_name(args->routine), args->n);
    if (rc == 0) {
      memset(&v, 0, sizeof v);
      v.rc = muster__local_solve(c->local, args, dec->provider, mine, &use, out);
      v.info = out->info;
      if (v.rc < 0) snprintf(v.msg, sizeof v.msg, "%s", muster_last_error());
    }
    if (st) muster__store_phase(st, "in muster_solve_comm, after one-node engine %s", dec->provider);
    /* round 5 over the group, where every rank sits: shared memory, not
     * the store; a peer that died in the group's call fails it too (the
     * call's own error says where), a poisoned group on every rank */
    rc = muster__local_agree(c->local, &v, all, sizeof v);
    if (rc < 0 && v.rc < 0) rc = muster__err(v.rc, "%s", v.msg);
    else if (rc == 0) rc = verdict_of(c, all);
  }
  if (rc < 0) muster__local_drop(c->local); /* every rank alike: the round's outcome */
  return rc;
}

/* The tag of the choice this rank kept (comm_plan.h), or 0: none, or a
 * one-node one whose group it no longer sits in. */
static uint64_t kept_tag(const muster_comm_t *c) {
  const decision_t *k = muster__plan_decision(c->plan);
  if (!k || (k->kind == MUSTER_PROVIDER_LEADER && !muster__local_seated(c->local, k->local.group))) return 0;
  return muster__plan_tag(c->plan);
}

/* Round 2: rank 0 chooses, every rank hears it (more: R slots). */
static int hear_choice(muster_comm_t *c, const muster__desc_t *const *ds, char *more, decision_t *dec) {
  int R = c->size;
  memset(dec, 0, sizeof *dec);
  if (c->rank == 0) decide(c, ds, R, dec);
  int rc = gather(c, dec, more, sizeof *dec, "hearing rank 0's choice");
  if (rc < 0) return rc;
  memcpy(dec, more, sizeof *dec); /* rank 0's slot */
  dec->msg[sizeof dec->msg - 1] = dec->provider[sizeof dec->provider - 1] = dec->reason[sizeof dec->reason - 1] = '\0';
  dec->local.group[sizeof dec->local.group - 1] = dec->local.job[sizeof dec->local.job - 1] = '\0';
  return 0;
}

/* fail: this rank's own failure before the call (muster_solve_comm_fail),
 * published in round 1 as its descriptor's problem; NULL for a solve. */
typedef struct own_fail {
  int code;
  const char *why;
} own_fail_t;

static int solve_comm(muster_comm_t *c, const muster_solve_args_t *args, const muster_shard_t *mine,
                      const muster_dist_t *dist, const own_fail_t *fail, muster_solve_result_t *res) {
  int R = c->size, rc = 0;
  size_t big = sizeof(decision_t) > sizeof(verdict_t) ? sizeof(decision_t) : sizeof(verdict_t);
  /* round 1's words stay (the kept choice keeps them); later rounds use `more` */
  char *all = malloc((size_t)R * (sizeof(muster__plan_word_t) + big));
  char *more = all + (size_t)R * sizeof(muster__plan_word_t);
  const muster__desc_t *ds[MUSTER_MAX_RANKS];
  muster__outcome_t out;
  memset(&out, 0, sizeof out);
  if (!all) return muster__err(MUSTER_ENOMEM, "muster_solve_comm: out of memory");
  muster__plan_word_t w;
  memset(&w, 0, sizeof w);
  muster__desc_describe_dist(args, mine, dist, &w.d);
  if (fail) { /* instead of "args is NULL": every rank validates round 1 alike and fails with it */
    w.d.problem = fail->code;
    snprintf(w.d.msg, sizeof w.d.msg, "%s", fail->why ? fail->why : muster_strerror(fail->code));
  }
  if (c->allgather) { /* kind store: may meet in a group (comm_local.h), may reuse its choice (comm_plan.h) */
    w.d.meet = muster__local_meet();
    w.ctx = muster__plan_ctx();
    w.tag = kept_tag(c);
  }
  MUSTER_CHECK(gather(c, &w, all, sizeof w, "exchanging descriptors"));
  const muster__plan_word_t *words = (const muster__plan_word_t *)all;
  for (int r = 0; r < R; r++) ds[r] = &words[r].d;
  MUSTER_CHECK(muster__desc_validate(ds, NULL, R));
  if (!c->key) c->key = muster__boot_key(c->name, ds, R); /* the same on every rank */
  int64_t leader_pid = ds[0]->pid;
  int kept = muster__plan_hit(c->plan, words, R, w.tag); /* the same verdict on every rank */
  decision_t dec;
  if (kept) memcpy(&dec, muster__plan_decision(c->plan), sizeof dec);
  else MUSTER_CHECK(hear_choice(c, ds, more, &dec));
  snprintf(out.provider, sizeof out.provider, "%s", dec.provider);
  snprintf(out.reason, sizeof out.reason, "%s", dec.reason);
  if (dec.status < 0) {
    rc = muster__err(dec.status, "%s", dec.msg);
    goto out;
  }
  if (dec.kind == MUSTER_PROVIDER_LEADER)
    rc = run_local(c, args, mine, &w.d, leader_pid, &dec, kept, (verdict_t *)more, &out);
  else
    rc = run_chosen(c, args, mine, dist, &dec, (verdict_t *)more, &out);
  /* every rank alike: the call's outcome was agreed (or the set failed for good) */
  if (c->allgather && rc == 0 && !kept) (void)muster__plan_keep(&c->plan, words, R, &dec, sizeof dec);
out:
  if (rc < 0) muster__plan_forget(c->plan);
  muster__outcome_result(&out, res);
  free(all);
  return rc;
}

/* muster_solve_comm(_dist) with exit() safe meanwhile (exit_guard.h) */
static int solve_guarded(muster_comm_t *c, const muster_solve_args_t *args, const muster_shard_t *mine,
                         const muster_dist_t *dist, const own_fail_t *fail, muster_solve_result_t *res) {
  if (res) memset(res, 0, sizeof *res);
  if (!c) return muster__err(MUSTER_EINVAL, "muster_solve_comm: comm is NULL");
  int rc = muster__exit_guard_enter("muster_solve_comm");
  if (rc < 0) return rc;
  char was[MUSTER__MPI_PHASE_MAX];
  if (c->mpi) { /* what the others' messages say if this rank goes silent (mpi.h) */
    muster__mpi_phase_get(was, sizeof was);
    muster__mpi_phase("in muster_solve_comm (comm %s)", c->name);
  }
  rc = solve_comm(c, args, mine, dist, fail, res);
  if (c->mpi) muster__mpi_phase("%s", was);
  muster__exit_guard_leave();
  return rc;
}

int muster_solve_comm(muster_comm_t *c, const muster_solve_args_t *args, const muster_shard_t *mine,
                      muster_solve_result_t *res) {
  return solve_guarded(c, args, mine, NULL, NULL, res);
}

int muster_solve_comm_fail(muster_comm_t *c, int code, const char *why) {
  if (code >= 0)
    return muster__err(MUSTER_EINVAL, "muster_solve_comm_fail: code %d must be a negative MUSTER_E* code", code);
  own_fail_t f = {.code = code, .why = why};
  return solve_guarded(c, NULL, NULL, NULL, &f, NULL);
}

int muster_solve_comm_dist(muster_comm_t *c, const muster_solve_args_t *args, const muster_shard_t *mine,
                           const muster_dist_t *dist, muster_solve_result_t *res) {
  if (!dist) {
    if (res) memset(res, 0, sizeof *res);
    return muster__err(MUSTER_EINVAL, "muster_solve_comm_dist: dist is NULL");
  }
  return solve_guarded(c, args, mine, dist, NULL, res);
}
