/*
 * runtime/solve/mpi.c - the MPI bootstrap and launcher detection (see mpi.h and
 * docs/bootstrap.md).
 */
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/env.h"
#include "solve/mpiInt.h"
#include "base/proc.h"

#define MPI_OK 0
#define MPICH_COMM_WORLD 0x44000000
#define MPICH_BYTE 0x4c00010d

typedef muster__mpi_handle_t handle_t;

/* The functions whose signatures do not involve a handle. */
typedef int (*initialized_fn)(int *);
typedef int (*init_thread_fn)(int *, char ***, int, int *);
typedef int (*finalize_fn)(void);
typedef int (*error_string_fn)(int, char *, int *);
/* ... and those that do, once per ABI */
typedef int (*rank_p_fn)(void *, int *);
typedef int (*rank_i_fn)(int, int *);
typedef int (*dup_p_fn)(void *, void **);
typedef int (*dup_i_fn)(int, int *);
typedef int (*free_p_fn)(void **);
typedef int (*free_i_fn)(int *);
typedef int (*allgather_p_fn)(const void *, int, void *, void *, int, void *, void *);
typedef int (*allgather_i_fn)(const void *, int, int, void *, int, int, int);
typedef int (*iallgather_p_fn)(const void *, int, void *, void *, int, void *, void *, void **);
typedef int (*iallgather_i_fn)(const void *, int, int, void *, int, int, int, int *);
typedef int (*test_p_fn)(void **, int *, void *);
typedef int (*test_i_fn)(int *, int *, void *);
typedef int (*abort_p_fn)(void *, int);
typedef int (*abort_i_fn)(int, int);
/* MPI_STATUS_IGNORE: Open MPI's is NULL, MPICH's (MPI_Status *)1 */
#define STATUS_IGNORE(ompi) ((void *)(uintptr_t)((ompi) ? 0 : 1))

static struct lib {
  void *h;
  int ompi; /* 1: Open MPI's ABI, 0: MPICH's */
  char name[64];
  handle_t world, byte;
  initialized_fn initialized, finalized;
  init_thread_fn init_thread;
  finalize_fn finalize;
  error_string_fn error_string;
  void *comm_rank, *comm_size, *comm_dup, *comm_free, *allgather, *iallgather, *test, *abort;
  char why[300];
  int code; /* !h: MUSTER_EINVAL (MUSTER_MPI_LIB is bad), else MUSTER_ENOENT */
} lib;
static pthread_once_t lib_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t init_mu = PTHREAD_MUTEX_INITIALIZER;
static int we_initialized;
static int thread_level;  /* what MPI_Init_thread gave us */
static handle_t watch_comm; /* the heartbeat's (ensure_watch) */
static int have_watch;

struct muster__mpi {
  handle_t comm; /* the duplicate of MPI_COMM_WORLD */
  int rank, size;
};

/* MUSTER_MPI_LIB, when set, is the only libmpi tried: a value that is
 * empty, does not load or is no libmpi is an error naming it
 * (MUSTER_EINVAL), never a quiet fall back to another MPI than the one
 * asked for. */
