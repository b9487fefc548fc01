/*
 * runtime/registry/provider_path.h - the folders the registry looks for provider
 * files in, and the files of one routine there (private to
 * runtime/registry/registry.c).
 */
#ifndef MUSTER_PROVIDER_PATH_H
#define MUSTER_PROVIDER_PATH_H

#include <limits.h>
#include <sys/stat.h>

#include "base/error.h"

/* The provider folders, in search order, as real paths without
 * duplicates, into dirs[0..*n-1] (dirs has MUSTER_MAX_PROVIDER_DIRS
 * rows): the folders of MUSTER_PROVIDER_PATH that exist, or when it is
 * unset <dir>/muster/providers and <dir>/../lib/muster/providers beside
 * libmuster.so (dladdr on one of its symbols; in a statically linked
 * program the executable) and beside the executable.  MUSTER_OK, or
 * MUSTER_EINVAL when MUSTER_PROVIDER_PATH is malformed (env.c) and
 * MUSTER_ENOMEM, each with its message. */
MUSTER_HIDDEN int muster__provider_search_dirs(char dirs[][PATH_MAX], int *n);

/* One provider file of a routine: <dir>/<routine>/<backend>.so. */
typedef struct muster__provider_found {
  char backend[32];
  char path[PATH_MAX + 320];
  struct stat st; /* its identity when listed */
} muster__provider_found_t;

/* The provider files of `routine` in dirs[0..ndirs-1], at most cap into
 * f: the first folder on the path wins for each backend; hidden names,
 * names too long and dangling links are passed over.  Returns how many. */
MUSTER_HIDDEN int muster__provider_files(char dirs[][PATH_MAX], int ndirs, const char *routine,
                                         muster__provider_found_t *f, int cap);

/* Whether two stats name the same unchanged file (device, inode, size,
 * modification time). */
MUSTER_HIDDEN int muster__provider_same_file(const struct stat *a, const struct stat *b);

#endif
