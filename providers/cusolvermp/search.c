/* providers/cusolvermp/search.c - candidate files for NCCL, cuSOLVERMp and
 * cuBLASMp (search.h).  Reads the environment and the file system only. */
#include <dirent.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "search.h"

static const char *const files[MP_NLIBS] = {"libnccl.so.2", "libcusolverMp.so.0", "libcublasmp.so.0"};
static const char *const names[MP_NLIBS] = {"NCCL", "cuSOLVERMp", "cuBLASMp"};
static const char *const dists[MP_NLIBS] = {"nvidia_nccl_cu13", "nvidia_cusolvermp_cu13", "nvidia_cublasmp_cu13"};
/* where each wheel puts its library, relative to site-packages */
static const char *const wheel_dirs[MP_NLIBS][3] = {
    {"nvidia/nccl/lib", "nvidia/cu13/lib", NULL},
    {"nvidia/cu13/lib", NULL, NULL},
    {"nvidia/cublasmp/cu13/lib", "nvidia/cu13/lib", NULL},
};

const char *mp_lib_file(mp_lib_t lib) { return files[lib]; }
const char *mp_lib_name(mp_lib_t lib) { return names[lib]; }

/* ---- wheel metadata ---------------------------------------------------------- */

int mp_wheel_version(mp_lib_t lib, const char *path) {
  const char *at = NULL;
  for (const char *p = strstr(path, "/nvidia/"); p; p = strstr(p + 1, "/nvidia/")) at = p;
  if (!at) return 0;
  char site[PATH_MAX];
  size_t n = (size_t)(at - path);
  if (n == 0 || n >= sizeof site) return 0;
  memcpy(site, path, n);
  site[n] = '\0';
  DIR *d = opendir(site);
  if (!d) return 0;
  int ver = 0;
  for (struct dirent *e; !ver && (e = readdir(d));) ver = mp_ver_from_distinfo(e->d_name, dists[lib]);
  closedir(d);
  return ver;
}

/* ---- the list ------------------------------------------------------------------ */

static void add_file(mp_cands_t *out, mp_lib_t lib, const char *file, const char *origin) {
  char real[PATH_MAX];
  if (out->n >= MP_MAX_CANDS || access(file, F_OK) != 0 || !realpath(file, real)) return;
  for (int i = 0; i < out->n; i++)
    if (!strcmp(out->c[i].path, real)) return;
  mp_cand_t *c = &out->c[out->n++];
  snprintf(c->path, sizeof c->path, "%s", real);
  snprintf(c->origin, sizeof c->origin, "%s", origin);
  c->distver = mp_wheel_version(lib, real);
}

static void add_dir(mp_cands_t *out, mp_lib_t lib, const char *dir, const char *origin) {
  char file[PATH_MAX];
  if (!dir || !*dir) return;
  out->folders++;
  if (snprintf(file, sizeof file, "%s/%s", dir, files[lib]) < (int)sizeof file) add_file(out, lib, file, origin);
}

/* Every folder of a ':'-separated list. */
static void add_list(mp_cands_t *out, mp_lib_t lib, const char *list, const char *origin) {
  if (!list) return;
  char dir[PATH_MAX];
  for (const char *p = list; *p;) {
    size_t n = strcspn(p, ":");
    if (n && n < sizeof dir) {
      memcpy(dir, p, n);
      dir[n] = '\0';
      add_dir(out, lib, dir, origin);
    }
    p += n;
    if (*p == ':') p++;
  }
}

/* The wheel folders of lib inside one site-packages folder. */
static void add_site(mp_cands_t *out, mp_lib_t lib, const char *site, const char *origin) {
  char dir[PATH_MAX];
  for (int i = 0; i < 3 && wheel_dirs[lib][i]; i++)
    if (snprintf(dir, sizeof dir, "%s/%s", site, wheel_dirs[lib][i]) < (int)sizeof dir) add_dir(out, lib, dir, origin);
}

/* Every site-packages / dist-packages folder of a Python prefix. */
static void add_prefix(mp_cands_t *out, mp_lib_t lib, const char *prefix, const char *origin) {
  static const char *const pats[] = {"%s/lib/python3*/site-packages", "%s/lib/python3*/dist-packages",
                                     "%s/lib64/python3*/site-packages"};
  char pat[PATH_MAX], why[96];
  if (!prefix || !*prefix) return;
  snprintf(why, sizeof why, "site-packages (%s)", origin);
  for (size_t i = 0; i < sizeof pats / sizeof pats[0]; i++) {
    glob_t g;
    if (snprintf(pat, sizeof pat, pats[i], prefix) >= (int)sizeof pat) continue;
    if (glob(pat, 0, NULL, &g) == 0)
      for (size_t k = 0; k < g.gl_pathc; k++) add_site(out, lib, g.gl_pathv[k], why);
    globfree(&g);
  }
}

