/* shmdump and CLI tests: TEST_ENTRY(name, timeout_s) */
TEST_ENTRY(shmdump_usage_and_empty, 30)
TEST_ENTRY(shmdump_crafted_segments, 30)
TEST_ENTRY(shmdump_fuzz_random_segments, 60)
TEST_ENTRY(shmdump_live_stuck_and_stale, 60)
TEST_ENTRY(shmdump_live_formed_group_via_proc, 60)
