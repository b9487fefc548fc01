/*
 * tests/integration/test_comm.c - muster_comm_t and muster_solve_comm:
 *   - kind "store": forked ranks, each in its own mount namespace with a
 *     private /dev/shm (as on different nodes), bootstrapped only through
 *     an allgather this test supplies (shared anonymous memory): the
 *     collective test provider runs, twice, with one key; a leader provider
 *     is refused (the ranks share no /dev/shm: no one-node group,
 *     comm_local.h); nothing is left in any rank's /dev/shm;
 *   - kind "group", threads and processes;
 *   - opening errors and launcher detection.
 */
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <dirent.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "task.h"
#include "muster.h"
#include "providers/tp_util.h"
#include "test_v2_util.h"

/* ---- the caller's allgather: shared memory between forked ranks ---------------- */

#define STORE_RANKS 4
#define STORE_SLOT 8192

typedef struct store {
  _Atomic uint64_t arrived;
  unsigned char slot[2][STORE_RANKS][STORE_SLOT];
} store_t;

typedef struct store_ctx {
  store_t *s;
  int rank, size;
  uint64_t round;
} store_ctx_t;

static int store_allgather(void *ctx, const void *mine, void *all, size_t len, char *err, size_t errlen) {
  store_ctx_t *c = ctx;
  if (len > STORE_SLOT) {
    snprintf(err, errlen, "test store: %zu bytes, at most %d", len, STORE_SLOT);
    return MUSTER_EINVAL;
  }
  uint64_t r = c->round++;
  unsigned char (*slot)[STORE_SLOT] = c->s->slot[r % 2];
  memcpy(slot[c->rank], mine, len);
  atomic_fetch_add(&c->s->arrived, 1);
  double t0 = test_now();
  while (atomic_load(&c->s->arrived) < (uint64_t)c->size * (r + 1)) {
    if (test_now() - t0 > 5) {
      snprintf(err, errlen, "test store: round %" PRIu64 ": ranks missing after 5 s", r);
      return MUSTER_ETIMEDOUT;
    }
    usleep(100);
  }
  for (int k = 0; k < c->size; k++) memcpy((char *)all + (size_t)k * len, slot[k], len);
  return 0;
}

/* ---- one rank over a comm --------------------------------------------------------- */

typedef struct outcome {
  int rc[3];
  char msg[3][400];
  muster_solve_result_t res[3];
  double marker;
  int shm_files; /* muster.* in this rank's /dev/shm afterwards */
} outcome_t;

static int count_shm(void) {
  DIR *d = opendir("/dev/shm");
  if (!d) return -1;
  int n = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) n += !strncmp(e->d_name, "muster.", 7);
  closedir(d);
  return n;
}

/* potrs on a block piece of n=10 over size ranks: solve twice, then once
 * forcing the v1 leader provider. */
static void rank_solves(muster_comm_t *c, outcome_t *o) {
  int rank = muster_comm_rank(c), size = muster_comm_size(c);
  int64_t n = 10, col0, ncols;
  ASSERT_OK(muster_layout_block_cols(n, size, rank, &col0, &ncols));
  muster_shard_t s = {.mem = MUSTER_MEM_HOST, .device = -1, .lda = n, .ldb = n, .col0 = col0, .ncols = ncols};
  s.a = calloc((size_t)(n * (ncols ? ncols : 1)), 8);
  s.b = calloc((size_t)(n * 2), 8);
  s.w = calloc((size_t)n, 8);
  muster_solve_args_t a = {.routine = MUSTER_POTRS, .dtype = MUSTER_F64, .n = n, .nrhs = 2};
  for (int k = 0; k < 3; k++) {
    a.provider = k == 2 ? "testprov" : NULL;
    o->rc[k] = muster_solve_comm(c, &a, &s, &o->res[k]);
    snprintf(o->msg[k], sizeof o->msg[k], "%s", o->rc[k] ? muster_last_error() : "");
  }
  o->marker = ((double *)s.b)[0] == 4.0 && ((double *)s.b)[2 * n - 1] == 4.0 ? 4.0 : -1;
  free(s.a);
  free(s.b);
  free(s.w);
}

