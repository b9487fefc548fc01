/*
 * tools/muster/progress.h - "muster solve: solving rep 2/5 (3.1 s)" lines
 * on stderr while a long run works, one per phase (generating, solving rep
 * i/N, checking), so a user waiting a minute sees where it is.  Never on
 * stdout (where --json goes).
 *
 * Only work that lasts: a phase is announced when the run has been going
 * for PROG_AFTER_S seconds (at once when it starts later than that, by a
 * watcher thread when it crosses it); --progress announces every phase,
 * --quiet none.  The state lives in a MAP_SHARED page made before the
 * ranks are forked, so rank 0's process (processes mode) can say which rep
 * it is at; lines are written with one write(2) each, no stdio.  The
 * watcher thread is stopped while ranks are forked (prog_pause): the
 * command forks them single-threaded, as it always has (a fork of a
 * multi-threaded process leaves the child only async-signal-safe calls,
 * and TSan kills a child that starts threads then, as OpenBLAS does); a
 * phase that begins after PROG_AFTER_S is still announced, by whichever
 * process begins it.
 */
#ifndef MUSTER_PROGRESS_H
#define MUSTER_PROGRESS_H

#define PROG_AFTER_S 2.0

/* Start the clock (and the watcher) for `who`: mode -1 quiet, 0 after
 * PROG_AFTER_S, 1 every phase.  0, or -1 when the page or thread could not
 * be made (then there is no progress, and nothing else changes). */
int prog_start(const char *who, int mode);
enum { PROG_GENERATING, PROG_SOLVING, PROG_CHECKING };
/* The phase now (PROG_*); rep/reps (1-based) for PROG_SOLVING (reps 0:
 * none shown).  Safe from a forked rank. */
void prog_phase(int phase, int rep, int reps);
/* Stop the watcher thread (before forking ranks) and start it again. */
void prog_pause(void);
void prog_resume(void);
/* Stop the watcher and unmap; before the result is printed. */
void prog_stop(void);

#endif
