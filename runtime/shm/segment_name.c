/*
 * runtime/shm/segment_name.c - segment file names: the job and group rules,
 * "muster.<uid>.<pidns>.<job>.<group>" made and taken apart (the public
 * muster_segment_name_* of include/muster/segment.h are the one parser and
 * the one formatter: tools, tests and adapters call them), and the
 * segments of a folder listed.  segment.c creates and attaches the files.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/proc.h"
#include "base/env.h"
#include "shm/segment.h"

int muster__segment_name_chars_ok(const char *s, int allow_dot) {
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c <= 0x20 || c >= 0x7f || c == '/') return 0;
    if (!allow_dot && c == '.') return 0;
  }
  return 1;
}

static int all_dots(const char *s) {
  for (; *s; s++)
    if (*s != '.') return 0;
  return 1;
}

int muster_segment_check_job(const char *job) {
  if (!job) return muster__err(MUSTER_EINVAL, "job name is NULL");
  size_t n = strnlen(job, MUSTER_MAX_JOB + 1);
  if (n == 0) return muster__err(MUSTER_EINVAL, "job name is empty");
  if (n > MUSTER_MAX_JOB)
    return muster__err(MUSTER_EINVAL, "job name is longer than %d bytes", MUSTER_MAX_JOB);
  if (!muster__segment_name_chars_ok(job, 0))
    return muster__err(MUSTER_EINVAL,
                       "job name \"%.*s\" has a '/', '.', space or non-printable byte "
                       "(allowed: printable ASCII except '/', '.' and space)",
                       MUSTER_MAX_JOB, job);
  return MUSTER_OK;
}

int muster__env_job(const char **job) {
  const char *s;
  int rc = muster__env_get("MUSTER_JOB", &s);
  if (rc < 0) return rc;
  *job = s ? s : MUSTER_DEFAULT_JOB;
  rc = s ? muster_segment_check_job(s) : MUSTER_OK;
  if (rc < 0)
    return muster__err_prefix(rc, "MUSTER_JOB '%.48s'%s", s, strlen(s) > 48 ? "..." : "");
  return rc;
}

int muster__segment_check_group(const char *group) {
  if (!group) return muster__err(MUSTER_EINVAL, "group name is NULL");
  size_t n = strnlen(group, MUSTER_MAX_NAME + 1);
  if (n == 0) return muster__err(MUSTER_EINVAL, "group name is empty");
  if (n > MUSTER_MAX_NAME)
    return muster__err(MUSTER_EINVAL, "group name is longer than %d bytes", MUSTER_MAX_NAME);
  if (!muster__segment_name_chars_ok(group, 1))
    return muster__err(MUSTER_EINVAL,
                       "group name \"%.*s\" has a '/', space or non-printable byte",
                       MUSTER_MAX_NAME, group);
  if (all_dots(group))
    return muster__err(MUSTER_EINVAL, "group name \"%s\" is only dots", group);
  return MUSTER_OK;
}

int muster__segment_name_in(char *buf, size_t cap, uint64_t pidns, const char *job,
                            const char *group) {
  if (pidns == 0)
    return muster__err(MUSTER_EINVAL, "segment name for job %s group %s: pid namespace 0", job,
                       group);
  return muster_segment_name_format(buf, cap, (uint32_t)getuid(), pidns, job, group);
}

int muster__segment_pidns(uint64_t *ns) {
  *ns = muster__proc_self_pidns();
  if (*ns == 0)
    return muster__err(MUSTER_ESYS, "cannot tell the pid namespace of pid %d (/proc/self/ns/pid "
                       "is unreadable): group names include it, so joining needs /proc",
                       (int)muster__proc_self_pid());
  return MUSTER_OK;
}

int muster__segment_name(char *buf, size_t cap, const char *job, const char *group) {
  uint64_t ns;
  int rc = muster__segment_pidns(&ns);
  return rc < 0 ? rc : muster__segment_name_in(buf, cap, ns, job, group);
}

int muster_segment_self_pidns(uint64_t *ns) { return muster__segment_pidns(ns); }

int muster_segment_name_format(char *buf, size_t cap, uint32_t uid, uint64_t pidns,
                               const char *job, const char *group) {
  /* what the parser needs to take the name apart again: a valid job, a
   * non-empty group that stays one file name; join's stricter group rule
   * (muster__segment_check_group) is join's, so tests and tools can name
   * the hostile files a scanner must survive */
  int rc = muster_segment_check_job(job);
  if (rc == MUSTER_OK && (!group || !group[0] || strchr(group, '/')))
    rc = muster__err(MUSTER_EINVAL, "segment name for job %s: group \"%s\" is empty or has a '/'",
                     job, group ? group : "(null)");
  if (rc == MUSTER_OK && pidns == 0) rc = muster__segment_pidns(&pidns);
  if (rc < 0) return rc;
  int n = snprintf(buf, cap, MUSTER_SEG_PREFIX "%" PRIu32 ".%" PRIu64 ".%s.%s", uid, pidns, job,
                   group);
  if (n < 0 || (size_t)n >= cap)
    return muster__err(MUSTER_EINVAL, "segment name for job %s group %s too long (%d bytes, room for %zu)",
                       job, group, n, cap);
  return MUSTER_OK;
}

