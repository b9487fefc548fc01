/* shmdump and CLI tests: TEST_ENTRY(name, timeout_s) */
