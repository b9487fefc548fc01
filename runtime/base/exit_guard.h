/*
 * runtime/base/exit_guard.h - exit() while other threads are inside muster.
 *
 * A program may call exit() (or return from main) while other threads of
 * it join groups or run solves.  exit() runs the exit handlers, then every
 * library's destructors, while those threads go on: liburcu-bp unmaps its
 * readers' registry (a registry lookup then faults), OpenBLAS joins its
 * worker threads (a thread inside an OpenBLAS call then hangs exit for
 * ever), CUDA's libraries tear down their state (a thread inside cuSOLVER
 * faults).  So:
 *
 *   - every public call that reaches the provider registry or a provider
 *     (muster_solve, muster_solve_all, muster_solve_comm, muster_provider_choose,
 *     muster_providers_list, muster_providers_rescan, muster_providers_release)
 *     runs between
 *     muster__exit_guard_enter and muster__exit_guard_leave, which count the
 *     threads inside;
 *   - an exit handler (on_exit: it sees the status) refuses every later
 *     call (MUSTER_EEXITING; joins too, group_cache.c), removes the names of
 *     this process's groups that never formed (muster__group_cache_exit),
 *     and when a thread is inside a guarded call it flushes stdio and ends
 *     the process at once with the status (_exit): the destructors, which
 *     would pull the libraries from under that thread, do not run.  With
 *     no thread inside, exit goes on as usual;
 *   - exit handlers run newest first, and a provider's libraries register
 *     theirs (C++ destructors, CUDA's teardown) when they load, so the
 *     handler is registered at the first join or guarded call and again
 *     after every provider load (muster__exit_guard_arm).  Not in a
 *     constructor: the C library registers the handler that runs every
 *     library's destructors (_dl_fini) after the constructors of the
 *     libraries a program starts with, so it would run before ours.
 *     libmuster.so is linked -z nodelete: an on_exit handler must outlive
 *     any dlclose.
 *
 * Entering checks the flag after counting itself and the handler counts
 * after setting the flag (both sequentially consistent), so either the
 * call is refused or the handler sees it inside: never neither.
 */
#ifndef MUSTER_EXIT_GUARD_H
#define MUSTER_EXIT_GUARD_H

#include "base/error.h"

/* Count this thread into a guarded call `what` (a public function's name):
 * MUSTER_OK, or MUSTER_EEXITING (not counted; message set) once exit()
 * has begun.  Pair every MUSTER_OK with muster__exit_guard_leave(). */
MUSTER_HIDDEN int muster__exit_guard_enter(const char *what);
MUSTER_HIDDEN void muster__exit_guard_leave(void);

/* 1 once exit() has begun: joins are refused too (group_cache.c, under its
 * lock, which the handler takes after setting the flag).  Like
 * muster__exit_guard_enter, registers the handler at its first use. */
MUSTER_HIDDEN int muster__exit_guard_exiting(void);

/* Exit has begun: refuse every later call and join, remove the names of
 * this process's unformed groups.  The handler's first step; also the
 * group cache's destructor's, for when exit() came before this process's
 * first muster call (then the handler, registered by a thread's first call
 * during exit, runs only after the destructors). */
MUSTER_HIDDEN void muster__exit_guard_begin(void);

/* What begin runs after refusing calls: the group cache's name removal
 * (muster__group_cache_exit), registered by group_cache.c when it loads.
 * A hook, not a call: the guard is a layer below the groups (base/). */
MUSTER_HIDDEN void muster__exit_guard_at_begin(void (*fn)(void));

/* Register the exit handler (again): its newest registration runs before
 * every handler registered earlier.  After a provider loads. */
MUSTER_HIDDEN void muster__exit_guard_arm(void);

#endif
