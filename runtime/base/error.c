/* runtime/base/error.c - codes, thread-local messages, stderr logging. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/time.h>
#include <unistd.h>

#include "base/error.h"

#define MSG_CAP 1024
static __thread char last_msg[MSG_CAP];

/* Every function below is generated from MUSTER_ERRNO_MAP (muster/errno.h). */

const char *muster_strerror(int code) {
  switch (code) {
  case MUSTER_OK: return "success";
#define STRERROR_CASE(name, value, meaning, kind) case MUSTER_##name: return meaning;
    MUSTER_ERRNO_MAP(STRERROR_CASE)
#undef STRERROR_CASE
  default: return "unknown error";
  }
}

const char *muster_err_name(int code) {
  switch (code) {
  case MUSTER_OK: return "MUSTER_OK";
#define NAME_CASE(name, value, meaning, kind) case MUSTER_##name: return "MUSTER_" #name;
    MUSTER_ERRNO_MAP(NAME_CASE)
#undef NAME_CASE
  default: return "MUSTER_E?";
  }
}

muster_err_kind_t muster_err_kind(int code) {
  switch (code) {
  case MUSTER_OK: return MUSTER_KIND_OK;
#define KIND_CASE(name, value, meaning, kind) case MUSTER_##name: return MUSTER_KIND_##kind;
    MUSTER_ERRNO_MAP(KIND_CASE)
#undef KIND_CASE
  default: return MUSTER_KIND_INTERNAL;
  }
}

const char *muster_err_kind_name(muster_err_kind_t kind) {
  switch (kind) {
#define KIND_NAME_CASE(NAME, value, name, what) case MUSTER_KIND_##NAME: return name;
    MUSTER_ERR_KIND_MAP(KIND_NAME_CASE)
#undef KIND_NAME_CASE
  default: break;
  }
  return "internal";
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

static const char *const log_names[] = {
    [MUSTER_LOG_ERROR] = "error", [MUSTER_LOG_WARN] = "warn", [MUSTER_LOG_INFO] = "info",
    [MUSTER_LOG_DEBUG] = "debug"};

int muster__log_level_of(const char *s) {
  for (int l = MUSTER_LOG_ERROR; l <= MUSTER_LOG_DEBUG; l++)
    if (!strcasecmp(s, log_names[l])) return l;
  return -1;
}

int muster__log_level(void) {
  /* read each time: cheap, and tests change it at run time; read here, not
   * through env.c, which reports its errors through this file */
  const char *s = getenv("MUSTER_LOG");
  int l = s ? muster__log_level_of(s) : -1;
  return l < 0 ? MUSTER_LOG_OFF : l;
}

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
  buf[len++] = '\n'; /* over the terminator: a truncated line still ends (len < sizeof buf) */
  ssize_t w = write(2, buf, len); /* one write: lines from threads do not interleave */
  (void)w;
}
