/*
 * muster/comm.h - communicators: the ranks of a solve that share no
 * /dev/shm (docs/bootstrap.md).  Included by muster.h; a program may
 * include it alone.  Conventions: muster.h's (0 or a negative MUSTER_E*
 * code, muster_last_error() says who, what, where).
 */
#ifndef MUSTER_COMM_H
#define MUSTER_COMM_H

#include <stddef.h>

#include "../muster.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A muster_comm_t is a set of ranks that can allgather a few hundred bytes
 * out of band (docs/bootstrap.md): a muster group (one node), MPI (ranks
 * started by mpirun/srun, on any nodes; libmpi is dlopen()ed, never linked),
 * or an allgather the caller supplies (a framework's key-value store).
 * muster_solve_comm runs collective providers only (ABI v2, e.g. scalapack,
 * cusolvermp): every rank calls it with its own piece. */

typedef struct muster_comm muster_comm_t;

/* The caller's allgather (kind "store"): every rank passes len bytes in
 * mine (the same len on every rank); all receives size * len bytes, rank
 * r's at r * len.  It must not wait forever for a dead rank: give it a
 * deadline.  0, or a negative MUSTER_E* code with a message in err. */
typedef int (*muster_allgather_fn)(void *ctx, const void *mine, void *all, size_t len, char *err,
                                   size_t errlen);

typedef struct muster_comm_opts {
  const char *kind;      /* "group", "mpi", "store"; NULL or "auto": "mpi" when
                            muster_launcher_detect() finds a launcher         */
  int rank, size;        /* group, store: this rank of size; mpi: ignored
                            (MPI_COMM_WORLD's)                                */
  const char *name;      /* group: the group's name; store: a name for the set
                            of ranks (part of its key); may be NULL for mpi  */
  const char *job;       /* group: as muster_group_opts_t.job                  */
  double timeout_s;      /* group: as muster_group_opts_t.timeout_s            */
  int device;            /* group: this rank's device (-1 host), for messages  */
  muster_allgather_fn allgather; /* store                                     */
  void *ctx;             /* store: passed to allgather                         */
} muster_comm_opts_t;

/* Open this rank's end of a communicator (kind group: joins the group and
 * keeps it until close; mpi: initialises MPI if the program has not,
 * duplicates MPI_COMM_WORLD).  Does not wait for the other ranks.  0 with
 * *out, or MUSTER_EINVAL / MUSTER_ENOENT (no libmpi; no launcher for
 * "auto") / a join error, with a message. */
MUSTER_EXTERN int muster_comm_open(const muster_comm_opts_t *opts, muster_comm_t **out);

/* Close it: the providers it ran free the communicators they cached for
 * it (release_comms), a group is left, MPI's duplicate freed.  Always frees
 * c; returns the first error seen. */
MUSTER_EXTERN int muster_comm_close(muster_comm_t *c);

MUSTER_EXTERN int muster_comm_rank(const muster_comm_t *c);
MUSTER_EXTERN int muster_comm_size(const muster_comm_t *c);
MUSTER_EXTERN const char *muster_comm_kind(const muster_comm_t *c);

/* Which launcher started this process, from its environment
 * (OMPI_COMM_WORLD_RANK/SIZE: Open MPI's mpirun; PMI_RANK/SIZE: MPICH's
 * hydra, Intel MPI; SLURM_PROCID/NTASKS: srun).  1 with name ("openmpi",
 * "pmi", "slurm"; cap bytes), *rank and *size set (each may be NULL), or 0
 * when none is found. */
MUSTER_EXTERN int muster_launcher_detect(char *name, size_t cap, int *rank, int *size);

/* muster_solve over a communicator: every rank of c calls it with its own
 * piece of A (layout block or cyclic, as for muster_solve) and all of B /
 * W.  Rank 0 chooses among the collective providers (docs/choice.md) and
 * every rank follows.  A leader provider cannot run here:
 * MUSTER_EUNSUPPORTED naming it (forced) or leaving it out (chosen).
 * Every rank returns the same code: a rank that fails makes the others
 * fail with its message.  A call of one thread at a time per comm. */
MUSTER_EXTERN int muster_solve_comm(muster_comm_t *c, const muster_solve_args_t *args,
                                    const muster_shard_t *mine, muster_solve_result_t *res);

/* muster_solve_comm on a 2-D block-cyclic piece (a framework's 2-D mesh,
 * P("pr", "pc"), without a gather): mine->a, with leading dimension
 * mine->lda = dist->lld, holds this rank's blocks of A as *dist says
 * (muster/layout.h: muster_dist_t; one block per process, as a mesh cuts A,
 * is mb = ceil(m / nprow), nb = ceil(n / npcol)).  Every rank passes the
 * same m (the rows of A: n, gels m), n, mb, nb and nprow x npcol = the
 * comm's size, and its own place with myrow * npcol + mycol = its rank in
 * c; args->tile must be 0 and args->layout, mine->col0 and ncols are not
 * read.  The collective engine redistributes from that layout itself
 * (cusolvermp, scalapack); an output shaped like A (syevd's vectors, a
 * factor) comes back in the same piece, B, X and W whole on every rank as
 * for muster_solve_comm.  Codes: muster_solve_comm's; MUSTER_EINVAL for a
 * bad or NULL dist, a grid of another size, a rank at another place;
 * MUSTER_EMISMATCH when ranks' grids or blocks differ (docs/bootstrap.md). */
struct muster_dist; /* muster_dist_t (muster/layout.h, which includes this header) */
MUSTER_EXTERN int muster_solve_comm_dist(muster_comm_t *c, const muster_solve_args_t *args,
                                         const muster_shard_t *mine, const struct muster_dist *dist,
                                         muster_solve_result_t *res);

/* What a rank calls instead of muster_solve_comm(_dist) when its own step
 * before the call failed (a copy of its piece, a buffer it could not
 * allocate): it takes part in the call's first round with its failure
 * (code, a negative MUSTER_E*, and why), so that every other rank's call
 * fails at once with "rank R (pid P, device -1): why" instead of waiting
 * for it, and c stays in step: nothing ran, the next call goes on as
 * usual.  Returns code (MUSTER_EINVAL for a code that is not negative),
 * message set; or the round's own error (a peer gone). */
MUSTER_EXTERN int muster_solve_comm_fail(muster_comm_t *c, int code, const char *why);

/* Allgather over c: every rank of c calls it with len bytes in mine (the
 * same len on every rank; 1..MUSTER_MAX_PAYLOAD for kind group, any for
 * mpi and store); all gets size * len bytes, rank r's at r * len.  what
 * says what the exchange is for ("sharing the seed"): kind mpi shows it to
 * the other ranks while this one waits in it, and every error message
 * names it: "comm C (kind K), rank R, <what>: <why>".  The same deadlines
 * and liveness checks as muster_solve_comm's exchanges; a dead or silent
 * rank is an error, never a hang.  0, or MUSTER_EINVAL (NULL c, mine or
 * all, len 0 or too large for the kind) / the exchange's error.  One
 * thread at a time per comm, as muster_solve_comm. */
MUSTER_EXTERN int muster_comm_allgather(muster_comm_t *c, const void *mine, void *all, size_t len,
                                        const char *what);

/* When muster initialised MPI in this process (a kind mpi comm, without
 * the program's own MPI_Init): a last exchange with every rank (a rank
 * stopped before it is named), then MPI_Finalize.  Runs at exit when not
 * called; a program that wants its error calls it after its last
 * muster_comm_close.  0 (also when there is nothing to do, or it was done
 * already), MUSTER_EPROVIDER (an MPI call failed), or MUSTER_ETIMEDOUT
 * naming the rank waited for: a thread of this process is then blocked
 * inside MPI for good, and the process should end with _exit (exit would
 * run MPI's exit handlers beside it). */
MUSTER_EXTERN int muster_mpi_finish(void);

#ifdef __cplusplus
}
#endif
#endif /* MUSTER_COMM_H */
