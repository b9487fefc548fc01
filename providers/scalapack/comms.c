/*
 * providers/scalapack/comms.c - communicators and BLACS contexts, cached per
 * bootstrap key and grid, freed by release_comms.
 *
 * Everything here that creates or frees is collective over the bootstrap's
 * communicator (MPI_Comm_dup, Cblacs_gridinit's MPI_Comm_create): every rank
 * must run the same creations in the same order.  They do, because the
 * ranks agreed on the call (grid, layout, and whether the key was cached:
 * agree.c) before the first one.
 */
#include <stdio.h>
#include <stdlib.h>

#include "slInt.h"

static sl_comm_t *find(sl_ctx_t *c, uint64_t key) {
  for (muster__keyed_t *e = c->comms; e; e = e->next)
    if (e->key == key) return (sl_comm_t *)e;
  return NULL;
}

int sl_comm_cached(sl_ctx_t *c, const muster_bootstrap_t *boot) {
  sl_comm_t *cm = find(c, boot->key);
  return cm && cm->parent == *(MPI_Comm *)boot->mpi_comm && cm->size == boot->size;
}

int sl_mpi_usable(void) {
  int init = 0, fin = 0;
  MPI_Initialized(&init);
  MPI_Finalized(&fin);
  return init && !fin;
}

static void destroy(sl_comm_t *cm) {
  if (!sl_mpi_usable()) { /* too late for MPI_Comm_free: only the memory */
    free(cm);
    return;
  }
  for (int i = 0; i < cm->ngrids; i++)
    if (cm->grids[i].ctxt >= 0) Cblacs_gridexit(cm->grids[i].ctxt);
  Cfree_blacs_system_handle(cm->sys);
  MPI_Comm_free(&cm->dup);
  free(cm);
}

int sl_comm_get(sl_ctx_t *c, const muster_bootstrap_t *boot, sl_comm_t **out, char *err,
                size_t errlen) {
  MPI_Comm parent = *(MPI_Comm *)boot->mpi_comm;
  sl_comm_t *cm = find(c, boot->key);
  if (cm && cm->parent == parent && cm->size == boot->size) {
    *out = cm;
    return 0;
  }
  if (cm) { /* the key now names another communicator: the old one is gone */
    muster__keyed_unlink(&c->comms, &cm->link);
    destroy(cm);
  }
  cm = calloc(1, sizeof *cm);
  if (!cm) {
    snprintf(err, errlen, "cannot allocate the communicator cache entry");
    return MUSTER_ENOMEM;
  }
  int rc = MPI_Comm_dup(parent, &cm->dup);
  if (rc != MPI_SUCCESS) {
    char s[MPI_MAX_ERROR_STRING] = "";
    int len = 0;
    MPI_Error_string(rc, s, &len);
    snprintf(err, errlen, "MPI_Comm_dup of the bootstrap's communicator failed: %s", s);
    free(cm);
    return MUSTER_EPROVIDER;
  }
  cm->link.key = boot->key;
  cm->parent = parent;
  cm->size = boot->size;
  cm->sys = Csys2blacs_handle(cm->dup);
  muster__keyed_push(&c->comms, &cm->link);
  *out = cm;
  return 0;
}

sl_int sl_comm_grid(sl_comm_t *cm, int nprow, int npcol, unsigned stamp) {
  for (int i = 0; i < cm->ngrids; i++) {
    if (cm->grids[i].nprow == nprow && cm->grids[i].npcol == npcol) {
      cm->grids[i].stamp = stamp;
      return cm->grids[i].ctxt;
    }
  }
  int slot = cm->ngrids;
  if (slot == SL_MAX_GRIDS) { /* full (many grid overrides): free the least recently used */
    slot = 0;
    for (int i = 1; i < cm->ngrids; i++)
      if (stamp - cm->grids[i].stamp > stamp - cm->grids[slot].stamp) slot = i; /* older */
    if (cm->grids[slot].ctxt >= 0) Cblacs_gridexit(cm->grids[slot].ctxt);
  } else {
    cm->ngrids++;
  }
  sl_int ctxt = cm->sys;
  Cblacs_gridinit(&ctxt, "R", nprow, npcol);
  cm->grids[slot] = (sl_grid_t){.nprow = nprow, .npcol = npcol, .ctxt = ctxt, .stamp = stamp};
  return ctxt;
}

void sl_comm_release(sl_ctx_t *c, uint64_t key) {
  for (muster__keyed_t *e; (e = muster__keyed_take(&c->comms, key));) destroy((sl_comm_t *)e);
}
