/*
 * adapters/jax/outputs.c - where geqrf, gesvd and polar leave their
 * factors, for the Python side: muster_routine_outputs (muster/layout.h,
 * the one rule) exported through ctypes, so that muster_jax sizes B and
 * unpacks the factors by the runtime's own rule instead of a copy of it.
 */
#include "mjInt.h"

/* Fill out[12] with muster_routine_outputs(routine, flags, m, n):
 * a_holds, nparts, then per part (what, rows, cols, offset) for part 0 and
 * part 1, b_cols, w_count.  0, or MUSTER_EINVAL as that function says. */
MJ_EXPORT int muster_jax_routine_outputs(int routine, unsigned flags, int64_t m, int64_t n, int64_t *out) {
  muster_outputs_t o;
  int rc = muster_routine_outputs(routine, flags, m, n, &o);
  if (rc < 0 || !out) return rc < 0 ? rc : MUSTER_EINVAL;
  out[0] = o.a_holds;
  out[1] = o.nparts;
  for (int i = 0; i < 2; i++) {
    out[2 + 4 * i] = o.part[i].what;
    out[3 + 4 * i] = o.part[i].rows;
    out[4 + 4 * i] = o.part[i].cols;
    out[5 + 4 * i] = o.part[i].offset;
  }
  out[10] = o.b_cols;
  out[11] = o.w_count;
  return 0;
}
