/*
 * runtime/solve/comm_local.c - muster_solve_comm's one-node route: the
 * comm's group, its name and the meeting check (see comm_local.h;
 * the staging is comm_stage.c).
 */
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "solve/comm_local.h"
#include "solve/comm_stage.h"
#include "base/clock.h"
#include "base/error.h"
#include "base/proc.h"
#include "group/group.h"
#include "shm/segment.h"

struct muster__local {
  muster_group_t *g;               /* joined, or NULL                       */
  char group[MUSTER_MAX_NAME + 1]; /* g's name                              */
  muster__stage_t stage;           /* this rank's staged pieces             */
  double in_s;                     /* this call's staging in (seconds)      */
};

/* Groups named by this process for its comms: a name is never made twice
 * here, and rank 0's (pid, start time) are in the comm's key. */
static atomic_uint_fast64_t names_made;

/* ---- where ranks can meet ---------------------------------------------------------- */

uint64_t muster__local_meet(void) {
  struct stat st;
  uint64_t ns = muster__proc_self_pidns();
  if (!ns || stat(muster__segment_dir(), &st) != 0) return 0;
  uint64_t dev = (uint64_t)st.st_dev, ino = (uint64_t)st.st_ino, uid = (uint64_t)geteuid();
  uint64_t h = muster__hash(MUSTER__HASH_START, &dev, sizeof dev);
  h = muster__hash(h, &ino, sizeof ino);
  h = muster__hash(h, &ns, sizeof ns);
  h = muster__hash(h, &uid, sizeof uid);
  return h ? h : 1;
}

const char *muster__local_why(const muster__desc_t *const *ds, int R, char *why, size_t cap) {
  if (ds[0]->layout == MUSTER__LAYOUT_DIST) {
    snprintf(why, cap, "a leader provider: a 2-D piece (muster_solve_comm_dist) goes to collective "
             "providers only (the one-node engines take 1-D layouts)");
    return why;
  }
  for (int r = 0; r < R; r++) {
    const muster__desc_t *d = ds[r];
    if (d->host != ds[0]->host) {
      snprintf(why, cap, "a leader provider: muster_solve_comm runs one only when every rank is on one "
               "node; rank %d (pid %" PRId64 ") is on another node than rank 0", r, d->pid);
      return why;
    }
    if (!d->meet || d->meet != ds[0]->meet) {
      snprintf(why, cap, "a leader provider: rank %d (pid %" PRId64 ") cannot meet rank 0 in a muster "
               "group: another /dev/shm, pid namespace or user", r, d->pid);
      return why;
    }
  }
  return NULL;
}

/* ---- the group --------------------------------------------------------------------- */

static int local_get(muster__local_t **l) {
  if (!*l && !(*l = calloc(1, sizeof **l)))
    return muster__err(MUSTER_ENOMEM, "muster_solve_comm: out of memory for the one-node group");
  return 0;
}

/* name.<key>.<k>, the comm's name cut to what a group name may hold */
static void make_name(char *out, size_t cap, const char *comm_name, uint64_t key) {
  char part[41];
  size_t k = 0;
  for (const char *s = comm_name; *s && k < sizeof part - 1; s++, k++) {
    char ch = *s;
    int plain = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
                ch == '.' || ch == '-' || ch == '_';
    part[k] = plain ? ch : '_';
  }
  part[k] = '\0';
  uint64_t n = atomic_fetch_add(&names_made, 1) + 1;
  snprintf(out, cap, "%s.%016" PRIx64 ".%" PRIu64, k ? part : "comm", key, n);
}

int muster__local_plan(muster__local_t **l, const char *comm_name, uint64_t key, const char *opts_job, int R,
                       muster__local_plan_t *plan) {
  memset(plan, 0, sizeof *plan);
  int rc = local_get(l);
  if (rc < 0) return rc;
  if ((*l)->g) snprintf(plan->group, sizeof plan->group, "%s", (*l)->group);
  else make_name(plan->group, sizeof plan->group, comm_name, key);
  /* the job as a join resolves it, so that every rank meets rank 0's */
  muster_group_opts_t go = {.job = opts_job, .device = -1};
  const char *job;
  double timeout;
  rc = muster__group_check_args(plan->group, 0, R, &go, &job, &timeout);
  if (rc < 0) return muster__err_prefix(rc, "muster_solve_comm's one-node group");
  snprintf(plan->job, sizeof plan->job, "%s", job);
  return 0;
}

void muster__local_drop(muster__local_t *l) {
  if (!l || !l->g) return;
  muster__group_leave_forget(l->g); /* its error was the call's */
  l->g = NULL;
  l->group[0] = '\0';
}

