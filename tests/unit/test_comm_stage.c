/*
 * tests/unit/test_comm_stage.c - the staging of muster_solve_comm's
 * one-node route (runtime/solve/comm_stage.c), in this process:
 *   - host: a piece in plain memory is copied into muster_shard_alloc
 *     memory (the leader can map that), one already there is left as it
 *     is; what the engine writes into the copy comes back (A only where
 *     the caller reads it after the call); the region is reused by the
 *     next call;
 *   - CUDA, on the stand-in CUDA runtime (fakecudart, dlopened here first
 *     so that the runtime's own lazy dlopen finds it): pieces CUDA IPC
 *     opens are left as they are; with every IPC handle refused (as XLA's
 *     allocations are) they are copied into a cudaMalloc'ed region and
 *     back, and the refusal's CUDA error does not linger; a region that
 *     cannot be allocated is MUSTER_ECUDA naming the device;
 *   - CUDA IPC's verdict is kept per allocation (the stand-in's cudaMalloc
 *     memory, which has buffer ids): a second call asks no new handle,
 *     also for another piece of the same allocation; memory freed and
 *     allocated again at the same address is asked again (a stale verdict
 *     would leave a refused allocation unstaged); the comm's close
 *     forgets every verdict, and the oldest goes when the cache is full.
 */
#include <dlfcn.h>

#include "task.h"
#include "solve/comm_stage.h"
#include "solve/shard.h"
#include "providers/tp_util.h"

static void fill(double *p, size_t count, double base) {
  for (size_t i = 0; i < count; i++) p[i] = base + (double)i;
}

static int same(const double *p, size_t count, double base) {
  for (size_t i = 0; i < count; i++)
    if (p[i] != base + (double)i) return 0;
  return 1;
}

/* d: mine described (valid); an empty stage */
static muster__stage_t described(const muster_solve_args_t *args, const muster_shard_t *mine, muster__desc_t *d) {
  muster__desc_describe(args, mine, d);
  ASSERT_EQ(d->problem, 0);
  muster__stage_t st;
  memset(&st, 0, sizeof st);
  return st;
}

TEST_IMPL(comm_stage_host) {
  enum { N = 9, LDA = 11, NCOLS = 4, NRHS = 2 };
  size_t na = (NCOLS - 1) * LDA + N; /* what the piece spans: the last column's padding is not its */
  double *a = malloc(LDA * NCOLS * sizeof *a), *b = NULL;
  ASSERT(a);
  ASSERT_OK(muster_shard_alloc(N * NRHS * sizeof *b, (void **)&b));
  fill(a, na, 1);
  fill(b, N * NRHS, 100);
  muster_solve_args_t args = {.routine = MUSTER_POTRS, .dtype = MUSTER_F64, .n = N, .nrhs = NRHS};
  muster_shard_t mine = {.mem = MUSTER_MEM_HOST, .device = -1, .a = a, .lda = LDA, .col0 = 0, .ncols = NCOLS,
                         .b = b, .ldb = N};
  muster__desc_t d;
  muster__stage_t st = described(&args, &mine, &d);
  muster_shard_t use;
  for (int call = 0; call < 2; call++) {
    ASSERT_OK(muster__stage_in(&st, &d, &mine, &use));
    ASSERT(use.a != a && use.b == b); /* b is muster_shard_alloc memory already */
    muster__shard_ref_t ref;
    muster__shard_find(use.a, &ref);
    ASSERT(ref.fd >= 0); /* the leader can map the copy */
    ASSERT(same(use.a, na, 1));
    void *region = st.region;
    fill(use.a, na, 50 + call); /* what the engine wrote */
    ASSERT_OK(muster__stage_out(&st, &mine));
    ASSERT(same(a, na, 50 + call));
    fill(a, na, 1);
    if (call == 1) ASSERT(st.region == region);
  }
  muster__stage_free(&st);
  ASSERT(st.region == NULL);
  free(a);
  muster_shard_free(b);
  return 0;
}

/* Only what the caller reads after the call comes back (comm_stage.h):
 * B and W always, A where muster_routine_writes_a says (potrs's factor,
 * syevd's vectors), not potrs's with MUSTER_NO_FACTOR, getrs's, or
 * syevd's with MUSTER_NO_VECTORS: the caller's A is then as it was. */
