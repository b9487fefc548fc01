/*
 * tests/integration/test_cli_rendezvous.c - build/bin/muster rendezvous:
 * both modes with 1, 2 and 4 ranks (exit 0, JSON fields present and sane,
 * payloads verified by the command itself), the text output, bad usage
 * (exit 2 with a message), and runtime errors (exit 1 with the runtime's
 * message, nothing left behind).
 */
#include <signal.h>
#include <math.h>
#include <unistd.h>

#include "muster.h"
#include "task.h"
#include "test_shmdump_util.h"

#define RUN_TIMEOUT 60.0

static void run_muster(struct tool_result *r, const char *const *argv, const char *const *env) {
  ASSERT_EQ(tool_run(r, RUN_TIMEOUT, env, "muster", argv), 0);
  ASSERT_EQ(r->timed_out, 0);
  ASSERT_EQ(r->signal, 0);
}

static int count_children(void) {
  pid_t dummy[1];
  return tool_children(getpid(), dummy, 0);
}

static void check_stats(const char *json, const char *key) {
  char pat[64];
  snprintf(pat, sizeof pat, "\"%s\":{", key);
  const char *p = strstr(json, pat);
  ASSERT(p != NULL);
  double med = json_number(p, "median"), p99 = json_number(p, "p99");
  double mn = json_number(p, "min"), mx = json_number(p, "max");
  ASSERT(!isnan(med) && !isnan(p99) && !isnan(mn) && !isnan(mx));
  ASSERT(mn > 0);
  ASSERT(mn <= med && med <= p99 && p99 <= mx);
  ASSERT(mx < 10e6); /* no round of a tiny run takes 10 s */
}

static void rendezvous_ok(const char *mode, const char *ranks) {
  struct tool_result r;
  const char *argv[] = {"rendezvous", "--ranks", ranks, "--mode", mode, "--rounds", "50",
                        "--cycles", "20", "--baseline", "--json", NULL};
  run_muster(&r, argv, NULL);
  if (r.exit_code != 0) fprintf(stderr, "stderr: %s\n", r.err);
  ASSERT_EQ(r.exit_code, 0);
  ASSERT(json_valid(r.out));
  ASSERT_EQ(json_number(r.out, "ranks"), atoi(ranks));
  ASSERT_EQ(json_number(r.out, "rounds"), 50);
  ASSERT_EQ(json_number(r.out, "cycles"), 20);
  char m[64];
  snprintf(m, sizeof m, "\"mode\":\"%s\"", mode);
  ASSERT_STR_CONTAINS(r.out, m);
  check_stats(r.out, "round_us");
  check_stats(r.out, "cycle_us");
  const char *b = strstr(r.out, "\"baseline\":");
  ASSERT(b != NULL);
  check_stats(b, "round_us");
  ASSERT(json_number(r.out, "ratio_median") > 0);
  ASSERT_EQ(strstr(r.out, "\"n\":50") != NULL, 1);
  ASSERT_EQ(r.err_len, 0);
  tool_result_free(&r);
  ASSERT_EQ(count_children(), 0);
  ASSERT_EQ(test_count_job_segments(test_job()), 0);
}

TEST_IMPL(cli_rendezvous_threads) {
  rendezvous_ok("threads", "1");
  rendezvous_ok("threads", "2");
  rendezvous_ok("threads", "4");
  return 0;
}

TEST_IMPL(cli_rendezvous_processes) {
  rendezvous_ok("processes", "1");
  rendezvous_ok("processes", "2");
  rendezvous_ok("processes", "4");
  return 0;
}

TEST_IMPL(cli_rendezvous_text_output) {
  struct tool_result r;
  const char *argv[] = {"rendezvous", "--ranks", "2", "--rounds", "20", "--baseline", NULL};
  run_muster(&r, argv, NULL);
  ASSERT_EQ(r.exit_code, 0);
  ASSERT_STR_CONTAINS(r.out, "muster rendezvous: 2 ranks, threads, 20 rounds");
  ASSERT_STR_CONTAINS(r.out, "muster round");
  ASSERT_STR_CONTAINS(r.out, "muster cycle (reused group)");
  ASSERT_STR_CONTAINS(r.out, "pthread_barrier round");
  ASSERT_STR_CONTAINS(r.out, "ratio muster / pthread");
  ASSERT_STR_CONTAINS(r.out, "p99");
  tool_result_free(&r);
  const char *help[] = {"rendezvous", "--help", NULL};
  run_muster(&r, help, NULL);
  ASSERT_EQ(r.exit_code, 0);
  ASSERT_STR_CONTAINS(r.out, "usage: muster rendezvous");
  tool_result_free(&r);
  return 0;
}

