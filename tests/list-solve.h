/* layout, registry, solve, lapack tests: TEST_ENTRY(name, timeout_s) */
