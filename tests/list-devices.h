/* muster_run_on_devices and the cusolvermg provider's host-side logic
 * (relayout plans, probe without a GPU): TEST_ENTRY(name, timeout_s) */
TEST_ENTRY(devices_run_host_threads, 10)
TEST_ENTRY(devices_first_nonzero_returned, 10)
TEST_ENTRY(devices_bad_arguments, 10)
TEST_ENTRY(devices_bad_device_runs_nobody, 20)
TEST_ENTRY(cmg_plan_round_trip_random, 60)
TEST_ENTRY(cmg_plan_kinds, 10)
TEST_ENTRY(cmg_provider_probe, 30)
TEST_ENTRY(cmg_provider_choose_tile, 30)
TEST_ENTRY(cmg_provider_refuses_host_memory, 30)
