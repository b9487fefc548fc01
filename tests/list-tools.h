/* shmdump and CLI tests: TEST_ENTRY(name, timeout_s) */
TEST_ENTRY(shmdump_usage_and_empty, 30)
TEST_ENTRY(shmdump_crafted_segments, 30)
TEST_ENTRY(shmdump_fuzz_random_segments, 60)
