/*
 * tests/integration/test_pidns.c - isolation across pid namespaces that
 * share /dev/shm (containers): jobs with the same MUSTER_JOB and group
 * names, each in its own pid namespace, where every rank's pid and tid
 * (2, 3, 4, ...) equals one of the other namespace's.  Each must meet only
 * its own ranks (segment names carry the pid namespace: segment.h).  The
 * group rounds, a solve, a child that inherits its parent's cached group,
 * shmdump listing both namespaces, and a namespace whose /proc is still
 * ours (`unshare -pf` without --mount-proc); /dev/shm clean after each.
 */
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "group/group.h"
#include "base/proc.h"
#include "shm/segment.h"
#include "task.h"
#include "test_group_util.h"
#include "test_pidns_util.h"
#include "test_shmdump_util.h"
#include "test_solve.h"

#define ISO_RANKS 4
#define ISO_CYCLES 3    /* join, rounds, leave: the second joins go through the cache */
#define ISO_ROUNDS 700
#define ISO_REPEATS 3

/* One rank's payload: who published it, for which round. */
struct iso_msg {
  uint64_t pidns;
  int32_t rank, round, cycle;
  char fill[44];
};

static int check_payloads(muster_group_t *g, int rank, int nranks, const struct iso_msg *want) {
  for (int r = 0; r < nranks; r++) {
    const void *d;
    size_t len;
    struct iso_msg got;
    RCHECK(muster_group_payload(g, r, &d, &len) == 0 && len == sizeof got);
    memcpy(&got, d, sizeof got);
    if (got.pidns != want->pidns || got.rank != r || got.round != want->round ||
        got.cycle != want->cycle) {
      fprintf(stderr, "rank %d of pid namespace %llu, round %d of cycle %d: the payload of rank "
              "%d came from rank %d of pid namespace %llu, round %d of cycle %d\n", rank,
              (unsigned long long)want->pidns, want->round, want->cycle, r, got.rank,
              (unsigned long long)got.pidns, got.round, got.cycle);
      return 1;
    }
  }
  return 0;
}

/* Join `group`, `rounds` exchanges of m (its round set to each) with every
 * payload checked, leave. */
static int checked_rounds(const char *group, int rank, int nranks, struct iso_msg *m,
                          int rounds) {
  muster_group_opts_t o = {.job = NULL, .timeout_s = 10, .device = -1};
  muster_group_t *g;
  RCHECK(m->pidns != 0);
  RCHECK(muster_group_join(group, rank, nranks, &o, &g) == 0);
  for (m->round = 0; m->round < rounds; m->round++) {
    RCHECK(muster_group_exchange(g, m, sizeof *m) == 0);
    if (check_payloads(g, rank, nranks, m)) return 1;
  }
  RCHECK(muster_group_leave(g) == 0);
  return 0;
}

static struct iso_msg msg_of(int rank) {
  struct iso_msg m;
  memset(&m, 0, sizeof m);
  m.pidns = muster__proc_self_pidns();
  m.rank = rank;
  return m;
}

/* Cycles of join, rounds, leave in group "iso". */
static int iso_rank(int rank, int nranks, void *arg) {
  struct iso_msg m = msg_of(rank);
  for (m.cycle = 0; m.cycle < ISO_CYCLES; m.cycle++)
    if (checked_rounds("iso", rank, nranks, &m, ISO_ROUNDS)) return 1;
  return 0;
}

static int iso_namespace(int index, void *arg) {
  return run_procs(ISO_RANKS, iso_rank, NULL);
}

/* The reproduction of issue 11 defect 2: two `muster rendezvous --mode
 * processes` at once, each in its own pid namespace, same job and group. */
TEST_IMPL(group_pidns_isolation) {
  int codes[2];
  for (int rep = 0; rep < ISO_REPEATS; rep++)
    ASSERT_EQ(pidns_run(2, 1, iso_namespace, NULL, codes), 0);
  ASSERT_EQ(test_count_job_segments(test_job()), 0);
  return 0;
}

/* The same for collective solves: lapack, processes mode; both
 * namespaces name their groups sv1_0, sv1_1 (pid 1).  One OpenBLAS thread
 * per rank: six ranks share the machine's cores. */
