/*
 * tests/providers/tp_util.h - helpers for tests that use the test
 * providers (tests/unit/test_registry_util.c): private provider folders
 * assembled with symlinks, the build's provider folders, /proc/self/maps.
 */
#ifndef MUSTER_TP_UTIL_H
#define MUSTER_TP_UTIL_H

#include <stddef.h>
#include "muster.h"
#include "muster/provider.h"

/* <build>/tests/providers (the test providers) and <build>/lib/muster/providers. */
const char *tp_build_dir(void);
const char *tp_lapack_dir(void);

/* dir/routine/linkname -> <tp_build_dir>/target, replaced atomically (rename). */
void tp_link(const char *dir, const char *routine, const char *linkname, const char *target);
/* Like tp_link with an absolute target. */
void tp_link_abs(const char *dir, const char *routine, const char *linkname, const char *target);
/* A fresh private folder as MUSTER_PROVIDER_PATH, with MUSTER_PROVIDER,
 * MUSTER_COST_PATH and the test providers' TESTPROV_* knobs unset. */
void tp_env_fresh(char *dir, size_t cap);
/* Write text to path (replacing it). */
void tp_write_file(const char *path, const char *text);
/* The entry of `name` in a providers listing, or NULL. */
const muster_provider_info_t *tp_find_info(const muster_provider_info_t *info, int n, const char *name);
/* Run `<build>/bin/muster ARGS` with stdout in out and stderr in err;
 * returns the exit status (128 + signal when it died of one). */
int tp_cli(const char *args, char *out, size_t cap, char *err, size_t ecap);
/* 1 if a mapping of this process names a file whose path contains s. */
int tp_maps_has(const char *s);
/* A GPU provider's probe: 0, or MUSTER_ECUDA naming cudaGetDeviceCount;
 * CUDA not started in this process (unless it was before); the same
 * answer cached on a second call. */
void tp_gpu_probe_check(int (*probe)(char *why, size_t whylen));
/* A call of one shard s (f64, n x n, tile n) whose info and message go to
 * *info and err. */
muster_provider_call_t tp_one_shard_call(muster_routine_t rt, int64_t n, int64_t nrhs, const muster_shard_t *s,
                                         int64_t *info, char *err, size_t errlen);

/* The build's provider `backend` (<build>/lib/muster/providers/<backend>.so,
 * dlopened as test_provider_dlopen does): its v2 struct, checked for what
 * every v2 provider must hold (ABI version, struct size, layout rules,
 * name) and for `kind` (MUSTER_PROVIDER_LEADER or _COLLECTIVE); the
 * handle in *handle (may be NULL).  NULL when the build has no such file
 * (built without nvcc). */
const muster_provider_v2_t *tp_provider_v2(const char *backend, int kind, void **handle);

/* Plain potrs f64 problem on nshards shards of an n x n matrix (contents
 * irrelevant for the test provider): fills args and shards, allocating with
 * malloc (or muster_shard_alloc when shm != 0). */
typedef struct tp_problem {
  muster_solve_args_t args;
  int nshards;
  muster_shard_t shards[8];
  int shm;
} tp_problem_t;
void tp_problem_init(tp_problem_t *p, muster_routine_t r, muster_dtype_t t, int64_t n, int nshards, int shm);
/* A fresh provider folder of the test (test_tmp_dir) into dir[cap], made
 * the only one on MUSTER_PROVIDER_PATH, MUSTER_PROVIDER unset. */
void tp_registry_dir(char *dir, size_t cap);
/* muster_solve_all of p with args.provider = provider (NULL: the choice). */
int tp_solve(tp_problem_t *p, const char *provider, muster_solve_result_t *res);
void tp_problem_free(tp_problem_t *p);
/* The marker the test provider wrote into shard s: the value every element
 * of its output has, or -1 when they differ. */
double tp_marker(const tp_problem_t *p, int s);

#endif
