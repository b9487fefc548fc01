/*
 * tests/unit/test_registry_identity.c - one provider file loads once,
 * whatever path names it (issue 25: a wheel holds copies, not links, in its
 * routine folders), two builds of one backend never both load, and a
 * provider's $ORIGIN-relative RPATH finds its libraries (auditwheel's).
 */
#include <limits.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "task.h"
#include "muster.h"
#include "muster/provider.h"
#include "providers/tp_util.h"

static char dir[256];

static void setup(void) { tp_registry_dir(dir, sizeof dir); }

/* Copy test provider `target` (a file, not a link; relative to the test
 * providers' folder) to <dir>/<routine>/<name>, as a wheel's routine
 * folders hold their providers. */
static void copy_provider(const char *routine, const char *name, const char *target) {
  char src[PATH_MAX + 64], sub[PATH_MAX], dst[PATH_MAX + 64], buf[1 << 16];
  snprintf(src, sizeof src, "%s/%s", tp_build_dir(), target);
  snprintf(sub, sizeof sub, "%s/%s", dir, routine);
  mkdir(sub, 0700);
  snprintf(dst, sizeof dst, "%s/%s", sub, name);
  FILE *in = fopen(src, "rb"), *out = fopen(dst, "wb");
  ASSERT(in && out);
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, in)) > 0) ASSERT(fwrite(buf, 1, n, out) == n);
  fclose(in);
  ASSERT(fclose(out) == 0);
}

/* How many distinct files whose path ends in `suffix` are mapped */
static int maps_files(const char *suffix) {
  FILE *f = fopen("/proc/self/maps", "r");
  ASSERT(f != NULL);
  char line[1024], seen[8][1024];
  int n = 0;
  while (fgets(line, sizeof line, f)) {
    char *path = strchr(line, '/'), *nl = strchr(line, '\n');
    if (nl) *nl = '\0';
    size_t len = path ? strlen(path) : 0, sl = strlen(suffix);
    if (!path || len < sl || strcmp(path + len - sl, suffix)) continue;
    int k = 0;
    while (k < n && strcmp(seen[k], path)) k++;
    if (k == n && n < 8) snprintf(seen[n++], sizeof seen[0], "%s", path);
  }
  fclose(f);
  return n;
}

/* A provider copied (not linked) into several routine folders, and also
 * reached through a link, is one provider: loaded once (one ld.so object,
 * one init), listed once, whichever routine comes first (issue 25: a
 * wheel holds copies; two instances of a GPU provider must never be). */
TEST_IMPL(registry_copies_load_once) {
  setup();
  copy_provider("potrs", "testprov.so", "testprov_v1.so");
  copy_provider("syevd", "testprov.so", "testprov_v1.so");
  copy_provider("potri", "testprov.so", "testprov_v1.so");
  tp_link(dir, "getrs", "testprov.so", "testprov_v1.so");
  tp_problem_t p;
  tp_problem_init(&p, MUSTER_POTRS, MUSTER_F64, 12, 3, 0);
  muster_solve_result_t res;
  ASSERT_OK(tp_solve(&p, NULL, &res));
  ASSERT(strcmp(res.provider, "testprov") == 0);
  ASSERT_EQ(maps_files("/testprov.so"), 1);
  muster_provider_info_t info[8];
  int n = muster_providers_list(info, 8); /* loads every routine's files */
  ASSERT_EQ(n, 1);
  ASSERT(info[0].available);
  ASSERT_EQ(maps_files("/testprov.so") + maps_files("/testprov_v1.so"), 1);
  /* a rescan finds the same copies: still one */
  ASSERT_OK(muster_providers_rescan());
  ASSERT_EQ(muster_providers_list(info, 8), 1);
  ASSERT_OK(tp_solve(&p, NULL, &res));
  ASSERT_EQ(maps_files("/testprov.so") + maps_files("/testprov_v1.so"), 1);
  tp_problem_free(&p);
  test_remove_tree(dir);
  return 0;
}

/* Two different builds of one backend on the path (here in two routine
 * folders) are never both loaded: the one loaded first serves, the other
 * is refused, saying why (two instances of a GPU provider would be two
 * CUDA contexts). */
TEST_IMPL(registry_two_builds_one_instance) {
  setup();
  tp_link(dir, "potrs", "testprov.so", "testprov_v1.so");
  tp_link(dir, "syevd", "testprov.so", "testprov_v2.so");
  tp_problem_t p;
  tp_problem_init(&p, MUSTER_POTRS, MUSTER_F64, 12, 2, 0);
  muster_solve_result_t res;
  ASSERT_OK(tp_solve(&p, NULL, &res));
  muster_provider_info_t info[8];
  int n = muster_providers_list(info, 8);
  ASSERT_EQ(n, 2);
  int loaded = info[0].available ? 0 : 1, refused = 1 - loaded;
  ASSERT(info[loaded].available && !info[refused].available);
  ASSERT_STR_CONTAINS(info[loaded].path, "testprov_v1.so");
  ASSERT_STR_CONTAINS(info[refused].why, "another build of testprov is loaded");
  ASSERT(tp_maps_has("testprov_v1.so") && !tp_maps_has("testprov_v2.so"));
  tp_problem_free(&p);
  test_remove_tree(dir);
  return 0;
}

/* A provider whose RPATH is $ORIGIN-relative finds its library there: it
 * is loaded by its real path, not /proc/self/fd/N (where $ORIGIN would be
 * /proc/self/fd), the way an installed wheel's providers find the
 * libraries auditwheel bundled (issue 25). */
TEST_IMPL(registry_origin_rpath) {
  setup();
  copy_provider("potrs", "testprov.so", "testprov_origin.so");
  copy_provider("deps", "libtpdep.so", "dep/libtpdep.so"); /* not a routine: never listed */
  tp_problem_t p;
  tp_problem_init(&p, MUSTER_POTRS, MUSTER_F64, 12, 2, 0);
  muster_solve_result_t res;
  ASSERT_OK(tp_solve(&p, NULL, &res));
  ASSERT(strcmp(res.provider, "testprov") == 0);
  for (int s = 0; s < 2; s++) ASSERT(tp_marker(&p, s) == 3.0);
  tp_problem_free(&p);
  test_remove_tree(dir);
  return 0;
}
