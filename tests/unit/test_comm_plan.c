/*
 * tests/unit/test_comm_plan.c - a kind store comm's kept choice
 * (runtime/solve/comm_plan.c): what makes a call "the same" as the kept
 * one (every rank's tag, the descriptors less addresses and shard refs,
 * free device memory within its slack, the choice context), what does not
 * (another n, a tag of 0, another rank count, a context changed by
 * MUSTER_PROVIDER or a rescan, free memory gone), and forgetting.
 */
#include <stdlib.h>

#include "task.h"
#include "solve/comm_plan.h"
#include "registry/registry.h"

enum { R = 2 };
#define GIB (UINT64_C(1) << 30)

static void words(muster__plan_word_t *w, uint64_t tag, uint64_t addr) {
  memset(w, 0, R * sizeof *w);
  for (int r = 0; r < R; r++) {
    w[r].d.magic = MUSTER__DESC_MAGIC;
    w[r].d.routine = MUSTER_POTRS;
    w[r].d.n = 4096;
    w[r].d.mem = MUSTER_MEM_CUDA;
    w[r].d.device = r;
    w[r].d.a = addr + (uint64_t)r;
    w[r].d.ra.fd = (int)addr;
    w[r].d.free_bytes = 100 * GIB;
    w[r].d.total_bytes = 140 * GIB;
    w[r].ctx = 7;
    w[r].tag = tag;
  }
}

TEST_IMPL(comm_plan_kept_choice) {
  muster__plan_t *p = NULL;
  muster__plan_word_t w[R];
  words(w, 0, 0x1000);
  ASSERT_EQ(muster__plan_tag(p), 0);
  ASSERT(!muster__plan_hit(p, w, R, 0));
  const char dec[] = "rank 0's decision";
  ASSERT_OK(muster__plan_keep(&p, w, R, dec, sizeof dec));
  uint64_t tag = muster__plan_tag(p);
  ASSERT(tag != 0);
  ASSERT(!memcmp(muster__plan_decision(p), dec, sizeof dec));
  /* the next call: new pieces, every rank's tag */
  words(w, tag, 0x9000);
  ASSERT(muster__plan_hit(p, w, R, tag));
  w[1].d.free_bytes -= 140 * GIB / 512; /* a staging region more: within the slack */
  ASSERT(muster__plan_hit(p, w, R, tag));
  w[1].d.free_bytes -= 140 * GIB / 128; /* more than 1/256 of the device gone */
  ASSERT(!muster__plan_hit(p, w, R, tag));
  words(w, tag, 0x9000);
  w[1].tag = 0; /* a rank that kept nothing (or left the group) */
  ASSERT(!muster__plan_hit(p, w, R, tag));
  words(w, tag, 0x9000);
  w[0].d.n = 4097;
  ASSERT(!muster__plan_hit(p, w, R, tag));
  words(w, tag, 0x9000);
  w[0].ctx = 8;
  ASSERT(!muster__plan_hit(p, w, R, tag));
  words(w, tag, 0x9000);
  ASSERT(!muster__plan_hit(p, w, 1, tag));   /* another rank count */
  ASSERT(!muster__plan_hit(p, w, R, 0));     /* this rank says "choose" */
  ASSERT(!muster__plan_hit(p, w, R, tag + 1));
  /* kept again with a longer decision; then forgotten */
  const char dec2[] = "rank 0's other, longer decision";
  ASSERT_OK(muster__plan_keep(&p, w, R, dec2, sizeof dec2));
  ASSERT(!memcmp(muster__plan_decision(p), dec2, sizeof dec2));
  ASSERT(muster__plan_tag(p) != tag); /* another decision, another tag */
  muster__plan_forget(p);
  ASSERT_EQ(muster__plan_tag(p), 0);
  ASSERT(muster__plan_decision(p) == NULL);
  words(w, 0, 0x9000);
  ASSERT(!muster__plan_hit(p, w, R, 0));
  muster__plan_free(p);
  return 0;
}

/* The context moves with MUSTER_PROVIDER and with every rescan. */
TEST_IMPL(comm_plan_context) {
  unsetenv("MUSTER_PROVIDER");
  uint64_t none = muster__plan_ctx();
  ASSERT_EQ(muster__plan_ctx(), none);
  setenv("MUSTER_PROVIDER", "potrs=lapack", 1);
  uint64_t forced = muster__plan_ctx();
  ASSERT(forced != none);
  unsetenv("MUSTER_PROVIDER");
  ASSERT_EQ(muster__plan_ctx(), none);
  unsigned before = muster__providers_rescans();
  (void)muster_providers_rescan(); /* its outcome is not the point */
  ASSERT_EQ(muster__providers_rescans(), before + 1);
  ASSERT(muster__plan_ctx() != none);
  return 0;
}
