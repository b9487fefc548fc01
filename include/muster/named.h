/*
 * muster/named.h - a solve by group name in one call: join, solve, leave
 * (muster_solve_named), and the call a rank makes instead when it cannot
 * take part (muster_abort_named).  What an adapter's op does once per call
 * (JAX, TensorFlow, PyTorch): the rules of joining, of telling the peers a
 * failure, and of keeping the solve's message past the leave live here
 * once.  Included by muster.h; docs/solve.md "Named solves".
 *
 * Conventions: muster.h's (0 or a negative MUSTER_E* code,
 * muster_last_error() says who, what, where).
 */
#ifndef MUSTER_NAMED_H
#define MUSTER_NAMED_H

#include <stdint.h>

#include "../muster.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Who calls: this rank's seat in a group and how it joins; and, out, what
 * the runtime learned. */
typedef struct muster_named {
  const char *group;   /* the group's name (muster_group_join's rule)        */
  int rank, nranks;    /* this rank of nranks                                */
  const char *job;     /* as muster_group_opts_t.job (NULL: $MUSTER_JOB)     */
  double timeout_s;    /* as muster_group_opts_t.timeout_s (muster_timeout)  */
  int device;          /* this rank's device, -1 for host (messages, shmdump) */
  uint64_t tag;        /* 0, or a value every rank of one call passes alike
                          (a framework's step or run id): ranks of two
                          overlapping calls that met in one group fail with
                          MUSTER_EMISMATCH instead of solving together     */
  int64_t n;           /* out: the n the solve ran with (args->n, or the one
                          learned from the widths), 0 when it did not run  */
} muster_named_t;

/* Join who->group, muster_solve, leave: every rank of the group calls it
 * with its own shard, as muster_solve.  args->n == 0 (block layout only):
 * the runtime learns n as the sum of every rank's mine->ncols and each
 * rank's first column as the sum of the widths of the ranks below it
 * (mine->col0 is then ignored), and who->n gets it: what gels's ranks
 * need when each knows only its own columns.  n == 0 or a tag costs one exchange before the solve;
 * every rank must then pass n == 0 (or not) and a tag (or not) alike, else
 * all get MUSTER_EMISMATCH.
 * Returns muster_solve's code with res filled as it fills it; the message
 * is the one of the step that failed, kept past the leave: "joining group
 * G: ...", the solve's own, or "leaving group G: ..." (a leave's error only
 * when all else went well).  A rank that failed poisons the group, so the
 * others fail at once rather than at their deadline. */
MUSTER_EXTERN int muster_solve_named(muster_named_t *who, const muster_solve_args_t *args,
                                     const muster_shard_t *mine, muster_solve_result_t *res);

/* Join who->group only to abort it with code (a MUSTER_E* value) and why
 * (copied into every peer's message), then leave: what a rank whose own
 * inputs are wrong, or whose own step before the call failed, calls
 * instead of muster_solve_named, so the peers fail with its reason instead
 * of timing out, whether they wait already or come later.  It waits until
 * every rank has taken its seat (at most the group's timeout) before it
 * aborts: a group poisoned before it formed loses its name, and a rank
 * that came later would meet in a fresh one.  who->tag is unused.  0, or
 * MUSTER_EINVAL (NULL who, code not negative) / the join's error (message
 * set). */
MUSTER_EXTERN int muster_abort_named(const muster_named_t *who, int code, const char *why);

#ifdef __cplusplus
}
#endif
#endif /* MUSTER_NAMED_H */
