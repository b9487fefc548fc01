/*
 * runtime/base/forklock.h - process-local mutexes that fork() never leaves held.
 *
 * Why: muster forks (process mode launches its ranks) and is called from
 * threads of a host framework that may fork at any time.  The child of a
 * fork has only the thread that forked; a mutex another thread held at that
 * instant stays locked for ever in the child, whose first muster call then
 * hangs.  A forklock is taken by a pthread_atfork() prepare handler and
 * released in the parent and the child, so no other thread holds it across
 * the fork.  (Unlocking in the child is right for a default mutex: the
 * forking thread took it; re-initializing a held mutex would be undefined
 * and confuses TSan's lock-order tracking.)
 *
 * Only for leaf locks: held for a few instructions, never while taking
 * another muster lock, and never while forking (prepare handlers take the
 * locks in an order of their own, and a non-recursive lock would wait for
 * itself).  The group cache's lock is one (runtime/group/group_cache.c); the
 * registry's writer lock is none of those (recursive, held
 * across provider init, which may fork): runtime/registry/registry.c has its own
 * handlers.
 *
 *   MUSTER__FORKLOCK(name)    at file scope, once: a static lock `name`
 *   MUSTER__FORKLOCK_INIT(name, initializer)   the same with another
 *                             static initializer (an adaptive mutex)
 *   name_lock(), name_unlock()
 *
 * The handlers are installed (pthread_once) at the first name_lock().
 */
#ifndef MUSTER_FORKLOCK_H
#define MUSTER_FORKLOCK_H

#include <pthread.h>

#define MUSTER__FORKLOCK(name) MUSTER__FORKLOCK_INIT(name, PTHREAD_MUTEX_INITIALIZER)

#define MUSTER__FORKLOCK_INIT(name, initializer)                                                \
  static pthread_mutex_t name##_mu = initializer;                                               \
  static pthread_once_t name##_fork_once = PTHREAD_ONCE_INIT;                                   \
  static void name##_fork_prepare(void) { pthread_mutex_lock(&name##_mu); }                     \
  static void name##_fork_release(void) { pthread_mutex_unlock(&name##_mu); }                   \
  static void name##_fork_install(void) {                                                       \
    pthread_atfork(name##_fork_prepare, name##_fork_release, name##_fork_release);              \
  }                                                                                             \
  static inline void name##_lock(void) {                                                        \
    pthread_once(&name##_fork_once, name##_fork_install);                                       \
    pthread_mutex_lock(&name##_mu);                                                             \
  }                                                                                             \
  static inline void name##_unlock(void) { pthread_mutex_unlock(&name##_mu); }

#endif
