/*
 * runtime/base/error.h - errors and logging shared by every runtime module.
 *
 * A failing function sets the thread-local detailed message and returns the
 * code in one step:
 *     return muster__err(MUSTER_ETIMEDOUT, "group %s: ranks %s missing after %.1f s", ...);
 * The message should say who (rank, pid, device), what and where (group,
 * phase).  muster_last_error() returns it.  muster__err_keep() returns a
 * code without touching the message (an inner call already set it);
 * muster__err_prefix() prepends context to the current message.
 *
 * Logging goes to stderr only, and only at or below $MUSTER_LOG's level.
 */
#ifndef MUSTER_ERROR_H
#define MUSTER_ERROR_H

#include <stdarg.h>
#include "muster.h"

#define MUSTER_HIDDEN __attribute__((visibility("hidden")))
#define MUSTER_PRINTF(a, b) __attribute__((format(printf, a, b)))

MUSTER_HIDDEN int muster__err(int code, const char *fmt, ...) MUSTER_PRINTF(2, 3);
MUSTER_HIDDEN int muster__err_prefix(int code, const char *fmt, ...) MUSTER_PRINTF(2, 3);
MUSTER_HIDDEN void muster__err_clear(void);
#define muster__err_keep(code) (code)

enum { MUSTER_LOG_OFF = 0, MUSTER_LOG_ERROR, MUSTER_LOG_WARN, MUSTER_LOG_INFO, MUSTER_LOG_DEBUG };
/* The level of a MUSTER_LOG value (error|warn|info|debug, any case), -1
 * when it is none. */
MUSTER_HIDDEN int muster__log_level_of(const char *s);
/* The level for muster__log: MUSTER_LOG_OFF when MUSTER_LOG is unset or
 * invalid (never sets a message: logging must not change the last error). */
MUSTER_HIDDEN int muster__log_level(void);
MUSTER_HIDDEN void muster__log(int level, const char *fmt, ...) MUSTER_PRINTF(2, 3);

/* check-and-goto (NCCL style): on a negative rc, jump to the one cleanup
 * label `out` with rc set. */
#define MUSTER_CHECK(call)                                                     \
  do {                                                                         \
    rc = (call);                                                               \
    if (rc < 0) goto out;                                                      \
  } while (0)

#endif
