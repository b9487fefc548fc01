/* shmdump and CLI tests: TEST_ENTRY(name, timeout_s) */
/* shmdump: crafted segments and fuzz (test_shmdump.c) */
TEST_ENTRY(shmdump_usage_and_empty, 30)
TEST_ENTRY(shmdump_crafted_segments, 30)
TEST_ENTRY(shmdump_fuzz_random_segments, 60)
/* shmdump: groups made by the runtime (test_shmdump_live.c) */
TEST_ENTRY(shmdump_live_stuck_and_stale, 60)
TEST_ENTRY(shmdump_live_formed_group_via_proc, 60)
TEST_ENTRY(shmdump_live_busy_group, 60)
/* muster rendezvous (test_cli_rendezvous.c) */
TEST_ENTRY(cli_rendezvous_threads, 60)
TEST_ENTRY(cli_rendezvous_processes, 60)
TEST_ENTRY(cli_rendezvous_text_output, 30)
TEST_ENTRY(cli_rendezvous_bad_usage, 30)
TEST_ENTRY(cli_rendezvous_runtime_errors, 60)
TEST_ENTRY(cli_rendezvous_rank_killed, 60)
TEST_ENTRY(cli_rendezvous_wrong_read_caught, 60)
TEST_ENTRY(cli_rendezvous_baseline_rank_killed, 90)
TEST_ENTRY(cli_rendezvous_full_shm, 60) /* test_full_shm.c */
