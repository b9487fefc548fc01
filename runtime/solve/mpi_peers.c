/*
 * runtime/solve/mpi_peers.c - the other ranks of this MPI job on this node, found
 * through /proc (mpiInt.h), and the watch of a wait that MPI's messages
 * cannot cover (MPI_Init, MPI_Finalize): on one node the ranks that mpirun
 * started can see each other's /proc, so a stopped one is named as the
 * group barrier names it; ranks on other nodes are out of sight, and only
 * the timeout covers them.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "solve/mpiInt.h"
#include "base/proc.h"

#define ENVIRON_MAX (256 * 1024) /* more than any launcher's environment */
#define RESCAN_NS 1000000000ull

/* The value of `name` in a NUL-separated environment (NULL when absent). */
static const char *env_in(const char *env, size_t len, const char *name) {
  size_t nl = strlen(name);
  for (size_t i = 0; i < len;) {
    const char *e = env + i;
    size_t el = strnlen(e, len - i);
    if (el > nl && !strncmp(e, name, nl) && e[nl] == '=') return e + nl + 1;
    i += el + 1;
  }
  return NULL;
}

/* The job's variables' values, joined (the same test for us and them). */
static void job_key(const muster__launcher_t *L, const char *env, size_t len, char *out, size_t cap) {
  out[0] = '\0';
  for (int i = 0; i < 2 && L->job[i]; i++) {
    const char *v = env ? env_in(env, len, L->job[i]) : getenv(L->job[i]);
    size_t at = strlen(out);
    snprintf(out + at, cap - at, "%.100s;", v ? v : "");
  }
}

/* The inode of /proc/PID/ns/uts (pid 0: ours); 0 when unknown.  Ranks of
 * one node share it: a process in another UTS namespace (a container with
 * its own host name) counts as another node. */
static uint64_t uts_of(pid_t pid) {
  char path[64];
  struct stat st;
  if (pid) snprintf(path, sizeof path, "/proc/%d/ns/uts", (int)pid);
  else snprintf(path, sizeof path, "/proc/self/ns/uts");
  return stat(path, &st) == 0 ? (uint64_t)st.st_ino : 0;
}

/* pid's environment into buf (NUL-terminated as read); its length, or 0. */
static size_t read_environ(pid_t pid, char *buf, size_t cap) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/environ", (int)pid);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  size_t got = 0;
  ssize_t k;
  while (got < cap - 1 && (k = read(fd, buf + got, cap - 1 - got)) > 0) got += (size_t)k;
  close(fd);
  buf[got] = '\0';
  return got;
}

/* Record (rank, pid) in l; a rank seen twice keeps the stopped process,
 * else the younger (a wrapper script's child starts after it). */
static void record(muster__mpi_local_t *l, const muster__mpi_local_t *old, int rank, pid_t pid) {
  uint64_t start = muster__proc_start_time(pid);
  int i = 0;
  while (i < l->n && l->p[i].rank != rank) i++;
  if (i < l->n) {
    int keep_old = muster__proc_stopped(l->p[i].pid, l->p[i].start) ||
                   (!muster__proc_stopped(pid, start) && l->p[i].start > start);
    if (keep_old) return;
  } else if (l->n == MUSTER_MAX_RANKS) {
    return;
  } else {
    l->n++;
  }
  l->p[i].rank = rank;
  l->p[i].pid = pid;
  l->p[i].start = start;
  l->p[i].stopped_since = 0;
  for (int j = 0; j < old->n; j++) /* the same process: keep its clock */
    if (old->p[j].pid == pid && old->p[j].start == start) l->p[i].stopped_since = old->p[j].stopped_since;
}