TEST_IMPL(comm_stage_host_outputs_only) {
  enum { N = 7, NCOLS = 3, NRHS = 2 };
  static const struct {
    muster_routine_t r;
    unsigned flags;
    int a_back;
  } cases[] = {{MUSTER_POTRS, 0, 1},
               {MUSTER_POTRS, MUSTER_NO_FACTOR, 0},
               {MUSTER_GETRS, 0, 0},
               {MUSTER_SYEVD, 0, 1},
               {MUSTER_SYEVD, MUSTER_NO_VECTORS, 0}};
  double a[N * NCOLS], b[N * NRHS], w[N];
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    int syevd = cases[i].r == MUSTER_SYEVD;
    fill(a, N * NCOLS, 1);
    fill(b, N * NRHS, 100);
    fill(w, N, 200);
    muster_solve_args_t args = {.routine = cases[i].r, .dtype = MUSTER_F64, .n = N, .nrhs = syevd ? 0 : NRHS,
                                .flags = cases[i].flags};
    muster_shard_t mine = {.mem = MUSTER_MEM_HOST, .device = -1, .a = a, .lda = N, .col0 = 0, .ncols = NCOLS,
                           .b = syevd ? NULL : b, .ldb = N, .w = syevd ? w : NULL};
    muster__desc_t d;
    muster__stage_t st = described(&args, &mine, &d);
    muster_shard_t use;
    ASSERT_OK(muster__stage_in(&st, &d, &mine, &use));
    ASSERT(use.a != a && same(use.a, N * NCOLS, 1)); /* plain memory: every piece staged */
    fill(use.a, N * NCOLS, 50);                       /* what the engine wrote */
    if (syevd) fill(use.w, N, 70);
    else fill(use.b, N * NRHS, 60);
    ASSERT_OK(muster__stage_out(&st, &mine));
    ASSERT(same(a, N * NCOLS, cases[i].a_back ? 50 : 1));
    ASSERT(syevd ? same(w, N, 70) : same(b, N * NRHS, 60));
    muster__stage_free(&st);
  }
  return 0;
}

/* The stand-in CUDA runtime, dlopened here first so that the runtime's
 * own lazy dlopen finds it; its calls a test makes itself. */
typedef struct fakecuda {
  int (*cuda_malloc)(void **, size_t);
  int (*cuda_free)(void *);
  int (*handles)(void); /* cudaIpcGetMemHandle's handles given so far */
  int (*last_error)(void);
} fakecuda_t;

static fakecuda_t fakecuda_open(void) {
  char path[4200];
  snprintf(path, sizeof path, "%s/fakecuda/libcudart.so.13", tp_build_dir());
  void *h = dlopen(path, RTLD_NOW | RTLD_GLOBAL); /* before the runtime looks for libcudart.so.13 */
  ASSERT(h);
  fakecuda_t f = {(int (*)(void **, size_t))dlsym(h, "cudaMalloc"), (int (*)(void *))dlsym(h, "cudaFree"),
                  (int (*)(void))dlsym(h, "fakecuda_ipc_handles"), (int (*)(void))dlsym(h, "cudaGetLastError")};
  ASSERT(f.cuda_malloc && f.cuda_free && f.handles && f.last_error);
  unsetenv("FAKECUDA_IPC_REFUSE");
  unsetenv("FAKECUDA_FAIL_MALLOC");
  return f;
}

static double *device_alloc(const fakecuda_t *f, size_t count) {
  void *p = NULL;
  ASSERT_EQ(f->cuda_malloc(&p, count * sizeof(double)), 0);
  return p;
}

enum { N = 8, NCOLS = 3, DEV = 1 };

/* syevd of N on device DEV: mine's a (N x NCOLS) and w, described */
static muster__stage_t cuda_piece(double *a, double *w, muster_solve_args_t *args, muster_shard_t *mine,
                                  muster__desc_t *d) {
  *args = (muster_solve_args_t){.routine = MUSTER_SYEVD, .dtype = MUSTER_F64, .n = N};
  *mine = (muster_shard_t){.mem = MUSTER_MEM_CUDA, .device = DEV, .a = a, .lda = N, .col0 = 0, .ncols = NCOLS,
                           .w = w};
  return described(args, mine, d);
}

TEST_IMPL(comm_stage_cuda) {
  fakecuda_t f = fakecuda_open();
  /* the stand-in's device memory, not its cudaMalloc's: without a buffer
   * id, so CUDA IPC is asked every call (the refusal below is seen) */
  double *a = malloc(N * NCOLS * sizeof *a), *w = malloc(N * sizeof *w);
  ASSERT(a && w);
  fill(a, N * NCOLS, 1);
  fill(w, N, 200);
  muster_solve_args_t args;
  muster_shard_t mine, use;
  muster__desc_t d;
  muster__stage_t st = cuda_piece(a, w, &args, &mine, &d);
  ASSERT_OK(muster__stage_in(&st, &d, &mine, &use)); /* CUDA IPC opens them: nothing to copy */
  ASSERT(use.a == a && use.w == w && st.region == NULL);
  ASSERT_OK(muster__stage_out(&st, &mine));
  setenv("FAKECUDA_IPC_REFUSE", "1", 1);
  ASSERT_OK(muster__stage_in(&st, &d, &mine, &use));
  ASSERT_EQ(f.last_error(), 0); /* the refusals' error was cleared */
  ASSERT(use.a != a && use.w != w && st.region && st.device == DEV && st.mem == MUSTER_MEM_CUDA);
  ASSERT(same(use.a, N * NCOLS, 1) && same(use.w, N, 200));
  fill(use.a, N * NCOLS, 7);
  fill(use.w, N, 70);
  ASSERT_OK(muster__stage_out(&st, &mine));
  ASSERT(same(a, N * NCOLS, 7) && same(w, N, 70));
  muster__stage_free(&st);
  setenv("FAKECUDA_FAIL_MALLOC", "1", 1); /* device 1 is out of memory */
  ASSERT_EQ(muster__stage_in(&st, &d, &mine, &use), MUSTER_ECUDA);
  ASSERT_STR_CONTAINS(muster_last_error(), "device 1: cudaMalloc(");
  ASSERT_STR_CONTAINS(muster_last_error(), "staging");
  ASSERT(use.a == a && st.region == NULL);
  ASSERT_OK(muster__stage_out(&st, &mine)); /* nothing staged: nothing to copy back */
  unsetenv("FAKECUDA_IPC_REFUSE");
  unsetenv("FAKECUDA_FAIL_MALLOC");
  free(a);
  free(w);
  return 0;
}

