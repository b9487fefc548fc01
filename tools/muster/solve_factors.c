/* tools/muster/solve_factors.c - see solve_factors.h. */
#include "solve_factors.h"

#include "cli_args.h"
#include "muster/layout.h"

int sf_is_factor(muster_routine_t r) { return (muster_routine_takes(r) & MUSTER_TAKES_O) != 0; }

int sf_shape(const char *who, sr_spec_t *spec) {
  muster_outputs_t o;
  if (spec->m == 0) spec->m = spec->n;
  if (muster_routine_outputs(spec->routine, spec->flags, spec->m, spec->n, &o) < 0) {
    cli_usage_error(who, "%s takes %s", muster_routine_name(spec->routine),
                    spec->routine == MUSTER_GEQRF   ? "--full, not --no-vectors"
                    : spec->routine == MUSTER_GESVD ? "--full or --no-vectors"
                                                    : "neither --full nor --no-vectors");
    return -1;
  }
  spec->nrhs = o.b_cols > 0 ? o.b_cols : 1;
  return 0;
}
