/*
 * runtime/registry/provider_lock.c - the registry's writer lock (provider_file.h):
 * a scan, a load, a listing and the last release of a provider take it.
 * Its own file, below registry.c and provider_file.c, which both take it.
 */
#include <pthread.h>

#include "registry/provider_file.h"

/* recursive: a provider's probe/init runs under it and may fork (our
 * atfork prepare handler then takes it again in the same thread).
 * writer_depth: how many times its holder holds it (touched only by the
 * holder; the fork child handler needs it, see there). */
static pthread_mutex_t writer = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
static int writer_depth;

void muster__provider_lock(void) {
  pthread_mutex_lock(&writer);
  writer_depth++;
}

void muster__provider_unlock(void) {
  writer_depth--;
  pthread_mutex_unlock(&writer);
}

/* fork: a child must not inherit our writer mutex locked by another thread,
 * nor urcu-bp's registry of the parent's threads (urcu-bp asks its users to
 * call these around fork). Order: ours, then urcu's; reverse after. */
static void atfork_prepare(void) { muster__provider_lock(); }
static void atfork_parent(void) { muster__provider_unlock(); }
/* The child's only thread is the one that forked and took writer in
 * prepare, but it has a new thread id, and a recursive mutex records its
 * owner's id: unlocking it here fails (EPERM) and leaves it held by a thread
 * that does not exist, so the child's first provider load waited forever (a
 * process that had used the registry, then forked ranks that load another
 * routine's provider).  So start the child on a fresh mutex, held by its
 * thread as deep as the forking thread held it before prepare. */
static void atfork_child(void) {
  int held = writer_depth - 1;
  /* End prepare's hold first all the same: glibc refuses it (EPERM, the
   * new id), but a lock checker (TSan) that saw prepare take it records
   * the release and does not see the child hold it for ever */
  (void)pthread_mutex_unlock(&writer);
  pthread_mutexattr_t attr;
  pthread_mutexattr_init(&attr);
  pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
  pthread_mutex_init(&writer, &attr);
  pthread_mutexattr_destroy(&attr);
  writer_depth = 0;
  for (int k = 0; k < held; k++) muster__provider_lock();
}

void muster__provider_lock_atfork(void) {
  pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
}