TEST_IMPL(comm_stage_cuda_seen) {
  fakecuda_t f = fakecuda_open();
  double *a = device_alloc(&f, 2 * N * NCOLS), *w = device_alloc(&f, N);
  fill(a, 2 * N * NCOLS, 1);
  fill(w, N, 200);
  muster_solve_args_t args;
  muster_shard_t mine, use;
  muster__desc_t d;
  muster__stage_t st = cuda_piece(a, w, &args, &mine, &d);
  int asked = f.handles();
  ASSERT_OK(muster__stage_in(&st, &d, &mine, &use));
  ASSERT(use.a == a && use.w == w && st.region == NULL);
  ASSERT_EQ(f.handles(), asked + 2); /* one handle per allocation */
  ASSERT_OK(muster__stage_in(&st, &d, &mine, &use));
  mine.a = a + N * NCOLS; /* another piece of a's allocation */
  ASSERT_OK(muster__stage_in(&st, &d, &mine, &use));
  ASSERT(use.a == mine.a && use.w == w);
  ASSERT_EQ(f.handles(), asked + 2); /* none asked again */
  /* a freed, and allocated again at the same address: asked again */
  ASSERT_EQ(f.cuda_free(a), 0);
  ASSERT(device_alloc(&f, 2 * N * NCOLS) == a);
  mine.a = a;
  ASSERT_OK(muster__stage_in(&st, &d, &mine, &use));
  ASSERT_EQ(f.handles(), asked + 3);
  /* ... and once more, now refused (as XLA's would be): staged, not
   * taken for the shareable allocation that was there before */
  ASSERT_EQ(f.cuda_free(a), 0);
  ASSERT(device_alloc(&f, 2 * N * NCOLS) == a);
  fill(a, N * NCOLS, 1);
  setenv("FAKECUDA_IPC_REFUSE", "1", 1);
  ASSERT_OK(muster__stage_in(&st, &d, &mine, &use));
  ASSERT(use.a != a && st.region && same(use.a, N * NCOLS, 1));
  ASSERT(use.w == w); /* w's allocation is the same: its verdict holds */
  ASSERT_OK(muster__stage_out(&st, &mine));
  unsetenv("FAKECUDA_IPC_REFUSE");
  /* the comm closes: region and verdicts gone; a new call asks again */
  muster__stage_free(&st);
  ASSERT(st.region == NULL);
  for (int k = 0; k < MUSTER__SHAREABLE_SEEN; k++) ASSERT(st.seen.seen[k].id == 0);
  int before = f.handles();
  ASSERT_OK(muster__stage_in(&st, &d, &mine, &use));
  ASSERT(use.a == a && use.w == w);
  ASSERT_EQ(f.handles(), before + 2);
  muster__stage_free(&st);
  /* full: the oldest verdict goes, the newest stay */
  enum { MORE = MUSTER__SHAREABLE_SEEN + 1 };
  double *many[MORE];
  muster__shareable_cache_t seen;
  memset(&seen, 0, sizeof seen);
  before = f.handles();
  for (int k = 0; k < MORE; k++) {
    many[k] = device_alloc(&f, 1 + (size_t)k); /* sizes of their own: none takes a kept block */
    ASSERT_EQ(muster__cuda_shareable(DEV, many[k], &seen), 1);
  }
  ASSERT_EQ(muster__cuda_shareable(DEV, many[MORE - 1], &seen), 1);
  ASSERT_EQ(f.handles(), before + MORE);
  ASSERT_EQ(muster__cuda_shareable(DEV, many[0], &seen), 1);
  ASSERT_EQ(f.handles(), before + MORE + 1);
  for (int k = 0; k < MORE; k++) ASSERT_EQ(f.cuda_free(many[k]), 0);
  ASSERT_EQ(f.cuda_free(a), 0);
  ASSERT_EQ(f.cuda_free(w), 0);
  return 0;
}
