/*
 * runtime/solve/mpi.h - the MPI bootstrap: libmpi is dlopen()ed (never linked),
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
 * (atexit, or earlier with muster_mpi_finish), since Open MPI's launcher
 * counts a process that exits without MPI_Finalize as failed.  Both run on
 * a thread of their own under a watch (mpi_life.c): a rank stopped inside
 * MPI_Init or MPI_Finalize makes the others' call fail naming it, never
 * hang.  Then muster also runs the heartbeat (mpi_beat.c): the liveness of
 * every rank, on any node, for the waits on the peers.  The bootstrap works
 * on a duplicate of MPI_COMM_WORLD (MPI_Comm_idup), freed with it.
 */
#ifndef MUSTER_MPI_H
#define MUSTER_MPI_H

#include "muster/provider.h"
#include "base/error.h"

typedef struct muster__mpi muster__mpi_t;

/* Load libmpi, initialise MPI if needed (and start the heartbeat),
 * duplicate MPI_COMM_WORLD.  0 with *out, *rank and *size set, or
 * MUSTER_ENOENT (no libmpi), MUSTER_EPROVIDER (an MPI call failed),
 * MUSTER_ETIMEDOUT (MPI_Init or a duplicate waited for a stopped rank: the
 * message names it; MPI then stays unusable in this process, which should
 * end with _exit: a thread is blocked in MPI) with a message. */
MUSTER_HIDDEN int muster__mpi_open(muster__mpi_t **out, int *rank, int *size);

/* Free the duplicate communicator (not MPI itself: see above). */
MUSTER_HIDDEN void muster__mpi_close(muster__mpi_t *m);

/* muster_mpi_finish (public: muster/comm.h) ends what muster_mpi_open
 * started: the last exchange, the heartbeat, MPI_Finalize. */

/* A bootstrap over m: kind "mpi", mpi_comm the address of the duplicate,
 * allgather = MPI_Iallgather of MPI_BYTEs, then MPI_Test and naps until it
 * completes, or a rank has been silent for MUSTER_TIMEOUT (the heartbeat;
 * without one: MUSTER_TIMEOUT passes): then muster__mpi_abort naming it;
 * with MUSTER_MPI_ABORT=0 there is no check. */
MUSTER_HIDDEN void muster__mpi_boot(muster__mpi_t *m, muster_bootstrap_t *b, uint64_t key);

/* What this rank is doing, for the others' messages when it goes silent
 * ("inside provider scalapack's collective_solve (potrs n=1500)"): carried
 * by its heartbeat.  Cheap, any thread.  A step that sets it for its
 * duration saves the one before (`saved`, MUSTER__MPI_PHASE_MAX bytes)
 * and puts it back when it ends (muster__mpi_phase(saved, ...)... : "%s"). */
#define MUSTER__MPI_PHASE_MAX 112
MUSTER_HIDDEN void muster__mpi_phase(const char *fmt, ...) MUSTER_PRINTF(1, 2);
MUSTER_HIDDEN void muster__mpi_phase_get(char *out, size_t cap);

/* The deadline of a collective call or exchange over MPI without the
 * heartbeat (the peers' state is then out of sight), and the timeout of a
 * silent peer with it: *timeout_s = MUSTER_TIMEOUT (0: none) and
 * *abort_on = MUSTER_MPI_ABORT (1 unless it is 0).  0 or MUSTER_EINVAL
 * (a malformed variable, message set). */
MUSTER_HIDDEN int muster__mpi_deadline(double *timeout_s, int *abort_on);

/* How long a cancelled collective call over MPI may take to return before
 * muster__mpi_abort ends the job (runtime/solve/collective.c). */
#define MUSTER__MPI_ABORT_GRACE_S 1.0

/* With the heartbeat: how long a rank that found a silent peer waits after
 * saying so before it ends the job, so that every other rank, told by the
 * heartbeat within a tick, says so too before MPI_Abort's kill arrives. */
#define MUSTER__MPI_REPORT_GRACE_S 0.5

/* "muster: pid P on HOST: <why>" to stderr: a rank's report when the job
 * is about to end (no caller is left to return it to). */
MUSTER_HIDDEN void muster__mpi_report(const char *why);

/* The one place library code ends the process: a rank of an MPI job whose
 * collective call or bootstrap exchange waits for a peer that is silent
 * (the heartbeat) or past its deadline (without one) (a peer is stopped: MPI offers no way to interrupt a started collective, and
 * Open MPI 4 has no communicator revoke).  Writes "muster: pid P on HOST:
 * <why>: aborting the MPI job (MPI_Abort, errorcode E; ...)" to stderr,
 * waits MUSTER__MPI_REPORT_GRACE_S while the heartbeat runs, and calls
 * MPI_Abort(MPI_COMM_WORLD, E = -code): the launcher then ends every rank
 * of the job, on every node.  Returns only when MPI is not running in
 * this process (not loaded, not initialised, or finalised). */
MUSTER_HIDDEN void muster__mpi_abort(int code, const char *why);

#endif
