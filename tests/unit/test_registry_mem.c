/*
 * tests/unit/test_registry_mem.c - a call on host memory loads no provider
 * that takes only device memory (runtime/registry/provider_elf.h): the memory kinds
 * are read from each provider file without loading it, and a call loads
 * only the providers that take its memory kind.
 *
 * Before: the first call of a routine loaded every provider of it; on a
 * machine without a GPU a host solve pulled in the CUDA runtime, cuBLAS
 * and cuSOLVER (resident memory from ~2 MB to ~200 MB), whose exit
 * handlers then crashed a process that called exit() during that solve.
 */
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "muster.h"
#include "registry/provider_elf.h"
#include "providers/tp_util.h"
#include "task.h"

#define HOST (1u << MUSTER_MEM_HOST)
#define CUDA (1u << MUSTER_MEM_CUDA)

static unsigned test_prov_mem(const char *file) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", tp_build_dir(), file);
  return muster__provider_file_mem(path);
}

/* 1 if the build has provider file <backend>.so (GPU ones need nvcc) */
static int build_has(const char *backend, char *path, size_t cap) {
  snprintf(path, cap, "%s/%s.so", tp_lapack_dir(), backend);
  return access(path, R_OK) == 0;
}

/* a copy of file src with n bytes of it changed by mutate (seeded) */
static void write_mutant(const char *src, const char *dst, uint64_t *seed, int flips) {
  FILE *f = fopen(src, "rb");
  ASSERT(f != NULL);
  static unsigned char buf[1 << 20];
  size_t len = fread(buf, 1, sizeof buf, f);
  fclose(f);
  ASSERT_GT(len, 4096);
  for (int k = 0; k < flips; k++) {
    uint64_t r = test_rand(seed);
    /* mostly the headers and tables near the start and the end, where the
     * walk reads offsets and sizes */
    size_t at = (r >> 8) % 2 ? (size_t)(r >> 16) % 4096 : len - 1 - (size_t)(r >> 16) % 8192;
    buf[at] = (unsigned char)r;
  }
  size_t cut = test_rand(seed) % 8 == 0 ? (size_t)(test_rand(seed) % len) : len; /* truncated */
  f = fopen(dst, "wb");
  ASSERT(f != NULL);
  ASSERT_EQ(fwrite(buf, 1, cut, f), cut);
  ASSERT_EQ(fclose(f), 0);
}

/* What each kind of file says: the struct's memory kinds, or 0 when it
 * cannot be told (then the file is loaded, to refuse it or learn them). */
TEST_IMPL(registry_reads_memory_kinds_from_files) {
  ASSERT_EQ(test_prov_mem("testprov_v1.so"), HOST);        /* ABI v1 */
  ASSERT_EQ(test_prov_mem("testprov_cuda.so"), CUDA);      /* ABI v1, device memory */
  ASSERT_EQ(test_prov_mem("testprov_lead2.so"), HOST);     /* ABI v2 */
  ASSERT_EQ(test_prov_mem("testprov_smallcuda2.so"), CUDA);
  ASSERT_EQ(test_prov_mem("testprov_small.so"), 0);        /* struct_size 16: no mem_kinds */
  ASSERT_EQ(test_prov_mem("testprov_abi999.so"), 0);       /* another ABI version */
  ASSERT_EQ(test_prov_mem("testprov_nosym.so"), 0);        /* no provider symbol */
  ASSERT_EQ(test_prov_mem("notelf.so"), 0);                /* not ELF */
  ASSERT_EQ(test_prov_mem("no-such-file.so"), 0);
  char path[1024];
  ASSERT(build_has("lapack", path, sizeof path));
  ASSERT_EQ(muster__provider_file_mem(path), HOST);
  const char *gpu[] = {"cusolvermg", "cusolverdn", "cusolvermp"};
  for (size_t i = 0; i < sizeof gpu / sizeof gpu[0]; i++)
    if (build_has(gpu[i], path, sizeof path)) ASSERT_EQ(muster__provider_file_mem(path), CUDA);
  /* not regular files: a FIFO must not block the scan, a folder is nothing */
  char dir[256], fifo[300], mutant[300];
  test_tmp_dir(dir, sizeof dir);
  snprintf(fifo, sizeof fifo, "%s/fifo.so", dir);
  ASSERT_EQ(mkfifo(fifo, 0600), 0);
  double t0 = test_now();
  ASSERT_EQ(muster__provider_file_mem(fifo), 0);
  ASSERT_EQ(muster__provider_file_mem(dir), 0);
  ASSERT_EQ(muster__provider_file_mem("/dev/null"), 0);
  ASSERT_PROMPT(test_now() - t0, 1.0);
  /* damaged copies: never a fault or an overread (ASan), only an answer */
  uint64_t seed = test_seed("MUSTER_ELF_SEED");
  fprintf(stderr, "elf fuzz seed %" PRIu64 " (MUSTER_ELF_SEED to replay)\n", seed);
  snprintf(path, sizeof path, "%s/testprov_cuda.so", tp_build_dir());
  snprintf(mutant, sizeof mutant, "%s/mutant.so", dir);
  int same = 0, unknown = 0;
  for (int k = 0; k < 300; k++) {
    write_mutant(path, mutant, &seed, 1 + k % 6);
    unsigned m = muster__provider_file_mem(mutant);
    same += m == CUDA;
    unknown += m == 0;
  }
  fprintf(stderr, "300 damaged copies: %d still read cuda, %d unknown, %d other\n", same, unknown,
          300 - same - unknown);
  test_remove_tree(dir);
  return 0;
}

