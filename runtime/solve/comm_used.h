/*
 * runtime/solve/comm_used.h - the providers an open muster_comm_t ran
 * (referenced, so that its close can free their communicators of its key:
 * release_comms), and the list of every open comm, so that
 * muster_providers_release can make them all drop those references.
 */
#ifndef MUSTER_SOLVE_COMM_USED_H
#define MUSTER_SOLVE_COMM_USED_H

#include <pthread.h>
#include <stdint.h>

#include "registry/registry.h"

#define MUSTER__USED_MAX 8

typedef struct muster__used {
  muster__provider_t *p[MUSTER__USED_MAX]; /* referenced; under mu */
  int n;
  pthread_mutex_t mu;                       /* muster__comms_forget may empty p[] */
  struct muster__used *next_open;           /* the open list (comm_used.c's lock) */
} muster__used_t;

/* A comm opens: u zeroed and on the open list. */
MUSTER_HIDDEN void muster__used_open(muster__used_t *u);

/* p ran over the comm: keep a reference (once; with MUSTER__USED_MAX kept
 * already, none: its communicators then live until it is unloaded). */
MUSTER_HIDDEN void muster__used_add(muster__used_t *u, muster__provider_t *p);

/* The comm closes: off the open list, then each kept provider frees its
 * communicators of key (when key != 0) and is released. */
MUSTER_HIDDEN void muster__used_close(muster__used_t *u, uint64_t key);

/* Every open comm drops its kept references (muster_providers_release):
 * the comm's communicators are then freed when the provider is unloaded
 * (release_comms(ctx, 0), fini), and a later call over the comm keeps the
 * provider it runs again.  A call running over a comm holds its own
 * reference: its provider stays until it returns.  The references are
 * dropped after the locks: a last one unloads the provider. */
MUSTER_HIDDEN void muster__comms_forget(void);

#endif
