/* runtime/base/version.c - the version of the library that runs (muster.h):
 * compiled from the header the library was built with, so a program learns
 * the library's version, not its own header's. */
#include "muster.h"

const char *muster_version(void) { return MUSTER_VERSION_STRING; }

int muster_version_number(void) { return MUSTER_VERSION_NUMBER; }
