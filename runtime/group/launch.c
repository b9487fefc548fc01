/*
 * runtime/group/launch.c - muster_launch_*: a launcher holds a group without a
 * seat, declares the pids of the ranks it starts, and reports how each one
 * ended (include/muster/launch.h, docs/runtime.md "Launchers").  The barrier's
 * side of it (a declared rank's liveness, the launcher's, its reports) is
 * shm/barrier_launcher.c, a layer below.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

#include "base/atomics.h"
#include "shm/barrier.h"
#include "group/group.h"
#include "base/proc.h"
#include "shm/segment.h"


struct muster_launch {
  struct muster_segment *seg; /* mapped while held (group_cache.c's entry) */
  void *hold;
  char name[MUSTER_MAX_NAME + 1];
  int nranks;
  int pids[MUSTER_MAX_RANKS]; /* declared, 0 none */
};

/* ---- holding the group ---------------------------------------------------- */

/* Become the group's launcher (CAS 0 -> our pid); a dead one is replaced. */
static int claim(muster_launch_t *l) {
  struct muster_seg_header *h = l->seg->hdr;
  int self = muster__proc_self_pid();
  for (;;) {
    int cur = LDA(&h->launcher_pid);
    if (cur != 0) {
      int judged = cur != self && muster__proc_same_pidns(LD(&h->launcher_pidns));
      if (!judged || muster__proc_alive(cur, LD(&h->launcher_start)))
        return muster__err(MUSTER_EBUSY, "group %s already has a launcher (pid %d)", l->name, cur);
      if (__atomic_compare_exchange_n(&h->launcher_pid, &cur, 0, 0, __ATOMIC_ACQ_REL,
                                      __ATOMIC_RELAXED)) { /* a dead one: forget it */
        ST(&h->launcher_start, 0);
        ST(&h->launcher_pidns, 0);
      }
      continue;
    }
    if (__atomic_compare_exchange_n(&h->launcher_pid, &cur, self, 0, __ATOMIC_ACQ_REL,
                                    __ATOMIC_RELAXED))
      break;
  }
  /* 0 until these land: readers then only check that the pid exists */
  ST(&h->launcher_start, muster__proc_self_start());
  ST(&h->launcher_pidns, muster__proc_self_pidns());
  return MUSTER_OK;
}

/* Stop being the launcher: the declarations go with it. */
static void unclaim(muster_launch_t *l) {
  struct muster_seg_header *h = l->seg->hdr;
  int self = muster__proc_self_pid();
  for (int r = 0; r < l->nranks; r++) {
    struct muster_seg_slot *s = muster__segment_slot(h, r);
    if (l->pids[r] && LD(&s->declared_pid) == l->pids[r]) ST(&s->declared_pid, 0);
  }
  if (LD(&h->launcher_pid) != self) return;
  ST(&h->launcher_start, 0); /* before the pid: a next launcher's start is never mixed up */
  ST(&h->launcher_pidns, 0);
  __atomic_compare_exchange_n(&h->launcher_pid, &self, 0, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED);
}

int muster_launch_open(const char *name, int nranks, const muster_group_opts_t *opts,
                       unsigned flags, muster_launch_t **out) {
  if (!out) return muster__err(MUSTER_EINVAL, "muster_launch_open: out is NULL");
  *out = NULL;
  if (flags & ~MUSTER_LAUNCH_UNNAMED)
    return muster__err(MUSTER_EINVAL, "muster_launch_open: unknown flags 0x%x", flags);
  const char *job;
  double timeout;
  int rc = muster__group_check_args(name, -1, nranks, opts, &job, &timeout);
  if (rc < 0) return rc;
  muster_launch_t *l = calloc(1, sizeof *l);
  if (!l) return muster__err(MUSTER_ENOMEM, "muster_launch_open(%s): out of memory", name);
  snprintf(l->name, sizeof l->name, "%s", name);
  l->nranks = nranks;
  int fresh;
  if ((rc = muster__group_hold(job, name, nranks, &l->seg, &l->hold, &fresh)) < 0) {
    free(l);
    return rc;
  }
  if ((rc = claim(l)) < 0) goto out;
  if (flags & MUSTER_LAUNCH_UNNAMED) {
    if (!fresh) {
      rc = muster__err(MUSTER_EEXIST, "group %s existed before muster_launch_open (made by "
                       "pid %d): its ranks may need its name, so it cannot be unnamed", name,
                       (int)l->seg->hdr->creator_pid);
      unclaim(l);
      goto out;
    }
    muster__segment_unlink(l->seg); /* forked ranks find it in their inherited cache */
  }
  *out = l;
  return MUSTER_OK;
out:
  if (fresh) muster__segment_unlink(l->seg);
  muster__group_release_hold(l->hold, fresh);
  free(l);
  return rc;
}