static void lib_load(void) {
  static const char *const defaults[] = {"libmpi.so.40", "libmpi.so.12", "libmpi.so"};
  const char *env = NULL;
  lib.code = MUSTER_ENOENT;
  if (muster__env_mpi_lib(&env) < 0) {
    lib.code = MUSTER_EINVAL;
    snprintf(lib.why, sizeof lib.why, "%s", muster_last_error());
    return;
  }
  const char *const *names = env ? &env : defaults;
  size_t count = env ? 1 : sizeof defaults / sizeof defaults[0];
  for (size_t i = 0; i < count && !lib.h; i++) {
    lib.h = dlopen(names[i], RTLD_NOW | RTLD_GLOBAL);
    if (lib.h) snprintf(lib.name, sizeof lib.name, "%s", names[i]);
    else if (!lib.why[0]) snprintf(lib.why, sizeof lib.why, "%s", dlerror());
  }
  if (!lib.h && env) {
    char e[sizeof lib.why];
    snprintf(e, sizeof e, "%s", lib.why);
    lib.code = MUSTER_EINVAL;
    snprintf(lib.why, sizeof lib.why, "MUSTER_MPI_LIB: cannot load '%.60s': %.150s (unset it to "
             "try libmpi.so.40, libmpi.so.12, libmpi.so)", env, e);
  }
  if (!lib.h) return;
  void *world = dlsym(lib.h, "ompi_mpi_comm_world");
  lib.ompi = world != NULL;
  if (lib.ompi) {
    lib.world.p = world;
    lib.byte.p = dlsym(lib.h, "ompi_mpi_byte");
  } else {
    lib.world.i = MPICH_COMM_WORLD;
    lib.byte.i = MPICH_BYTE;
  }
  lib.initialized = (initialized_fn)dlsym(lib.h, "MPI_Initialized");
  lib.finalized = (initialized_fn)dlsym(lib.h, "MPI_Finalized");
  lib.init_thread = (init_thread_fn)dlsym(lib.h, "MPI_Init_thread");
  lib.finalize = (finalize_fn)dlsym(lib.h, "MPI_Finalize");
  lib.error_string = (error_string_fn)dlsym(lib.h, "MPI_Error_string");
  lib.comm_rank = dlsym(lib.h, "MPI_Comm_rank");
  lib.comm_size = dlsym(lib.h, "MPI_Comm_size");
  lib.comm_dup = dlsym(lib.h, "MPI_Comm_dup");
  lib.comm_free = dlsym(lib.h, "MPI_Comm_free");
  lib.allgather = dlsym(lib.h, "MPI_Allgather");
  lib.iallgather = dlsym(lib.h, "MPI_Iallgather");
  lib.test = dlsym(lib.h, "MPI_Test");
  lib.abort = dlsym(lib.h, "MPI_Abort");
  if (!lib.initialized || !lib.finalized || !lib.init_thread || !lib.finalize || !lib.comm_rank ||
      !lib.comm_size || !lib.comm_dup || !lib.comm_free || !lib.allgather || !lib.iallgather ||
      !lib.test || !lib.abort || (lib.ompi && !lib.byte.p)) {
    if (env) lib.code = MUSTER_EINVAL;
    if (env) snprintf(lib.why, sizeof lib.why, "MUSTER_MPI_LIB: '%.60s' is no libmpi: it lacks an "
                      "MPI function muster needs", env);
    else snprintf(lib.why, sizeof lib.why, "%s lacks an MPI function muster needs", lib.name);
    dlclose(lib.h);
    lib.h = NULL;
  }
}

/* ---- what the other MPI modules use (mpiInt.h) ---------------------------------- */

void *muster__mpi_sym(const char *name) { return lib.h ? dlsym(lib.h, name) : NULL; }
int muster__mpi_abi_ompi(void) { return lib.ompi; }
handle_t muster__mpi_world(void) { return lib.world; }

int muster__mpi_test(handle_t *req, int *done) {
  return lib.ompi ? ((test_p_fn)lib.test)(&req->p, done, STATUS_IGNORE(1))
                  : ((test_i_fn)lib.test)(&req->i, done, STATUS_IGNORE(0));
}

int muster__mpi_fail(const char *what, int code) {
  char text[512] = "";
  int len = 0;
  if (lib.error_string) lib.error_string(code, text, &len);
  return muster__err(MUSTER_EPROVIDER, "%s (%s) failed: %s (%d)", what, lib.name, text[0] ? text : "?", code);
}

/* ---- MPI's start and end, on the MPI thread (mpi_life.c) ------------------------- */

static int init_job(void *provided) {
  int err = lib.init_thread(NULL, NULL, MUSTER__MPI_THREAD_MULTIPLE, provided);
  return err == MPI_OK ? 0 : muster__mpi_fail("MPI_Init_thread", err);
}

static int finalize_job(void *unused) {
  (void)unused;
  int err = lib.finalize();
  return err == MPI_OK ? 0 : muster__mpi_fail("MPI_Finalize", err);
}

static void finalize_at_exit(void) {
  if (muster_mpi_finish() < 0) muster__mpi_report(muster_last_error());
}

/* MPI_Init_thread unless the program did it.  A start that never ends (a
 * rank stopped inside MPI_Init) is MUSTER_ETIMEDOUT, here and for every
 * later call: MPI_Initialized itself would wait for it. */
