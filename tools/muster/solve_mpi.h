/*
 * tools/muster/solve_mpi.h - `muster solve --launcher mpi|auto`: this
 * process is one rank of a job that mpirun / srun started (on any node), and
 * the solve goes through muster_comm_open(kind "mpi") and muster_solve_comm
 * (collective providers only, e.g. scalapack; docs/cli-solve.md, docs/bootstrap.md).
 *
 * Every rank builds the same global matrix from the same seed (rank 0's,
 * shared once) with no other communication, keeps its contiguous column
 * block (solve_piece.h: the layout the threads/processes modes use) in
 * host memory, or on its GPU when the provider takes only CUDA memory
 * (cusolvermp: every rank follows rank 0's choice of memory, sm_memory),
 * and calls muster_solve_comm.  What the check needs afterwards travels
 * over the same comm, between the solves (muster_comm_allgather; libmpi
 * is never linked): every rank's verdict, GPU and a hash of its X / W (do
 * the ranks agree?), and, for potri and syevd with vectors, every rank's
 * block of the result, so rank 0 can run the same check.c checks as the
 * other modes on the whole result.  A rank that cannot take part (no GPU,
 * the forced provider unavailable there, no memory) still makes every
 * exchange, saying so: every rank then ends with its message.
 */
#ifndef MUSTER_SOLVE_MPI_H
#define MUSTER_SOLVE_MPI_H

#include "solve_piece.h"
#include "solve_run.h"

typedef struct sm_job {
  muster_comm_t *comm; /* the solves and the CLI's own allgathers */
  int rank, size;
  int nodes, local;    /* sm_place: the hosts of the job; this rank's place
                          among the ranks on its host                    */
  char host[64];
  char who[112];       /* "rank R (pid P on HOST)", for messages */
  char unready[600];   /* sm_memory: why this rank cannot take part ("":
                          it can), naming it                            */
} sm_job_t;

/* Every sm_* function that fails returns a negative MUSTER_E* code and
 * leaves its message here (the runtime's, with the step that failed). */
const char *sm_last_error(void);

/* Join the job: kind "mpi" (launcher "mpi", or "auto" once
 * muster_launcher_detect found one: the caller checks that).  0, or a
 * negative MUSTER_E* code; j is then closed. */
int sm_open(sm_job_t *j);
void sm_close(sm_job_t *j);

/* muster_mpi_finish (muster/comm.h), after the last sm_close: 0 or its
 * code, the message in sm_last_error(). */
int sm_finish(void);

/* After an error rc of sm_open or sm_finish: MUSTER_ETIMEDOUT
 * means a thread of this process is blocked inside MPI for good (MPI_Init
 * or MPI_Finalize waiting for a stopped rank, named in the message the
 * caller printed): end the process now with _exit(1), since exit() would
 * run MPI's and the program's exit handlers beside it.  Any other rc:
 * returns. */
void sm_end(int rc);

/* Every rank gets rank 0's *seed.  0 or a negative code. */
int sm_agree_seed(sm_job_t *j, uint64_t *seed);

/* Where the ranks are: j->nodes (distinct host names) and j->local (the
 * launcher's local rank: OMPI_COMM_WORLD_LOCAL_RANK, SLURM_LOCALID,
 * MPI_LOCALRANKID or PMI_LOCAL_RANK; else the ranks on this host before
 * this one).  0 or a negative code. */
int sm_place(sm_job_t *j);

/* The memory of every rank's piece: each rank asks the choice
 * (cli_choose_memory, collective providers over j->nodes nodes), and
 * spec->cuda becomes rank 0's answer.  A rank whose own answer is an error
 * (a forced CUDA-only provider that cannot run there) records it in
 * j->unready, which sm_run tells every rank.  0 or a negative code (the
 * exchange failed). */
int sm_memory(sm_job_t *j, sr_spec_t *spec);

/* The solve of spec (spec->ranks must be j->size, spec->cuda sm_memory's)
 * on the global A (rows x n) and B (rows x nrhs; rows = sr_rows(spec): m
 * for gels, else n) every rank built (A NULL: this rank could not build
 * them; it still takes its part, so the others fail with its message), like
 * sr_run: out (rc: the first failing rank's code, msg naming that rank;
 * devices: every rank's GPU, -1 host), and on rank 0 full (rows x n,
 * potri and syevd with vectors: every rank's block), X (its b), W (its w),
 * *xsame (every rank's b and w are bit-equal to rank 0's).  seconds: rank
 * 0's, from an allgather (all ranks have arrived) to muster_solve_comm's
 * return.  Returns 0 when the exchanges went through (out->rc says how the
 * solve went), else a negative code: the job is broken. */
int sm_run(sm_job_t *j, const sr_spec_t *spec, const void *A, const void *B, sr_out_t *out, void *full,
           void *X, void *W, int *xsame);

#endif