static int solve_namespace(int index, void *arg) {
  setenv("OPENBLAS_NUM_THREADS", "1", 1);
  for (int k = 0; k < 2; k++)
    sv_expect_ok(MUSTER_POTRS, MUSTER_F64, 240 + 16 * k, 3, 1, 0, 1000 + 10 * index + k);
  return 0;
}

TEST_IMPL(solve_pidns_isolation) {
  int codes[2];
  for (int rep = 0; rep < 2; rep++) ASSERT_EQ(pidns_run(2, 1, solve_namespace, NULL, codes), 0);
  ASSERT_EQ(test_count_job_segments(test_job()), 0);
  return 0;
}

/* ---- a child inherits its parent's cached group ------------------------ */

/* 1 if a /proc/self/maps line maps a segment of ours of pid namespace ns
 * (its name taken apart by the runtime's parser, muster/segment.h). */
static int maps_segment_of(char *line, uint64_t ns) {
  char *name = strstr(line, "/dev/shm/");
  if (!name) return 0;
  name += strlen("/dev/shm/");
  name[strcspn(name, " \n")] = '\0'; /* drop " (deleted)" and the newline */
  muster_segment_name_t n;
  return muster_segment_name_parse(name, &n) == MUSTER_OK && n.uid == (uint32_t)getuid() &&
         n.pidns == ns;
}

/* Mappings of /dev/shm segments of pid namespace ns in this process. */
static int maps_of_pidns(uint64_t ns) {
  char line[1024];
  FILE *f = fopen("/proc/self/maps", "r");
  ASSERT(f != NULL);
  int n = 0;
  while (fgets(line, sizeof line, f)) n += maps_segment_of(line, ns);
  fclose(f);
  return n;
}

/* Two threads exchange in group "pidns". */
static int pair_rank(int rank, int nranks, void *arg) {
  struct iso_msg m = msg_of(rank);
  return checked_rounds("pidns", rank, nranks, &m, 300);
}

static int inherited_namespace(int index, void *arg) {
  uint64_t parent_ns = *(const uint64_t *)arg;
  ASSERT(muster__proc_self_pidns() != parent_ns);
  ASSERT_EQ(muster__group_cache_count(), 1); /* the parent's "pidns", through fork */
  ASSERT_EQ(maps_of_pidns(parent_ns), 1);
  ASSERT_EQ(run_threads(2, pair_rank, NULL), 0);
  /* its own segment took the inherited entry's place, which is unmapped */
  ASSERT_EQ(muster__group_cache_count(), 1);
  ASSERT_EQ(maps_of_pidns(parent_ns), 0);
  ASSERT_EQ(maps_of_pidns(muster__proc_self_pidns()), 1);
  muster_group_cache_flush();
  return 0;
}

/* A process in another pid namespace never sits in our segments, not even
 * a child that inherited our cache through fork (unshare(CLONE_NEWPID),
 * fork): its "pidns" group is its own, and both run at once.  (This test
 * used to check that such a peer, then seated in our segment, was never
 * judged dead by its pid; it can no longer be seated there.) */
TEST_IMPL(group_other_pid_namespace) {
  uint64_t ns = muster__proc_self_pidns();
  ASSERT(ns != 0);
  ASSERT_EQ(run_threads(2, pair_rank, NULL), 0);
  ASSERT_EQ(muster__group_cache_count(), 1); /* formed, healthy, cached */
  pid_t pid;
  int code;
  pidns_spawn(1, 1, inherited_namespace, &ns, &pid);
  ASSERT_EQ(run_threads(2, pair_rank, NULL), 0); /* the cached segment, meanwhile */
  ASSERT_EQ(pidns_wait(1, &pid, &code), 0);
  ASSERT_EQ(maps_of_pidns(ns), 1);
  muster_group_cache_flush();
  ASSERT_EQ(test_count_job_segments(test_job()), 0);
  return 0;
}

/* ---- a pid namespace that kept our /proc ------------------------------ */

static void nap_ms(int ms) { usleep((useconds_t)ms * 1000); }

/* Two ranks take turns to wait, so each judges a live peer's liveness;
 * rank 1 comes late and judges the creator's at attach. */