void muster__mpi_local_scan(muster__mpi_local_t *l) {
  int me = -1, world = 0;
  const muster__launcher_t *L = muster__launcher_find(&me, &world);
  muster__mpi_local_t old = *l;
  l->me = me;
  l->world = world;
  l->n = 0;
  l->scanned_ns = muster__now_mono_ns();
  if (!L || !L->job[0] || !muster__proc_is_ours()) return;
  char mine[256], theirs[256], *env = malloc(ENVIRON_MAX);
  DIR *d = env ? opendir("/proc") : NULL;
  job_key(L, NULL, 0, mine, sizeof mine);
  uint64_t uts = uts_of(0);
  struct dirent *e;
  while (d && (e = readdir(d)) != NULL) {
    char *end;
    long pid = strtol(e->d_name, &end, 10);
    struct stat st;
    char path[64];
    if (*end || pid <= 0 || pid > INT32_MAX || pid == muster__proc_self_pid()) continue;
    snprintf(path, sizeof path, "/proc/%ld", pid);
    if (stat(path, &st) < 0 || st.st_uid != getuid() || uts_of((pid_t)pid) != uts) continue;
    size_t len = read_environ((pid_t)pid, env, ENVIRON_MAX);
    const char *rank = len ? env_in(env, len, L->rank) : NULL;
    if (!rank) continue;
    job_key(L, env, len, theirs, sizeof theirs);
    long r = strtol(rank, &end, 10);
    if (*end || r < 0 || r >= world || r == me || strcmp(mine, theirs)) continue;
    record(l, &old, (int)r, (pid_t)pid);
  }
  if (d) closedir(d);
  free(env);
}

/* "1,3" of the ranks in 0..world-1 that are neither me nor found. */
static int unseen(const muster__mpi_local_t *l, char *out, size_t cap) {
  int count = 0;
  out[0] = '\0';
  for (int r = 0; r < l->world && r < MUSTER_MAX_RANKS; r++) {
    int seen = r == l->me;
    for (int i = 0; i < l->n && !seen; i++) seen = l->p[i].rank == r;
    if (seen) continue;
    size_t at = strlen(out);
    snprintf(out + at, cap - at, "%s%d", count++ ? "," : "", r);
  }
  return count;
}

int muster__mpi_local_check(muster__mpi_local_t *l, const char *what, double waited, double timeout) {
  uint64_t now = muster__now_mono_ns();
  if (!l->scanned_ns || now - l->scanned_ns > RESCAN_NS) muster__mpi_local_scan(l);
  char host[64] = "?", who[512] = "", ranks[256];
  gethostname(host, sizeof host - 1);
  double longest = 0;
  for (int i = 0; i < l->n; i++) {
    if (!muster__proc_stopped(l->p[i].pid, l->p[i].start)) {
      l->p[i].stopped_since = 0;
      continue;
    }
    if (!l->p[i].stopped_since) l->p[i].stopped_since = now;
    double secs = (now - l->p[i].stopped_since) * 1e-9;
    if (timeout <= 0 || secs <= timeout) continue;
    size_t at = strlen(who);
    snprintf(who + at, sizeof who - at, "%srank %d (pid %d on %s)", at ? ", " : "", l->p[i].rank,
             (int)l->p[i].pid, host);
    if (secs > longest) longest = secs;
  }
  if (who[0])
    return muster__err(MUSTER_ETIMEDOUT, "%s has been stopped (SIGSTOP or a debugger) for %.1f s, more than "
                       "MUSTER_TIMEOUT (%g s), while rank %d (pid %d on %s) waited in %s", who, longest,
                       timeout, l->me, (int)muster__proc_self_pid(), host, what);
  if (timeout <= 0 || waited <= timeout) return 0;
  if (l->world <= 0)
    return muster__err(MUSTER_ETIMEDOUT, "pid %d on %s has waited %.1f s (MUSTER_TIMEOUT) in %s, and no "
                       "launcher's variables say which processes are its peers: one is stopped or stuck",
                       (int)muster__proc_self_pid(), host, waited, what);
  int n = unseen(l, ranks, sizeof ranks);
  if (n == 0) return 0; /* every peer is here and running: slow, not stopped */
  return muster__err(MUSTER_ETIMEDOUT, "rank %d (pid %d on %s) has waited %.1f s (MUSTER_TIMEOUT) in %s: "
                     "rank%s %s %s not on this node (out of its sight: stopped, stuck or never started)%s",
                     l->me, (int)muster__proc_self_pid(), host, waited, what, n > 1 ? "s" : "", ranks,
                     n > 1 ? "are" : "is", l->n ? "; the others, on this node, are running" : "");
}
