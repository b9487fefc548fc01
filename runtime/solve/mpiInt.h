/*
 * runtime/solve/mpiInt.h - what the MPI modules share beyond mpi.h: handles of
 * either ABI, the calls the liveness side channel makes (mpi_calls.c), the
 * heartbeat (mpi_beat.c), the ranks of the job on this node (mpi_peers.c)
 * and the waits outside MPI's reach: MPI_Init, MPI_Finalize (mpi_life.c).
 * docs/bootstrap.md, "Liveness over MPI".
 */
#ifndef MUSTER_MPI_INT_H
#define MUSTER_MPI_INT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "solve/mpi.h"

/* A handle of either ABI: Open MPI's are pointers, MPICH's ints. */
typedef union muster__mpi_handle {
  void *p;
  int i;
} muster__mpi_handle_t;

#define MUSTER__MPI_THREAD_MULTIPLE 3 /* the same value in Open MPI and MPICH */

/* ---- mpi.c: the loaded library ------------------------------------------------ */

/* dlsym in the loaded libmpi (NULL before it is loaded, or when absent). */
MUSTER_HIDDEN void *muster__mpi_sym(const char *name);
/* 1: Open MPI's ABI, 0: MPICH's (meaningful once loaded). */
MUSTER_HIDDEN int muster__mpi_abi_ompi(void);
MUSTER_HIDDEN muster__mpi_handle_t muster__mpi_world(void);
/* MPI_Test(req, done, MPI_STATUS_IGNORE): MPI's code. */
MUSTER_HIDDEN int muster__mpi_test(muster__mpi_handle_t *req, int *done);
/* "WHAT (libmpi) failed: <MPI's text> (code)" into the message; the code
 * MUSTER_EPROVIDER. */
MUSTER_HIDDEN int muster__mpi_fail(const char *what, int code);

/* The launcher that started this process (muster_launcher_detect's table):
 * the variables of its rank, size and job (job[]: NULL-ended, or none).
 * NULL when no launcher's variables are set. */
typedef struct muster__launcher {
  const char *name, *rank, *size, *job[2];
} muster__launcher_t;
MUSTER_HIDDEN const muster__launcher_t *muster__launcher_find(int *rank, int *size);

/* ---- mpi_calls.c: the side channel's calls, both ABIs (0: MPI_SUCCESS) ---------- */

/* Resolve them once; 0, or MUSTER_EPROVIDER naming the missing one. */
MUSTER_HIDDEN int muster__mpi_calls_load(void);
MUSTER_HIDDEN int muster__mpi_isend(const void *buf, int len, int dest, int tag, muster__mpi_handle_t comm,
                                    muster__mpi_handle_t *req);
MUSTER_HIDDEN int muster__mpi_irecv(void *buf, int len, int src, int tag, muster__mpi_handle_t comm,
                                    muster__mpi_handle_t *req);
MUSTER_HIDDEN int muster__mpi_cancel(muster__mpi_handle_t *req);
MUSTER_HIDDEN int muster__mpi_idup(muster__mpi_handle_t comm, muster__mpi_handle_t *dup,
                                   muster__mpi_handle_t *req);
MUSTER_HIDDEN int muster__mpi_ibarrier(muster__mpi_handle_t comm, muster__mpi_handle_t *req);
MUSTER_HIDDEN int muster__mpi_comm_free(muster__mpi_handle_t *comm);
MUSTER_HIDDEN int muster__mpi_query_thread(int *provided);

/* ---- mpi_peers.c: the ranks of this job on this node, through /proc ------------- */

typedef struct muster__mpi_local {
  int me, world;              /* from the launcher's variables; world 0: unknown */
  int n;                      /* peers found (this process not counted) */
  struct {
    int rank;
    pid_t pid;
    uint64_t start;           /* /proc/PID/stat field 22 */
    uint64_t stopped_since;   /* muster__now_mono_ns() when first seen stopped; 0 */
  } p[MUSTER_MAX_RANKS];
  uint64_t scanned_ns;        /* the last scan */
} muster__mpi_local_t;

