/* tests/unit/test_error.c - error codes and thread-local messages. */
#include <pthread.h>
#include "muster.h"
#include "task.h"

TEST_IMPL(error_strerror_all_codes) {
  for (int c = 0; c >= -21; c--) {
    const char *s = muster_strerror(c);
    ASSERT(s != NULL);
    ASSERT(strcmp(s, "unknown error") != 0);
  }
  ASSERT(strcmp(muster_strerror(-9999), "unknown error") == 0);
  ASSERT(muster_last_error() != NULL);
  return 0;
}
