/*
 * runtime/solve/mpi_calls.c - the MPI calls of the liveness side channel
 * (mpiInt.h): the nonblocking point-to-point and collective calls the
 * heartbeat and the watched waits make, each with both handle ABIs (Open
 * MPI's pointers, MPICH's ints; runtime/solve/mpi.h).
 */
#include <pthread.h>
#include <stdio.h>

#include "solve/mpiInt.h"

typedef int (*isend_p_fn)(const void *, int, void *, int, int, void *, void **);
typedef int (*isend_i_fn)(const void *, int, int, int, int, int, int *);
typedef int (*irecv_p_fn)(void *, int, void *, int, int, void *, void **);
typedef int (*irecv_i_fn)(void *, int, int, int, int, int, int *);
typedef int (*cancel_p_fn)(void **);
typedef int (*cancel_i_fn)(int *);
typedef int (*idup_p_fn)(void *, void **, void **);
typedef int (*idup_i_fn)(int, int *, int *);
typedef int (*ibarrier_p_fn)(void *, void **);
typedef int (*ibarrier_i_fn)(int, int *);
typedef int (*query_thread_fn)(int *);

#define MPICH_BYTE 0x4c00010d

static struct calls {
  void *isend, *irecv, *cancel, *idup, *ibarrier, *comm_free, *query_thread;
  muster__mpi_handle_t byte;
  int ompi, rc;
  char missing[32];
} k;
static pthread_once_t k_once = PTHREAD_ONCE_INIT;

static void k_load(void) {
  static const struct { const char *name; size_t off; } syms[] = {
      {"MPI_Isend", offsetof(struct calls, isend)},
      {"MPI_Irecv", offsetof(struct calls, irecv)},
      {"MPI_Cancel", offsetof(struct calls, cancel)},
      {"MPI_Comm_idup", offsetof(struct calls, idup)},
      {"MPI_Ibarrier", offsetof(struct calls, ibarrier)},
      {"MPI_Comm_free", offsetof(struct calls, comm_free)},
      {"MPI_Query_thread", offsetof(struct calls, query_thread)},
  };
  k.ompi = muster__mpi_abi_ompi();
  for (size_t i = 0; i < sizeof syms / sizeof syms[0]; i++) {
    void *f = muster__mpi_sym(syms[i].name);
    *(void **)((char *)&k + syms[i].off) = f;
    if (!f && !k.missing[0]) snprintf(k.missing, sizeof k.missing, "%s", syms[i].name);
  }
  if (k.ompi) k.byte.p = muster__mpi_sym("ompi_mpi_byte");
  else k.byte.i = MPICH_BYTE;
  if (k.ompi && !k.byte.p && !k.missing[0]) snprintf(k.missing, sizeof k.missing, "ompi_mpi_byte");
  k.rc = k.missing[0] ? -1 : 0;
}

int muster__mpi_calls_load(void) {
  pthread_once(&k_once, k_load);
  if (k.rc == 0) return 0;
  return muster__err(MUSTER_EPROVIDER, "bootstrap mpi: the loaded libmpi has no %s (MPI 3 or newer "
                     "needed for the liveness checks)", k.missing);
}

int muster__mpi_isend(const void *buf, int len, int dest, int tag, muster__mpi_handle_t comm,
                      muster__mpi_handle_t *req) {
  return k.ompi ? ((isend_p_fn)k.isend)(buf, len, k.byte.p, dest, tag, comm.p, &req->p)
                : ((isend_i_fn)k.isend)(buf, len, k.byte.i, dest, tag, comm.i, &req->i);
}

int muster__mpi_irecv(void *buf, int len, int src, int tag, muster__mpi_handle_t comm,
                      muster__mpi_handle_t *req) {
  return k.ompi ? ((irecv_p_fn)k.irecv)(buf, len, k.byte.p, src, tag, comm.p, &req->p)
                : ((irecv_i_fn)k.irecv)(buf, len, k.byte.i, src, tag, comm.i, &req->i);
}

int muster__mpi_cancel(muster__mpi_handle_t *req) {
  return k.ompi ? ((cancel_p_fn)k.cancel)(&req->p) : ((cancel_i_fn)k.cancel)(&req->i);
}

int muster__mpi_idup(muster__mpi_handle_t comm, muster__mpi_handle_t *dup, muster__mpi_handle_t *req) {
  return k.ompi ? ((idup_p_fn)k.idup)(comm.p, &dup->p, &req->p)
                : ((idup_i_fn)k.idup)(comm.i, &dup->i, &req->i);
}

int muster__mpi_ibarrier(muster__mpi_handle_t comm, muster__mpi_handle_t *req) {
  return k.ompi ? ((ibarrier_p_fn)k.ibarrier)(comm.p, &req->p) : ((ibarrier_i_fn)k.ibarrier)(comm.i, &req->i);
}

int muster__mpi_comm_free(muster__mpi_handle_t *comm) {
  return k.ompi ? ((cancel_p_fn)k.comm_free)(&comm->p) : ((cancel_i_fn)k.comm_free)(&comm->i);
}

int muster__mpi_query_thread(int *provided) { return ((query_thread_fn)k.query_thread)(provided); }