int muster_launch_declare(muster_launch_t *l, int rank, int pid) {
  if (!l) return muster__err(MUSTER_EINVAL, "muster_launch_declare: NULL launcher");
  if (rank < 0 || rank >= l->nranks || pid <= 0)
    return muster__err(MUSTER_EINVAL, "group %s: cannot declare pid %d for rank %d (ranks "
                       "0..%d)", l->name, pid, rank, l->nranks - 1);
  struct muster_seg_slot *s = muster__segment_slot(l->seg->hdr, rank);
  /* pid last (release), so a reader that sees it sees its start time */
  ST(&s->declared_pid, 0);
  ST(&s->declared_start, muster__proc_start_time(pid));
  STR(&s->declared_pid, pid);
  l->pids[rank] = pid;
  return MUSTER_OK;
}

/* ---- reaping ------------------------------------------------------------- */

/* "was killed by signal 9 (Killed)" / "exited with status 1" */
static void ending(int wstatus, char *buf, size_t cap) {
  if (WIFEXITED(wstatus)) {
    snprintf(buf, cap, "exited with status %d", WEXITSTATUS(wstatus));
    return;
  }
  int sig = WTERMSIG(wstatus);
  const char *what = sigdescr_np(sig);
  snprintf(buf, cap, "was killed by signal %d (%s)%s", sig, what ? what : "unknown signal",
           WCOREDUMP(wstatus) ? ", core dumped" : "");
}

/* Where in the group the occupant of slot s was, e.g. "while waiting at
 * barrier 3 of group g".  A rank whose barrier completed while it still
 * sat in it (phase WAITING at an older generation: stopped or not
 * scheduled right then) was released from it, not waiting: the barrier's
 * own report of it says so too (barrier.c, describe_missing). */
static void whereabouts(const muster_launch_t *l, const struct muster_seg_slot *s, int seated,
                        char *buf, size_t cap) {
  uint64_t passed = LD(&s->barriers);
  if (!LD(&s->sessions)) {
    snprintf(buf, cap, "before it joined group %s", l->name);
    return;
  }
  if (!seated) {
    snprintf(buf, cap, "after it left group %s", l->name);
    return;
  }
  switch (LD(&s->phase)) {
  case MUSTER_PHASE_PUBLISHED:
    snprintf(buf, cap, "while publishing for barrier %" PRIu64 " of group %s", passed + 1, l->name);
    break;
  case MUSTER_PHASE_WAITING:
    if (LD(&s->barrier_gen) != LDA(&l->seg->hdr->generation))
      snprintf(buf, cap, "after it was released from barrier %" PRIu64 " of group %s, before it "
               "moved on", passed + 1, l->name);
    else
      snprintf(buf, cap, "while waiting at barrier %" PRIu64 " of group %s", passed + 1, l->name);
    break;
  case MUSTER_PHASE_PASSED:
    snprintf(buf, cap, "past barrier %" PRIu64 " of group %s (computing, or between calls)",
             passed, l->name);
    break;
  default:
    snprintf(buf, cap, "after it joined group %s, before its first barrier", l->name);
    break;
  }
}

int muster_launch_reap(muster_launch_t *l, int rank, int wstatus, char *fate, size_t cap) {
  if (!l) return muster__err(MUSTER_EINVAL, "muster_launch_reap: NULL launcher");
  if (rank < 0 || rank >= l->nranks)
    return muster__err(MUSTER_EINVAL, "group %s: rank %d out of range 0..%d", l->name, rank,
                       l->nranks - 1);
  if (!WIFEXITED(wstatus) && !WIFSIGNALED(wstatus))
    return muster__err(MUSTER_EINVAL, "group %s: rank %d: wait status 0x%x is not the end of "
                       "a process", l->name, rank, (unsigned)wstatus);
  struct muster_seg_header *h = l->seg->hdr;
  const struct muster_seg_slot *s = muster__segment_slot(h, rank);
  int pid = l->pids[rank] ? l->pids[rank] : (int)LD(&s->pid);
  int seated = LD(&s->owner_tid) != 0 && LD(&s->pid) == pid;
  char how[96], where[MUSTER_MAX_NAME + 96], sentence[MUSTER_SEG_REASON_MAX - 64];
  ending(wstatus, how, sizeof how);
  whereabouts(l, s, seated, where, sizeof where);
  snprintf(sentence, sizeof sentence, "rank %d (pid %d) %s %s", rank, pid, how, where);
  if (fate && cap) snprintf(fate, cap, "%s", sentence);
  int clean = WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0 && LD(&s->sessions) && !seated;
  if (clean) return 0;
  char reason[MUSTER_SEG_REASON_MAX];
  snprintf(reason, sizeof reason, "%s; reported by its launcher (pid %d)", sentence,
           (int)muster__proc_self_pid());
  muster__barrier_poison(h, MUSTER_EPEERDEAD, rank, pid, reason);
  if (!LD(&h->formed)) muster__segment_unlink(l->seg); /* as every poisoner does */
  return 1;
}

int muster_launch_close(muster_launch_t *l) {
  if (!l) return muster__err(MUSTER_EINVAL, "muster_launch_close: NULL launcher");
  unclaim(l);
  /* never formed: no rank can come any more (with UNNAMED it is gone already) */
  if (!LD(&l->seg->hdr->formed)) muster__segment_unlink(l->seg);
  muster__group_release_hold(l->hold, 1);
  free(l);
  return MUSTER_OK;
}
