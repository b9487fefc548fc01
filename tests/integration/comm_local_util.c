/*
 * tests/integration/comm_local_util.c - forked ranks of one kind store comm
 * (comm_local_util.h).
 */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "task.h"
#include "group/group.h"
#include "integration/comm_local_util.h"
#include "integration/kv_util.h"
#include "providers/tp_util.h"
#include "../../tools/muster/check.h"

static const char *const routines[] = {"potrs", "getrs", "syevd"};

void cl_setup(char *dir, size_t cap) {
  tp_env_fresh(dir, cap);
  char lapack[4096], store[4200];
  snprintf(lapack, sizeof lapack, "%s/lapack.so", tp_lapack_dir());
  for (int i = 0; i < 3; i++) {
    tp_link_abs(dir, routines[i], "lapack.so", lapack);
    tp_link(dir, routines[i], "colllapack.so", "testprov_colllapack.so");
  }
  snprintf(store, sizeof store, "%s/store", dir);
  ASSERT(mkdir(store, 0700) == 0);
  setenv("OPENBLAS_NUM_THREADS", "1", 1); /* each rank a process of its own on a 2-core VM */
}

void cl_write_tables(const char *dir, int R, int64_t n, int lapack_fast) {
  static const char *const dtypes[] = {"f64", "c128"};
  for (int k = 0; k < 2; k++) {
    const char *name = k == 0 ? "lapack" : "colllapack";
    double s = (k == 0) == (lapack_fast != 0) ? 0.001 : 0.002;
    char path[4200], text[2000];
    size_t used = (size_t)snprintf(text, sizeof text, "# routine dtype ndevices n nrhs seconds\n");
    for (int i = 0; i < 3; i++)
      for (int d = 0; d < 2; d++)
        used += (size_t)snprintf(text + used, sizeof text - used, "%s %s %d %" PRId64 " %d %g\n", routines[i],
                                 dtypes[d], R, n, i == 2 ? 0 : 2, s);
    snprintf(path, sizeof path, "%s/%s.cost", dir, name);
    tp_write_file(path, text);
  }
}

/* The folder store under a counter of the allgathers' writes (one per
 * allgather and rank: muster/<set>/ag/<k>/<rank>). */
static muster_kv_t dir_kv;
static long ag_writes;

static int counted_set(void *ctx, const char *key, const void *val, size_t len, char *err, size_t errlen) {
  if (strstr(key, "/ag/")) __atomic_add_fetch(&ag_writes, 1, __ATOMIC_RELAXED);
  return dir_kv.set(ctx, key, val, len, err, errlen);
}

long cl_store_rounds(void) { return __atomic_load_n(&ag_writes, __ATOMIC_RELAXED); }

static void rank_main(const char *dir, int rank, int R, double timeout_s, cl_rank_fn fn, void *shared,
                      int *cached) {
  char sdir[4200];
  snprintf(sdir, sizeof sdir, "%s/store", dir);
  muster_kv_t kv = dir_kv = kv_dir(sdir);
  kv.set = counted_set;
  muster_store_opts_t so = {.name = "local", .rank = rank, .size = R, .timeout_s = timeout_s};
  muster_store_t *st;
  ASSERT_OK(muster_store_open(&kv, &so, &st));
  muster_comm_opts_t co = {.kind = "store", .rank = rank, .size = R, .name = "local",
                           .allgather = muster_store_allgather, .ctx = st};
  muster_comm_t *c;
  ASSERT_OK(muster_comm_open(&co, &c));
  fn(c, rank, R, shared);
  ASSERT_OK(muster_comm_close(c));
  if (cached) cached[rank] = muster__group_cache_count(); /* the comm's group forgotten */
  muster_store_close(st); /* a failed set says so again: the test checked the calls */
}

void cl_fork(const char *dir, int R, double timeout_s, cl_rank_fn fn, void *shared, int *cached, pid_t *pids) {
  for (int r = 0; r < R; r++) {
    pids[r] = fork();
    ASSERT(pids[r] >= 0);
    if (pids[r] == 0) {
      rank_main(dir, r, R, timeout_s, fn, shared, cached);
      _exit(0);
    }
  }
}

void cl_wait(int R, const pid_t *pids, int skip) {
  for (int r = 0; r < R; r++) {
    int st;
    ASSERT(waitpid(pids[r], &st, 0) == pids[r]);
    if (r != skip && !(WIFEXITED(st) && WEXITSTATUS(st) == 0)) {
      fprintf(stderr, "rank %d ended with status 0x%x\n", r, st);
      ASSERT(0);
    }
  }
}

void *cl_shared(size_t bytes) {
  void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  ASSERT(p != MAP_FAILED);
  return p; /* zeroed */
}

void cl_unshare(void *p, size_t bytes) { munmap(p, bytes); }

void cl_problem(muster_routine_t r, muster_dtype_t t, int64_t n, int64_t nrhs, uint64_t seed, void **a, void **b) {
  size_t esz = muster_dtype_size(t);
  chk_rng_t rng;
  chk_seed(&rng, seed);
  *a = calloc((size_t)(n * n), esz);
  *b = calloc((size_t)(n * (nrhs ? nrhs : 1)), esz);
  ASSERT(*a && *b);
  if (r == MUSTER_GETRS) chk_random_general(t, n, n, &rng, *a, n);
  else chk_random_hermitian(t, n, r == MUSTER_POTRS, &rng, *a, n);
  if (nrhs) chk_random_dense(t, n, nrhs, &rng, *b, n);
}

static void *room(size_t bytes, int shm) {
  void *p = NULL;
  if (shm) ASSERT_OK(muster_shard_alloc(bytes, &p));
  else p = calloc(1, bytes);
  ASSERT(p);
  return p;
}

muster_shard_t cl_shard(muster_dtype_t t, int64_t n, int64_t nrhs, const void *a, const void *b, int R, int rank,
                        int shm) {
  size_t esz = muster_dtype_size(t);
  int64_t col0, ncols;
  ASSERT_OK(muster_layout_block_cols(n, R, rank, &col0, &ncols));
  muster_shard_t s = {.mem = MUSTER_MEM_HOST, .device = -1, .lda = n, .ldb = n, .col0 = col0, .ncols = ncols};
  s.a = room((size_t)(n * (ncols ? ncols : 1)) * esz, shm);
  memcpy(s.a, (const char *)a + (size_t)(col0 * n) * esz, (size_t)(n * ncols) * esz);
  if (nrhs) {
    s.b = room((size_t)(n * nrhs) * esz, shm);
    memcpy(s.b, b, (size_t)(n * nrhs) * esz);
  }
  s.w = room((size_t)n * muster_dtype_real_size(t), shm);
  return s;
}

void cl_shard_free(muster_shard_t *s, int shm) {
  void *p[3] = {s->a, s->b, s->w};
  for (int k = 0; k < 3; k++) {
    if (!p[k]) continue;
    if (shm) muster_shard_free(p[k]);
    else free(p[k]);
  }
}