/* an SPD potrs f64 problem of n = 8 on two host shards (4 on the diagonal) */
struct small {
  double a[2][32], b[2][8], w[2][8];
  muster_shard_t sh[2];
};

static void small_init(struct small *p) {
  memset(p, 0, sizeof *p);
  for (int s = 0; s < 2; s++) {
    for (int j = 0; j < 4; j++) p->a[s][j * 8 + s * 4 + j] = 4;
    for (int i = 0; i < 8; i++) p->b[s][i] = 1;
    p->sh[s] = (muster_shard_t){.mem = MUSTER_MEM_HOST, .device = -1, .a = p->a[s], .lda = 8,
                                .col0 = s * 4, .ncols = 4, .b = p->b[s], .ldb = 8, .w = p->w[s]};
  }
}

/* Host solve with GPU providers on the path (the test's CUDA-only
 * providers, and the build's real ones where built): lapack runs it, the
 * others are listed as unable ("no host memory") but not loaded: no file
 * of theirs, no CUDA library is mapped.  A choice for CUDA memory then
 * loads them. */
TEST_IMPL(registry_host_call_loads_no_gpu_provider) {
  char dir[256], path[1024];
  tp_env_fresh(dir, sizeof dir);
  ASSERT(build_has("lapack", path, sizeof path));
  tp_link_abs(dir, "potrs", "lapack.so", path);
  tp_link(dir, "potrs", "cudaprov.so", "testprov_cuda.so");
  tp_link(dir, "potrs", "smallcuda.so", "testprov_smallcuda2.so");
  const char *gpu[] = {"cusolvermg", "cusolverdn", "cusolvermp"};
  int real_gpu = 0;
  for (size_t i = 0; i < sizeof gpu / sizeof gpu[0]; i++) {
    char link[64];
    snprintf(link, sizeof link, "%s.so", gpu[i]);
    if (build_has(gpu[i], path, sizeof path)) {
      tp_link_abs(dir, "potrs", link, path);
      real_gpu++;
    }
  }
  fprintf(stderr, "%d of the build's GPU providers on the path too\n", real_gpu);
  static const char *cuda_libs[] = {"libcuda.so", "libcudart", "libcublas", "libcusolver",
                                    "testprov_cuda.so", "testprov_smallcuda2.so", "/cusolver"};
  for (size_t i = 0; i < sizeof cuda_libs / sizeof cuda_libs[0]; i++) ASSERT(!tp_maps_has(cuda_libs[i]));
  struct small p;
  small_init(&p);
  muster_solve_args_t args = {.routine = MUSTER_POTRS, .dtype = MUSTER_F64, .n = 8, .nrhs = 1,
                              .layout = MUSTER_LAYOUT_BLOCK};
  muster_solve_result_t res;
  ASSERT_OK(muster_solve_all(&args, 2, p.sh, &res));
  ASSERT(!strcmp(res.provider, "lapack"));
  for (int s = 0; s < 2; s++)
    for (int i = 0; i < 8; i++) ASSERT(p.b[s][i] > 0.2499 && p.b[s][i] < 0.2501);
  ASSERT_STR_CONTAINS(res.reason, "no host memory (cuda only, says its file; not loaded)");
  ASSERT(tp_maps_has("lapack.so"));
  for (size_t i = 0; i < sizeof cuda_libs / sizeof cuda_libs[0]; i++) {
    if (tp_maps_has(cuda_libs[i])) fprintf(stderr, "a host solve mapped %s\n", cuda_libs[i]);
    ASSERT(!tp_maps_has(cuda_libs[i]));
  }
  /* forced onto a GPU provider, a host call is refused for the memory */
  args.provider = "cudaprov";
  ASSERT_EQ(muster_solve_all(&args, 2, p.sh, &res), MUSTER_EUNSUPPORTED);
  ASSERT_STR_CONTAINS(muster_last_error(), "cudaprov");
  ASSERT_STR_CONTAINS(muster_last_error(), "no host memory");
  ASSERT(!tp_maps_has("testprov_cuda.so"));
  test_remove_tree(dir);
  return 0;
}

/* A call on CUDA memory loads the providers that take it (the test's own:
 * the build's GPU providers would map CUDA's libraries, whose loader
 * bookkeeping valgrind's stage would count as leaks). */
TEST_IMPL(registry_cuda_call_loads_cuda_providers) {
  char dir[256], path[1024];
  tp_env_fresh(dir, sizeof dir);
  ASSERT(build_has("lapack", path, sizeof path));
  tp_link_abs(dir, "potrs", "lapack.so", path);
  tp_link(dir, "potrs", "cudaprov.so", "testprov_cuda.so");
  tp_link(dir, "potrs", "smallcuda.so", "testprov_smallcuda2.so");
  ASSERT(!tp_maps_has("testprov_cuda.so"));
  muster_provider_query_t q = {.routine = MUSTER_POTRS, .dtype = MUSTER_F64, .n = 8, .nrhs = 1,
                               .nranks = 2, .ndevices = 2, .mem = MUSTER_MEM_CUDA};
  char name[32], reason[MUSTER_MAX_REASON];
  muster_provider_choose(&q, NULL, name, sizeof name, reason, sizeof reason);
  ASSERT(tp_maps_has("testprov_cuda.so"));
  ASSERT(tp_maps_has("testprov_smallcuda2.so"));
  test_remove_tree(dir);
  return 0;
}
