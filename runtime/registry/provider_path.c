/*
 * runtime/registry/provider_path.c - where provider files are looked for (see
 * provider_path.h and docs/providers.md#registry).
 */
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