static int turns_rank(int rank, int nranks, void *arg) {
  muster_group_opts_t o = {.job = NULL, .timeout_s = 5, .device = -1};
  muster_group_t *g;
  if (rank == 1) nap_ms(150);
  RCHECK(muster_group_join("turns", rank, nranks, &o, &g) == 0);
  for (int k = 0; k < 6; k++) {
    if (rank == k % 2) nap_ms(150);
    RCHECK(muster_group_barrier(g) == 0);
  }
  RCHECK(muster_group_leave(g) == 0);
  return 0;
}

/* Rank 0 of "dies" waits for rank 1, which is SIGKILLed: found dead. */
static int dies_rank(int rank, int nranks, void *arg) {
  muster_group_opts_t o = {.job = NULL, .timeout_s = 20, .device = -1};
  muster_group_t *g;
  RCHECK(muster_group_join("dies", rank, nranks, &o, &g) == 0);
  if (rank == 1) pause();
  double t0 = test_now();
  RCHECK(muster_group_barrier(g) == MUSTER_EPEERDEAD);
  RCHECK(test_now() - t0 < 3.0);
  RCHECK(strstr(muster_last_error(), "rank 1 (pid ") != NULL);
  muster_group_leave(g);
  return 0;
}

/* pid 1 of a namespace whose /proc is still ours: there /proc/PID is some
 * process of our namespace, or none, so liveness may only ask kill(). */
static int foreign_proc_namespace(int index, void *arg) {
  ASSERT(getpid() == 1 && !muster__proc_is_ours());
  /* make the ranks' pids ones that this /proc does not show: a stat read
   * there would call them dead (as it did before) */
  char path[64];
  for (int i = 0; i < 20000; i++) {
    int next = i + 2, free_ = 1;
    for (int k = 0; k < 2 && free_; k++) {
      snprintf(path, sizeof path, "/proc/%d", next + k);
      free_ = access(path, F_OK) != 0;
    }
    if (free_) break;
    pid_t p = fork();
    ASSERT(p >= 0);
    if (p == 0) _exit(0);
    ASSERT_EQ(waitpid(p, NULL, 0), p);
  }
  ASSERT_EQ(run_procs(2, turns_rank, NULL), 0);
  pid_t pids[2];
  fork_ranks(2, dies_rank, NULL, pids);
  nap_ms(300);
  kill(pids[1], SIGKILL);
  ASSERT_EQ(waitpid(pids[1], NULL, 0), pids[1]); /* a zombie exists for kill() */
  pids[1] = 0;
  ASSERT_EQ(wait_ranks(2, pids), 0);
  ASSERT_EQ(muster__proc_start_time(1), 0); /* unknown, not some other process's */
  return 0;
}

/* `unshare -pf` without --mount-proc: a live peer or creator was judged
 * dead by another process's /proc/PID/stat (the group split in two, or
 * was poisoned); now liveness there is kill(pid, 0) only, and a killed
 * rank is still found dead once reaped. */
TEST_IMPL(group_pidns_foreign_proc) {
  int code;
  ASSERT(muster__proc_is_ours());
  ASSERT_EQ(pidns_run(1, 0, foreign_proc_namespace, NULL, &code), 0);
  ASSERT_EQ(test_count_job_segments(test_job()), 0);
  return 0;
}

/* ---- shmdump sees both namespaces ------------------------------------- */

struct two_ns {
  uint64_t ns[2];
  pid_t rank_pid[2]; /* in its namespace: 2, or 3 when a sanitizer thread took 2 */
  int ready[2];
  int done;
};

static int flag(const int *p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }

/* pid 1 of a namespace: its rank 0 waits in group "stuck" for a rank 1
 * that never comes; shmdump here sees it alive and ours. */
