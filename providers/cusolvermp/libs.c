/* providers/cusolvermp/libs.c - NCCL, cuSOLVERMp and cuBLASMp through
 * dlopen, once per process (libs.h). */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/env.h"
#include "libs.h"
#include "muster/append.h"
#include "muster.h"

static mp_libs_t the_libs;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static pthread_mutex_t confirm_mu = PTHREAD_MUTEX_INITIALIZER;

/* Resolve n symbols of h into consecutive function pointers at dst; the
 * first missing one's name in *missing. */
static int resolve(void *h, const char *const *names, int n, void *dst, const char **missing) {
  void **slots = dst;
  for (int i = 0; i < n; i++) {
    slots[i] = dlsym(h, names[i]);
    if (!slots[i]) {
      *missing = names[i];
      return -1;
    }
  }
  return 0;
}

/* cuSOLVERMp's CUDA dependencies, by the folders a CUDA 13 install has. */
static void preload_cuda_deps(void) {
  static const char *const deps[] = {"libcublasLt.so.13", "libcublas.so.13", "libcusparse.so.12",
                                     "libnvJitLink.so.13", "libcusolver.so.12"};
  char dirs[3][PATH_MAX] = {"", "", "/usr/local/cuda/lib64"};
  Dl_info info;
  if (dladdr((void *)cudaGetDeviceCount, &info) && info.dli_fname) {
    snprintf(dirs[0], sizeof dirs[0], "%s", info.dli_fname);
    char *slash = strrchr(dirs[0], '/');
    if (slash) *slash = '\0';
    else dirs[0][0] = '\0';
  }
  const char *home = getenv("CUDA_HOME");
  if (home && *home) snprintf(dirs[1], sizeof dirs[1], "%s/lib64", home);
  for (size_t i = 0; i < sizeof deps / sizeof deps[0]; i++) {
    if (dlopen(deps[i], RTLD_NOW | RTLD_GLOBAL)) continue;
    for (int d = 0; d < 3; d++) {
      char path[PATH_MAX + 64];
      if (!dirs[d][0]) continue;
      snprintf(path, sizeof path, "%.4000s/%s", dirs[d], deps[i]);
      if (dlopen(path, RTLD_NOW | RTLD_GLOBAL)) break;
    }
  }
}

/* The first NCCL candidate that loads with every symbol. */
static int load_nccl(mp_libs_t *L, char *tried, size_t tlen) {
  static const char *const names[] = {MP_NCCL_SYMBOLS};
  mp_cands_t c;
  mp_search(MP_LIB_NCCL, &c);
  for (int i = 0; i < c.n; i++) {
    void *h = dlopen(c.c[i].path, RTLD_NOW | RTLD_GLOBAL);
    const char *missing = NULL;
    if (!h) {
      muster__append(tried, tlen, "; %s (%s): %s", c.c[i].path, c.c[i].origin, dlerror());
      continue;
    }
    if (resolve(h, names, MP_N_NCCL_SYMBOLS, &L->api.ncclGetVersion, &missing) < 0) {
      muster__append(tried, tlen, "; %s (%s): no %s", c.c[i].path, c.c[i].origin, missing);
      continue;
    }
    int v = 0;
    L->api.ncclGetVersion(&v);
    L->ver[MP_LIB_NCCL] = v;
    snprintf(L->path[MP_LIB_NCCL], PATH_MAX, "%s", c.c[i].path);
    return 0;
  }
  muster__append(tried, tlen, "; searched %d folders", c.folders);
  return -1;
}

/* cuBLASMp for a 0.9 solver: the first candidate that loads. */
static int load_cublasmp(mp_libs_t *L, char *tried, size_t tlen) {
  mp_cands_t c;
  mp_search(MP_LIB_CUBLASMP, &c);
  for (int i = 0; i < c.n; i++) {
    if (dlopen(c.c[i].path, RTLD_NOW | RTLD_GLOBAL)) {
      L->ver[MP_LIB_CUBLASMP] = c.c[i].distver;
      snprintf(L->path[MP_LIB_CUBLASMP], PATH_MAX, "%s", c.c[i].path);
      return 0;
    }
    muster__append(tried, tlen, "; cuBLASMp %s (%s): %s", c.c[i].path, c.c[i].origin, dlerror());
  }
  return -1;
}

