/* registry, solve and muster solve tests: TEST_ENTRY(name, timeout_s) */
