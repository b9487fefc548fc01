/* The cusolvermp provider's host-side logic (no GPU needed): relayout
 * plans, diagonal tiles and geqrf's pieces and refusals (test_mp_plan.c),
 * grid/tile/panel rules, the memory rule and gels's grids
 * (test_mp_rules.c), gesvd's and polar's releases, shapes and memory
 * (test_mp_svd.c), the
 * release table, version parsing and the library search (test_mp_version.c),
 * the provider loaded with dlopen: probe, estimate, argument checks, the
 * library choice over stand-in libraries (test_mp_provider.c).
 * TEST_ENTRY(name, timeout_s) */
TEST_ENTRY(mp_plan_round_trip_random, 60)
TEST_ENTRY(mp_plan_caller_to_solver, 60)
TEST_ENTRY(mp_plan_layout_same, 10)
TEST_ENTRY(mp_plan_grid_tile_panel, 10)
TEST_ENTRY(mp_plan_memory_rule, 10)
TEST_ENTRY(mp_plan_getrs_memory, 10)
TEST_ENTRY(mp_plan_diag_tiles, 20)
TEST_ENTRY(mp_plan_gels_layouts, 60)
TEST_ENTRY(mp_plan_gels_memory, 10)
TEST_ENTRY(mp_version_parse, 10)
TEST_ENTRY(mp_version_compat_table, 10)
TEST_ENTRY(mp_version_search_order, 20)
TEST_ENTRY(mp_plan_gels_on_grids, 10)
TEST_ENTRY(mp_plan_geqrf, 10)
TEST_ENTRY(mp_plan_nonblocking_refused, 10)
TEST_ENTRY(mp_svd_releases, 10)
TEST_ENTRY(mp_svd_shapes_and_memory, 10)
TEST_ENTRY(mp_provider_refusals, 60)
TEST_ENTRY(mp_provider_loads_and_estimates, 60)
TEST_ENTRY(mp_provider_disabled, 30)
TEST_ENTRY(mp_provider_prefers_091_when_it_runs, 30)
TEST_ENTRY(mp_provider_env_refused, 60)
