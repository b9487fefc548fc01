/*
 * tests/gpu/gpu_case.h - one case of the GPU test command (gpu_test.c):
 * what it solves and where, the provider under test, and the machinery
 * that runs a case (gpu_case.c): every rank's device buffers, random
 * matrices generated on the GPUs, residual checks, muster_solve from
 * threads or processes or muster_solve_all from one thread, the provider's
 * counters around the second solve, and a rank SIGKILLed mid-solve.
 * Every case runs in a child process (CUDA is never initialized in the
 * parent, so process-mode cases can fork their ranks).  gpu_case.c runs
 * the solves; gpu_rank.c makes, fills and checks a rank's shard;
 * gpu_proc.c the kills and the processes around them.
 */
#ifndef MUSTER_GPU_CASE_H
#define MUSTER_GPU_CASE_H

#include <stdint.h>
#include <sys/types.h>

#include "gpu_util.h"
#include "muster.h"

#define GC_TOL GU_TOL /* residual ratios (gpu_util.h) */
#define GC_MAX_RANKS 16
#define GC_MAX_STATS 16

enum { M_THREADS, M_PROCS, M_ALL };
extern const char *const gc_mode_name[3];

/* The provider under test: its name and its counters (an exported
 * `stats_symbol`, int fn(uint64_t *out, int cap); nstats 0: it has none,
 * and nothing is checked around the second solve). */
struct tcase;
typedef struct gprov {
  const char *name;
  const char *stats_symbol;
  int nstats;
  const char *const *stat_names;
  unsigned created;  /* bits of the counters a second solve must not move */
  int solves;        /* index of the solve counter (+1 per solve)          */
  /* Optional: more checks of the counters around every successful solve
   * (in the leader's process: rank 0, or muster_solve_all's caller); 0
   * when they hold. */
  int (*check)(const struct tcase *c, const uint64_t *before, const uint64_t *after);
} gprov_t;

/* A case that is not a plain solve (kills, memory checks): run in its own
 * process, 0 when it passed. */
typedef int (*gc_special_fn)(const struct tcase *c, int ndev);

typedef struct tcase {
  char name[160];
  const gprov_t *prov;
  muster_routine_t routine;
  muster_dtype_t dtype;
  int mode, R;
  int devs[GC_MAX_RANKS]; /* each rank's device                             */
  int ngpus;              /* GPUs the case needs                            */
  int64_t n, lda_extra, nrhs, tile;
  int64_t m;              /* gels: rows of A and B (ldb = m); 0 otherwise    */
  muster_layout_t layout; /* cyclic: tile is the layout's (> 0)             */
  unsigned flags;
  double shift;           /* diagonal shift; n: SPD, 0: syevd, -n: not PD   */
  int nan_in;             /* 0, or put a NaN into 'a' (A(5,2)) or 'b' (B(3,0)) */
  int64_t zero_col;       /* getrs: 0, or column k (1-based) of A made zero:
                             singular, MUSTER_ESINGULAR with info k; potrs
                             (A positive definite otherwise): the leading
                             minor k fails, MUSTER_ENOTPD with info k      */
  int64_t dup_of;         /* getrs with zero_col: 0, or column zero_col is
                             a copy of column dup_of (1-based) instead of
                             zero: numerically singular (LU leaves a pivot
                             at rounding level, not 0), the same error    */
  int expect;             /* 0 or the MUSTER_E* code expected               */
  int expect_alt;         /* another code also accepted (NaN cases), or 0   */
  int a_kept;             /* 1: after the expected error every rank's A is
                             exactly as it was made (copy-mode providers) */
  int reps;
  const char *env;        /* "NAME=value[ NAME=value ...]" set in the case's process, or NULL */
  int victim;             /* special kill cases: the rank killed            */
  double survive_s;       /* kill cases: the survivor's error within this   */
  gc_special_fn special;
} tcase_t;

/* Append a plain case to `cases` (capacity GC_MAX_CASES); its name is made
 * from its fields plus `shape`.  Defaults: block layout, devices 0..R-1,
 * nrhs 3 for potrs and getrs, shift n (SPD) or 0 (syevd; getrs: a random
 * general matrix, gpu_util.h), two repetitions.  Checks by routine:
 * potrs, getrs ||AX - B|| / (||A|| ||X|| n eps); getrs also A unchanged
 * on every rank (unless MUSTER_NO_FACTOR); potrs with MUSTER_LOGDET also
 * every rank's log det against the lapack provider's on the same matrix. */
#define GC_MAX_CASES 2048
tcase_t *gc_add(tcase_t *cases, int *ncases, const gprov_t *prov, muster_routine_t rt, unsigned flags,
                muster_dtype_t dt, int mode, int R, int64_t n, int64_t lda_extra, int64_t tile, const char *shape);
/* getrs cases every GPU provider runs the same way, on R ranks in `mode`:
 * from a cyclic layout (c64, n = 1001, lda = n + 3, tile 96); an exactly
 * singular A (n = 600, column 302 zero; f64 and c64: MUSTER_ESINGULAR,
 * info 302); a numerically singular one (n = 600, column 302 = column 2;
 * every dtype: MUSTER_ESINGULAR, info 302, by the singularity rule of
 * providers/common/singular.h); NaN in A or in B (f64, n = 500:
 * MUSTER_ENONFINITE; not for muster_solve_all). */
void gc_add_getrs_edges(tcase_t *cases, int *ncases, const gprov_t *prov, int mode, int R);

/* Rebuild c->name after changing its fields (devices, layout, env ...). */
void gc_name(tcase_t *c, const char *shape);

/* Run one case (plain or special) in this process; 0 when it passed.
 * Failures are explained on stderr. */
int gc_run(const tcase_t *c, int ndev);

/* Fork the case's ranks: each joins `group` and runs the case's solves
 * from its own process (muster_solve), exiting 0 when they passed.  With
 * notify_fd >= 0 (kill cases) each writes one byte there just before its
 * solve and exits 0 (success, results checked), 99 (wrong results) or
 * 100 - rc (muster_solve's error rc).  close_fd, when >= 0, is closed in
 * every rank. */
void gc_fork_ranks(const tcase_t *c, const char *group, int notify_fd, int close_fd, pid_t *pids);

/* Kill special (gpu_proc.c): 2 processes, rank c->victim SIGKILLed about 1 s into the
 * last solve (c->reps > 1: the ones before are plain solves that warm up,
 * e.g. make cusolvermp's NCCL communicator, whose creation NCCL cannot
 * abort).  A dead leader: the survivor must fail with MUSTER_EPEERDEAD
 * within c->survive_s; a dead non-leader (already at the final barrier):
 * the leader must finish with results that check out, or an error.  Either
 * way nothing of the job may be left in /dev/shm. */
int gc_kill(const tcase_t *c, int ndev);

/* The provider's counters (0 when not loaded yet: all zero, -1). */
int gc_stats(const gprov_t *p, uint64_t out[GC_MAX_STATS]);
/* Address of `symbol` in the loaded object that exports the provider's
 * counters (the registry loads it under any name), or NULL. */
void *gc_provider_symbol(const gprov_t *p, const char *symbol);

/* Wait for pid up to `secs`; past it, SIGKILL its process group and
 * return -1. */
int gc_wait_limited(pid_t pid, double secs, int *status);
/* Devices visible, counted in a child (CUDA stays uninitialized here). */
int gc_gpu_count(void);
double gc_now(void);

#endif