/* why_not: why the leader provider cannot run over this comm (kind group:
 * collective providers only; kind store with a private /dev/shm per rank:
 * the ranks cannot meet in a group, comm_local.h) */
static void expect_rank(const outcome_t *o, const char *kind, const char *why_not) {
  for (int k = 0; k < 2; k++) {
    if (o->rc[k]) fprintf(stderr, "%s call %d: %d %s\n", kind, k, o->rc[k], o->msg[k]);
    ASSERT_EQ(o->rc[k], 0);
    ASSERT(!strcmp(o->res[k].provider, "colltwo"));
    ASSERT_STR_CONTAINS(o->res[k].reason, "the only provider that can run it");
    ASSERT_STR_CONTAINS(o->res[k].reason, "not testprov: a leader provider: ");
    ASSERT_STR_CONTAINS(o->res[k].reason, why_not);
  }
  ASSERT(o->marker == 4.0);
  ASSERT_EQ(o->rc[2], MUSTER_EUNSUPPORTED);
  ASSERT_STR_CONTAINS(o->msg[2], "testprov");
  ASSERT_STR_CONTAINS(o->msg[2], why_not);
}

static char dir[256];

static void setup(void) {
  tp_env_fresh(dir, sizeof dir);
  tp_link(dir, "potrs", "testprov.so", "testprov_v1.so");
  tp_link(dir, "potrs", "colltwo.so", "testprov_coll2.so");
}

/* A private /dev/shm: this process sees nothing of the others'. */
static void private_dev_shm(void) {
  ASSERT(unshare(CLONE_NEWNS) == 0);
  ASSERT(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0);
  ASSERT(mount("tmpfs", "/dev/shm", "tmpfs", 0, "size=16m") == 0);
  ASSERT_EQ(count_shm(), 0);
}

