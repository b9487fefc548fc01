/*
 * runtime/solve/release.c - muster_providers_release (muster/providers.h):
 * the registry's unload of every provider, then the open comms' references
 * (comm_used.h).  Here, in the solve layer, because comms live here and the
 * registry is below them.
 */
#include "base/exit_guard.h"
#include "registry/registry.h"
#include "solve/comm_used.h"

/* muster_providers_release with exit() safe meanwhile (exit_guard.h) */
int muster_providers_release(void) {
  int rc = muster__exit_guard_enter("muster_providers_release");
  if (rc < 0) return rc;
  rc = muster__providers_unload_all();
  /* the comms' references after the table's: a provider a comm kept is
   * then unloaded here, by the comm's last reference */
  muster__comms_forget();
  muster__exit_guard_leave();
  return rc;
}
