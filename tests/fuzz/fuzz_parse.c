/*
 * tests/fuzz/fuzz_parse.c - libFuzzer target for the one parser of user
 * input (runtime/base/parse.c) and the MUSTER_* readers built on it
 * (runtime/base/env.c).  Build and run: tests/fuzz/run-fuzz.sh [SECONDS].
 *
 * Beyond "no crash, no UB, no leak" (ASan+UBSan), it checks what the
 * parsers promise: an accepted integer is in range and prints back to the
 * input (modulo leading zeros), an accepted list has 1..cap entries, an
 * accepted number of seconds is 0 (inf) or in range, and a refusal always
 * leaves a message quoting part of the value.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/env.h"
#include "shm/segment.h" /* muster__env_job */
#include "muster.h"
#include "muster/parse.h"

#define CHECK(x)                                                               \
  do {                                                                         \
    if (!(x)) {                                                                \
      fprintf(stderr, "fuzz_parse: %s:%d: %s\n", __FILE__, __LINE__, #x);      \
      abort();                                                                 \
    }                                                                          \
  } while (0)

static void refused_with_message(int rc) {
  CHECK(rc == MUSTER_EINVAL);
  CHECK(strchr(muster_last_error(), '\'') != NULL || strstr(muster_last_error(), "MUSTER_"));
}

/* digits of s without leading zeros (and a leading '-') equal to v's */
static void prints_back(const char *s, int64_t v) {
  char buf[32];
  snprintf(buf, sizeof buf, "%" PRId64, v);
  const char *p = s;
  int neg = *p == '-';
  p += neg;
  while (p[0] == '0' && p[1]) p++;
  if (v == 0) CHECK(!strcmp(p, "0"));
  else CHECK(!strcmp(buf + (v < 0), p) && neg == (v < 0));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *s = malloc(size + 1);
  if (!s) return 0;
  memcpy(s, data, size);
  s[size] = '\0';
  int64_t v, list[8];
  uint64_t u;
  double d;
  int rc = muster_parse_i64(s, -1000, 1000, &v);
  if (rc == 0) {
    CHECK(v >= -1000 && v <= 1000);
    prints_back(s, v);
  } else {
    refused_with_message(rc);
  }
  if (muster_parse_i64(s, INT64_MIN, INT64_MAX, &v) == 0) prints_back(s, v);
  if ((rc = muster_parse_u64(s, UINT64_MAX, &u)) != 0) refused_with_message(rc);
  int n = muster_parse_i64_list(s, 0, 4095, list, 8);
  if (n >= 0) {
    CHECK(n >= 1 && n <= 8);
    for (int i = 0; i < n; i++) CHECK(list[i] >= 0 && list[i] <= 4095);
  } else {
    refused_with_message(n);
  }
  if ((rc = muster_parse_seconds(s, 1, &d)) == 0)
    CHECK(d == 0 || (d >= MUSTER_MIN_SECONDS && d <= MUSTER_MAX_SECONDS));
  else
    refused_with_message(rc);
  if ((rc = muster_parse_backend(s, strlen(s))) == 0) CHECK(strlen(s) <= MUSTER_MAX_BACKEND);
  /* the same bytes as each variable */
  char out[MUSTER_MAX_BACKEND + 1];
  const char *val;
  setenv("MUSTER_PROVIDER", s, 1);
  if ((rc = muster__env_provider_choice("potrs", out, sizeof out)) == 0)
    CHECK(strlen(out) <= MUSTER_MAX_BACKEND);
  unsetenv("MUSTER_PROVIDER");
  setenv("MUSTER_PROVIDER_PATH", s, 1);
  if (muster__env_provider_path(&val) == 0) CHECK(val && *val);
  unsetenv("MUSTER_PROVIDER_PATH");
  setenv("MUSTER_TIMEOUT", s, 1);
  if (muster__env_timeout(&d) == 0) CHECK(d == 0 || (d >= MUSTER_MIN_SECONDS && d <= MUSTER_MAX_SECONDS));
  unsetenv("MUSTER_TIMEOUT");
  setenv("MUSTER_JOB", s, 1);
  if (muster__env_job(&val) == 0) CHECK(strlen(val) >= 1 && strlen(val) <= MUSTER_MAX_JOB);
  unsetenv("MUSTER_JOB");
  free(s);
  return 0;
}
