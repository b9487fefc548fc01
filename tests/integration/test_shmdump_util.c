/* tests/integration/test_shmdump_util.c - see test_shmdump_util.h. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/proc.h"
#include "shm/segment.h"
#include "task.h"
#include "test_shmdump_util.h"

void tool_path(const char *name, char *buf, size_t cap) {
  char exe[1024];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0) n = 0;
  exe[n] = '\0';
  /* build-X/tests/run-tests -> build-X/bin/NAME, or build-X/DIR/NAME */
  snprintf(buf, cap, "%s/../%s%s", dirname(exe), strchr(name, '/') ? "" : "bin/", name);
}

static void append(char **buf, size_t *len, size_t *cap, const char *data, size_t n) {
  if (*len + n + 1 > *cap) {
    size_t c = *cap ? *cap : 4096;
    while (c < *len + n + 1) c *= 2;
    char *b = realloc(*buf, c);
    if (!b) return;
    *buf = b;
    *cap = c;
  }
  memcpy(*buf + *len, data, n);
  *len += n;
  (*buf)[*len] = '\0';
}

int tool_spawn(const char *name, const char *const *argv, const char *const *env, pid_t *pid,
               int *out_fd, int *err_fd) {
  char path[1200];
  const char *args[64];
  int out[2], err[2], nargs = 0;
  tool_path(name, path, sizeof path);
  args[nargs++] = path;
  for (int i = 0; argv && argv[i] && nargs < 63; i++) args[nargs++] = argv[i];
  args[nargs] = NULL;
  if (pipe(out) != 0) return -1;
  if (pipe(err) != 0) {
    close(out[0]);
    close(out[1]);
    return -1;
  }
  fflush(NULL);
  pid_t p = fork();
  if (p < 0) return -1;
  if (p == 0) {
    dup2(out[1], 1);
    dup2(err[1], 2);
    close(out[0]);
    close(out[1]);
    close(err[0]);
    close(err[1]);
    for (int i = 0; env && env[i]; i++) putenv((char *)env[i]);
    execv(path, (char *const *)args);
    fprintf(stderr, "exec %s: %s\n", path, strerror(errno));
    _exit(127);
  }
  close(out[1]);
  close(err[1]);
  *pid = p;
  *out_fd = out[0];
  *err_fd = err[0];
  return 0;
}