int muster__local_seated(const muster__local_t *l, const char *group) {
  return l && l->g && !strcmp(l->group, group);
}

void muster__local_abort(muster__local_t *l, int code, const char *msg) {
  if (l && l->g) muster__group_abortf(l->g, code, "%s", msg);
}

int muster__local_agree(muster__local_t *l, const void *mine, void *all, size_t len) {
  int rc = muster_group_exchange(l->g, mine, len);
  for (int r = 0; r < muster_group_size(l->g) && rc == 0; r++) {
    const void *p;
    size_t got;
    if ((rc = muster_group_payload(l->g, r, &p, &got)) == 0 && got != len)
      rc = muster__err(MUSTER_EMISMATCH, "group %s: rank %d published %zu bytes, not %zu", l->group, r, got, len);
    if (rc == 0) memcpy((char *)all + (size_t)r * len, p, len);
  }
  return rc < 0 ? muster__err_prefix(rc, "muster_solve_comm's one-node group, agreeing on the result") : 0;
}

void muster__local_close(muster__local_t *l) {
  if (!l) return;
  muster__local_drop(l);
  muster__stage_free(&l->stage);
  free(l);
}

static int seat(muster__local_t *l, const muster__local_plan_t *plan, int rank, int R, double timeout_s,
                int device) {
  if (l->g && strcmp(l->group, plan->group)) muster__local_drop(l); /* rank 0 named another */
  if (l->g) return 0;
  muster_group_opts_t go = {.job = plan->job, .timeout_s = timeout_s, .device = device};
  int rc = muster_group_join(plan->group, rank, R, &go, &l->g);
  if (rc < 0) return muster__err_prefix(rc, "muster_solve_comm's one-node group");
  snprintf(l->group, sizeof l->group, "%s", plan->group);
  return 0;
}

int muster__local_prepare(muster__local_t **l, const muster__local_plan_t *plan, int rank, int R,
                          double timeout_s, const muster_shard_t *mine, const muster__desc_t *d,
                          int64_t leader_pid, muster_shard_t *use) {
  *use = *mine;
  int rc = local_get(l);
  if (rc < 0) return rc;
  rc = seat(*l, plan, rank, R, timeout_s, mine->mem == MUSTER_MEM_CUDA ? mine->device : -1);
  /* a rank in the leader's process needs no copy: the leader reads its memory */
  (*l)->stage.rank = rank;
  double t0 = muster__mono_s();
  if (rc == 0 && d->pid != leader_pid) rc = muster__stage_in(&(*l)->stage, d, mine, use);
  (*l)->in_s = muster__mono_s() - t0;
  return rc;
}

/* MUSTER_LOG=debug: where this rank's call went (the route's own costs
 * against the engine's: the copies are synchronous, so their seconds
 * include waiting for work queued on the shard's stream before them). */
static void log_phases(const muster__local_t *l, const char *provider, size_t staged, double solve_s,
                       double engine_s, double out_s) {
  if (muster__log_level() < MUSTER_LOG_DEBUG) return; /* no formatting on the per-call path otherwise */
  char in[96] = "nothing staged";
  if (staged)
    snprintf(in, sizeof in, "staged in %.3g GB in %.2f ms (A back: %s)", (double)staged / 1e9, 1e3 * l->in_s,
             l->stage.a_back ? "yes" : "no");
  muster__log(MUSTER_LOG_DEBUG, "group %s rank %d: one-node route on %s: %s, muster_solve %.2f ms (engine %.2f ms), "
              "staged out in %.2f ms", l->group, l->stage.rank, provider, in, 1e3 * solve_s, 1e3 * engine_s,
              1e3 * out_s);
}

int muster__local_solve(muster__local_t *l, const muster_solve_args_t *args, const char *provider,
                        const muster_shard_t *mine, const muster_shard_t *use, muster__outcome_t *out) {
  muster_solve_args_t a = *args;
  a.provider = provider; /* rank 0's choice: the group's leader does not choose again */
  muster_solve_result_t res;
  size_t staged = 0; /* before the copy out clears the pieces' sizes */
  for (int k = 0; k < MUSTER__NSTAGE; k++) staged += l->stage.len[k];
  double t0 = muster__mono_s();
  int rc = muster_solve(l->g, &a, use, &res);
  double t1 = muster__mono_s();
  int back = muster__stage_out(&l->stage, mine);
  log_phases(l, provider, staged, t1 - t0, res.seconds, muster__mono_s() - t1);
  if (rc == 0 && back < 0) rc = back;
  out->info = res.info;
  out->tile = res.tile;
  out->seconds = res.seconds;
  return rc;
}
