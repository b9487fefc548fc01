/* providers/cusolverdn/options.c - the provider's environment variables,
 * read at each call by the runtime's rules (providers/common/env.h; dnInt.h;
 * docs/providers/cusolverdn.md lists them). */
#include <stdio.h>
#include <string.h>

#include "../common/env.h"
#include "dnInt.h"

int dn_target_device(int leader_dev, int *dev, char *why, size_t whylen) {
  int64_t v;
  int rc = prov_env_int("MUSTER_DN_DEVICE", 0, CUC_MAX_ORDINAL - 1, leader_dev, &v, why, whylen);
  if (rc < 0) return rc;
  *dev = (int)v;
  return 0;
}

int dn_potri_path(int64_t n, muster_dtype_t dtype, int *path, char *why, size_t whylen) {
  static const char *const words[] = {"auto", "potri", "solve", NULL};
  int complex = dtype == MUSTER_C64 || dtype == MUSTER_C128, which;
  *path = n <= DN_POTRI_SOLVE_MAX_N && !complex ? DN_POTRI_SOLVE : DN_POTRI_LEGACY;
  int rc = prov_env_word("MUSTER_DN_POTRI", words, 0, &which, why, whylen);
  if (rc < 0) return rc;
  if (which == 1) *path = DN_POTRI_LEGACY;
  if (which == 2) *path = DN_POTRI_SOLVE;
  return 0;
}
