/*
 * runtime/solve/named.c - muster_solve_named and muster_abort_named
 * (muster/named.h): join, solve, leave in one call, for the adapters.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "base/error.h"
#include "group/group.h"
#include "muster/named.h"

#define FACTS_MAGIC 0x6d7573746e616d64ull /* "mustnamd": a payload of this step */

/* What each rank tells the others before the solve when it must (a tag, or
 * n to learn). */
typedef struct facts {
  uint64_t magic, tag;
  int64_t ncols;
} facts_t;

static int check_who(const muster_named_t *who, const char *fn) {
  if (!who || !who->group) return muster__err(MUSTER_EINVAL, "%s: %s is NULL", fn, who ? "who->group" : "who");
  return 0;
}

static int join(const muster_named_t *who, muster_group_t **g) {
  muster_group_opts_t o = {.job = who->job, .timeout_s = who->timeout_s, .device = who->device};
  int rc = muster_group_join(who->group, who->rank, who->nranks, &o, g);
  return rc < 0 ? muster__err_prefix(rc, "joining group %s", who->group) : rc;
}

/* A rank whose facts disagree with this one's (why): everyone sees every
 * rank's, so all fail alike; the group is poisoned on the way. */
static int mismatch(muster_group_t *g, const char *why) {
  (void)muster_group_abort(g, MUSTER_EMISMATCH, why);
  return muster__err(MUSTER_EMISMATCH, "%s", why);
}

/* Exchange the facts and check the tags; *n gets the sum of the widths,
 * *col0 the sum of those below this rank. */
static int tell_facts(muster_group_t *g, uint64_t tag, int64_t ncols, int64_t *n, int64_t *col0) {
  facts_t mine = {.magic = FACTS_MAGIC, .tag = tag, .ncols = ncols};
  int rc = muster_group_exchange(g, &mine, sizeof mine);
  if (rc < 0) return rc;
  int me = muster_group_rank(g);
  char why[400];
  *n = *col0 = 0;
  for (int r = 0; r < muster_group_size(g); r++) {
    const void *p = NULL;
    size_t len = 0;
    facts_t theirs;
    if ((rc = muster_group_payload(g, r, &p, &len)) < 0) return rc;
    if (len == sizeof theirs) memcpy(&theirs, p, sizeof theirs);
    if (len != sizeof theirs || theirs.magic != FACTS_MAGIC) {
      snprintf(why, sizeof why, "rank %d told the others n and its tag before the solve, rank %d did "
               "not: every rank of a named solve must pass args->n == 0 (or not) and a tag (or not) "
               "alike (group %s)", me, r, muster_group_name(g));
      return mismatch(g, why);
    }
    if (theirs.tag != tag) {
      snprintf(why, sizeof why, "rank %d passed tag %" PRIu64 " but rank %d tag %" PRIu64 ": two calls "
               "that overlap met in group %s", me, tag, r, theirs.tag, muster_group_name(g));
      return mismatch(g, why);
    }
    *n += theirs.ncols;
    if (r < me) *col0 += theirs.ncols;
  }
  return 0;
}

/* The solve of a joined rank; n == 0 learned first. */
static int solve_joined(muster_group_t *g, muster_named_t *who, const muster_solve_args_t *args,
                        const muster_shard_t *mine, muster_solve_result_t *res) {
  muster_solve_args_t a = *args;
  muster_shard_t s = *mine;
  int learn = args->n == 0;
  if (learn && args->layout != MUSTER_LAYOUT_BLOCK) {
    char why[200];
    snprintf(why, sizeof why, "rank %d: args->n == 0 (learn n from the widths) needs the block layout",
             who->rank);
    (void)muster_group_abort(g, MUSTER_EINVAL, why);
    return muster__err(MUSTER_EINVAL, "%s", why);
  }
  if (learn || who->tag) {
    int64_t n, col0;
    int rc = tell_facts(g, who->tag, mine->ncols, &n, &col0);
    if (rc < 0) return rc;
    if (learn) {
      a.n = n;
      s.col0 = col0;
    }
  }
  who->n = a.n;
  return muster_solve(g, &a, &s, res);
}

int muster_solve_named(muster_named_t *who, const muster_solve_args_t *args, const muster_shard_t *mine,
                       muster_solve_result_t *res) {
  if (res) memset(res, 0, sizeof *res);
  int rc = check_who(who, "muster_solve_named");
  if (rc < 0) return rc;
  if (!args || !mine)
    return muster__err(MUSTER_EINVAL, "muster_solve_named: %s is NULL", args ? "mine" : "args");
  muster_group_t *g = NULL;
  who->n = 0;
  if ((rc = join(who, &g)) < 0) return rc;
  rc = solve_joined(g, who, args, mine, res);
  char msg[1024];
  snprintf(msg, sizeof msg, "%s", rc < 0 ? muster_last_error() : "");
  int lrc = muster_group_leave(g);
  if (rc < 0) return muster__err(rc, "%s", msg); /* the solve's, not the leave's */
  if (lrc < 0) return muster__err_prefix(lrc, "leaving group %s", who->group);
  return 0;
}

int muster_abort_named(const muster_named_t *who, int code, const char *why) {
  int rc = check_who(who, "muster_abort_named");
  if (rc < 0) return rc;
  if (code >= 0)
    return muster__err(MUSTER_EINVAL, "muster_abort_named: group %s: code %d must be a negative MUSTER_E* "
                       "code", who->group, code);
  muster_group_t *g = NULL;
  if ((rc = join(who, &g)) < 0) return rc;
  /* Poisoned before every rank has sat, the group would lose its name at
   * once (so that a next call does not meet the poison), and a rank of
   * this call that comes later would meet in a fresh segment and wait out
   * its deadline.  So wait (the group's timeout at most) until all have
   * come: each then hears of the abort at its next round or join. */
  (void)muster__group_await_formed(g, muster__group_timeout(g));
  rc = muster_group_abort(g, code, why ? why : muster_strerror(code));
  (void)muster_group_leave(g); /* it fails by design: the group is poisoned */
  return rc < 0 ? rc : 0;
}