static int stuck_namespace(int index, void *arg) {
  struct two_ns *sh = arg;
  uint64_t ns = muster__proc_self_pidns();
  sh->ns[index] = ns;
  pid_t rank = fork();
  ASSERT(rank >= 0);
  if (rank == 0) {
    muster_group_opts_t o = {.job = NULL, .timeout_s = 25, .device = -1};
    muster_group_t *g;
    int v = index;
    if (muster_group_join("stuck", 0, 2, &o, &g) == 0) muster_group_exchange(g, &v, sizeof v);
    _exit(1);
  }
  sh->rank_pid[index] = rank;
  char want[160];
  struct tool_result r;
  const char *dump[] = {"--job", test_job(), NULL};
  /* wait for rank 0's row, not for the namespace line: a segment still
   * being created (no magic yet) prints that line too, and no rows (a CI
   * run caught it there) */
  snprintf(want, sizeof want, "   %-4d %-8d %-6s", 0, (int)rank, "alive");
  shmdump_until(&r, dump, want);
  snprintf(want, sizeof want, "pid namespace %llu (ours)", (unsigned long long)ns);
  ASSERT_STR_CONTAINS(r.out, want);
  tool_result_free(&r);
  __atomic_store_n(&sh->ready[index], 1, __ATOMIC_RELEASE);
  for (double t0 = test_now(); !flag(&sh->done) && test_now() - t0 < 20;) usleep(10000);
  ASSERT(flag(&sh->done));
  /* its rank dies: stale in this namespace, where --clean removes it; the
   * other namespace's cannot be judged from here and stays */
  kill(rank, SIGKILL);
  ASSERT_EQ(waitpid(rank, NULL, 0), rank);
  const char *clean[] = {"--clean", "--job", test_job(), NULL};
  shmdump_until(&r, clean, "clean: removed 1 segment\n");
  char path[512];
  segment_path(path, sizeof path, test_job(), "stuck");
  ASSERT_STR_CONTAINS(r.out, path);
  ASSERT(access(path, F_OK) != 0);
  tool_result_free(&r);
  return 0;
}

TEST_IMPL(shmdump_two_pid_namespaces) {
  struct two_ns *sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
                           -1, 0);
  ASSERT(sh != MAP_FAILED);
  memset(sh, 0, sizeof *sh);
  pid_t pids[2];
  int codes[2];
  pidns_spawn(2, 1, stuck_namespace, sh, pids);
  for (double t0 = test_now(); !(flag(&sh->ready[0]) && flag(&sh->ready[1]));) {
    ASSERT(test_now() - t0 < 20);
    usleep(10000);
  }
  ASSERT(sh->ns[0] != sh->ns[1] && sh->ns[0] != muster__proc_self_pidns());
  /* from here both are another namespace's: listed, liveness unknown */
  struct tool_result r;
  char want[256];
  const char *dump[] = {"--job", test_job(), NULL};
  ASSERT_EQ(tool_run(&r, 30, NULL, "shmdump", dump), 0);
  ASSERT_STR_CONTAINS(r.out, "shmdump: 2 muster segments");
  for (int i = 0; i < 2; i++) {
    char path[512];
    segment_path_in(path, sizeof path, sh->ns[i], test_job(), "stuck");
    snprintf(want, sizeof want, "== %s  [", strrchr(path, '/') + 1);
    ASSERT_STR_CONTAINS(r.out, want);
    snprintf(want, sizeof want, "pid namespace %llu (another one: liveness unknown)",
             (unsigned long long)sh->ns[i]);
    ASSERT_STR_CONTAINS(r.out, want);
  }
  for (int i = 0; i < 2; i++) {
    snprintf(want, sizeof want, "   %-4d %-8d %-6s", 0, (int)sh->rank_pid[i], "unknown");
    ASSERT_STR_CONTAINS(r.out, want);
  }
  ASSERT(strstr(r.out, "DEAD") == NULL && strstr(r.out, "[stale]") == NULL);
  tool_result_free(&r);
  const char *json[] = {"--json", "--clean", "--job", test_job(), NULL};
  ASSERT_EQ(tool_run(&r, 30, NULL, "shmdump", json), 0);
  ASSERT(json_valid(r.out));
  ASSERT_EQ(json_number(r.out, "count"), 2);
  ASSERT_EQ(count_substr(r.out, "\"other_pidns\":true"), 2);
  ASSERT_EQ(count_substr(r.out, "\"alive\":null"), 4); /* creator and rank 0, twice */
  ASSERT_STR_CONTAINS(r.out, "\"removed\":[]");
  tool_result_free(&r);
  ASSERT_EQ(test_count_job_segments(test_job()), 2);
  __atomic_store_n(&sh->done, 1, __ATOMIC_RELEASE);
  ASSERT_EQ(pidns_wait(2, pids, codes), 0);
  ASSERT_EQ(test_count_job_segments(test_job()), 0);
  munmap(sh, sizeof *sh);
  return 0;
}
