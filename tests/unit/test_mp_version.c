/* tests/unit/test_mp_version.c - the cusolvermp provider's release table
 * (which cuSOLVERMp runs with which NCCL and cuBLASMp), version parsing,
 * and where it looks for the libraries (a fake tree of Python
 * environments, CUDA and HPC SDK folders in /tmp).  version.c and search.c
 * are host-only C, linked in (tests/SConscript). */
#include <sys/stat.h>

#include "cusolvermp/search.h"
#include "cusolvermp/version.h"
#include "providers/tp_util.h"
#include "task.h"

static int parse(const char *s) {
  int v = -7;
  return mp_ver_parse(s, &v) == 0 ? v : -1;
}

TEST_IMPL(mp_version_parse) {
  ASSERT_EQ(parse("0.8.0.3126"), 800);
  ASSERT_EQ(parse("0.9.1.9318.post1"), 901);
  ASSERT_EQ(parse("2.28.9"), 22809);
  ASSERT_EQ(parse("2.29"), 22900);
  ASSERT_EQ(parse("0.10.0.3695"), 1000);
  ASSERT_EQ(parse("13.0.88"), 130088);
  static const char *bad[] = {"", "8", "0.", ".8", "a.b", "0.100.0", "0.8.100", "0x8.1", NULL};
  for (int i = 0; bad[i]; i++) ASSERT_EQ(parse(bad[i]), -1);
  ASSERT_EQ(mp_ver_parse(NULL, NULL), -1);
  char buf[32];
  ASSERT(!strcmp(mp_ver_str(22809, buf, sizeof buf), "2.28.9"));
  ASSERT(!strcmp(mp_ver_str(1000, buf, sizeof buf), "0.10.0"));
  ASSERT(!strcmp(mp_ver_str(0, buf, sizeof buf), "unknown"));
  /* cusolverMpGetVersion: 0.8 says 800 (major*1000+...), 0.9.1 says 901 (major*10000+...) */
  ASSERT_EQ(mp_ver_from_solver_code(800), MP_VER(0, 8, 0));
  ASSERT_EQ(mp_ver_from_solver_code(901), MP_VER(0, 9, 1));
  ASSERT_EQ(mp_ver_from_solver_code(-3), 0);
  /* wheel metadata folders */
  ASSERT_EQ(mp_ver_from_distinfo("nvidia_cusolvermp_cu13-0.8.0.3126.dist-info", "nvidia_cusolvermp_cu13"), 800);
  ASSERT_EQ(mp_ver_from_distinfo("nvidia_cusolvermp_cu13-0.9.1.9318.post1.dist-info", "nvidia_cusolvermp_cu13"), 901);
  ASSERT_EQ(mp_ver_from_distinfo("nvidia_cusolvermp_cu12-0.8.0.3126.dist-info", "nvidia_cusolvermp_cu13"), 0);
  ASSERT_EQ(mp_ver_from_distinfo("nvidia_cusolvermp_cu13-0.8.0.3126.dist-info.bak", "nvidia_cusolvermp_cu13"), 0);
  ASSERT_EQ(mp_ver_from_distinfo("nvidia_cusolvermp_cu13-x.dist-info", "nvidia_cusolvermp_cu13"), 0);
  ASSERT_EQ(mp_ver_from_distinfo("nvidia_cusolvermp_cu13.dist-info", "nvidia_cusolvermp_cu13"), 0);
  ASSERT_EQ(mp_ver_from_distinfo("nvidia_nccl_cu13-2.28.9.dist-info", "nvidia_nccl_cu13"), 22809);
  return 0;
}

/* mp_compat's verdict and words. */
static int compat(int solver, int nccl, int cublasmp, int *prov, char *why) {
  why[0] = '\0';
  return mp_compat(solver, nccl, cublasmp, prov, why, 200);
}