/* A decimal field of a name ending at `stop`: digits only, no leading zero
 * (one spelling per value), at most max.  Returns the end, or NULL. */
static const char *parse_field(const char *p, char stop, uint64_t max, uint64_t *v) {
  const char *q = p;
  *v = 0;
  for (; *q >= '0' && *q <= '9'; q++) {
    unsigned d = (unsigned)(*q - '0');
    if (*v > (max - d) / 10) return NULL;
    *v = *v * 10 + d;
  }
  if (q == p || *q != stop || (*p == '0' && q - p > 1)) return NULL;
  return q;
}

/* The job (1..MUSTER_MAX_JOB bytes up to the next '.', job characters) and
 * the non-empty group after it, from p on; 0 on success. */
static int parse_job_group(const char *p, muster_segment_name_t *n) {
  const char *dot = strchr(p, '.');
  size_t jl = dot ? (size_t)(dot - p) : 0;
  if (jl < 1 || jl > MUSTER_MAX_JOB || dot[1] == '\0') return -1;
  memcpy(n->job, p, jl);
  if (!muster__segment_name_chars_ok(n->job, 0)) return -1;
  snprintf(n->group, sizeof n->group, "%s", dot + 1);
  return 0;
}

int muster_segment_name_parse(const char *name, muster_segment_name_t *out) {
  const size_t plen = strlen(MUSTER_SEG_PREFIX);
  muster_segment_name_t n;
  uint64_t uid;
  memset(&n, 0, sizeof n);
  memset(out, 0, sizeof *out);
  if (!name || strncmp(name, MUSTER_SEG_PREFIX, plen) != 0 ||
      strnlen(name, MUSTER_SEGMENT_FILE_MAX + 1) > MUSTER_SEGMENT_FILE_MAX)
    return MUSTER_EINVAL;
  const char *p = parse_field(name + plen, '.', UINT32_MAX, &uid);
  if (!p || !(p = parse_field(p + 1, '.', UINT64_MAX, &n.pidns)) || n.pidns == 0)
    return MUSTER_EINVAL;
  if (parse_job_group(p + 1, &n) != 0) return MUSTER_EINVAL;
  n.uid = (uint32_t)uid;
  snprintf(n.file, sizeof n.file, "%s", name);
  *out = n;
  return MUSTER_OK;
}

/* 1 when the parsed name n meets (want, job) (muster_segment_name_match). */
static int name_meets(const muster_segment_name_t *n, unsigned want, const char *job) {
  if ((want & MUSTER_SEGMENT_MINE) && n->uid != (uint32_t)getuid()) return 0;
  if ((want & MUSTER_SEGMENT_HERE) &&
      (muster__proc_self_pidns() == 0 || n->pidns != muster__proc_self_pidns()))
    return 0;
  return !job || strcmp(n->job, job) == 0;
}

int muster_segment_name_match(const char *name, unsigned want, const char *job) {
  muster_segment_name_t n;
  return muster_segment_name_parse(name, &n) == MUSTER_OK && name_meets(&n, want, job);
}

int muster_segment_list(const char *dir, unsigned want, const char *job,
                        muster_segment_name_t *out, int cap) {
  if (!dir) dir = muster__segment_dir();
  DIR *d = opendir(dir);
  if (!d) return muster__err(MUSTER_ESYS, "cannot list segments in %s: %s", dir, strerror(errno));
  int count = 0;
  struct dirent *e;
  muster_segment_name_t n;
  while ((e = readdir(d)) != NULL) {
    if (muster_segment_name_parse(e->d_name, &n) != MUSTER_OK || !name_meets(&n, want, job))
      continue;
    if (out && count < cap) out[count] = n;
    if (count < INT32_MAX) count++;
  }
  closedir(d);
  return count;
}
