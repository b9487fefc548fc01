/* tests/integration/test_v2_util.c - see test_v2_util.h. */
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "task.h"
#include "test_v2_util.h"

static atomic_int counter;

void v2_init(v2_run_t *run, muster_routine_t r, int R, int processes) {
  memset(run, 0, sizeof *run);
  run->args.routine = r;
  run->args.dtype = MUSTER_F64;
  run->args.n = 10;
  run->args.nrhs = 2;
  run->args.layout = MUSTER_LAYOUT_BLOCK;
  run->R = R;
  run->processes = processes;
  run->calls = 1;
  run->kill_rank = -1;
  run->kill_signal = SIGKILL;
  run->timeout_s = 10;
  ASSERT(R >= 1 && R <= V2_MAX_RANKS);
  run->out = mmap(NULL, sizeof(v2_rank_out_t) * V2_MAX_RANKS, PROT_READ | PROT_WRITE,
                  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  ASSERT(run->out != MAP_FAILED);
}

void v2_free(v2_run_t *run) { munmap(run->out, sizeof(v2_rank_out_t) * V2_MAX_RANKS); }

static void *mem(const v2_run_t *run, size_t bytes) {
  void *p = NULL;
  if (run->processes) ASSERT_OK(muster_shard_alloc(bytes, &p));
  else p = malloc(bytes);
  ASSERT(p);
  memset(p, 0, bytes);
  return p;
}

static void unmem(const v2_run_t *run, void *p) {
  if (run->processes) muster_shard_free(p);
  else free(p);
}

/* The value every element of this rank's output holds, or -1. */
static double marker(const muster_solve_args_t *a, const muster_shard_t *s) {
  int64_t rows = a->n, cols = a->routine == MUSTER_POTRS ? a->nrhs : a->routine == MUSTER_POTRI ? s->ncols : 1;
  double v = -2;
  for (int64_t j = 0; j < cols; j++)
    for (int64_t i = 0; i < rows; i++) {
      double x = a->routine == MUSTER_POTRS ? ((double *)s->b)[j * s->ldb + i]
                 : a->routine == MUSTER_POTRI ? ((double *)s->a)[j * s->lda + i]
                                              : ((double *)s->w)[i];
      if (v == -2) v = x;
      else if (x != v) return -1;
    }
  return v;
}

typedef struct rank_arg {
  v2_run_t *run;
  char group[64];
} rank_arg_t;

static int rank_main(int rank, int device, void *arg) {
  (void)device;
  rank_arg_t *ra = arg;
  v2_run_t *run = ra->run;
  const muster_solve_args_t *a = &run->args;
  int64_t n = a->n, col0 = 0, ncols;
  if (a->layout == MUSTER_LAYOUT_CYCLIC) ncols = muster_layout_local_cols(n, a->tile, run->R);
  else ASSERT_OK(muster_layout_block_cols(n, run->R, rank, &col0, &ncols));
  muster_shard_t s = {.mem = MUSTER_MEM_HOST, .device = -1, .lda = n, .ldb = n, .col0 = col0, .ncols = ncols};
  s.a = mem(run, (size_t)(n * (ncols > 0 ? ncols : 1)) * 8);
  s.b = mem(run, (size_t)(n * a->nrhs) * 8);
  s.w = mem(run, (size_t)n * 8);
  v2_rank_out_t *o = &run->out[rank];
  muster_group_t *g = NULL;
  muster_group_opts_t opts = {.job = NULL, .timeout_s = run->timeout_s, .device = -1};
  int rc = muster_group_join(ra->group, rank, run->R, &opts, &g);
  for (int k = 0; k < run->calls; k++) {
    memset(s.a, 0, (size_t)(n * (ncols > 0 ? ncols : 1)) * 8);
    memset(s.b, 0, (size_t)(n * a->nrhs) * 8);
    memset(s.w, 0, (size_t)n * 8);
    if (g) rc = muster_solve(g, a, &s, &o->res[k]);
    o->rc[k] = rc;
    snprintf(o->msg[k], sizeof o->msg[k], "%s", rc ? muster_last_error() : "");
    o->marker[k] = marker(a, &s);
  }
  o->t_return = test_now();
  __atomic_store_n(&o->done, 1, __ATOMIC_RELEASE);
  if (g) muster_group_leave(g);
  unmem(run, s.a);
  unmem(run, s.b);
  unmem(run, s.w);
  return 0;
}

int v2_count_lines(const char *path, const char *prefix) {
  FILE *f = fopen(path, "r");
  if (!f) return 0;
  char line[256];
  int n = 0;
  while (fgets(line, sizeof line, f)) n += !strncmp(line, prefix, strlen(prefix));
  fclose(f);
  return n;
}

static void kill_when_entered(v2_run_t *run, const pid_t *pids) {
  const char *log = getenv("TESTPROV_ENTER_LOG");
  ASSERT(log != NULL);
  double t0 = test_now();
  while (v2_count_lines(log, "enter ") < run->R) {
    ASSERT(test_now() - t0 < 20);
    usleep(2000);
  }
  usleep(50000); /* let them settle inside the provider */
  run->t_kill = test_now();
  ASSERT(kill(pids[run->kill_rank], run->kill_signal) == 0);
}

void v2_run(v2_run_t *run) {
  rank_arg_t ra = {.run = run};
  snprintf(ra.group, sizeof ra.group, "v2_%d_%d", (int)getpid(), atomic_fetch_add(&counter, 1));
  if (!run->processes) {
    int devices[V2_MAX_RANKS];
    for (int r = 0; r < run->R; r++) devices[r] = -1;
    ASSERT_OK(muster_run_on_devices(run->R, devices, rank_main, &ra));
    return;
  }
  pid_t pids[V2_MAX_RANKS];
  fflush(stdout);
  fflush(stderr);
  for (int r = 0; r < run->R; r++) {
    pids[r] = fork();
    ASSERT(pids[r] >= 0);
    if (pids[r] == 0) {
      if (run->env_rank[r]) putenv((char *)run->env_rank[r]);
      rank_main(r, -1, &ra);
      if (run->use_exit) exit(0); /* exit handlers, with a provider's call maybe still running */
      _exit(0);
    }
  }
  if (run->kill_rank >= 0) kill_when_entered(run, pids);
  for (int r = 0; r < run->R; r++) {
    int st;
    if (r == run->kill_rank) continue;
    ASSERT(waitpid(pids[r], &st, 0) == pids[r]);
    ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  }
  if (run->kill_rank >= 0) {
    if (run->kill_signal != SIGKILL) kill(pids[run->kill_rank], SIGKILL); /* a stopped one */
    ASSERT(waitpid(pids[run->kill_rank], NULL, 0) == pids[run->kill_rank]);
  }
}

void v2_expect_all(const v2_run_t *run, int k, int want, const char *has) {
  for (int r = 0; r < run->R; r++) {
    const v2_rank_out_t *o = &run->out[r];
    if (r == run->kill_rank) continue;
    if (!o->done || o->rc[k] != want || (has && !strstr(o->msg[k], has))) {
      fprintf(stderr, "call %d rank %d: done %d rc %d (want %d) \"%s\" (want \"%s\")\n", k, r, o->done,
              o->rc[k], want, o->msg[k], has ? has : "");
      ASSERT(0);
    }
  }
}

void v2_capture_stderr(void (*fn)(void *), void *arg, char *out, size_t cap) {
  char path[PATH_MAX], name[64];
  snprintf(name, sizeof name, "muster-v2err.%d", (int)getpid());
  test_tmp_path(path, sizeof path, name);
  fflush(stderr);
  int saved = dup(2), fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_APPEND, 0600);
  ASSERT(saved >= 0 && fd >= 0);
  dup2(fd, 2);
  fn(arg);
  fflush(stderr);
  dup2(saved, 2);
  close(saved);
  lseek(fd, 0, SEEK_SET);
  ssize_t n = read(fd, out, cap - 1);
  out[n > 0 ? n : 0] = '\0';
  close(fd);
  unlink(path);
}
