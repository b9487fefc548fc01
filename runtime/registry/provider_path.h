/*
 * runtime/registry/provider_path.h - the folders the registry looks for provider
 * files in (private to runtime/registry/registry.c).
 */
#ifndef MUSTER_PROVIDER_PATH_H
#define MUSTER_PROVIDER_PATH_H

#include <limits.h>

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

#endif
