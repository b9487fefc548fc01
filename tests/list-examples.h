/* docs/examples: each compiled example run as a program, its exit status
 * and output checked (test_examples.c): TEST_ENTRY(name, timeout_s) */
TEST_ENTRY(examples_group_threads, 60)
TEST_ENTRY(examples_group_processes, 60)
TEST_ENTRY(examples_solve, 60)
TEST_ENTRY(examples_solve_all, 60)
TEST_ENTRY(examples_run_on_devices, 60)
TEST_ENTRY(examples_store, 60)
TEST_ENTRY(examples_provider, 60)
TEST_ENTRY(examples_provider_not_registered, 60)
