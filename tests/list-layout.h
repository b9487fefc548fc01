/* layout and lapack provider tests: TEST_ENTRY(name, timeout_s) */
TEST_ENTRY(dtype_names_round_trip, 10)
TEST_ENTRY(dtype_unknown_names, 10)
TEST_ENTRY(layout_round_trip_random, 60)
TEST_ENTRY(layout_maps_and_runs, 30)
TEST_ENTRY(layout_valid_tiles_brute_force, 30)
TEST_ENTRY(layout_tile_error_messages, 30)
TEST_ENTRY(layout_bad_arguments, 10)
