/* layout and lapack provider tests: TEST_ENTRY(name, timeout_s) */
TEST_ENTRY(dtype_names_round_trip, 10)
TEST_ENTRY(dtype_unknown_names, 10)
