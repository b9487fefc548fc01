/* muster_run_on_devices and the GPU providers' host-side logic
 * (cusolvermg's relayout plans, probe without a GPU; cusolverdn's estimate
 * and argument checks): TEST_ENTRY(name, timeout_s) */
TEST_ENTRY(devices_run_host_threads, 10)
TEST_ENTRY(devices_first_nonzero_returned, 10)
TEST_ENTRY(devices_bad_arguments, 10)
TEST_ENTRY(devices_bad_device_runs_nobody, 20)
TEST_ENTRY(cmg_plan_round_trip_random, 60)
TEST_ENTRY(cmg_plan_kinds, 10)
TEST_ENTRY(cmg_provider_probe, 30)
TEST_ENTRY(cmg_provider_choose_tile, 30)
TEST_ENTRY(cmg_provider_refuses_host_memory, 30)
TEST_ENTRY(dn_provider_structs_and_probe, 30)
TEST_ENTRY(dn_provider_estimate_memory, 30)
TEST_ENTRY(dn_provider_estimate_model, 30)
TEST_ENTRY(dn_provider_estimate_general, 30)
TEST_ENTRY(dn_provider_model_matches_h200, 30)
TEST_ENTRY(dn_vs_cmg_table_two_gpus, 30)
TEST_ENTRY(dn_provider_refuses_bad_calls, 30)
/* the GPU benchmark's report (tests/gpu/bench_json.c) */
TEST_ENTRY(bench_json_rank_and_report, 10)