static int ensure_init(void) {
  static int failed;
  static char why[700];
  int rc = 0, flag = 0;
  pthread_mutex_lock(&init_mu);
  if (failed) {
    rc = muster__err(MUSTER_ETIMEDOUT, "%s", why);
  } else if (lib.initialized(&flag) != MPI_OK || !flag) {
    muster__mpi_phase("in MPI_Init_thread");
    int provided = 0;
    rc = muster__mpi_life_run("MPI_Init_thread", init_job, &provided);
    if (rc < 0) {
      failed = rc == MUSTER_ETIMEDOUT;
      snprintf(why, sizeof why, "%s", muster_last_error());
    } else if (!we_initialized) {
      we_initialized = 1;
      thread_level = provided;
      atexit(finalize_at_exit);
    }
  }
  pthread_mutex_unlock(&init_mu);
  return rc;
}

static int req_done(void *req) {
  int done = 0, err = muster__mpi_test(req, &done);
  return err != MPI_OK ? muster__mpi_fail("MPI_Test", err) : done;
}

/* A duplicate of MPI_COMM_WORLD into *dup: MPI_Comm_idup, then a wait
 * (muster__mpi_wait's mode) that fails naming a stopped rank rather than
 * hanging. */
static int dup_world(handle_t *dup, const char *what, int mode) {
  handle_t req;
  memset(&req, 0, sizeof req);
  int err = muster__mpi_idup(lib.world, dup, &req);
  if (err != MPI_OK) return muster__mpi_fail("MPI_Comm_idup", err);
  return muster__mpi_wait(what, req_done, &req, mode);
}

/* Once per process that muster initialised MPI in: the watch communicator
 * and, with MPI_THREAD_MULTIPLE and unless MUSTER_MPI_HEARTBEAT=0, the
 * heartbeat over it (mpi_beat.c).  A program that initialised MPI itself
 * gets neither: a heartbeat thread must stop before MPI_Finalize, and only
 * the program knows when that is; its waits keep the deadline. */
static int ensure_watch(int rank, int size) {
  static int done, rc;
  static char why[700];
  int on = 1;
  pthread_mutex_lock(&init_mu);
  if (done || !we_initialized) {
    if (rc < 0) muster__err(rc, "%s", why);
    pthread_mutex_unlock(&init_mu);
    return rc;
  }
  done = 1;
  if ((rc = muster__mpi_calls_load()) == 0 && (rc = muster__env_mpi_heartbeat(&on)) == 0) {
    muster__mpi_phase("creating the heartbeat's communicator (MPI_Comm_idup)");
    rc = dup_world(&watch_comm, "MPI_Comm_idup of the heartbeat's communicator", MUSTER__WAIT_LOCAL);
    have_watch = rc == 0;
  }
  if (rc == 0 && on && thread_level == MUSTER__MPI_THREAD_MULTIPLE)
    rc = muster__mpi_beat_start(watch_comm, rank, size);
  if (rc < 0) snprintf(why, sizeof why, "%s", muster_last_error());
  pthread_mutex_unlock(&init_mu);
  return rc;
}

int muster__mpi_open(muster__mpi_t **out, int *rank, int *size) {
  *out = NULL;
  pthread_once(&lib_once, lib_load);
  if (!lib.h && lib.code == MUSTER_EINVAL) return muster__err(MUSTER_EINVAL, "bootstrap mpi: %s", lib.why);
  if (!lib.h)
    return muster__err(MUSTER_ENOENT, "bootstrap mpi: cannot load libmpi (set MUSTER_MPI_LIB to its "
                       "path): %s", lib.why[0] ? lib.why : "not found");
  int rc = ensure_init();
  if (rc < 0) return rc;
  muster__mpi_t *m = calloc(1, sizeof *m);
  if (!m) return muster__err(MUSTER_ENOMEM, "bootstrap mpi: out of memory");
  int err = lib.ompi ? ((rank_p_fn)lib.comm_rank)(lib.world.p, &m->rank)
                     : ((rank_i_fn)lib.comm_rank)(lib.world.i, &m->rank);
  if (err == MPI_OK)
    err = lib.ompi ? ((rank_p_fn)lib.comm_size)(lib.world.p, &m->size)
                   : ((rank_i_fn)lib.comm_size)(lib.world.i, &m->size);
  if (err != MPI_OK) {
    free(m);
    return muster__mpi_fail("MPI_Comm_rank/size", err);
  }
  if ((rc = ensure_watch(m->rank, m->size)) < 0) {
    free(m);
    return rc;
  }
  muster__mpi_phase("opening a kind mpi comm (MPI_Comm_idup)");
  if ((rc = muster__mpi_calls_load()) < 0 ||
      (rc = dup_world(&m->comm, "MPI_Comm_idup of a kind mpi comm", MUSTER__WAIT_SEEN)) < 0) {
    if (rc != MUSTER_ETIMEDOUT) free(m); /* else MPI may still write m->comm: left to the process's end */
    return rc;
  }
  muster__mpi_phase("outside muster's calls (the program's own work)");
  *out = m;
  *rank = m->rank;
  *size = m->size;
  return 0;
}

