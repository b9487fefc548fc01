/*
 * runtime/shm/barrier_launcher.h - what the barrier needs of launchers
 * (muster_launch_*, launch.c; here barrier_launcher.c): the pids a launcher
 * declared for ranks not seated yet, the launcher's own liveness, and its
 * reports of how a rank died.
 *
 * Fields (segment.h): header.launcher_pid/_start/_pidns name the launcher;
 * slot.declared_pid/_start the process a launcher started for that rank.
 * A declared pid means something only in the launcher's pid namespace.
 */
#ifndef MUSTER_BARRIER_LAUNCHER_H
#define MUSTER_BARRIER_LAUNCHER_H

#include <stddef.h>
#include <stdint.h>

#include "shm/segment.h"

/* How long a waiter that found a dead rank lets a live launcher report how
 * it died (its reason names the signal) before poisoning the group itself.
 * A launcher reaps a child within milliseconds of its death. */
#define MUSTER_LAUNCH_REPORT_NS (500ull * 1000 * 1000)

/* 1 if a launcher declared a pid for `rank` and that process is gone (the
 * rank can never take its seat): buf gets "rank r (pid p, declared by its
 * launcher) died or exited".  0 when none was declared, it is alive, or it
 * is in another pid namespace. */
MUSTER_HIDDEN int muster__launch_declared_dead(const struct muster_seg_header *h, int rank,
                                               char *buf, size_t cap);

/* The group's launcher (if any) died without closing: poison the group
 * (MUSTER_EPEERDEAD, "the launcher (pid P) of group G died while rank `me`
 * waited at barrier N (generation g)") and return the group's error;
 * else 0. */
MUSTER_HIDDEN int muster__launch_check(struct muster_seg_header *h, int me, uint32_t g,
                                       uint64_t barrier_no);

/* A waiter found a dead rank: if a live launcher holds the group, wait up
 * to MUSTER_LAUNCH_REPORT_NS for its report (muster_launch_reap poisons the
 * group).  1 if the group is poisoned now, 0 if the caller must report. */
MUSTER_HIDDEN int muster__launch_await_report(const struct muster_seg_header *h);

#endif
