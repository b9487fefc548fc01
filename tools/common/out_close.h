/*
 * tools/common/out_close.h - the end of a tool's standard output: what it
 * printed must have reached it.  A full disk, a closed pipe's EIO or
 * `> /dev/full` only show at the flush (or close), and a tool that exits 0
 * then says "done" for output nobody got.  Used by the muster CLI and
 * shmdump.
 */
#ifndef MUSTER_TOOLS_OUT_CLOSE_H
#define MUSTER_TOOLS_OUT_CLOSE_H

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* Flush and close stdout.  Returns rc, or when stdout could not be
 * written (now or before: its error flag) 1 if rc was 0, after a message
 * "WHO: cannot write standard output: REASON" on stderr. */
static inline int out_close(const char *who, int rc) {
  int earlier = ferror(stdout); /* a flush of the tool's own failed: errno is gone */
  int err = fflush(stdout) != 0 ? errno : 0;
  if (fclose(stdout) != 0 && !err) err = errno;
  if (!err && !earlier) return rc;
  if (err) fprintf(stderr, "%s: cannot write standard output: %s\n", who, strerror(err));
  else fprintf(stderr, "%s: cannot write standard output: a write to it failed\n", who);
  return rc ? rc : 1;
}

#endif
