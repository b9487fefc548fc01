/*
 * runtime/mpi.c - the MPI bootstrap and launcher detection (see mpi.h and
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

#include "env.h"
#include "mpi.h"

#define MPI_OK 0
#define THREAD_MULTIPLE 3 /* the same value in Open MPI and MPICH */
#define MPICH_COMM_WORLD 0x44000000
#define MPICH_BYTE 0x4c00010d

/* A handle of either ABI: Open MPI's are pointers, MPICH's ints. */
typedef union handle {
  void *p;
  int i;
} handle_t;

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

/* "MPI_Xxx failed: <MPI's text>" into the thread's message. */
static int mpi_fail(const char *what, int code) {
  char text[512] = "";
  int len = 0;
  if (lib.error_string) lib.error_string(code, text, &len);
  return muster__err(MUSTER_EPROVIDER, "%s (%s) failed: %s (%d)", what, lib.name, text[0] ? text : "?", code);
}

static void finalize_at_exit(void) {
  int done = 1;
  if (lib.finalized(&done) == MPI_OK && !done) lib.finalize();
}

/* MPI_Init_thread unless the program did it. */
static int ensure_init(void) {
  int rc = 0, flag = 0;
  pthread_mutex_lock(&init_mu);
  if (lib.initialized(&flag) != MPI_OK) flag = 0;
  if (!flag) {
    int provided = 0, err = lib.init_thread(NULL, NULL, THREAD_MULTIPLE, &provided);
    if (err != MPI_OK) rc = mpi_fail("MPI_Init_thread", err);
    else if (!we_initialized) {
      we_initialized = 1;
      atexit(finalize_at_exit);
    }
  }
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
  int err = lib.ompi ? ((dup_p_fn)lib.comm_dup)(lib.world.p, &m->comm.p)
                     : ((dup_i_fn)lib.comm_dup)(lib.world.i, &m->comm.i);
  if (err != MPI_OK) {
    free(m);
    return mpi_fail("MPI_Comm_dup", err);
  }
  err = lib.ompi ? ((rank_p_fn)lib.comm_rank)(m->comm.p, &m->rank) : ((rank_i_fn)lib.comm_rank)(m->comm.i, &m->rank);
  if (err == MPI_OK)
    err = lib.ompi ? ((rank_p_fn)lib.comm_size)(m->comm.p, &m->size)
                   : ((rank_i_fn)lib.comm_size)(m->comm.i, &m->size);
  if (err != MPI_OK) {
    muster__mpi_close(m);
    return mpi_fail("MPI_Comm_rank/size", err);
  }
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

/* ---- the deadline and the abort ------------------------------------------------ */

int muster__mpi_deadline(double *timeout_s, int *abort_on) {
  int rc = muster__env_timeout(timeout_s);
  return rc < 0 ? rc : muster__env_mpi_abort(abort_on);
}

void muster__mpi_abort(int code, const char *why) {
  pthread_once(&lib_once, lib_load);
  int up = 0, done = 1;
  if (!lib.h || lib.initialized(&up) != MPI_OK || !up || lib.finalized(&done) != MPI_OK || done) return;
  char host[64] = "?", msg[1024];
  gethostname(host, sizeof host - 1);
  int errorcode = code < 0 ? -code : 1;
  int len = snprintf(msg, sizeof msg, "muster: pid %d on %s: %s: aborting the MPI job (MPI_Abort, "
                     "errorcode %d; MUSTER_MPI_ABORT=0 turns this off)\n", (int)getpid(), host, why,
                     errorcode);
  if (len > 0) (void)!write(2, msg, (size_t)len < sizeof msg ? (size_t)len : sizeof msg - 1);
  if (lib.ompi) ((abort_p_fn)lib.abort)(lib.world.p, errorcode);
  else ((abort_i_fn)lib.abort)(lib.world.i, errorcode);
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* MPI_Iallgather, then MPI_Test with short naps until it completes (a
 * waiting rank leaves the CPU to the others) or MUSTER_TIMEOUT passes: a
 * rank of the job is stopped or stuck, and nothing but the job's end can
 * release a started collective, so muster__mpi_abort (MUSTER_MPI_ABORT=0:
 * no deadline, as MPI_Allgather). */
static int mpi_allgather(void *ctx, const void *mine, void *all, size_t len, char *err, size_t errlen) {
  muster__mpi_t *m = ctx;
  double timeout = 0;
  int abort_on = 1, done = 0;
  if (len > INT_MAX) {
    snprintf(err, errlen, "bootstrap mpi: %zu bytes is more than one MPI_Allgather takes", len);
    return MUSTER_EINVAL;
  }
  int rc = muster__mpi_deadline(&timeout, &abort_on);
  if (rc < 0) {
    snprintf(err, errlen, "rank %d: %s", m->rank, muster_last_error());
    return rc;
  }
  if (!abort_on) timeout = 0; /* MUSTER_MPI_ABORT=0: wait, as MPI_Allgather would */
  handle_t req;
  memset(&req, 0, sizeof req);
  rc = lib.ompi ? ((iallgather_p_fn)lib.iallgather)(mine, (int)len, lib.byte.p, all, (int)len, lib.byte.p,
                                                    m->comm.p, &req.p)
                : ((iallgather_i_fn)lib.iallgather)(mine, (int)len, lib.byte.i, all, (int)len, lib.byte.i,
                                                    m->comm.i, &req.i);
  double t0 = now_s();
  long nap_ns = 20000;
  while (rc == MPI_OK) {
    rc = lib.ompi ? ((test_p_fn)lib.test)(&req.p, &done, STATUS_IGNORE(1))
                  : ((test_i_fn)lib.test)(&req.i, &done, STATUS_IGNORE(0));
    if (rc != MPI_OK || done) break;
    if (timeout > 0 && now_s() - t0 > timeout) {
      char why[300];
      snprintf(why, sizeof why, "rank %d: an allgather of the MPI bootstrap has not completed after %.1f s "
               "(MUSTER_TIMEOUT): another rank of the job is stopped (SIGSTOP, a debugger) or stuck",
               m->rank, timeout);
      muster__mpi_abort(MUSTER_ETIMEDOUT, why);
      timeout = 0; /* it returned: MPI is not running, and MPI_Test fails next */
    }
    struct timespec nap = {0, nap_ns};
    nanosleep(&nap, NULL);
    if (nap_ns < 1000000) nap_ns *= 2;
  }
  if (rc == MPI_OK) return 0;
  rc = mpi_fail("MPI_Allgather", rc);
  snprintf(err, errlen, "rank %d: %s", m->rank, muster_last_error());
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

int muster_launcher_detect(char *name, size_t cap, int *rank, int *size) {
  static const struct { const char *name, *rank, *size; } launchers[] = {
      {"openmpi", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"},
      {"pmi", "PMI_RANK", "PMI_SIZE"},
      {"slurm", "SLURM_PROCID", "SLURM_NTASKS"},
  };
  if (name && cap) name[0] = '\0';
  for (size_t i = 0; i < sizeof launchers / sizeof launchers[0]; i++) {
    int r, s;
    if (!env_int(launchers[i].rank, &r) || !env_int(launchers[i].size, &s) || r >= s) continue;
    if (name && cap) snprintf(name, cap, "%s", launchers[i].name);
    if (rank) *rank = r;
    if (size) *size = s;
    return 1;
  }
  return 0;
}