TEST_IMPL(cli_rendezvous_bad_usage) {
  const char *bad[][4] = {
      {"--ranks", "0", NULL},        {"--ranks", "abc", NULL},     {"--ranks", "-3", NULL},
      {"--ranks", "5000", NULL},     {"--ranks", NULL},            {"--mode", "bogus", NULL},
      {"--mode", NULL},              {"--rounds", "0", NULL},      {"--rounds", "1x", NULL},
      {"--payload", "2000", NULL},   {"--cycles", "-1", NULL},     {"--frobnicate", NULL},
      {"--ranks=", NULL},            {"extra", NULL}};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    const char *argv[6] = {"rendezvous", bad[i][0], bad[i][1], bad[i][2], NULL, NULL};
    struct tool_result r;
    run_muster(&r, argv, NULL);
    if (r.exit_code != 2) fprintf(stderr, "case %zu (%s): exit %d\n", i, bad[i][0], r.exit_code);
    ASSERT_EQ(r.exit_code, 2);
    ASSERT_STR_CONTAINS(r.err, "muster rendezvous: ");
    ASSERT_STR_CONTAINS(r.err, "--help");
    ASSERT_EQ(r.out_len, 0);
    tool_result_free(&r);
  }
  return 0;
}

/* Real runtime failures: more ranks than a group holds (the command cannot
 * open the group, so no rank thread or process is started).  Exit 1, the
 * runtime's message on stderr, no stdout, no child and no segment left.  A job key the runtime refuses is a usage error of
 * the environment: exit 2 naming the variable and its value. */
TEST_IMPL(cli_rendezvous_runtime_errors) {
  const char *modes[] = {"threads", "processes"};
  char toomany[16], nranks_msg[64];
  snprintf(toomany, sizeof toomany, "%d", MUSTER_MAX_RANKS + 1);
  snprintf(nranks_msg, sizeof nranks_msg, "nranks %d out of range 1..%d", MUSTER_MAX_RANKS + 1,
           MUSTER_MAX_RANKS);
  for (int m = 0; m < 2; m++) {
    struct tool_result r;
    const char *argv[] = {"rendezvous", "--ranks", toomany, "--mode", modes[m],
                          "--rounds", "5", NULL};
    double t0 = test_now();
    run_muster(&r, argv, NULL);
    ASSERT_EQ(r.exit_code, 1);
    ASSERT_DBL_LT(test_now() - t0, 20.0); /* refused at join, no waiting */
    ASSERT_STR_CONTAINS(r.err, nranks_msg);
    ASSERT_STR_CONTAINS(r.err, "cannot open group rendezvous.");
    ASSERT_EQ(r.out_len, 0);
    tool_result_free(&r);

    const char *env[] = {"MUSTER_JOB=bad/job", NULL};
    const char *argv2[] = {"rendezvous", "--ranks", "2", "--mode", modes[m], "--rounds", "5",
                           NULL};
    run_muster(&r, argv2, env);
    ASSERT_EQ(r.exit_code, 2);
    ASSERT_STR_CONTAINS(r.err, "MUSTER_JOB 'bad/job'");
    ASSERT_STR_CONTAINS(r.err, "job name");
    ASSERT_EQ(r.out_len, 0);
    tool_result_free(&r);
    ASSERT_EQ(count_children(), 0);
    ASSERT_EQ(test_count_job_segments(test_job()), 0);
  }
  return 0;
}

/* SIGKILL one rank of a running `muster rendezvous --mode processes`: the
 * command must notice, let the survivors fail with the runtime's "peer
 * died", exit 1 within seconds, reap everyone and leave no segment. */
TEST_IMPL(cli_rendezvous_rank_killed) {
  const char *argv[] = {"rendezvous", "--ranks", "3", "--mode", "processes", "--rounds",
                        "10000000", "--cycles", "0", NULL};
  pid_t pid, kids[8];
  int out_fd, err_fd, n = 0;
  ASSERT_EQ(tool_spawn("muster", argv, NULL, &pid, &out_fd, &err_fd), 0);
  double t0 = test_now();
  while ((n = tool_children(pid, kids, 8)) < 3 && test_now() - t0 < 10) usleep(10000);
  ASSERT_EQ(n, 3);
  usleep(300000); /* well into the rounds */
  ASSERT_EQ(kill(kids[1], SIGKILL), 0);
  double t1 = test_now();
  struct tool_result r;
  ASSERT_EQ(tool_collect(&r, pid, out_fd, err_fd, 30), 0);
  double took = test_now() - t1;
  fprintf(stderr, "muster rendezvous ended %.2f s after the kill:\n%s", took, r.err);
  ASSERT_EQ(r.timed_out, 0);
  ASSERT_EQ(r.exit_code, 1);
  ASSERT_DBL_LT(took, 8.0);
  char line[128];
  snprintf(line, sizeof line, "(pid %d) was killed by signal 9", (int)kids[1]);
  ASSERT_STR_CONTAINS(r.err, line);
  /* the survivors' own error names the victim's pid and signal */
  snprintf(line, sizeof line, "peer died: rank 1 (pid %d) was killed by signal 9", (int)kids[1]);
  ASSERT_EQ(count_substr(r.err, line), 2);
  ASSERT_EQ(r.out_len, 0);
  for (int i = 0; i < 3; i++) ASSERT(kill(kids[i], 0) != 0); /* reaped: gone */
  tool_result_free(&r);
  ASSERT_EQ(test_count_job_segments(test_job()), 0);
  return 0;
}

