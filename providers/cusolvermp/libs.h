/*
 * providers/cusolvermp/libs.h - loading NCCL, cuSOLVERMp (and cuBLASMp for
 * 0.9) once per process with dlopen, from the candidates search.c lists,
 * and judging their versions with version.c's table (libs.c).
 *
 * The choice: the first NCCL candidate that loads and has every symbol
 * mpapi.h names (its version from ncclGetVersion); then the first
 * cuSOLVERMp candidate whose release (its wheel's version, else judged
 * later from cusolverMpGetVersion: mp_libs_confirm) runs with that NCCL,
 * cuBLASMp loaded first for a release that needs it.  The CUDA libraries
 * cuSOLVERMp needs (cuBLAS, cuBLASLt, cuSPARSE, cuSOLVER, nvJitLink) are
 * loaded first from the dynamic loader's path, else from the folder of the
 * libcudart this provider runs with, $CUDA_HOME/lib64 or /usr/local/cuda/lib64,
 * so cuSOLVERMp finds them wherever its wheel was unpacked.
 *
 * Loading never initializes CUDA (probe() may run in a process that forks
 * ranks afterwards).  Nothing is unloaded: the libraries stay for the life
 * of the process (NCCL and cuSOLVERMp keep threads and state).
 */
#ifndef MUSTER_MP_LIBS_H
#define MUSTER_MP_LIBS_H

#include <limits.h>

#include "mpapi.h"
#include "search.h"
#include "version.h"

typedef struct mp_libs {
  int rc;                     /* 0 loaded, else MUSTER_EUNSUPPORTED          */
  char why[1536];             /* rc != 0: what was found and why refused     */
  char brief[112];            /* rc != 0: the first refusal alone, for estimate()'s note */
  char summary[160];          /* rc == 0: "cuSOLVERMp 0.9.1, cuBLASMp 0.10.0,
                                 NCCL 2.30.7": probe()'s note, which
                                 `muster providers` shows (the paths are
                                 under its "libraries:")                    */
  mp_api_t api;
  int ver[MP_NLIBS];          /* versions found (0 unknown)                  */
  char path[MP_NLIBS][PATH_MAX];
  int solver_provisional;     /* the solver's version still to be confirmed  */
  const mp_release_t *rel;    /* its release (NULL while provisional)        */
} mp_libs_t;

/* The process's libraries, loaded on the first call (thread-safe).  Never
 * NULL; check ->rc. */
MP_HIDDEN const mp_libs_t *mp_libs_get(void);

/* After the first handle exists: the solver's own version code
 * (cusolverMpGetVersion) judged against the table.  0, or
 * MUSTER_EUNSUPPORTED with the reason in why; also fills the release. */
MP_HIDDEN int mp_libs_confirm(int code, const mp_release_t **rel, char *why, size_t len);

/* The loaded cuSOLVERMp's version (MP_VER), 0 while not known: no usable
 * library, or one of unknown version not yet confirmed by a handle.  Loads
 * the libraries on the first call; any thread. */
MP_HIDDEN int mp_libs_solver_version(void);

#endif