TEST_IMPL(mp_version_compat_table) {
  char why[200];
  int prov = -1;
  const int v080 = MP_VER(0, 8, 0), v091 = MP_VER(0, 9, 1), n2289 = MP_VER(2, 28, 9), n2290 = MP_VER(2, 29, 0);
  /* the GPU machines: NCCL 2.28.9 runs 0.8 and refuses 0.9.1, saying why */
  ASSERT_EQ(compat(v080, n2289, 0, &prov, why), 0);
  ASSERT_EQ(prov, 0);
  ASSERT_EQ(compat(v091, n2289, MP_VER(0, 10, 0), &prov, why), -1);
  ASSERT_STR_CONTAINS(why, "cuSOLVERMp 0.9.1 needs NCCL >= 2.29.0, this process has 2.28.9");
  /* 0.9.1 with NCCL 2.29 and cuBLASMp 0.10 */
  ASSERT_EQ(compat(v091, n2290, MP_VER(0, 10, 0), &prov, why), 0);
  ASSERT_EQ(prov, 0);
  ASSERT_EQ(compat(v091, n2290, MP_VER(0, 9, 1), &prov, why), -1);
  ASSERT_STR_CONTAINS(why, "needs cuBLASMp 0.10.x, found 0.9.1");
  ASSERT_EQ(compat(v091, n2290, MP_VER(0, 11, 0), &prov, why), -1);
  ASSERT_EQ(compat(v091, n2290, 0, &prov, why), 0); /* cuBLASMp of unknown version: provisional */
  ASSERT_EQ(prov, 1);
  /* 0.8 needs NCCL 2.27 */
  ASSERT_EQ(compat(v080, MP_VER(2, 26, 6), 0, &prov, why), -1);
  ASSERT_STR_CONTAINS(why, "needs NCCL >= 2.27.0, this process has 2.26.6");
  ASSERT_EQ(compat(v080, 0, 0, &prov, why), -1);
  ASSERT_STR_CONTAINS(why, "this process has none");
  ASSERT_EQ(compat(MP_VER(0, 8, 3), MP_VER(2, 27, 0), 0, &prov, why), 0);
  /* releases it does not know */
  ASSERT_EQ(compat(MP_VER(0, 7, 2), n2290, 0, &prov, why), -1);
  ASSERT_STR_CONTAINS(why, "cuSOLVERMp 0.7.2 is not a release this provider runs (0.8 or 0.9)");
  ASSERT_EQ(compat(MP_VER(0, 10, 0), n2290, 0, &prov, why), -1);
  /* unknown version: judged when cusolverMpGetVersion can be asked */
  ASSERT_EQ(compat(0, n2289, 0, &prov, why), 0);
  ASSERT_EQ(prov, 1);
  /* the table's limits */
  const mp_release_t *r = mp_release_of(v080);
  ASSERT(r && !strcmp(r->label, "0.8") && r->potrs_nrhs == 1 && !r->values_only);
  r = mp_release_of(v091);
  ASSERT(r && !strcmp(r->label, "0.9") && r->cublasmp_min == MP_VER(0, 10, 0));
  ASSERT(!mp_release_of(MP_VER(1, 0, 0)));
  return 0;
}


/* ---- the search over a fake tree ------------------------------------------------ */

static void touch(const char *root, const char *rel) {
  char path[PATH_MAX], cmd[PATH_MAX + 32];
  snprintf(path, sizeof path, "%s/%s", root, rel);
  snprintf(cmd, sizeof cmd, "mkdir -p \"$(dirname '%s')\"", path);
  ASSERT_EQ(system(cmd), 0);
  FILE *f = fopen(path, "w");
  ASSERT(f);
  fclose(f);
  chmod(path, 0755);
}

static void mkdirs(const char *root, const char *rel) {
  char cmd[PATH_MAX + 32];
  snprintf(cmd, sizeof cmd, "mkdir -p '%s/%s'", root, rel);
  ASSERT_EQ(system(cmd), 0);
}

/* The candidates under root, in order, as "origin=relative path" lines. */
static void ours(const mp_cands_t *c, const char *root, char *out, size_t cap) {
  size_t used = 0, rl = strlen(root);
  char real[PATH_MAX];
  ASSERT(realpath(root, real));
  rl = strlen(real);
  out[0] = '\0';
  for (int i = 0; i < c->n; i++)
    if (!strncmp(c->c[i].path, real, rl))
      used += (size_t)snprintf(out + used, cap - used, "%s=%s@%d\n", c->c[i].origin, c->c[i].path + rl + 1,
                               c->c[i].distver);
}

