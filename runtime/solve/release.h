/*
 * runtime/solve/release.h - muster_providers_release's parts (release.c):
 * the registry unloads every provider no one holds
 * (muster__providers_unload_all, registry.h), and the open comms drop the
 * references they keep on the providers that ran over them (comm.c), so
 * that those are not held until the comm closes.
 */
#ifndef MUSTER_SOLVE_RELEASE_H
#define MUSTER_SOLVE_RELEASE_H

#include "base/error.h"

/* Every open muster_comm_t drops its providers' references (the ones kept
 * to release their communicators of its key at close): the comm's
 * communicators are then freed when the provider is unloaded
 * (release_comms(ctx, 0), fini), and a later call over the comm keeps the
 * provider it runs again.  A call running over a comm holds its own
 * reference: its provider stays until it returns. */
MUSTER_HIDDEN void muster__comms_forget(void);

#endif