void muster__mpi_close(muster__mpi_t *m) {
  if (!m) return;
  int done = 1;
  if (lib.finalized(&done) == MPI_OK && !done) {
    if (lib.ompi) ((free_p_fn)lib.comm_free)(&m->comm.p);
    else ((free_i_fn)lib.comm_free)(&m->comm.i);
  }
  free(m);
}

int muster_mpi_finish(void) {
  static int done;
  pthread_mutex_lock(&init_mu);
  int rc = 0, fin = 1, was = done;
  done = 1;
  if (was || !we_initialized || lib.finalized(&fin) != MPI_OK || fin) {
    pthread_mutex_unlock(&init_mu);
    return 0;
  }
  if (have_watch) { /* every rank here, or the one that is not named */
    muster__mpi_phase("leaving: at the last exchange before MPI_Finalize");
    handle_t req;
    memset(&req, 0, sizeof req);
    int err = muster__mpi_ibarrier(watch_comm, &req);
    rc = err != MPI_OK ? muster__mpi_fail("MPI_Ibarrier", err)
                       : muster__mpi_wait("the last exchange before MPI_Finalize", req_done, &req,
                                          MUSTER__WAIT_SEEN);
  }
  muster__mpi_beat_stop(); /* no muster thread in MPI from here: the process may exit */
  if (rc == 0) {
    if (have_watch) muster__mpi_comm_free(&watch_comm);
    have_watch = 0;
    muster__mpi_phase("in MPI_Finalize");
    rc = muster__mpi_life_run("MPI_Finalize", finalize_job, NULL);
  }
  pthread_mutex_unlock(&init_mu);
  return rc;
}

/* ---- the deadline and the abort ------------------------------------------------ */

int muster__mpi_deadline(double *timeout_s, int *abort_on) {
  int rc = muster__env_timeout(timeout_s);
  return rc < 0 ? rc : muster__env_mpi_abort(abort_on);
}

void muster__mpi_report(const char *why) {
  char host[64] = "?", msg[1200];
  gethostname(host, sizeof host - 1);
  int len = snprintf(msg, sizeof msg, "muster: pid %d on %s: %s\n", (int)getpid(), host, why);
  if (len > 0) (void)!write(2, msg, (size_t)len < sizeof msg ? (size_t)len : sizeof msg - 1);
}

void muster__mpi_abort(int code, const char *why) {
  pthread_once(&lib_once, lib_load);
  int up = 0, done = 1;
  if (!lib.h || lib.initialized(&up) != MPI_OK || !up || lib.finalized(&done) != MPI_OK || done) return;
  char msg[1100];
  int errorcode = code < 0 ? -code : 1;
  snprintf(msg, sizeof msg, "%s: aborting the MPI job (MPI_Abort, errorcode %d; MUSTER_MPI_ABORT=0 turns "
           "this off)", why, errorcode);
  muster__mpi_report(msg);
  if (muster__mpi_beat_on()) { /* the others hear of it by the heartbeat and say so too */
    struct timespec grace = {0, (long)(MUSTER__MPI_REPORT_GRACE_S * 1e9)};
    nanosleep(&grace, NULL);
  }
  if (lib.ompi) ((abort_p_fn)lib.abort)(lib.world.p, errorcode);
  else ((abort_i_fn)lib.abort)(lib.world.i, errorcode);
}

