/* runtime core tests: TEST_ENTRY(name, timeout_s) */
TEST_ENTRY(error_strerror_all_codes, 10)
