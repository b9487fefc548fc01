/*
 * tests/mpi/stopshim.c - build/tests/libmpi-stopshim.so, a libmpi for
 * MUSTER_MPI_LIB that stops one rank inside MPI_Init or MPI_Finalize
 * (tests/mpi/stop.sh): its MPI_Init_thread and MPI_Finalize raise SIGSTOP
 * in the rank named by STOPSHIM_RANK when STOPSHIM_AT says "init" or
 * "finalize", then call the real one (PMPI_*); every other symbol is the
 * real libmpi's, which it needs.  From the other ranks' side, that rank is
 * stopped inside the call: they wait in theirs for its part of it.
 */
#include <mpi.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

/* Is this the rank, and the phase, to stop at? */
static int stop_here(const char *phase) {
  const char *at = getenv("STOPSHIM_AT"), *rank = getenv("STOPSHIM_RANK");
  const char *mine = getenv("OMPI_COMM_WORLD_RANK");
  return at && rank && mine && !strcmp(at, phase) && !strcmp(rank, mine);
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided) {
  if (stop_here("init")) raise(SIGSTOP);
  return PMPI_Init_thread(argc, argv, required, provided);
}

int MPI_Finalize(void) {
  if (stop_here("finalize")) raise(SIGSTOP);
  return PMPI_Finalize();
}