/* MPI_Iallgather, then MPI_Test with short naps until it completes (a
 * waiting rank leaves the CPU to the others) under muster__mpi_wait: with
 * the heartbeat, until a rank is silent for MUSTER_TIMEOUT; without, for
 * MUSTER_TIMEOUT.  Then nothing but the job's end can release the started
 * collective: muster__mpi_abort, naming the rank (MUSTER_MPI_ABORT=0: no
 * check, as MPI_Allgather). */
static int mpi_allgather(void *ctx, const void *mine, void *all, size_t len, char *err, size_t errlen) {
  muster__mpi_t *m = ctx;
  double timeout = 0;
  int abort_on = 1;
  if (len > INT_MAX) {
    snprintf(err, errlen, "bootstrap mpi: %zu bytes is more than one MPI_Allgather takes", len);
    return MUSTER_EINVAL;
  }
  int rc = muster__mpi_deadline(&timeout, &abort_on);
  if (rc < 0) {
    snprintf(err, errlen, "rank %d: %s", m->rank, muster_last_error());
    return rc;
  }
  handle_t req;
  memset(&req, 0, sizeof req);
  rc = lib.ompi ? ((iallgather_p_fn)lib.iallgather)(mine, (int)len, lib.byte.p, all, (int)len, lib.byte.p,
                                                    m->comm.p, &req.p)
                : ((iallgather_i_fn)lib.iallgather)(mine, (int)len, lib.byte.i, all, (int)len, lib.byte.i,
                                                    m->comm.i, &req.i);
  char what[64];
  snprintf(what, sizeof what, "rank %d: an allgather of the MPI bootstrap", m->rank);
  int mode = abort_on ? MUSTER__WAIT_PEERS : MUSTER__WAIT_FOREVER;
  rc = rc != MPI_OK ? muster__mpi_fail("MPI_Iallgather", rc) : muster__mpi_wait(what, req_done, &req, mode);
  if (rc == MUSTER_ETIMEDOUT) {
    char why[900];
    snprintf(why, sizeof why, "rank %d: %s", m->rank, muster_last_error());
    muster__mpi_abort(rc, why);
    muster__err(rc, "%s", why); /* it returned: MPI is not running here */
  }
  if (rc < 0) snprintf(err, errlen, "rank %d: %s", m->rank, muster_last_error());
  return rc;
}

void muster__mpi_boot(muster__mpi_t *m, muster_bootstrap_t *b, uint64_t key) {
  memset(b, 0, sizeof *b);
  b->rank = m->rank;
  b->size = m->size;
  b->kind = "mpi";
  b->key = key;
  b->mpi_comm = &m->comm;
  b->ctx = m;
  b->allgather = mpi_allgather;
}

/* ---- launchers ---------------------------------------------------------------- */

static int env_int(const char *name, int *out) {
  const char *s = getenv(name);
  char *end;
  if (!s || !*s) return 0;
  long v = strtol(s, &end, 10);
  if (*end || v < 0 || v > INT_MAX) return 0;
  *out = (int)v;
  return 1;
}

/* job: the variables that name the job (the same in every rank of one
 * mpirun/srun, another in the next), for mpi_peers.c's search of this
 * node's ranks; NULL when the launcher has none we know. */
static const muster__launcher_t launchers[] = {
    {"openmpi", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", {"OMPI_MCA_ess_base_jobid", NULL}},
    {"pmi", "PMI_RANK", "PMI_SIZE", {NULL, NULL}},
    {"slurm", "SLURM_PROCID", "SLURM_NTASKS", {"SLURM_JOB_ID", "SLURM_STEP_ID"}},
};

const muster__launcher_t *muster__launcher_find(int *rank, int *size) {
  for (size_t i = 0; i < sizeof launchers / sizeof launchers[0]; i++) {
    int r, s;
    if (!env_int(launchers[i].rank, &r) || !env_int(launchers[i].size, &s) || r >= s) continue;
    if (rank) *rank = r;
    if (size) *size = s;
    return &launchers[i];
  }
  return NULL;
}

int muster_launcher_detect(char *name, size_t cap, int *rank, int *size) {
  if (name && cap) name[0] = '\0';
  const muster__launcher_t *l = muster__launcher_find(rank, size);
  if (l && name && cap) snprintf(name, cap, "%s", l->name);
  return l != NULL;
}
