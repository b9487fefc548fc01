/*
 * runtime/segment_name.c - segment file names: the job and group rules,
 * "muster.<uid>.<pidns>.<job>.<group>" made and taken apart.  The rules
 * are in segment.h; segment.c creates and attaches the files.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "proc.h"
#include "segment.h"

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

int muster__segment_check_job(const char *job) {
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
  int n = snprintf(buf, cap, MUSTER_SEG_PREFIX "%u.%" PRIu64 ".%s.%s", (unsigned)getuid(), pidns,
                   job, group);
  if (n < 0 || (size_t)n >= cap)
    return muster__err(MUSTER_EINVAL, "segment name for job %s group %s too long", job, group);
  return MUSTER_OK;
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

int muster__segment_parse_name(const char *name, struct muster_seg_name *out) {
  const size_t plen = strlen(MUSTER_SEG_PREFIX);
  struct muster_seg_name n;
  uint64_t uid;
  memset(&n, 0, sizeof n);
  memset(out, 0, sizeof *out);
  if (!name || strncmp(name, MUSTER_SEG_PREFIX, plen) != 0) return MUSTER_EINVAL;
  const char *p = parse_field(name + plen, '.', UINT32_MAX, &uid);
  if (!p || !(p = parse_field(p + 1, '.', UINT64_MAX, &n.pidns)) || n.pidns == 0)
    return MUSTER_EINVAL;
  const char *job = p + 1, *dot = strchr(job, '.');
  size_t jl = dot ? (size_t)(dot - job) : 0;
  if (jl < 1 || jl > MUSTER_MAX_JOB || dot[1] == '\0') return MUSTER_EINVAL;
  memcpy(n.job, job, jl);
  if (!muster__segment_name_chars_ok(n.job, 0)) return MUSTER_EINVAL;
  n.uid = (uint32_t)uid;
  n.group = dot + 1;
  *out = n;
  return MUSTER_OK;
}
