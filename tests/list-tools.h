/* shmdump and CLI tests: TEST_ENTRY(name, timeout_s) */
/* shmdump: crafted segments and fuzz (test_shmdump.c) */
TEST_ENTRY(shmdump_usage_and_empty, 30)
TEST_ENTRY(shmdump_crafted_segments, 30)
TEST_ENTRY(shmdump_fuzz_random_segments, 60)
TEST_ENTRY(shmdump_odd_names, 30)
/* shmdump: groups made by the runtime (test_shmdump_live.c) */
TEST_ENTRY(shmdump_live_stuck_and_stale, 60)
TEST_ENTRY(shmdump_live_formed_group_via_proc, 60)
TEST_ENTRY(shmdump_live_busy_group, 60)
/* shmdump: groups of two other pid namespaces (test_pidns.c) */
TEST_ENTRY(shmdump_two_pid_namespaces, 60)
/* muster rendezvous (test_cli_rendezvous.c) */
TEST_ENTRY(cli_rendezvous_threads, 60)
TEST_ENTRY(cli_rendezvous_processes, 60)
TEST_ENTRY(cli_rendezvous_text_output, 30)
TEST_ENTRY(cli_rendezvous_bad_usage, 30)
TEST_ENTRY(cli_rendezvous_runtime_errors, 60)
TEST_ENTRY(cli_rendezvous_rank_killed, 60)
TEST_ENTRY(cli_rendezvous_wrong_read_caught, 60)
TEST_ENTRY(cli_rendezvous_baseline_rank_killed, 90)
/* processes dying under muster solve / rendezvous (test_cli_faults.c) */
TEST_ENTRY(cli_solve_rank_killed_before_join, 60)
TEST_ENTRY(cli_solve_rank_killed_after_publish, 60)
TEST_ENTRY(cli_solve_rank_killed_during_compute, 60)
TEST_ENTRY(cli_solve_leader_killed, 60)
TEST_ENTRY(cli_solve_launcher_killed, 60)
TEST_ENTRY(cli_solve_leader_stopped, 60)
TEST_ENTRY(cli_solve_rank_stopped, 60)
TEST_ENTRY(cli_solve_stopped_in_grace, 60)
TEST_ENTRY(cli_solve_rank_stopped_after_finish, 60)
TEST_ENTRY(cli_rendezvous_rank_killed_before_join, 60)
TEST_ENTRY(cli_rendezvous_leader_killed, 60)
TEST_ENTRY(cli_rendezvous_launcher_killed, 60)
/* ranks that cannot be started (test_cli_launch.c) */
TEST_ENTRY(cli_launch_fork_fails, 60)
TEST_ENTRY(cli_launch_out_of_fds, 120)
/* threads mode ended by SIGINT, SIGTERM, SIGKILL: nothing left (test_cli_signals.c) */
TEST_ENTRY(cli_solve_threads_sigint_sigterm, 120)
TEST_ENTRY(cli_solve_threads_sigkill, 90)
TEST_ENTRY(cli_rendezvous_threads_sigterm, 90)
/* every option and MUSTER_* variable fed bad values (test_cli_numbers.c) */
TEST_ENTRY(cli_options_refuse_bad_numbers, 240)
TEST_ENTRY(cli_env_refuse_bad_values, 120)
TEST_ENTRY(cli_rendezvous_full_shm, 60) /* test_full_shm.c */
TEST_ENTRY(cli_solve_full_shm, 60) /* test_full_shm.c */
/* conventions every subcommand shares (test_cli_conventions.c) */
TEST_ENTRY(cli_options_gnu_style, 60)
TEST_ENTRY(cli_json_strings_utf8, 30)
TEST_ENTRY(cli_json_reason_whole, 30)
TEST_ENTRY(cli_solve_reports_tile, 30)
TEST_ENTRY(cli_solve_check_levels, 90)
TEST_ENTRY(cli_solve_progress_on_stderr, 30)
TEST_ENTRY(cli_help_from_tables, 10)
