/*
 * runtime/mpi.h - the MPI bootstrap: libmpi is dlopen()ed (never linked),
 * so libmuster runs where no MPI is installed and picks up whichever MPI
 * the job was started with.  docs/bootstrap.md.
 *
 * Library: $MUSTER_MPI_LIB, else libmpi.so.40 (Open MPI 3-5), libmpi.so.12
 * (MPICH and its ABI family: Intel MPI, MVAPICH, Cray MPICH), libmpi.so;
 * loaded RTLD_GLOBAL (Open MPI's components resolve libmpi's symbols).
 * Handles: Open MPI's MPI_Comm / MPI_Datatype are pointers to its global
 * objects (ompi_mpi_comm_world, ompi_mpi_byte); MPICH's are integers
 * (MPI_COMM_WORLD 0x44000000, MPI_BYTE 0x4c00010d).  Which one is told by
 * the symbol ompi_mpi_comm_world.
 *
 * MPI is initialised (MPI_Init_thread, MPI_THREAD_MULTIPLE asked) only when
 * the program has not done it; then muster also finalises it at exit
 * (atexit), since Open MPI's launcher counts a process that exits without
 * MPI_Finalize as failed.  The bootstrap works on a duplicate of
 * MPI_COMM_WORLD (MPI_Comm_dup), freed with it.
 */
#ifndef MUSTER_MPI_H
#define MUSTER_MPI_H

#include "muster/provider.h"
#include "error.h"

typedef struct muster__mpi muster__mpi_t;

/* Load libmpi, initialise MPI if needed, duplicate MPI_COMM_WORLD.  0 with
 * *out, *rank and *size set, or MUSTER_ENOENT (no libmpi), MUSTER_EPROVIDER
 * (an MPI call failed) with a message. */
MUSTER_HIDDEN int muster__mpi_open(muster__mpi_t **out, int *rank, int *size);

/* Free the duplicate communicator (not MPI itself: see above). */
MUSTER_HIDDEN void muster__mpi_close(muster__mpi_t *m);

/* A bootstrap over m: kind "mpi", mpi_comm the address of the duplicate,
 * allgather = MPI_Iallgather of MPI_BYTEs, then MPI_Test and naps until it
 * completes or MUSTER_TIMEOUT passes (then muster__mpi_abort; with
 * MUSTER_MPI_ABORT=0 there is no deadline). */
MUSTER_HIDDEN void muster__mpi_boot(muster__mpi_t *m, muster_bootstrap_t *b, uint64_t key);

/* The deadline of a collective call or exchange over MPI, whose peers'
 * state the runtime cannot see: *timeout_s = MUSTER_TIMEOUT (0: none) and
 * *abort_on = MUSTER_MPI_ABORT (1 unless it is 0).  0 or MUSTER_EINVAL
 * (a malformed variable, message set). */
MUSTER_HIDDEN int muster__mpi_deadline(double *timeout_s, int *abort_on);

/* How long a cancelled collective call over MPI may take to return before
 * muster__mpi_abort ends the job (runtime/collective.c). */
#define MUSTER__MPI_ABORT_GRACE_S 1.0

/* The one place library code ends the process: a rank of an MPI job whose
 * collective call or bootstrap exchange is stuck past its deadline (a peer
 * is stopped: MPI offers no way to interrupt a started collective, and
 * Open MPI 4 has no communicator revoke).  Writes "muster: pid P on HOST:
 * <why>: aborting the MPI job (MPI_Abort, errorcode E; ...)" to stderr and
 * calls MPI_Abort(MPI_COMM_WORLD, E = -code): the launcher then ends every
 * rank of the job, on every node.  Returns only when MPI is not running in
 * this process (not loaded, not initialised, or finalised). */
MUSTER_HIDDEN void muster__mpi_abort(int code, const char *why);

#endif
