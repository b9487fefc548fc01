/*
 * muster/launch.h - the launcher: the process that starts a group's ranks
 * as processes and reaps them (included by muster.h, after the groups it
 * needs; docs/runtime.md, "Launchers").
 */
#ifndef MUSTER_LAUNCH_PUBLIC_H
#define MUSTER_LAUNCH_PUBLIC_H

#include "../muster.h"

/* A launcher starts the ranks of a group as processes and reaps them.  It
 * holds the group without a seat, which gives the ranks three guarantees
 * they do not have on their own (docs/runtime.md, "Launchers"):
 *   - a rank that dies before it takes its seat is noticed by the others at
 *     their next liveness check (~100 ms), by the pid the launcher declared
 *     for it, instead of after the timeout;
 *   - when the launcher reaps a rank that died, the others fail at once with
 *     a message naming its rank, pid, signal or exit status and the phase it
 *     was in (also when it is the leader, rank 0);
 *   - a launcher that dies without closing poisons the group
 *     (MUSTER_EPEERDEAD "the launcher (pid P) of group G died ...") for the
 *     ranks waiting in it.
 * Use, for R ranks of group "g":
 *     muster_launch_t *l;
 *     muster_launch_open("g", R, NULL, MUSTER_LAUNCH_UNNAMED, &l);
 *     for each rank r: pid = fork(); the child joins "g" as rank r (same job);
 *                      the parent calls muster_launch_declare(l, r, pid);
 *     for each child that ends: muster_launch_reap(l, r, wstatus, fate, cap);
 *     muster_launch_close(l);
 * A forked child must not use the launcher handle (it is its parent's). */
typedef struct muster_launch muster_launch_t;

/* The ranks are processes this one forks after muster_launch_open, without
 * exec: they find the group in the group cache they inherit, so it needs no
 * name, and the name is removed at once.  Nothing can then be left in
 * /dev/shm, whoever dies when.  Without it the name stays until the group
 * forms (ranks that exec join by name) and muster_launch_close removes it
 * if the group never formed. */
#define MUSTER_LAUNCH_UNNAMED 0x1u

/* Open group `name` of `nranks` as its launcher, before starting its ranks:
 * create it (or attach to it while it forms), take no seat, and record this
 * process as its launcher.  opts: as for muster_group_join (job, and the
 * checks of MUSTER_JOB, MUSTER_TIMEOUT, MUSTER_LOG); device is unused.
 * Errors: those of muster_group_join; MUSTER_EBUSY when a live launcher
 * holds the group already; MUSTER_EEXIST with MUSTER_LAUNCH_UNNAMED when the
 * group existed before this call (others may need its name). */
MUSTER_EXTERN int muster_launch_open(const char *name, int nranks,
                                     const muster_group_opts_t *opts, unsigned flags,
                                     muster_launch_t **out);

/* Declare that process `pid` (in this process's pid namespace) will take
 * the seat of `rank`: until it sits, and while it is taking its seat, the
 * other ranks judge that rank's liveness by this pid.  Call it right after
 * starting the process, before it could join; declaring again (a restarted
 * rank) replaces the pid.  MUSTER_EINVAL for a bad rank or pid. */
MUSTER_EXTERN int muster_launch_declare(muster_launch_t *l, int rank, int pid);

/* The process of `rank` ended; wstatus as waitpid() gave it.  It ended
 * cleanly when it exited with status 0 after leaving its seat; otherwise
 * (a signal, a non-zero status, or exiting while seated or before it ever
 * joined) it died, and the group is poisoned with MUSTER_EPEERDEAD and
 * a reason like "rank 1 (pid 4242) was killed by signal 9 (Killed) while
 * waiting at barrier 3 of group g; reported by its launcher (pid 4200)",
 * unless it was poisoned before.  fate (may be NULL) gets that sentence (for
 * a clean end too: "... exited with status 0 after it left group g").
 * Returns 0 for a clean end, 1 for a death, MUSTER_EINVAL for a bad rank or
 * a wstatus that is not an end (stopped, continued). */
MUSTER_EXTERN int muster_launch_reap(muster_launch_t *l, int rank, int wstatus, char *fate,
                                     size_t cap);

/* Stop being the launcher and free the handle: call it once every rank's
 * process has ended.  A group that never formed has its name removed (no
 * rank can come any more).  Always frees l; returns 0 or MUSTER_EINVAL. */
MUSTER_EXTERN int muster_launch_close(muster_launch_t *l);

#endif
