/* runtime/error.c - codes, thread-local messages, stderr logging. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/time.h>
#include <unistd.h>

#include "env.h"
#include "error.h"

#define MSG_CAP 1024
static __thread char last_msg[MSG_CAP];

const char *muster_strerror(int code) {
  switch (code) {
  case MUSTER_OK: return "success";
  case MUSTER_EINVAL: return "invalid argument";
  case MUSTER_ENOMEM: return "out of memory";
  case MUSTER_ENOSPC: return "no space in /dev/shm";
  case MUSTER_EACCES: return "permission denied";
  case MUSTER_EEXIST: return "group already exists";
  case MUSTER_ENOENT: return "not found";
  case MUSTER_ECORRUPT: return "corrupt segment";
  case MUSTER_EVERSION: return "version mismatch";
  case MUSTER_ETIMEDOUT: return "timed out waiting for peers";
  case MUSTER_EPEERDEAD: return "peer died";
  case MUSTER_EPOISONED: return "group poisoned by an earlier failure";
  case MUSTER_EMISMATCH: return "participants disagree";
  case MUSTER_ENOPROVIDER: return "no provider for routine";
  case MUSTER_EPROVIDER: return "provider failed";
  case MUSTER_EUNSUPPORTED: return "not supported";
  case MUSTER_ECUDA: return "CUDA error";
  case MUSTER_ESYS: return "system call failed";
  case MUSTER_ETILE: return "invalid tile size";
  case MUSTER_ENONFINITE: return "NaN or Inf in matrix";
  case MUSTER_EBUSY: return "rank already taken";
  case MUSTER_ENOTPD: return "matrix not positive definite";
  default: return "unknown error";
  }
}

const char *muster_last_error(void) { return last_msg; }

void muster__err_clear(void) { last_msg[0] = '\0'; }

int muster__err(int code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(last_msg, MSG_CAP, fmt, ap);
  va_end(ap);
  muster__log(MUSTER_LOG_ERROR, "%s", last_msg);
  return code;
}

int muster__err_prefix(int code, const char *fmt, ...) {
  char prefix[MSG_CAP], old[MSG_CAP];
  memcpy(old, last_msg, MSG_CAP);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(prefix, MSG_CAP, fmt, ap);
  va_end(ap);
  /* prefix first, then as much of the old message as fits (truncation is
   * fine: the prefix carries the context) */
  size_t n = strnlen(prefix, MSG_CAP - 1);
  memcpy(last_msg, prefix, n);
  snprintf(last_msg + n, MSG_CAP - n, ": %s", old);
  return code;
}

int muster__log_level(void) { return muster__env_log_level(); }

void muster__log(int level, const char *fmt, ...) {
  if (level > muster__log_level()) return;
  static const char *names[] = {"", "error", "warn", "info", "debug"};
  char buf[MSG_CAP + 64];
  int n = snprintf(buf, sizeof buf, "muster[%d] %s: ", (int)getpid(), names[level]);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf + n, sizeof buf - n, fmt, ap);
  va_end(ap);
  size_t len = strlen(buf);
  if (len < sizeof buf - 1) buf[len++] = '\n';
  ssize_t w = write(2, buf, len); /* one write: lines from threads do not interleave */
  (void)w;
}
