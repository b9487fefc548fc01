/*
 * runtime/shm/barrier_launcher.c - the barrier's side of launchers
 * (barrier_launcher.h): a declared rank's liveness, the launcher's own, its
 * reports.  Beside the barrier, not in launch.c: the barrier (shm layer)
 * reads these fields, and launch.c (group layer) calls the barrier.
 */
#include <inttypes.h>
#include <stdio.h>
#include <time.h>

#include "base/atomics.h"
#include "shm/barrier.h"
#include "shm/barrier_launcher.h"
#include "base/clock.h"
#include "base/proc.h"
#include "shm/segment.h"

/* The launcher's pid when it is another live-or-dead process whose pid
 * means something here; 0 when there is none to judge. */
static int judged_launcher(const struct muster_seg_header *h) {
  int pid = LDA(&h->launcher_pid);
  if (pid <= 0 || pid == muster__proc_self_pid()) return 0;
  return muster__proc_same_pidns(LD(&h->launcher_pidns)) ? pid : 0;
}

int muster__launch_declared_dead(const struct muster_seg_header *h, int rank, char *buf,
                                 size_t cap) {
  const struct muster_seg_slot *s = muster__segment_slot((struct muster_seg_header *)h, rank);
  int pid = LDA(&s->declared_pid);
  if (pid <= 0 || !muster__proc_same_pidns(LD(&h->launcher_pidns))) return 0;
  if (muster__proc_alive(pid, LD(&s->declared_start))) return 0;
  snprintf(buf, cap, "rank %d (pid %d, declared by its launcher) died or exited", rank, pid);
  return 1;
}

int muster__launch_check(struct muster_seg_header *h, int me, uint32_t g, uint64_t barrier_no) {
  int pid = judged_launcher(h);
  if (!pid || muster__proc_alive(pid, LD(&h->launcher_start))) return MUSTER_OK;
  if (LDA(&h->launcher_pid) != pid) return MUSTER_OK; /* it closed meanwhile */
  char reason[MUSTER_SEG_REASON_MAX];
  snprintf(reason, sizeof reason, "the launcher (pid %d) of group %s died while rank %d waited "
           "at barrier %" PRIu64 " (generation %" PRIu32 ")", pid, h->group, me, barrier_no, g);
  muster__barrier_poison(h, MUSTER_EPEERDEAD, -1, pid, reason);
  return muster__barrier_check_abort(h);
}

int muster__launch_await_report(const struct muster_seg_header *h) {
  int pid = judged_launcher(h);
  uint64_t start = LD(&h->launcher_start), t0 = muster__now_mono_ns();
  for (int i = 0; pid; i++) {
    if (LDA(&h->abort_state) != MUSTER_ABORT_NONE) return 1;
    if (muster__now_mono_ns() - t0 >= MUSTER_LAUNCH_REPORT_NS) break;
    if (i % 10 == 0 && !muster__proc_alive(pid, start)) break; /* it cannot report */
    struct timespec ts = {0, 1000000};
    nanosleep(&ts, NULL);
  }
  return LDA(&h->abort_state) != MUSTER_ABORT_NONE;
}
