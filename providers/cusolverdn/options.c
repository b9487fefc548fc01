/* providers/cusolverdn/options.c - the provider's environment variables,
 * read at each call (dnInt.h; docs/providers.md lists them). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dnInt.h"

int dn_target_device(int leader_dev, int *dev, char *why, size_t whylen) {
  const char *s = getenv("MUSTER_DN_DEVICE");
  *dev = leader_dev;
  if (!s || !*s) return 0;
  char *end = NULL;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (errno || !end || *end || v < 0 || v >= CUC_MAX_ORDINAL) {
    snprintf(why, whylen, "MUSTER_DN_DEVICE='%.32s' is not a device ordinal 0..%d", s, CUC_MAX_ORDINAL - 1);
    return MUSTER_EINVAL;
  }
  *dev = (int)v;
  return 0;
}

int dn_potri_path(int64_t n, muster_dtype_t dtype, int *path, char *why, size_t whylen) {
  const char *s = getenv("MUSTER_DN_POTRI");
  int complex = dtype == MUSTER_C64 || dtype == MUSTER_C128;
  *path = n <= DN_POTRI_SOLVE_MAX_N && !complex ? DN_POTRI_SOLVE : DN_POTRI_LEGACY;
  if (!s || !*s || !strcmp(s, "auto")) return 0;
  if (!strcmp(s, "potri") || !strcmp(s, "solve")) {
    *path = strcmp(s, "potri") ? DN_POTRI_SOLVE : DN_POTRI_LEGACY;
    return 0;
  }
  snprintf(why, whylen, "MUSTER_DN_POTRI='%.32s': expected auto, potri or solve", s);
  return MUSTER_EINVAL;
}
