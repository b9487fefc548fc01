/* registry, solve and muster solve tests: TEST_ENTRY(name, timeout_s) */
TEST_ENTRY(registry_lazy_load_and_list, 10)
TEST_ENTRY(registry_refuses_broken_files, 10)
TEST_ENTRY(registry_provider_choice, 10)
TEST_ENTRY(registry_unknown_routine, 10)
TEST_ENTRY(registry_rescan_swap_under_load, 30)
TEST_ENTRY(registry_unload_waits_for_running_call, 10)
TEST_ENTRY(registry_rescan_picks_up_new_and_removed, 10)
