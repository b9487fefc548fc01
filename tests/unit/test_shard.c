/*
 * tests/unit/test_shard.c - the leader's mappings of peers' shard memory:
 * a mapping pinned by a call in progress is never unmapped, however many a
 * call or several concurrent calls pin (the cache bound counts idle ones
 * only), and one dropped while pinned is unmapped at its last unpin.
 * This process plays the peer too: /proc/<own pid>/fd/<fd> is reached the
 * same way as a peer's.
 */
#include <unistd.h>

#include "task.h"
#include "muster.h"
#include "solve/shard.h"

enum { CALLS = 2, PER_CALL = MUSTER__SHARD_PINS_MAX, BYTES = 4096 };

static void *own[CALLS][PER_CALL];
static void *mapped[CALLS][PER_CALL];

/* Every pinned mapping still shows what the owner wrote, and the owner
 * sees what is written through it. */
static void check_live(int call, uint32_t tag) {
  for (int i = 0; i < PER_CALL; i++) {
    uint32_t *o = own[call][i], *m = mapped[call][i];
    o[7] = tag + (uint32_t)i;
    ASSERT_EQ(m[7], tag + (uint32_t)i);
    m[9] = ~tag;
    ASSERT_EQ(o[9], ~tag);
  }
}

TEST_IMPL(shard_pinned_mappings_survive) {
  pid_t self = getpid();
  muster__shard_pins_t pins[CALLS];
  int base = muster__shard_peer_count();
  for (int c = 0; c < CALLS; c++) {
    pins[c].n = 0;
    for (int i = 0; i < PER_CALL; i++) {
      ASSERT_OK(muster_shard_alloc(BYTES, &own[c][i]));
      muster__shard_ref_t ref;
      muster__shard_find((char *)own[c][i] + 64, &ref);
      ASSERT(ref.fd >= 0);
      ASSERT_OK(muster__shard_map_peer(self, &ref, &pins[c], &mapped[c][i]));
      ASSERT(mapped[c][i] != (char *)own[c][i] + 64);
      mapped[c][i] = (char *)mapped[c][i] - 64;
    }
  }
  /* a call's pin list is full: refused, nothing mapped */
  muster__shard_ref_t ref;
  muster__shard_find(own[0][0], &ref);
  void *extra = NULL;
  ASSERT_EQ(muster__shard_map_peer(self, &ref, &pins[0], &extra), MUSTER_EINVAL);
  ASSERT(extra == NULL);
  /* every one of 2 x 192 pinned mappings is live (a bound of 64 with
   * eviction had unmapped most of them) */
  ASSERT_EQ(muster__shard_peer_count() - base, CALLS * PER_CALL);
  check_live(0, 100);
  check_live(1, 200);
  /* dropped while pinned: still live until the last unpin */
  muster__shard_forget(self);
  check_live(0, 300);
  check_live(1, 400);
  muster__shard_unpin_all(&pins[0]);
  ASSERT_EQ(pins[0].n, 0);
  check_live(1, 500);
  ASSERT_EQ(muster__shard_peer_count() - base, PER_CALL);
  muster__shard_unpin_all(&pins[1]);
  ASSERT_EQ(muster__shard_peer_count(), base);

  /* idle ones are kept up to the bound: a group of 64 ranks re-meeting
   * maps nothing again; beyond it the least recently used go */
  for (int c = 0; c < CALLS; c++) {
    pins[c].n = 0;
    for (int i = 0; i < PER_CALL; i++) {
      muster__shard_find(own[c][i], &ref);
      ASSERT_OK(muster__shard_map_peer(self, &ref, &pins[c], &mapped[c][i]));
    }
    muster__shard_unpin_all(&pins[c]);
  }
  ASSERT_EQ(muster__shard_peer_count() - base, PER_CALL);
  /* the kept ones are the most recent call's: found again, not remapped */
  pins[1].n = 0;
  for (int i = 0; i < PER_CALL; i++) {
    void *again;
    muster__shard_find(own[1][i], &ref);
    ASSERT_OK(muster__shard_map_peer(self, &ref, &pins[1], &again));
    ASSERT(again == mapped[1][i]);
  }
  muster__shard_unpin_all(&pins[1]);
  muster__shard_forget(self);
  ASSERT_EQ(muster__shard_peer_count(), base);
  for (int c = 0; c < CALLS; c++)
    for (int i = 0; i < PER_CALL; i++) muster_shard_free(own[c][i]);
  return 0;
}
