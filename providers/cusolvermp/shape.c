/* providers/cusolvermp/shape.c - a call's grid, tile and scratch from its
 * arguments and the environment (mp.h): the one place estimate() and
 * collective_solve() take them from. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/env.h"
#include "mp.h"

/* The caller's tile is the solver's when the caller holds a cyclic layout
 * (the solve may then run in place); syevd and gesvd take it only as a
 * power of two (mp_tile_pow2). */
static int64_t caller_tile(const muster_solve_args_t *a) {
  if (a->layout != MUSTER_LAYOUT_CYCLIC || a->tile < 1) return 0;
  if (mp_tile_pow2(a->routine) && (a->tile & (a->tile - 1)) != 0) return 0;
  return a->tile;
}

int mp_shape_of(const muster_solve_args_t *a, int nranks, int64_t *tile_in, mp_shape_t *s, char *why, size_t len) {
  memset(s, 0, sizeof *s);
  s->routine = a->routine;
  s->dtype = a->dtype;
  s->n = s->m = a->n; /* gels: the caller sets m (its ldb) */
  s->nrhs = muster_routine_nrhs(a->routine, a->nrhs);
  s->flags = a->flags;
  int rc = mp_grid_shape(a->routine, nranks, getenv("MUSTER_MP_GRID"), &s->nprow, &s->npcol, why, len);
  /* the plan's functions take the value; an empty one they refuse too */
  if (rc < 0) return rc;
  int64_t t = tile_in && *tile_in > 0 ? *tile_in : caller_tile(a);
  rc = mp_tile_resolve(a->routine, a->n, t, getenv("MUSTER_MP_TILE"), &s->tile, why, len);
  if (rc < 0) return rc;
  int64_t mb;
  if ((rc = prov_env_int("MUSTER_MP_SCRATCH_MB", 1, 1ll << 30, 64, &mb, why, len)) < 0) return rc;
  s->scratch = mb << 20;
  /* the switches, checked here so that estimate refuses a bad one as the
   * solve does (the solve reads MUSTER_MP_COPY, the communicator
   * MUSTER_MP_NCCL_BLOCKING, where each is used; MUSTER_MP_QR_GRIDS is
   * mp_refused's, from the shape) */
  int copy, blocking;
  if ((rc = prov_env_switch("MUSTER_MP_COPY", 0, &copy, why, len)) < 0 ||
      (rc = prov_env_switch("MUSTER_MP_NCCL_BLOCKING", 1, &blocking, why, len)) < 0 ||
      (rc = prov_env_switch("MUSTER_MP_QR_GRIDS", 0, &s->qr_forced, why, len)) < 0)
    return rc;
  s->nonblocking = !blocking;
  return 0;
}