TEST_IMPL(mp_version_search_order) {
  char root[PATH_MAX], env[PATH_MAX * 3], got[8192];
  test_tmp_dir(root, sizeof root);
  const char *sp = "lib/python3.11/site-packages";
  /* an explicit folder, a venv with 0.9.1, a conda env with 0.8.0, a python3 on PATH with 0.8.0 and NCCL,
   * PYTHONPATH, LD_LIBRARY_PATH, a CUDA toolkit, an HPC SDK */
  touch(root, "explicit/libcusolverMp.so.0");
  char rel[PATH_MAX];
  snprintf(rel, sizeof rel, "venv/%s/nvidia/cu13/lib/libcusolverMp.so.0", sp);
  touch(root, rel);
  snprintf(rel, sizeof rel, "venv/%s/nvidia_cusolvermp_cu13-0.9.1.9318.post1.dist-info", sp);
  mkdirs(root, rel);
  snprintf(rel, sizeof rel, "conda/%s/nvidia/cu13/lib/libcusolverMp.so.0", sp);
  touch(root, rel);
  snprintf(rel, sizeof rel, "conda/%s/nvidia_cusolvermp_cu13-0.8.0.3126.dist-info", sp);
  mkdirs(root, rel);
  touch(root, "py/bin/python3");
  snprintf(rel, sizeof rel, "py/%s/nvidia/cu13/lib/libcusolverMp.so.0", sp);
  touch(root, rel);
  snprintf(rel, sizeof rel, "py/%s/nvidia/nccl/lib/libnccl.so.2", sp);
  touch(root, rel);
  snprintf(rel, sizeof rel, "py/%s/nvidia_nccl_cu13-2.28.9.dist-info", sp);
  mkdirs(root, rel);
  touch(root, "pp/nvidia/cu13/lib/libcusolverMp.so.0");
  touch(root, "ldp/libcusolverMp.so.0");
  touch(root, "cuda/lib64/libnccl.so.2");
  touch(root, "sdk/comm_libs/13.0/nccl/lib/libnccl.so.2");
  touch(root, "sdk/math_libs/13.0/lib64/libcusolverMp.so.0");

  snprintf(env, sizeof env, "%s/explicit:%s/nowhere", root, root);
  setenv("MUSTER_MP_LIBDIR", env, 1);
  snprintf(env, sizeof env, "%s/venv", root);
  setenv("VIRTUAL_ENV", env, 1);
  snprintf(env, sizeof env, "%s/conda", root);
  setenv("CONDA_PREFIX", env, 1);
  snprintf(env, sizeof env, "%s/py/bin:/usr/bin:/bin", root);
  setenv("PATH", env, 1);
  snprintf(env, sizeof env, "%s/pp", root);
  setenv("PYTHONPATH", env, 1);
  snprintf(env, sizeof env, "%s/ldp", root);
  setenv("LD_LIBRARY_PATH", env, 1);
  snprintf(env, sizeof env, "%s/cuda", root);
  setenv("CUDA_HOME", env, 1);
  snprintf(env, sizeof env, "%s/sdk", root);
  setenv("NVHPC_ROOT", env, 1);
  setenv("HOME", root, 1);

  mp_cands_t c;
  mp_search(MP_LIB_SOLVER, &c);
  ours(&c, root, got, sizeof got);
  char want[8192 + 4 * PATH_MAX];
  snprintf(want, sizeof want,
           "MUSTER_MP_LIBDIR=explicit/libcusolverMp.so.0@0\n"
           "site-packages (VIRTUAL_ENV)=venv/%s/nvidia/cu13/lib/libcusolverMp.so.0@901\n"
           "site-packages (CONDA_PREFIX)=conda/%s/nvidia/cu13/lib/libcusolverMp.so.0@800\n"
           "site-packages (python3 on PATH)=py/%s/nvidia/cu13/lib/libcusolverMp.so.0@0\n"
           "site-packages (PYTHONPATH)=pp/nvidia/cu13/lib/libcusolverMp.so.0@0\n"
           "LD_LIBRARY_PATH=ldp/libcusolverMp.so.0@0\n"
           "HPC SDK=sdk/math_libs/13.0/lib64/libcusolverMp.so.0@0\n",
           sp, sp, sp);
  if (strcmp(got, want)) fprintf(stderr, "got:\n%swant:\n%s", got, want);
  ASSERT(!strcmp(got, want));
  ASSERT(!strcmp(c.c[c.n - 1].origin, "dynamic loader")); /* the loader's own search comes last */
  ASSERT(!strcmp(c.c[c.n - 1].path, "libcusolverMp.so.0"));
  ASSERT_GE(c.folders, 10);

  mp_search(MP_LIB_NCCL, &c);
  ours(&c, root, got, sizeof got);
  snprintf(want, sizeof want,
           "site-packages (python3 on PATH)=py/%s/nvidia/nccl/lib/libnccl.so.2@22809\n"
           "CUDA=cuda/lib64/libnccl.so.2@0\n"
           "HPC SDK=sdk/comm_libs/13.0/nccl/lib/libnccl.so.2@0\n",
           sp);
  if (strcmp(got, want)) fprintf(stderr, "got:\n%swant:\n%s", got, want);
  ASSERT(!strcmp(got, want));

  /* a file reached twice (a link, or the same folder on two lists) is one candidate */
  snprintf(env, sizeof env, "%s/explicit:%s/explicit/../explicit", root, root);
  setenv("MUSTER_MP_LIBDIR", env, 1);
  mp_search(MP_LIB_SOLVER, &c);
  int seen = 0;
  for (int i = 0; i < c.n; i++) seen += strstr(c.c[i].path, "/explicit/") != NULL;
  ASSERT_EQ(seen, 1);
  ASSERT(!strcmp(mp_lib_file(MP_LIB_CUBLASMP), "libcublasmp.so.0"));
  ASSERT(!strcmp(mp_lib_name(MP_LIB_SOLVER), "cuSOLVERMp"));
  test_remove_tree(root);
  return 0;
}
