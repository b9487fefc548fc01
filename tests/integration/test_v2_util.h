/*
 * tests/integration/test_v2_util.h - a harness for solves through the test
 * providers (tests/providers): R ranks as threads or forked processes, each
 * joining one group and calling muster_solve `calls` times with host
 * shards (muster_shard_alloc in processes mode) of a block or cyclic
 * layout; per call and rank: the code, message, result and the marker the
 * provider wrote into this rank's outputs (tp_marker's rule).  Optionally
 * SIGKILLs (or SIGSTOPs) one rank once every rank has entered the provider
 * (TESTPROV_ENTER_LOG) and records when.
 */
#ifndef MUSTER_TEST_V2_UTIL_H
#define MUSTER_TEST_V2_UTIL_H

#include "muster.h"

#define V2_MAX_CALLS 4
#define V2_MAX_RANKS 8

typedef struct v2_rank_out {
  int rc[V2_MAX_CALLS];
  char msg[V2_MAX_CALLS][600];
  muster_solve_result_t res[V2_MAX_CALLS];
  double marker[V2_MAX_CALLS];
  double t_return;  /* test_now() when the last call returned */
  int done;
} v2_rank_out_t;

typedef struct v2_run {
  muster_solve_args_t args; /* routine, dtype, n, nrhs, tile, layout, provider */
  int R, processes, calls;
  int kill_rank;            /* -1: none; else signal it once all have entered */
  int kill_signal;          /* SIGKILL (default), or SIGSTOP: the stopped rank is
                               SIGKILLed once the others have returned */
  double timeout_s;         /* the group's (default 10) */
  const char *env_rank[V2_MAX_RANKS]; /* "NAME=VALUE" put in that rank (processes) */
  int use_exit;             /* processes: a rank ends with exit(0), not _exit(0) */
  double t_kill;            /* out */
  v2_rank_out_t *out;       /* out: R entries (shared memory) */
} v2_run_t;

/* Defaults: potrs f64 n=10 nrhs=2 R=3, one call, no kill. */
void v2_init(v2_run_t *run, muster_routine_t r, int R, int processes);
void v2_run(v2_run_t *run);
void v2_free(v2_run_t *run);
/* Every rank's call k: rc == want and msg containing `has` (NULL: any). */
void v2_expect_all(const v2_run_t *run, int k, int want, const char *has);

/* stderr of this process and its children to a file while fn runs; the
 * text into out. */
void v2_capture_stderr(void (*fn)(void *), void *arg, char *out, size_t cap);

/* Lines of a text file (0 when it does not exist). */
int v2_count_lines(const char *path, const char *prefix);

#endif
