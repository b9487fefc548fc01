/* layout and lapack provider tests: TEST_ENTRY(name, timeout_s) */
