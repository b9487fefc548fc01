/*
 * runtime/registry/provider_path.c - where provider files are looked for (see
 * provider_path.h and docs/providers.md#registry).
 */
#include <dirent.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/env.h"
#include "muster/provider.h"
#include "registry/provider_path.h"

static int add_dir(char dirs[][PATH_MAX], int n, const char *d) {
  char real[PATH_MAX];
  if (n >= MUSTER_MAX_PROVIDER_DIRS || !realpath(d, real)) return n;
  struct stat st;
  if (stat(real, &st) != 0 || !S_ISDIR(st.st_mode)) return n;
  for (int i = 0; i < n; i++)
    if (!strcmp(dirs[i], real)) return n;
  snprintf(dirs[n], PATH_MAX, "%s", real);
  return n + 1;
}

static int add_beside(char dirs[][PATH_MAX], int n, const char *file) {
  char d[PATH_MAX], cand[PATH_MAX + 64];
  snprintf(d, sizeof d, "%s", file);
  char *slash = strrchr(d, '/');
  if (!slash) return n;
  *slash = '\0';
  snprintf(cand, sizeof cand, "%s/muster/providers", d);
  n = add_dir(dirs, n, cand);
  snprintf(cand, sizeof cand, "%s/../lib/muster/providers", d);
  return add_dir(dirs, n, cand);
}

int muster__provider_search_dirs(char dirs[][PATH_MAX], int *n) {
  const char *env;
  int rc = muster__env_provider_path(&env);
  *n = 0;
  if (rc < 0) return rc;
  if (env) {
    char *copy = strdup(env), *save = NULL;
    if (!copy) return muster__err(MUSTER_ENOMEM, "provider registry: out of memory");
    for (char *t = strtok_r(copy, ":", &save); t; t = strtok_r(NULL, ":", &save))
      *n = add_dir(dirs, *n, t);
    free(copy);
    return MUSTER_OK;
  }
  Dl_info info;
  if (dladdr((void *)&muster_providers_rescan, &info) && info.dli_fname)
    *n = add_beside(dirs, *n, info.dli_fname);
  char exe[PATH_MAX];
  ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (len > 0) {
    exe[len] = '\0';
    *n = add_beside(dirs, *n, exe);
  }
  return MUSTER_OK;
}


/* ---- the files of one routine ------------------------------------------ */

int muster__provider_same_file(const struct stat *a, const struct stat *b) {
  return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
         a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

/* "<backend>.so" -> backend: 1, or 0 for another name. */
static int backend_of(const char *fname, char *out, size_t cap) {
  size_t len = strlen(fname);
  if (len < 4 || strcmp(fname + len - 3, ".so") != 0 || len - 3 >= cap) return 0;
  memcpy(out, fname, len - 3);
  out[len - 3] = '\0';
  return out[0] != '.';
}

int muster__provider_files(char dirs[][PATH_MAX], int ndirs, const char *routine, muster__provider_found_t *f,
                           int cap) {
  int n = 0;
  for (int d = 0; d < ndirs; d++) {
    char sub[PATH_MAX + 32];
    snprintf(sub, sizeof sub, "%s/%s", dirs[d], routine);
    DIR *dir = opendir(sub);
    if (!dir) continue;
    struct dirent *e;
    while ((e = readdir(dir)) != NULL && n < cap) {
      char backend[32];
      if (!backend_of(e->d_name, backend, sizeof backend)) continue;
      int dup = 0;
      for (int i = 0; i < n; i++) dup |= !strcmp(f[i].backend, backend);
      if (dup) continue;
      snprintf(f[n].path, sizeof f[n].path, "%s/%s", sub, e->d_name);
      if (stat(f[n].path, &f[n].st) != 0) continue; /* dangling link */
      snprintf(f[n].backend, sizeof f[n].backend, "%s", backend);
      n++;
    }
    closedir(dir);
  }
  return n;
}
