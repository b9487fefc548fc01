/* runtime core tests: TEST_ENTRY(name, timeout_s) */
TEST_ENTRY(error_strerror_all_codes, 10)
/* group integration: exchange/status/rounds, threads and processes */
TEST_ENTRY(group_exchange_threads_1, 20)
TEST_ENTRY(group_exchange_threads_2, 20)
TEST_ENTRY(group_exchange_threads_4, 20)
TEST_ENTRY(group_exchange_threads_8, 20)
TEST_ENTRY(group_exchange_procs_1, 20)
TEST_ENTRY(group_exchange_procs_2, 20)
TEST_ENTRY(group_exchange_procs_4, 20)
TEST_ENTRY(group_exchange_procs_8, 20)
