/* tests/unit/test_registry_util.c - see tests/providers/tp_util.h. */
#define _XOPEN_SOURCE 700
#include <dlfcn.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "task.h"
#include "providers/tp_util.h"

static char build_dir[PATH_MAX + 64], lapack_dir[PATH_MAX + 64];

static void init_dirs(void) {
  if (build_dir[0]) return;
  char exe[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  ASSERT(n > 0);
  exe[n] = '\0';
  *strrchr(exe, '/') = '\0'; /* <build>/tests */
  snprintf(build_dir, sizeof build_dir, "%s/providers", exe);
  snprintf(lapack_dir, sizeof lapack_dir, "%s/../lib/muster/providers", exe);
}

const char *tp_build_dir(void) { init_dirs(); return build_dir; }
const char *tp_lapack_dir(void) { init_dirs(); return lapack_dir; }

void tp_link_abs(const char *dir, const char *routine, const char *linkname, const char *target) {
  char sub[PATH_MAX], tmp[PATH_MAX + 64], dst[PATH_MAX + 64];
  snprintf(sub, sizeof sub, "%s/%s", dir, routine);
  mkdir(sub, 0700);
  snprintf(tmp, sizeof tmp, "%s/.%s.tmp", sub, linkname);
  snprintf(dst, sizeof dst, "%s/%s", sub, linkname);
  unlink(tmp);
  ASSERT(symlink(target, tmp) == 0);
  ASSERT(rename(tmp, dst) == 0);
}

void tp_link(const char *dir, const char *routine, const char *linkname, const char *target) {
  char abs[PATH_MAX];
  snprintf(abs, sizeof abs, "%s/%s", tp_build_dir(), target);
  tp_link_abs(dir, routine, linkname, abs);
}

int tp_maps_has(const char *s) {
  FILE *f = fopen("/proc/self/maps", "r");
  ASSERT(f != NULL);
  char line[1024];
  int found = 0;
  while (fgets(line, sizeof line, f))
    if (strstr(line, s)) found = 1;
  fclose(f);
  return found;
}

/* A call of one shard s (n x n, tile n) whose info and message go to
 * *info and err. */
muster_provider_call_t tp_one_shard_call(muster_routine_t rt, int64_t n, int64_t nrhs, const muster_shard_t *s,
                                          int64_t *info, char *err, size_t errlen) {
  muster_provider_call_t call;
  memset(&call, 0, sizeof call);
  call.args.routine = rt;
  call.args.dtype = MUSTER_F64;
  call.args.n = n;
  call.args.nrhs = nrhs;
  call.args.tile = n;
  call.nshards = 1;
  call.shards = s;
  call.info = info;
  call.err = err;
  call.errlen = errlen;
  return call;
}

void tp_gpu_probe_check(int (*probe)(char *why, size_t whylen)) {
  int before = tp_maps_has("libcuda.so");
  char why[256] = "", why2[256] = "";
  int rc = probe(why, sizeof why);
  if (rc < 0) { /* no GPU here: unavailable, with the reason */
    ASSERT_EQ(rc, MUSTER_ECUDA);
    ASSERT_STR_CONTAINS(why, "cudaGetDeviceCount");
  }
  /* CUDA must not start in a process that may fork ranks afterwards */
  if (!before) ASSERT(!tp_maps_has("libcuda.so"));
  ASSERT_EQ(probe(why2, sizeof why2), rc); /* cached, same answer */
  ASSERT(!strcmp(why, why2));
}

void tp_problem_init(tp_problem_t *p, muster_routine_t r, muster_dtype_t t, int64_t n, int nshards,
                     int shm) {
  memset(p, 0, sizeof *p);
  ASSERT(nshards >= 1 && nshards <= 8);
  p->args.routine = r;
  p->args.dtype = t;
  p->args.n = n;
  p->args.nrhs = 2;
  p->nshards = nshards;
  p->shm = shm;
  size_t esz = muster_dtype_size(t);
  int64_t S = (n + nshards - 1) / nshards;
  for (int s = 0; s < nshards; s++) {
    muster_shard_t *sh = &p->shards[s];
    int64_t c0 = s * S < n ? s * S : n;
    int64_t nc = n - c0 < S ? n - c0 : S;
    sh->mem = MUSTER_MEM_HOST;
    sh->device = -1;
    sh->col0 = c0;
    sh->ncols = nc;
    sh->lda = n;
    sh->ldb = n;
    size_t abytes = (size_t)(n * (nc > 0 ? nc : 1)) * esz, bbytes = (size_t)(n * 2) * esz,
           wbytes = (size_t)n * 8;
    if (shm) {
      ASSERT_OK(muster_shard_alloc(abytes, &sh->a));
      ASSERT_OK(muster_shard_alloc(bbytes, &sh->b));
      ASSERT_OK(muster_shard_alloc(wbytes, &sh->w));
    } else {
      sh->a = calloc(1, abytes);
      sh->b = calloc(1, bbytes);
      sh->w = calloc(1, wbytes);
      ASSERT(sh->a && sh->b && sh->w);
    }
  }
}

void tp_problem_free(tp_problem_t *p) {
  for (int s = 0; s < p->nshards; s++) {
    muster_shard_t *sh = &p->shards[s];
    if (p->shm) {
      muster_shard_free(sh->a);
      muster_shard_free(sh->b);
      muster_shard_free(sh->w);
    } else {
      free(sh->a);
      free(sh->b);
      free(sh->w);
    }
  }
}

static double real_at(muster_dtype_t t, const void *base, int64_t idx) {
  switch (t) {
  case MUSTER_F32: return ((const float *)base)[idx];
  case MUSTER_F64: return ((const double *)base)[idx];
  case MUSTER_C64: return ((const float *)base)[2 * idx];
  default: return ((const double *)base)[2 * idx];
  }
}

double tp_marker(const tp_problem_t *p, int s) {
  const muster_shard_t *sh = &p->shards[s];
  const muster_solve_args_t *a = &p->args;
  double v = -2;
  int64_t rows = a->n, cols = a->routine == MUSTER_POTRS ? a->nrhs : a->routine == MUSTER_POTRI ? sh->ncols : 1;
  for (int64_t j = 0; j < cols; j++)
    for (int64_t i = 0; i < rows; i++) {
      double x;
      if (a->routine == MUSTER_POTRS) x = real_at(a->dtype, sh->b, j * sh->ldb + i);
      else if (a->routine == MUSTER_POTRI) x = real_at(a->dtype, sh->a, j * sh->lda + i);
      else x = (a->dtype == MUSTER_F32 || a->dtype == MUSTER_C64) ? ((const float *)sh->w)[i]
                                                                  : ((const double *)sh->w)[i];
      if (v == -2) v = x;
      else if (x != v) return -1;
    }
  return v;
}

void tp_env_fresh(char *dir, size_t cap) {
  static const char *knobs[] = {"MUSTER_PROVIDER", "MUSTER_COST_PATH", "TESTPROV_EST", "TESTPROV_UNAVAILABLE",
                                "TESTPROV_BLOCK", "TESTPROV_FAIL_RANK", "TESTPROV_INFO", "TESTPROV_QLOG",
                                "TESTPROV_ENTER_LOG", "TESTPROV_RELEASE_LOG", "TESTPROV_NOTE", "TESTPROV_LIFE"};
  test_tmp_dir(dir, cap);
  setenv("MUSTER_PROVIDER_PATH", dir, 1);
  for (size_t i = 0; i < sizeof knobs / sizeof knobs[0]; i++) unsetenv(knobs[i]);
}

void tp_write_file(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  ASSERT(f != NULL);
  fputs(text, f);
  ASSERT(fclose(f) == 0);
}

const muster_provider_info_t *tp_find_info(const muster_provider_info_t *info, int n, const char *name) {
  for (int i = 0; i < n; i++)
    if (!strcmp(info[i].name, name)) return &info[i];
  return NULL;
}

int tp_cli(const char *args, char *out, size_t cap, char *err, size_t ecap) {
#ifdef __SANITIZE_THREAD__
  setenv("OPENBLAS_NUM_THREADS", "1", 0); /* OpenBLAS's own pool looks racy to TSan */
#endif
  char exe[PATH_MAX], errf[PATH_MAX], name[64], cmd[3 * PATH_MAX + 1200];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  ASSERT(n > 0);
  exe[n] = '\0';
  *strrchr(exe, '/') = '\0';
  snprintf(name, sizeof name, "muster-cli-err.%d", (int)getpid());
  test_tmp_path(errf, sizeof errf, name);
  snprintf(cmd, sizeof cmd, "%s/../bin/muster %s 2>%s", exe, args, errf);
  FILE *p = popen(cmd, "r");
  ASSERT(p != NULL);
  size_t len = fread(out, 1, cap - 1, p);
  out[len] = '\0';
  int st = pclose(p);
  FILE *e = fopen(errf, "r");
  ASSERT(e != NULL);
  len = fread(err, 1, ecap - 1, e);
  err[len] = '\0';
  fclose(e);
  unlink(errf);
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
}

const muster_provider_v2_t *tp_provider_v2(const char *backend, int kind, void **handle) {
  void *h = test_provider_dlopen(backend);
  if (handle) *handle = h;
  if (!h) return NULL;
  const muster_provider_v2_t *v = dlsym(h, MUSTER_PROVIDER_SYMBOL_V2);
  ASSERT(v);
  ASSERT_EQ(v->abi_version, MUSTER_PROVIDER_V2_ABI);
  ASSERT_EQ(v->struct_size, sizeof(muster_provider_v2_t));
  ASSERT_EQ(v->layout_rules, MUSTER_LAYOUT_RULES_VERSION);
  ASSERT_EQ(v->kind, kind);
  ASSERT(!strcmp(v->name, backend));
  return v;
}

void tp_registry_dir(char *dir, size_t cap) {
  test_tmp_dir(dir, cap);
  setenv("MUSTER_PROVIDER_PATH", dir, 1);
  unsetenv("MUSTER_PROVIDER");
}

int tp_solve(tp_problem_t *p, const char *provider, muster_solve_result_t *res) {
  p->args.provider = provider;
  return muster_solve_all(&p->args, p->nshards, p->shards, res);
}
