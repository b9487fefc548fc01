/*
 * runtime/base/exit_guard.c - exit() while other threads are inside muster (see
 * exit_guard.h).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "base/exit_guard.h"

static atomic_int busy;      /* threads inside a guarded call */
static atomic_int exiting;   /* the handler ran: calls are refused */
static atomic_int handled;   /* its work is done (it may be registered often) */
static __thread int depth;   /* guarded calls this thread is inside */
static pthread_once_t first_use = PTHREAD_ONCE_INIT;
static void (*_Atomic at_begin)(void); /* the group cache's (exit_guard.h) */

void muster__exit_guard_at_begin(void (*fn)(void)) { atomic_store(&at_begin, fn); }

void muster__exit_guard_begin(void) {
  atomic_store(&exiting, 1); /* seq_cst, then count: see exit_guard.h */
  void (*fn)(void) = atomic_load(&at_begin);
  if (fn) fn();
}

static void exit_handler(int status, void *arg) {
  (void)arg;
  if (atomic_exchange(&handled, 1)) return;
  muster__exit_guard_begin();
  int inside = atomic_load(&busy);
  if (inside == 0) return; /* nobody inside: the destructors may run */
  /* A thread is inside a provider or the registry: the libraries' own exit
   * handlers and destructors would tear them down under it (a fault, or a
   * hang joining its threads).  End here, with the status exit() got. */
  muster__log(MUSTER_LOG_DEBUG, "exit(%d) while %d thread%s inside muster calls: ending the "
              "process now, without the libraries' destructors", status, inside,
              inside == 1 ? " is" : "s are");
  fflush(NULL);
  _exit(status);
}

/* The C library refuses a registration once exit() has run its handlers
 * (the first muster call of a thread that runs on meanwhile): then it is
 * too late for the handler, and nothing may start. */
void muster__exit_guard_arm(void) {
  if (on_exit(exit_handler, NULL) != 0) atomic_store(&exiting, 1);
}

/* The child of a fork has only the forking thread: it is inside as many
 * guarded calls as that thread was (a provider's init may fork). */
static void atfork_child(void) { atomic_store(&busy, depth); }

/* Armed at the first use, not by a constructor: a library's constructor
 * runs before the C library registers the handler that runs every
 * destructor (_dl_fini), and exit handlers run newest first. */
static void arm_first(void) {
  pthread_atfork(NULL, NULL, atfork_child);
  muster__exit_guard_arm();
}

int muster__exit_guard_exiting(void) {
  pthread_once(&first_use, arm_first);
  return atomic_load(&exiting);
}

int muster__exit_guard_enter(const char *what) {
  pthread_once(&first_use, arm_first);
  depth++;
  atomic_fetch_add(&busy, 1); /* seq_cst, then read the flag: see exit_guard.h */
  if (!atomic_load(&exiting)) return MUSTER_OK;
  muster__exit_guard_leave();
  return muster__err(MUSTER_EEXITING, "%s: the process is exiting (exit() was called or main "
                     "returned); muster takes no new calls", what);
}

void muster__exit_guard_leave(void) {
  atomic_fetch_sub(&busy, 1);
  depth--;
}