/* A wrong read is an error, not a timing: with a byte of one rank's payload
 * corrupted in one round (the command's own fault injection), every reader
 * reports it and the command exits 1; for muster and for the baseline. */
TEST_IMPL(cli_rendezvous_wrong_read_caught) {
  const char *modes[] = {"threads", "processes"};
  for (int m = 0; m < 2; m++) {
    for (int base = 0; base < 2; base++) {
      struct tool_result r;
      const char *env[] = {base ? "MUSTER_RENDEZVOUS_TEST_CORRUPT=2,30,baseline"
                                : "MUSTER_RENDEZVOUS_TEST_CORRUPT=1,30",
                           NULL};
      const char *argv[] = {"rendezvous", "--ranks", "3", "--mode", modes[m], "--rounds", "100",
                            "--cycles", "5", base ? "--baseline" : NULL, NULL};
      run_muster(&r, argv, env);
      ASSERT_EQ(r.exit_code, 1);
      ASSERT_EQ(r.out_len, 0);
      ASSERT_STR_CONTAINS(r.err, base ? "pthread baseline read a wrong payload of rank 2 in round 30"
                                      : "read a wrong payload of rank 1 in round 30");
      ASSERT_STR_CONTAINS(r.err, "byte 63 is 0x");
      ASSERT_STR_CONTAINS(r.err, "rank 0 (pid ");
      tool_result_free(&r);
      ASSERT_EQ(count_children(), 0);
      ASSERT_EQ(test_count_job_segments(test_job()), 0);
    }
  }
  struct tool_result r;
  const char *env[] = {"MUSTER_RENDEZVOUS_TEST_CORRUPT=oops", NULL};
  const char *argv[] = {"rendezvous", NULL};
  run_muster(&r, argv, env);
  ASSERT_EQ(r.exit_code, 2);
  tool_result_free(&r);
  return 0;
}

/* pthread_barrier cannot time out: a rank SIGKILLed during the --baseline
 * rounds leaves the others blocked forever.  The command must kill them
 * after its grace period, reap everyone and exit 1 saying so. */
TEST_IMPL(cli_rendezvous_baseline_rank_killed) {
  const char *argv[] = {"rendezvous", "--ranks", "3", "--mode", "processes", "--rounds",
                        "200000", "--cycles", "0", "--baseline", NULL};
  pid_t pid, first[8], kids[8];
  int out_fd, err_fd, n = 0;
  ASSERT_EQ(tool_spawn("muster", argv, NULL, &pid, &out_fd, &err_fd), 0);
  double t0 = test_now();
  while ((n = tool_children(pid, first, 8)) < 3 && test_now() - t0 < 10) usleep(5000);
  ASSERT_EQ(n, 3);
  /* the baseline runs in a second set of children: wait for it */
  int phase2 = 0;
  while (!phase2 && test_now() - t0 < 40) {
    usleep(5000);
    n = tool_children(pid, kids, 8);
    phase2 = n == 3;
    for (int i = 0; i < n && phase2; i++)
      for (int j = 0; j < 3; j++) phase2 &= kids[i] != first[j];
  }
  ASSERT(phase2);
  usleep(100000);
  ASSERT_EQ(kill(kids[0], SIGKILL), 0);
  double t1 = test_now();
  struct tool_result r;
  ASSERT_EQ(tool_collect(&r, pid, out_fd, err_fd, 30), 0);
  double took = test_now() - t1;
  fprintf(stderr, "ended %.2f s after the kill:\n%s", took, r.err);
  ASSERT_EQ(r.exit_code, 1);
  ASSERT(took >= 4.0 && took < 15.0); /* the 5 s grace, then kill */
  ASSERT_STR_CONTAINS(r.err, "was killed by signal 9");
  ASSERT_STR_CONTAINS(r.err, "still running 5 s after the first failure; killed");
  for (int i = 0; i < 3; i++) ASSERT(kill(kids[i], 0) != 0);
  tool_result_free(&r);
  ASSERT_EQ(test_count_job_segments(test_job()), 0);
  return 0;
}
