/*
 * tests/unit/test_coll_deadline.c - the deadline of a kind mpi collective
 * call (runtime/solve/collective.c, muster__collective_deadline): MUSTER_TIMEOUT
 * plus MUSTER__DEADLINE_EXPECT_K times the chosen provider's expected
 * seconds, and the words that say where it came from.  The deadline at
 * work (a provider blocked past MUSTER_TIMEOUT) is tests/mpi/deadline.sh.
 */
#include <math.h>

#include "solve/collective.h"
#include "task.h"

/* how is exactly s (printed when not) */
#define SAID(s)                                                      \
  do {                                                               \
    if (strcmp(how, s)) fprintf(stderr, "how: \"%s\"\n", how);      \
    ASSERT(!strcmp(how, s));                                         \
  } while (0)

TEST_IMPL(collective_deadline_from_estimate) {
  muster__provider_t p;
  memset(&p, 0, sizeof p);
  snprintf(p.name, sizeof p.name, "scalapack");
  muster__coll_in_t in = {.p = &p};
  char how[160];
  /* no expected time: MUSTER_TIMEOUT alone, said as before */
  ASSERT(muster__collective_deadline(&in, 60, how, sizeof how) == 60);
  SAID("MUSTER_TIMEOUT");
  /* an estimate: 60 + 4 x 21.3 */
  ASSERT_EQ(MUSTER__DEADLINE_EXPECT_K, 4);
  in.expect_src = MUSTER__EXPECT_ESTIMATE;
  in.expect_s = 21.3;
  ASSERT(fabs(muster__collective_deadline(&in, 60, how, sizeof how) - 145.2) < 1e-9);
  SAID("60 s MUSTER_TIMEOUT + 4 x 21.3 s estimated by scalapack");
  /* a cost table's time */
  in.expect_src = MUSTER__EXPECT_COST;
  in.expect_s = 0.5;
  ASSERT(fabs(muster__collective_deadline(&in, 1, how, sizeof how) - 3) < 1e-9);
  SAID("1 s MUSTER_TIMEOUT + 4 x 0.5 s from the cost table of scalapack");
  /* a tiny estimate leaves it at about MUSTER_TIMEOUT */
  in.expect_src = MUSTER__EXPECT_ESTIMATE;
  in.expect_s = 1e-4;
  ASSERT(fabs(muster__collective_deadline(&in, 60, how, sizeof how) - 60.0004) < 1e-9);
  /* what a broken provider might say: no time at all, or capped at a year */
  const double junk[] = {-1, NAN, INFINITY, -INFINITY};
  for (size_t i = 0; i < sizeof junk / sizeof *junk; i++) {
    in.expect_s = junk[i];
    ASSERT(muster__collective_deadline(&in, 60, how, sizeof how) == 60);
    SAID("MUSTER_TIMEOUT");
  }
  in.expect_s = 1e300;
  ASSERT(muster__collective_deadline(&in, 60, how, sizeof how) == 31536000.0);
  /* a short buffer is cut, not overrun */
  char small[8];
  in.expect_s = 2;
  ASSERT(muster__collective_deadline(&in, 60, small, sizeof small) == 68);
  ASSERT_EQ(strlen(small), sizeof small - 1);
  return 0;
}