/* 0.9's Gesvd and Polar (mpapi.h): required where release r has them
 * (-1, the first missing name in *missing), else taken when all are there
 * and left NULL otherwise (0.8; an unknown version: its release's rule
 * (mp_refused) refuses gesvd and polar until it is known, and svd.c
 * refuses a NULL table entry). */
static int resolve_svd(void *h, const mp_release_t *r, mp_api_t *api, const char **missing) {
  static const char *const names[] = {MP_SOLVER091_SYMBOLS};
  if (resolve(h, names, MP_N_SOLVER091_SYMBOLS, &api->GesvdDescriptorCreate, missing) == 0) return 0;
  memset(&api->GesvdDescriptorCreate, 0, MP_N_SOLVER091_SYMBOLS * sizeof(void *));
  return r && r->svd_polar ? -1 : 0;
}

/* The first cuSOLVERMp candidate that runs with the NCCL loaded. */
static int load_solver(mp_libs_t *L, char *tried, size_t tlen) {
  static const char *const names[] = {MP_SOLVER_SYMBOLS};
  mp_cands_t c;
  mp_search(MP_LIB_SOLVER, &c);
  char why[256], v[24];
  for (int i = 0; i < c.n; i++) {
    int ver = c.c[i].distver, prov = 0;
    const mp_release_t *r = ver ? mp_release_of(ver) : NULL;
    /* NCCL first (the usual refusal), then cuBLASMp where the release needs it */
    if (mp_compat(ver, L->ver[MP_LIB_NCCL], 0, &prov, why, sizeof why) < 0 ||
        (r && r->cublasmp_min && !L->path[MP_LIB_CUBLASMP][0] && load_cublasmp(L, tried, tlen) == 0 &&
         mp_compat(ver, L->ver[MP_LIB_NCCL], L->ver[MP_LIB_CUBLASMP], &prov, why, sizeof why) < 0)) {
      muster__append(tried, tlen, "; %s (%s): refused: %s", c.c[i].path, c.c[i].origin, why);
      if (!L->brief[0]) snprintf(L->brief, sizeof L->brief, "%.100s", why);
      continue;
    }
    if (r && r->cublasmp_min && !L->path[MP_LIB_CUBLASMP][0]) {
      muster__append(tried, tlen, "; %s (%s, %s): needs cuBLASMp, none loads", c.c[i].path, c.c[i].origin,
                     mp_ver_str(ver, v, sizeof v));
      continue;
    }
    void *h = dlopen(c.c[i].path, RTLD_NOW | RTLD_GLOBAL);
    const char *missing = NULL;
    if (!h) {
      muster__append(tried, tlen, "; %s (%s): %s", c.c[i].path, c.c[i].origin, dlerror());
      continue;
    }
    if (resolve(h, names, MP_N_SOLVER_SYMBOLS, &L->api.Create, &missing) < 0 ||
        resolve_svd(h, r, &L->api, &missing) < 0) {
      muster__append(tried, tlen, "; %s (%s): no %s", c.c[i].path, c.c[i].origin, missing);
      continue;
    }
    L->ver[MP_LIB_SOLVER] = ver;
    L->solver_provisional = ver == 0;
    L->rel = r;
    snprintf(L->path[MP_LIB_SOLVER], PATH_MAX, "%s", c.c[i].path);
    return 0;
  }
  if (!c.n) muster__append(tried, tlen, "; no %s in %d folders", mp_lib_file(MP_LIB_SOLVER), c.folders);
  return -1;
}