TEST_IMPL(comm_store_private_shm) {
  setup();
  enum { R = 3 };
  char qlog[320];
  snprintf(qlog, sizeof qlog, "%s/query.log", dir);
  setenv("TESTPROV_QLOG", qlog, 1);
  store_t *s = mmap(NULL, sizeof *s, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  outcome_t *out = mmap(NULL, sizeof(outcome_t) * R, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  ASSERT(s != MAP_FAILED && out != MAP_FAILED);
  pid_t pids[R];
  for (int r = 0; r < R; r++) {
    pids[r] = fork();
    ASSERT(pids[r] >= 0);
    if (pids[r] == 0) {
      private_dev_shm();
      store_ctx_t ctx = {s, r, R, 0};
      muster_comm_opts_t o = {.kind = "store", .rank = r, .size = R, .name = "test-store",
                              .allgather = store_allgather, .ctx = &ctx};
      muster_comm_t *c = NULL;
      ASSERT_OK(muster_comm_open(&o, &c));
      ASSERT(!strcmp(muster_comm_kind(c), "store"));
      rank_solves(c, &out[r]);
      ASSERT_OK(muster_comm_close(c));
      out[r].shm_files = count_shm();
      _exit(0);
    }
  }
  for (int r = 0; r < R; r++) {
    int st;
    ASSERT(waitpid(pids[r], &st, 0) == pids[r]);
    ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  }
  for (int r = 0; r < R; r++) {
    /* the same node, but no /dev/shm in common: no one-node engine */
    expect_rank(&out[r], "store", "cannot meet rank 0 in a muster group: another /dev/shm");
    ASSERT_EQ(out[r].shm_files, 0);
  }
  /* rank 0 chose from every rank's facts: processes of one node; once: the
   * second call is the first again and reuses its kept choice (comm_plan.h) */
  ASSERT_EQ(v2_count_lines(qlog, "colltwo routine=1 n=10 nrhs=2 nranks=3 ndevices=3 nnodes=1 span=2 mem=1"), 1);
  unsetenv("TESTPROV_QLOG");
  munmap(s, sizeof *s);
  munmap(out, sizeof(outcome_t) * R);
  test_remove_tree(dir);
  return 0;
}

/* ---- kind group ------------------------------------------------------------------------ */

typedef struct group_arg {
  char name[64];
  int size;
  outcome_t *out;
} group_arg_t;

static int group_rank(int rank, int device, void *arg) {
  (void)device;
  group_arg_t *g = arg;
  muster_comm_opts_t o = {.kind = "group", .rank = rank, .size = g->size, .name = g->name, .timeout_s = 10,
                          .device = -1};
  muster_comm_t *c = NULL;
  ASSERT_OK(muster_comm_open(&o, &c));
  ASSERT(!strcmp(muster_comm_kind(c), "group"));
  rank_solves(c, &g->out[rank]);
  ASSERT_OK(muster_comm_close(c));
  return 0;
}

static void comm_group(int processes) {
  setup();
  enum { R = 3 };
  group_arg_t g = {.size = R};
  snprintf(g.name, sizeof g.name, "comm%d", (int)getpid());
  g.out = mmap(NULL, sizeof(outcome_t) * R, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  ASSERT(g.out != MAP_FAILED);
  if (!processes) {
    int devices[R] = {-1, -1, -1};
    ASSERT_OK(muster_run_on_devices(R, devices, group_rank, &g));
  } else {
    pid_t pids[R];
    for (int r = 0; r < R; r++) {
      pids[r] = fork();
      ASSERT(pids[r] >= 0);
      if (pids[r] == 0) _exit(group_rank(r, -1, &g));
    }
    for (int r = 0; r < R; r++) {
      int st;
      ASSERT(waitpid(pids[r], &st, 0) == pids[r]);
      ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    }
  }
  for (int r = 0; r < R; r++) expect_rank(&g.out[r], "group", "muster_solve_comm runs collective providers only");
  munmap(g.out, sizeof(outcome_t) * R);
  test_remove_tree(dir);
  ASSERT_EQ(test_count_job_segments(test_job()), 0);
}

TEST_IMPL(comm_group_threads) {
  comm_group(0);
  return 0;
}

TEST_IMPL(comm_group_processes) {
  comm_group(1);
  return 0;
}

/* ---- muster_comm_allgather ---------------------------------------------------------------- */

#define AG_BIG 3000 /* more than one group exchange carries: the allgather chunks it */

static int allgather_rank(int rank, int device, void *arg) {
  group_arg_t *g = arg;
  muster_comm_opts_t o = {.kind = "group", .rank = rank, .size = g->size, .name = g->name, .timeout_s = 10,
                          .device = device};
  muster_comm_t *c = NULL;
  ASSERT_OK(muster_comm_open(&o, &c));
  int64_t mine = 100 + rank, all[3] = {0, 0, 0};
  ASSERT_OK(muster_comm_allgather(c, &mine, all, sizeof mine, "sharing the ranks' numbers"));
  for (int r = 0; r < g->size; r++) ASSERT_EQ(all[r], 100 + r);
  unsigned char big[AG_BIG], *bigs = malloc((size_t)g->size * AG_BIG);
  ASSERT(bigs);
  memset(big, 'a' + rank, sizeof big);
  ASSERT_OK(muster_comm_allgather(c, big, bigs, sizeof big, NULL));
  for (int r = 0; r < g->size; r++)
    ASSERT(bigs[(size_t)r * AG_BIG] == 'a' + r && bigs[(size_t)r * AG_BIG + AG_BIG - 1] == 'a' + r);
  free(bigs);
  ASSERT_EQ(muster_comm_allgather(c, &mine, all, 0, "x"), MUSTER_EINVAL);
  ASSERT_STR_CONTAINS(muster_last_error(), "len is 0");
  ASSERT_EQ(muster_comm_allgather(c, NULL, all, 8, "x"), MUSTER_EINVAL);
  ASSERT_OK(muster_comm_close(c));
  return 0;
}

/* Three threads over a kind group comm; the argument checks; and
 * muster_mpi_finish with no MPI started here (nothing to do: 0). */
TEST_IMPL(comm_allgather_public) {
  group_arg_t g = {.size = 3};
  snprintf(g.name, sizeof g.name, "ag%d", (int)getpid());
  int devices[3] = {-1, -1, -1};
  ASSERT_OK(muster_run_on_devices(3, devices, allgather_rank, &g));
  ASSERT_EQ(muster_comm_allgather(NULL, "x", (char[1]){0}, 1, "x"), MUSTER_EINVAL);
  ASSERT_STR_CONTAINS(muster_last_error(), "comm is NULL");
  ASSERT_EQ(muster_mpi_finish(), 0);
  muster_group_cache_flush();
  ASSERT_EQ(test_count_job_segments(test_job()), 0);
  return 0;
}

/* ---- opening ------------------------------------------------------------------------------ */

TEST_IMPL(comm_open_errors_and_launchers) {
  static const char *vars[] = {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "PMI_RANK", "PMI_SIZE",
                               "SLURM_PROCID", "SLURM_NTASKS"};
  for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) unsetenv(vars[i]);
  muster_comm_t *c = (muster_comm_t *)1;
  muster_comm_opts_t o = {.kind = NULL};
  ASSERT_EQ(muster_comm_open(&o, &c), MUSTER_ENOENT);
  ASSERT(c == NULL);
  ASSERT_STR_CONTAINS(muster_last_error(), "no launcher found in the environment (OMPI_COMM_WORLD_*, PMI_*, SLURM_*)");
  o.kind = "carrier-pigeon";
  ASSERT_EQ(muster_comm_open(&o, &c), MUSTER_EINVAL);
  ASSERT_STR_CONTAINS(muster_last_error(), "unknown kind 'carrier-pigeon'");
  o.kind = "store";
  o.size = 2;
  ASSERT_EQ(muster_comm_open(&o, &c), MUSTER_EINVAL);
  ASSERT_STR_CONTAINS(muster_last_error(), "kind store needs an allgather");
  o.allgather = store_allgather;
  o.rank = 2;
  ASSERT_EQ(muster_comm_open(&o, &c), MUSTER_EINVAL);
  ASSERT_STR_CONTAINS(muster_last_error(), "rank 2 of size 2");
  o.kind = "group";
  o.rank = 0;
  ASSERT_EQ(muster_comm_open(&o, &c), MUSTER_EINVAL);
  ASSERT_STR_CONTAINS(muster_last_error(), "kind group needs a name");
  ASSERT_EQ(muster_solve_comm(NULL, NULL, NULL, NULL), MUSTER_EINVAL);
  ASSERT_EQ(muster_comm_close(NULL), MUSTER_EINVAL);
  /* launchers, by their environment */
  char name[16];
  int rank = -1, size = -1;
  ASSERT_EQ(muster_launcher_detect(name, sizeof name, &rank, &size), 0);
  ASSERT(name[0] == '\0');
  setenv("SLURM_PROCID", "3", 1);
  setenv("SLURM_NTASKS", "8", 1);
  ASSERT_EQ(muster_launcher_detect(name, sizeof name, &rank, &size), 1);
  ASSERT(!strcmp(name, "slurm") && rank == 3 && size == 8);
  setenv("PMI_RANK", "1", 1);
  setenv("PMI_SIZE", "2", 1);
  ASSERT_EQ(muster_launcher_detect(name, sizeof name, &rank, &size), 1);
  ASSERT(!strcmp(name, "pmi") && rank == 1 && size == 2);
  setenv("OMPI_COMM_WORLD_RANK", "0", 1);
  setenv("OMPI_COMM_WORLD_SIZE", "4", 1);
  ASSERT_EQ(muster_launcher_detect(name, sizeof name, NULL, &size), 1);
  ASSERT(!strcmp(name, "openmpi") && size == 4);
  setenv("OMPI_COMM_WORLD_RANK", "4", 1); /* not below its size: not believed */
  ASSERT_EQ(muster_launcher_detect(name, sizeof name, &rank, NULL), 1);
  ASSERT(!strcmp(name, "pmi"));
  setenv("PMI_RANK", "x", 1);
  ASSERT_EQ(muster_launcher_detect(name, sizeof name, &rank, NULL), 1);
  ASSERT(!strcmp(name, "slurm"));
  for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) unsetenv(vars[i]);
  return 0;
}