/* The prefix of every python3 on $PATH (<prefix>/bin/python3). */
static void add_path_pythons(mp_cands_t *out, mp_lib_t lib) {
  const char *path = getenv("PATH");
  char dir[PATH_MAX], exe[PATH_MAX + 16];
  for (const char *p = path ? path : ""; *p;) {
    size_t n = strcspn(p, ":");
    if (n && n < sizeof dir) {
      memcpy(dir, p, n);
      dir[n] = '\0';
      snprintf(exe, sizeof exe, "%s/python3", dir);
      char *slash = strrchr(dir, '/');
      if (access(exe, X_OK) == 0 && slash) {
        *slash = '\0';
        add_prefix(out, lib, dir[0] ? dir : "/", "python3 on PATH");
      }
    }
    p += n;
    if (*p == ':') p++;
  }
}

static void add_pythons(mp_cands_t *out, mp_lib_t lib) {
  char dir[PATH_MAX];
  add_prefix(out, lib, getenv("VIRTUAL_ENV"), "VIRTUAL_ENV");
  add_prefix(out, lib, getenv("CONDA_PREFIX"), "CONDA_PREFIX");
  add_path_pythons(out, lib);
  const char *pp = getenv("PYTHONPATH");
  for (const char *p = pp ? pp : ""; *p;) { /* each entry is a site folder */
    size_t n = strcspn(p, ":");
    if (n && n < sizeof dir) {
      memcpy(dir, p, n);
      dir[n] = '\0';
      add_site(out, lib, dir, "site-packages (PYTHONPATH)");
    }
    p += n;
    if (*p == ':') p++;
  }
  const char *home = getenv("HOME");
  if (home && snprintf(dir, sizeof dir, "%s/.local", home) < (int)sizeof dir) add_prefix(out, lib, dir, "~/.local");
  add_prefix(out, lib, "/usr/local", "/usr/local");
  add_prefix(out, lib, "/usr", "/usr");
  add_prefix(out, lib, "/opt/conda", "/opt/conda");
}

/* CUDA toolkits and HPC SDKs. */
static void add_installs(mp_cands_t *out, mp_lib_t lib) {
  static const char *const sdk_pats[] = {"%s/comm_libs/nccl/lib", "%s/comm_libs/*/nccl/lib", "%s/math_libs/lib64",
                                         "%s/math_libs/*/lib64"};
  char dir[PATH_MAX];
  const char *cuda = getenv("CUDA_HOME");
  const char *roots[] = {cuda, "/usr/local/cuda"};
  for (size_t i = 0; i < 2; i++) {
    if (!roots[i]) continue;
    snprintf(dir, sizeof dir, "%s/lib64", roots[i]);
    add_dir(out, lib, dir, "CUDA");
    snprintf(dir, sizeof dir, "%s/lib", roots[i]);
    add_dir(out, lib, dir, "CUDA");
  }
  const char *sdks[] = {getenv("NVHPC_ROOT"), "/opt/nvidia/hpc_sdk/Linux_x86_64/*"};
  for (size_t i = 0; i < 2; i++) {
    if (!sdks[i] || !*sdks[i]) continue;
    for (size_t k = 0; k < sizeof sdk_pats / sizeof sdk_pats[0]; k++) {
      char pat[PATH_MAX];
      glob_t g;
      if (snprintf(pat, sizeof pat, sdk_pats[k], sdks[i]) >= (int)sizeof pat) continue;
      if (glob(pat, 0, NULL, &g) == 0)
        for (size_t j = 0; j < g.gl_pathc; j++) add_dir(out, lib, g.gl_pathv[j], "HPC SDK");
      globfree(&g);
    }
  }
}

void mp_search(mp_lib_t lib, mp_cands_t *out) {
  memset(out, 0, sizeof *out);
  add_list(out, lib, getenv("MUSTER_MP_LIBDIR"), "MUSTER_MP_LIBDIR");
  add_pythons(out, lib);
  add_list(out, lib, getenv("LD_LIBRARY_PATH"), "LD_LIBRARY_PATH");
  add_installs(out, lib);
  if (out->n < MP_MAX_CANDS) { /* the loader's own search, by file name */
    mp_cand_t *c = &out->c[out->n++];
    snprintf(c->path, sizeof c->path, "%s", files[lib]);
    snprintf(c->origin, sizeof c->origin, "dynamic loader");
    c->distver = 0;
  }
}