/* Fill L, or its refusal (rc and why). */
static void load_libs(mp_libs_t *L) {
  char tried[sizeof L->why] = "", a[24], b[24], bad[400];
  const char *libdir;
  int off;
  /* a malformed variable is MUSTER_EINVAL from every call (probe, estimate,
   * solve), naming it: never a quiet "on" or a folder skipped */
  if (prov_env_switch("MUSTER_MP_DISABLE", 0, &off, bad, sizeof bad) < 0 ||
      prov_env_folders("MUSTER_MP_LIBDIR", &libdir, bad, sizeof bad) < 0) {
    L->rc = MUSTER_EINVAL;
    snprintf(L->why, sizeof L->why, "cusolvermp: %s", bad);
    return;
  }
  if (off) {
    L->rc = MUSTER_EUNSUPPORTED;
    snprintf(L->why, sizeof L->why, "cusolvermp: disabled by MUSTER_MP_DISABLE=1");
    return;
  }
  if (load_nccl(L, tried, sizeof tried) < 0) {
    L->rc = MUSTER_EUNSUPPORTED;
    snprintf(L->why, sizeof L->why, "cusolvermp: no usable NCCL (%s; set MUSTER_MP_LIBDIR)%.1400s",
             mp_lib_file(MP_LIB_NCCL), tried);
    return;
  }
  preload_cuda_deps();
  if (load_solver(L, tried, sizeof tried) < 0) {
    L->rc = MUSTER_EUNSUPPORTED;
    snprintf(L->why, sizeof L->why, "cusolvermp: no usable cuSOLVERMp with NCCL %s (%.300s)%.1100s",
             mp_ver_str(L->ver[MP_LIB_NCCL], a, sizeof a), L->path[MP_LIB_NCCL], tried);
    return;
  }
  L->brief[0] = '\0';
  char c[24], with[40] = "";
  if (L->path[MP_LIB_CUBLASMP][0])
    snprintf(with, sizeof with, ", cuBLASMp %s", mp_ver_str(L->ver[MP_LIB_CUBLASMP], c, sizeof c));
  snprintf(L->summary, sizeof L->summary, "cuSOLVERMp %s%s, NCCL %s",
           L->solver_provisional ? "of unknown version (judged at its first handle)"
                                 : mp_ver_str(L->ver[MP_LIB_SOLVER], a, sizeof a),
           with, mp_ver_str(L->ver[MP_LIB_NCCL], b, sizeof b));
}

static void load_all(void) {
  mp_libs_t *L = &the_libs;
  load_libs(L);
  if (L->rc < 0 && !L->brief[0]) snprintf(L->brief, sizeof L->brief, "%.100s", L->why + strlen("cusolvermp: "));
}

const mp_libs_t *mp_libs_get(void) {
  pthread_once(&once, load_all);
  return &the_libs;
}

int mp_libs_confirm(int code, const mp_release_t **rel, char *why, size_t len) {
  mp_libs_t *L = &the_libs;
  int ver = mp_ver_from_solver_code(code), rc = 0;
  char w[256], a[24];
  pthread_mutex_lock(&confirm_mu);
  if (mp_compat(ver, L->ver[MP_LIB_NCCL], L->ver[MP_LIB_CUBLASMP], NULL, w, sizeof w) < 0 || !mp_release_of(ver)) {
    snprintf(why, len, "cuSOLVERMp at %s says it is version %s (code %d): %s", L->path[MP_LIB_SOLVER],
             mp_ver_str(ver, a, sizeof a), code, ver ? w : "not a version this provider knows");
    rc = MUSTER_EUNSUPPORTED;
  } else {
    L->ver[MP_LIB_SOLVER] = ver;
    L->rel = mp_release_of(ver);
    L->solver_provisional = 0;
    *rel = L->rel;
  }
  pthread_mutex_unlock(&confirm_mu);
  return rc;
}

int mp_libs_solver_version(void) {
  const mp_libs_t *L = mp_libs_get();
  if (L->rc < 0) return 0;
  pthread_mutex_lock(&confirm_mu); /* mp_libs_confirm may set it meanwhile */
  int ver = L->solver_provisional ? 0 : L->ver[MP_LIB_SOLVER];
  pthread_mutex_unlock(&confirm_mu);
  return ver;
}