int tool_collect(struct tool_result *r, pid_t pid, int out_fd, int err_fd, double timeout_s) {
  memset(r, 0, sizeof *r);
  double t0 = test_now();
  size_t ocap = 0, ecap = 0;
  append(&r->out, &r->out_len, &ocap, "", 0);
  append(&r->err, &r->err_len, &ecap, "", 0);
  struct pollfd pf[2] = {{out_fd, POLLIN, 0}, {err_fd, POLLIN, 0}};
  int open_fds = 2;
  while (open_fds > 0) {
    double left = timeout_s - (test_now() - t0);
    if (left <= 0) {
      kill(pid, SIGKILL);
      r->timed_out = 1;
      break;
    }
    int n = poll(pf, 2, (int)(left * 1000) + 1);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    for (int i = 0; i < 2; i++) {
      if (pf[i].fd < 0 || !(pf[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      char buf[8192];
      ssize_t k = read(pf[i].fd, buf, sizeof buf);
      if (k > 0) {
        if (i == 0) append(&r->out, &r->out_len, &ocap, buf, (size_t)k);
        else append(&r->err, &r->err_len, &ecap, buf, (size_t)k);
      } else if (k == 0 || errno != EINTR) {
        close(pf[i].fd);
        pf[i].fd = -1;
        open_fds--;
      }
    }
  }
  for (int i = 0; i < 2; i++)
    if (pf[i].fd >= 0) close(pf[i].fd);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  r->seconds = test_now() - t0;
  r->exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r->signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
  return 0;
}

int tool_run(struct tool_result *r, double timeout_s, const char *const *env, const char *name,
             const char *const *argv) {
  pid_t pid;
  int out_fd, err_fd;
  memset(r, 0, sizeof *r);
  if (tool_spawn(name, argv, env, &pid, &out_fd, &err_fd) != 0) return -1;
  return tool_collect(r, pid, out_fd, err_fd, timeout_s);
}

void shmdump_until(struct tool_result *r, const char *const *argv, const char *want) {
  double t0 = test_now();
  for (;;) {
    ASSERT_EQ(tool_run(r, 30, NULL, "shmdump", argv), 0);
    ASSERT_EQ(r->signal, 0);
    ASSERT_EQ(r->exit_code, 0);
    if (strstr(r->out, want)) return;
    if (test_now() - t0 > 15) {
      fprintf(stderr, "shmdump never showed \"%s\"; last output:\n%s\n", want, r->out);
      ASSERT(0);
    }
    tool_result_free(r);
    usleep(100000);
  }
}

void tool_result_free(struct tool_result *r) {
  free(r->out);
  free(r->err);
  r->out = r->err = NULL;
}

/* ---- a strict little JSON checker ---------------------------------------- */

static const char *ws(const char *p) {
  while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') p++;
  return p;
}

static const char *json_value(const char *p, int depth);

static const char *json_string(const char *p) {
  if (*p != '"') return NULL;
  for (p++; *p && *p != '"'; p++) {
    if ((unsigned char)*p < 0x20) return NULL;
    if (*p == '\\') {
      p++;
      if (*p == 'u') {
        for (int i = 1; i <= 4; i++)
          if (!strchr("0123456789abcdefABCDEF", p[i]) || !p[i]) return NULL;
        p += 4;
      } else if (!*p || !strchr("\"\\/bfnrt", *p)) {
        return NULL;
      }
    }
  }
  return *p == '"' ? p + 1 : NULL;
}

static const char *json_number_end(const char *p) {
  const char *s = p;
  if (*p == '-') p++;
  if (*p == '0') p++;
  else if (*p >= '1' && *p <= '9') while (*p >= '0' && *p <= '9') p++;
  else return NULL;
  if (*p == '.') {
    p++;
    if (!(*p >= '0' && *p <= '9')) return NULL;
    while (*p >= '0' && *p <= '9') p++;
  }
  if (*p == 'e' || *p == 'E') {
    p++;
    if (*p == '+' || *p == '-') p++;
    if (!(*p >= '0' && *p <= '9')) return NULL;
    while (*p >= '0' && *p <= '9') p++;
  }
  return p > s ? p : NULL;
}

static const char *json_seq(const char *p, int depth, char close, int keyed) {
  p = ws(p + 1);
  if (*p == close) return p + 1;
  for (;;) {
    if (keyed) {
      p = json_string(ws(p));
      if (!p) return NULL;
      p = ws(p);
      if (*p++ != ':') return NULL;
    }
    p = json_value(p, depth + 1);
    if (!p) return NULL;
    p = ws(p);
    if (*p == close) return p + 1;
    if (*p++ != ',') return NULL;
  }
}

static const char *json_value(const char *p, int depth) {
  if (depth > 64) return NULL;
  p = ws(p);
  switch (*p) {
  case '{': return json_seq(p, depth, '}', 1);
  case '[': return json_seq(p, depth, ']', 0);
  case '"': return json_string(p);
  case 't': return strncmp(p, "true", 4) ? NULL : p + 4;
  case 'f': return strncmp(p, "false", 5) ? NULL : p + 5;
  case 'n': return strncmp(p, "null", 4) ? NULL : p + 4;
  default: return json_number_end(p);
  }
}

int json_valid(const char *s) {
  const char *end = s ? json_value(s, 0) : NULL;
  return end && *ws(end) == '\0';
}

double json_number(const char *s, const char *key) {
  char pat[128];
  snprintf(pat, sizeof pat, "\"%s\":", key);
  const char *p = s ? strstr(s, pat) : NULL;
  if (!p) return NAN;
  char *end;
  double v = strtod(p + strlen(pat), &end);
  return end == p + strlen(pat) ? NAN : v;
}

int count_substr(const char *hay, const char *needle) {
  int n = 0;
  size_t k = strlen(needle);
  for (const char *p = hay; p && (p = strstr(p, needle)) != NULL; p += k) n++;
  return n;
}

static int cmp_pid(const void *a, const void *b) {
  pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;
  return x < y ? -1 : x > y;
}

int tool_children(pid_t parent, pid_t *out, int cap) {
  DIR *d = opendir("/proc");
  int n = 0;
  struct dirent *e;
  char path[300], buf[512];
  while (d && (e = readdir(d)) != NULL) {
    if (e->d_name[0] < '1' || e->d_name[0] > '9') continue;
    snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
    FILE *f = fopen(path, "r");
    if (!f) continue;
    size_t k = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[k] = '\0';
    char *p = strrchr(buf, ')');
    int ppid = 0;
    if (p && sscanf(p + 2, "%*c %d", &ppid) == 1 && ppid == parent) {
      if (n < cap) out[n] = (pid_t)atoi(e->d_name);
      n++;
    }
  }
  if (d) closedir(d);
  qsort(out, (size_t)(n < cap ? n : cap), sizeof *out, cmp_pid);
  return n;
}

char tool_proc_state(pid_t pid) {
  char path[64], buf[512];
  snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
  FILE *f = fopen(path, "r");
  if (!f) return 0;
  size_t k = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[k] = '\0';
  char *p = strrchr(buf, ')');
  return p && p[1] == ' ' ? p[2] : 0;
}

int tool_wait_gone(const pid_t *pids, int n, double timeout_s) {
  double t0 = test_now();
  for (;;) {
    int left = 0;
    for (int i = 0; i < n; i++) {
      char st = tool_proc_state(pids[i]);
      left += st != 0 && st != 'Z' && st != 'X';
    }
    if (left == 0 || test_now() - t0 > timeout_s) return left;
    usleep(10000);
  }
}

pid_t dead_pid(void) {
  pid_t p = fork();
  if (p == 0) _exit(0);
  if (p > 0) waitpid(p, NULL, 0);
  return p;
}

/* ---- crafted segments ----------------------------------------------------- */

void segment_path_in(char *buf, size_t cap, uint64_t pidns, const char *job, const char *group) {
  char name[MUSTER_SEG_NAME_MAX + 1];
  ASSERT_OK(muster_segment_name_format(name, sizeof name, (uint32_t)getuid(), pidns, job, group));
  snprintf(buf, cap, "/dev/shm/%s", name);
}

void segment_path(char *buf, size_t cap, const char *job, const char *group) {
  segment_path_in(buf, cap, muster__proc_self_pidns(), job, group);
}

static uint64_t now_real_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int craft_segment(const char *job, const char *group, int nranks, pid_t creator,
                  uint64_t creator_start, uint64_t seated,
                  void (*mutate)(unsigned char *bytes, size_t len, void *arg), void *arg,
                  size_t write_len) {
  size_t len = muster__segment_size(nranks);
  unsigned char *buf = aligned_alloc(64, (len + 63) & ~(size_t)63);
  if (!buf) return -ENOMEM;
  memset(buf, 0, len);
  struct muster_seg_header *h = (struct muster_seg_header *)buf;
  uint64_t now = now_real_ns();
  h->magic = MUSTER_SEG_MAGIC;
  h->version = MUSTER_SEG_VERSION;
  h->header_size = MUSTER_SEG_HEADER_SIZE;
  h->total_size = len;
  h->slot_size = MUSTER_SEG_SLOT_SIZE;
  h->max_payload = MUSTER_MAX_PAYLOAD;
  h->uid = (uint32_t)getuid();
  h->nranks = nranks;
  h->creator_pid = creator;
  h->creator_start = creator_start;
  h->creator_pidns = muster__proc_self_pidns(); /* as its name says */
  h->created_ns = now - 3000000000ull;
  snprintf(h->job, sizeof h->job, "%s", job);
  snprintf(h->group, sizeof h->group, "%s", group);
  h->seen_mask = seated;
  h->seats = (uint32_t)__builtin_popcountll(seated);
  h->arrived = h->seats;
  for (int r = 0; r < nranks; r++) {
    if (!(seated >> r & 1)) continue;
    struct muster_seg_slot *sl = muster__segment_slot(h, r);
    sl->owner_tid = (uint32_t)creator;
    sl->pid = creator;
    sl->start_time = creator_start;
    sl->pidns = h->creator_pidns;
    sl->tid = creator;
    sl->device = r;
    sl->phase = MUSTER_PHASE_WAITING;
    sl->sessions = 1;
    sl->join_ns = now - 2500000000ull;
    sl->arrive_ns = sl->wait_start_ns = now - 2000000000ull;
    sl->payload_len[0] = 6;
    memcpy(sl->payload[0], "hello!", 6);
  }
  if (mutate) mutate(buf, len, arg);
  char path[512];
  segment_path(path, sizeof path, job, group);
  int rc = 0, fd = open(path, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600);
  if (fd < 0) rc = -errno;
  else {
    size_t want = write_len && write_len < len ? write_len : len;
    if (write(fd, buf, want) != (ssize_t)want) rc = -EIO;
    close(fd);
  }
  free(buf);
  return rc;
}
