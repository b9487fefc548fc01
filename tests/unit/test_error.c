/* tests/unit/test_error.c - error codes, thread-local messages and the
 * message appender. */
#include <pthread.h>
#include "muster.h"
#include "muster/append.h"
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

/* Names and kinds come from the same table as the codes: every code has a
 * distinct name spelled like its macro, a real kind, and the meaning
 * muster_strerror gives.  The expected pairs are written out here (not
 * generated from the map) so a wrong row in the table fails. */
TEST_IMPL(error_names_and_kinds) {
  static const struct { int code; const char *name; muster_err_kind_t kind; } want[] = {
      {MUSTER_OK, "MUSTER_OK", MUSTER_KIND_OK},
      {MUSTER_EINVAL, "MUSTER_EINVAL", MUSTER_KIND_INVALID_ARGUMENT},
      {MUSTER_ETIMEDOUT, "MUSTER_ETIMEDOUT", MUSTER_KIND_DEADLINE_EXCEEDED},
      {MUSTER_EPEERDEAD, "MUSTER_EPEERDEAD", MUSTER_KIND_ABORTED},
      {MUSTER_ENOTPD, "MUSTER_ENOTPD", MUSTER_KIND_NUMERICAL},
      {MUSTER_ENONFINITE, "MUSTER_ENONFINITE", MUSTER_KIND_NUMERICAL},
      {MUSTER_ENOPROVIDER, "MUSTER_ENOPROVIDER", MUSTER_KIND_UNIMPLEMENTED},
      {MUSTER_ENOSPC, "MUSTER_ENOSPC", MUSTER_KIND_RESOURCE_EXHAUSTED},
  };
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
    ASSERT(strcmp(muster_err_name(want[i].code), want[i].name) == 0);
    ASSERT_EQ(muster_err_kind(want[i].code), want[i].kind);
  }
  ASSERT_EQ(MUSTER_ENOTPD, -21); /* values are ABI */
  int count = 0;
#define CHECK_ROW(name, value, meaning, kind)                                  \
  count++;                                                                     \
  ASSERT_EQ(MUSTER_##name, value);                                             \
  ASSERT(strcmp(muster_strerror(value), meaning) == 0);                        \
  ASSERT(strcmp(muster_err_name(value), "MUSTER_" #name) == 0);                \
  ASSERT(muster_err_kind(value) != MUSTER_KIND_OK);
  MUSTER_ERRNO_MAP(CHECK_ROW)
#undef CHECK_ROW
  ASSERT_EQ(count, 23);
  for (int a = -1; a >= -count; a--)
    for (int b = a - 1; b >= -count; b--) ASSERT(strcmp(muster_err_name(a), muster_err_name(b)));
  ASSERT(strcmp(muster_err_name(5), "MUSTER_E?") == 0);
  ASSERT(strcmp(muster_err_name(-9999), "MUSTER_E?") == 0);
  ASSERT_EQ(muster_err_kind(-9999), MUSTER_KIND_INTERNAL);
  ASSERT(strcmp(muster_err_kind_name(MUSTER_KIND_NUMERICAL), "numerical") == 0);
  ASSERT(strcmp(muster_err_kind_name(MUSTER_KIND_DEADLINE_EXCEEDED), "deadline_exceeded") == 0);
  ASSERT(strcmp(muster_err_kind_name((muster_err_kind_t)77), "internal") == 0);
  return 0;
}

/* muster__append (muster/append.h), what the cost notes and the providers'
 * messages are written with: appends, cuts at the buffer's end, then adds
 * nothing; reads no byte past cap even when the buffer holds no NUL. */
TEST_IMPL(error_append_cuts_at_the_end) {
  char buf[8] = "ab";
  muster__append(buf, sizeof buf, "cd%d", 5);
  ASSERT(strcmp(buf, "abcd5") == 0);
  muster__append(buf, sizeof buf, "%s", "xyzzy");
  ASSERT(strcmp(buf, "abcd5xy") == 0);
  muster__append(buf, sizeof buf, "q");
  ASSERT(strcmp(buf, "abcd5xy") == 0);
  char none[4] = {'a', 'b', 'c', 'd'};
  muster__append(none, sizeof none, "x");
  muster__append(none, 0, "x");
  ASSERT(memcmp(none, "abcd", 4) == 0);
  return 0;
}
