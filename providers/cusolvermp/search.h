/*
 * providers/cusolvermp/search.h - where the provider looks for NCCL,
 * cuSOLVERMp and cuBLASMp (search.c).  Only the file system and the
 * environment are read: nothing is loaded here (libs.c loads), so the
 * search is unit-tested with a fake tree (tests/unit/test_mp_version.c).
 *
 * Candidates, in this order, each existing file once (by real path):
 *   1. MUSTER_MP_LIBDIR: ':'-separated folders, the user's explicit choice;
 *   2. the nvidia-* wheels of Python environments: site-packages and
 *      dist-packages of $VIRTUAL_ENV, $CONDA_PREFIX, the prefix of every
 *      python3 on $PATH, ~/.local, /usr/local, /usr and /opt/conda, and the
 *      folders of $PYTHONPATH; inside each, nvidia/nccl/lib (NCCL),
 *      nvidia/cu13/lib (cuSOLVERMp, and NCCL in some environments),
 *      nvidia/cublasmp/cu13/lib (cuBLASMp);
 *   3. $LD_LIBRARY_PATH;
 *   4. a CUDA toolkit: $CUDA_HOME/lib64 and lib, /usr/local/cuda/lib64 and lib;
 *   5. an HPC SDK: $NVHPC_ROOT and /opt/nvidia/hpc_sdk/Linux_x86_64/<release>,
 *      their comm_libs/[<cuda>/]nccl/lib and math_libs/[<cuda>/]lib64;
 *   6. the dynamic loader's own search by file name (rpath, ld.so.cache).
 * Only CUDA 13 builds (the nvidia-*-cu13 wheels) are looked for: the
 * provider is built with CUDA 13.
 */
#ifndef MUSTER_MP_SEARCH_H
#define MUSTER_MP_SEARCH_H

#include <limits.h>

#include "version.h"

typedef enum { MP_LIB_NCCL = 0, MP_LIB_SOLVER, MP_LIB_CUBLASMP, MP_NLIBS } mp_lib_t;

#define MP_MAX_CANDS 32

typedef struct mp_cand {
  char path[PATH_MAX]; /* the file, or the bare file name for the loader's
                          own search (origin "dynamic loader")              */
  char origin[64];     /* where it was found, for messages                 */
  int distver;         /* the version of the wheel it came with, 0 when it
                          came with none (read from <site>/<dist>-<version>.dist-info) */
} mp_cand_t;

typedef struct mp_cands {
  int n;
  mp_cand_t c[MP_MAX_CANDS];
  int folders;         /* folders looked in (for "searched N folders")      */
} mp_cands_t;

/* "libnccl.so.2", "libcusolverMp.so.0", "libcublasmp.so.0". */
MP_HIDDEN const char *mp_lib_file(mp_lib_t lib);
/* "NCCL", "cuSOLVERMp", "cuBLASMp". */
MP_HIDDEN const char *mp_lib_name(mp_lib_t lib);

/* Every candidate of lib, in the order above (the loader's own search
 * last).  Reads the environment at each call. */
MP_HIDDEN void mp_search(mp_lib_t lib, mp_cands_t *out);

/* The wheel version of the library at path (a file inside
 * <site>/nvidia/...): 0 when it is not in a wheel or the wheel's metadata
 * folder is missing. */
MP_HIDDEN int mp_wheel_version(mp_lib_t lib, const char *path);

#endif