/* Find (again: at most every second) the other processes of this job on
 * this node: same user, same UTS namespace (host name), the same job in
 * the launcher's variables (muster__launcher_find), a rank variable.  A rank seen in two processes (a
 * wrapper script and its child) is the stopped one, else the younger. */
MUSTER_HIDDEN void muster__mpi_local_scan(muster__mpi_local_t *l);

/* One look while this rank waits `waited` seconds in `what` (a wait that
 * MPI's messages cannot watch: MPI_Init, MPI_Finalize): MUSTER_ETIMEDOUT
 * naming the rank(s) on this node stopped for more than timeout (0: none),
 * or, past the timeout, the ranks out of sight (other nodes) when any;
 * else 0: every peer is on this node and running, however slowly. */
MUSTER_HIDDEN int muster__mpi_local_check(muster__mpi_local_t *l, const char *what, double waited,
                                          double timeout);

/* ---- mpi_beat.c: the heartbeat ------------------------------------------------- */

/* Start this process's heartbeat over comm (a duplicate of MPI_COMM_WORLD
 * kept for it): a thread that every MUSTER__BEAT_TICK_MS sends each other
 * rank a small message (pid, start time, host, phase) and takes theirs.
 * 0, or a negative code (message set; no heartbeat then). */
#define MUSTER__BEAT_TICK_MS 100
MUSTER_HIDDEN int muster__mpi_beat_start(muster__mpi_handle_t comm, int rank, int size);
/* 1 while the heartbeat runs. */
MUSTER_HIDDEN int muster__mpi_beat_on(void);
/* Stop and join the thread, cancel its receives (before MPI_Finalize). */
MUSTER_HIDDEN void muster__mpi_beat_stop(void);
/* The rank(s) of this job, on any node, whose heartbeat has not arrived
 * for more than MUSTER_TIMEOUT (time in which this process itself did not
 * run does not count), or that another rank found so:
 * MUSTER_ETIMEDOUT naming each (rank, pid, host, its phase when last
 * heard, stopped or not when on this node); 0 otherwise, and when no
 * heartbeat runs. */
MUSTER_HIDDEN int muster__mpi_beat_check(void);

/* ---- mpi_life.c: waits outside MPI's reach ------------------------------------- */

/* Run fn(arg) on the process's MPI thread (the same thread every time: the
 * one that initialises MPI finalises it) and wait for it under the local
 * watch (muster__mpi_local_check, MUSTER_TIMEOUT).  fn's return value, or
 * MUSTER_ETIMEDOUT with the message when the watch gave up: fn is then
 * still blocked there, and every later call returns that error at once. */
MUSTER_HIDDEN int muster__mpi_life_run(const char *what, int (*fn)(void *), void *arg);

/* Wait until poll(arg) returns non-zero (1 done; < 0 failed, message set),
 * napping between polls, and every 100 ms look at the peers as `mode`
 * says:
 *   LOCAL    outside MPI (MPI_Init, MPI_Finalize, the heartbeat's dup): the
 *            local watch (muster__mpi_local_check, MUSTER_TIMEOUT);
 *   PEERS    an MPI exchange: muster__mpi_beat_check while the heartbeat
 *            runs, else MUSTER_TIMEOUT after the wait began;
 *   SEEN     the heartbeat while it runs, else the local watch (a wait
 *            that returns an error rather than ending the job: a slow
 *            peer on this node is waited for);
 *   FOREVER  no look (MUSTER_MPI_ABORT=0: as MPI waits).
 * Time in which this process did not run does not count.  0, poll's error
 * or MUSTER_ETIMEDOUT (the message names who, and where: `what`). */
enum { MUSTER__WAIT_LOCAL, MUSTER__WAIT_PEERS, MUSTER__WAIT_SEEN, MUSTER__WAIT_FOREVER };
MUSTER_HIDDEN int muster__mpi_wait(const char *what, int (*poll)(void *), void *arg, int mode);

#endif
