/*
 * tests/integration/test_store.c - the store bootstrap (muster/store.h) in
 * threads of one process over an in-memory store: allgathers of random
 * lengths round-trip and the store keeps at most two values per rank, the
 * old ones deleted off the allgather's path (by the heartbeat thread); a
 * length mismatch and an abort end every rank with the same code; a rank
 * that never comes is named after the timeout, one that closed its end at
 * once; a name cannot be opened twice; bad options are refused.  Forked
 * ranks, SIGKILL and SIGSTOP: tests/fault/test_store_faults.c.
 */
#include <pthread.h>
#include <unistd.h>

#include "task.h"
#include "integration/kv_util.h"

#define R_MAX 4

typedef struct rank_arg {
  muster_kv_t kv;
  const char *name;
  int rank, size;
  double timeout;
  int mode;          /* what this rank does: see rank_main */
  int rc;
  char msg[700];
  double t_return;
} rank_arg_t;

enum { ROUNDS = 6, MAXLEN = 3000 };

/* The byte i of rank r's value in round k. */
static unsigned char byte_of(int r, int k, size_t i) { return (unsigned char)(r * 31 + k * 7 + i * 13); }

static size_t len_of(int k) { return k == 2 ? 0 : (size_t)((k * 977 + 13) % MAXLEN); }

enum { M_ROUNDS, M_BADLEN, M_ABORT, M_CLOSE_EARLY, M_ONE_ROUND };

static void *rank_main(void *p) {
  rank_arg_t *a = p;
  muster_store_opts_t o = {.name = a->name, .rank = a->rank, .size = a->size, .timeout_s = a->timeout};
  muster_store_t *s;
  a->rc = muster_store_open(&a->kv, &o, &s);
  if (a->rc < 0) goto out;
  unsigned char *mine = malloc(MAXLEN), *all = malloc((size_t)MAXLEN * a->size);
  int rounds = a->mode == M_ROUNDS ? ROUNDS : a->mode == M_CLOSE_EARLY ? 0 : 1;
  for (int k = 0; k < rounds && a->rc == 0; k++) {
    size_t len = len_of(k) + (a->mode == M_BADLEN && a->rank == 2);
    for (size_t i = 0; i < len; i++) mine[i] = byte_of(a->rank, k, i);
    if (a->mode == M_ABORT && a->rank == 1) {
      usleep(100000); /* the others are waiting by then */
      a->rc = muster_store_abort(s, MUSTER_ENOTPD, "the leading minor of order 3 is not positive");
      break;
    }
    a->rc = muster_store_allgather(s, mine, all, len, NULL, 0);
    for (int r = 0; r < a->size && a->rc == 0; r++)
      for (size_t i = 0; i < len; i++)
        if (all[(size_t)r * len + i] != byte_of(r, k, i)) a->rc = -999;
  }
  if (a->rc == 0 && a->mode == M_ROUNDS) a->rc = muster_store_barrier(s);
  if (a->rc < 0) snprintf(a->msg, sizeof a->msg, "%s", muster_last_error());
  if (a->rc < 0 && a->mode == M_ABORT) /* later calls fail at once, the same way */
    ASSERT_EQ(muster_store_barrier(s), a->rc);
  free(mine);
  free(all);
  ASSERT_OK(muster_store_close(s));
out:
  if (a->rc < 0 && !a->msg[0]) snprintf(a->msg, sizeof a->msg, "%s", muster_last_error());
  a->t_return = test_now();
  return NULL;
}

/* Run ranks 0..size-1 except `absent`, each with mode. */
static double run_ranks(muster_kv_t kv, const char *name, int size, int absent, int mode, double timeout,
                        rank_arg_t *a) {
  pthread_t t[R_MAX];
  double t0 = test_now();
  for (int r = 0; r < size; r++) {
    a[r] = (rank_arg_t){.kv = kv, .name = name, .rank = r, .size = size, .timeout = timeout, .mode = mode};
    if (r != absent) ASSERT(pthread_create(&t[r], NULL, rank_main, &a[r]) == 0);
  }
  for (int r = 0; r < size; r++)
    if (r != absent) ASSERT(pthread_join(t[r], NULL) == 0);
  return t0;
}

TEST_IMPL(store_allgather_threads) {
  kv_mem_t *m = kv_mem_new();
  rank_arg_t a[R_MAX];
  run_ranks(kv_mem(m), "rounds", R_MAX, -1, M_ROUNDS, 10, a);
  for (int r = 0; r < R_MAX; r++) {
    if (a[r].rc) fprintf(stderr, "rank %d: %d %s\n", r, a[r].rc, a[r].msg);
    ASSERT_EQ(a[r].rc, 0);
  }
  /* with del: each rank's last two rounds at most, and every rank's beat */
  ASSERT_LE(kv_mem_count(m, "muster/rounds/ag/"), 2 * R_MAX);
  ASSERT_EQ(kv_mem_count(m, "muster/rounds/beat/"), R_MAX);
  ASSERT_EQ(kv_mem_count(m, "muster/rounds/abort"), 0);
  /* the name is taken now */
  muster_kv_t kv = kv_mem(m);
  muster_store_opts_t o = {.name = "rounds", .rank = 0, .size = 2};
  muster_store_t *s;
  ASSERT_EQ(muster_store_open(&kv, &o, &s), MUSTER_EEXIST);
  ASSERT_STR_CONTAINS(muster_last_error(), "key muster/rounds/beat/0 is already in the store");
  kv_mem_free(m);
  return 0;
}

/* ---- deletes off the allgather's path (store_beat.c) ------------------------------------ */

static muster_kv_t mem_kv;
static __thread int in_allgather;
static int dels_in_allgather, dels;

static int counting_del(void *ctx, const char *key, char *err, size_t errlen) {
  if (in_allgather) __atomic_add_fetch(&dels_in_allgather, 1, __ATOMIC_RELAXED);
  __atomic_add_fetch(&dels, 1, __ATOMIC_RELAXED);
  return mem_kv.del(ctx, key, err, errlen);
}

static void *del_rank(void *p) {
  rank_arg_t *a = p;
  muster_store_opts_t o = {.name = a->name, .rank = a->rank, .size = a->size, .timeout_s = a->timeout};
  muster_store_t *s;
  ASSERT_OK(muster_store_open(&a->kv, &o, &s));
  uint64_t mine = (uint64_t)a->rank, all[R_MAX];
  for (int k = 0; k < ROUNDS; k++) {
    in_allgather = 1;
    ASSERT_OK(muster_store_allgather(s, &mine, all, sizeof mine, NULL, 0));
    in_allgather = 0;
    for (int r = 0; r < a->size; r++) ASSERT_EQ(all[r], (uint64_t)r);
  }
  ASSERT_OK(muster_store_close(s));
  return NULL;
}

/* A rank's value of round k - 1 is deleted by its heartbeat thread (or at
 * close), never inside an allgather: the round trip is off the call's
 * path; every read round's value goes, the last round's stays. */
TEST_IMPL(store_deletes_off_path) {
  kv_mem_t *m = kv_mem_new();
  mem_kv = kv_mem(m);
  muster_kv_t kv = mem_kv;
  kv.del = counting_del;
  rank_arg_t a[2];
  pthread_t t[2];
  for (int r = 0; r < 2; r++) {
    a[r] = (rank_arg_t){.kv = kv, .name = "dels", .rank = r, .size = 2, .timeout = 10};
    ASSERT(pthread_create(&t[r], NULL, del_rank, &a[r]) == 0);
  }
  for (int r = 0; r < 2; r++) ASSERT(pthread_join(t[r], NULL) == 0);
  ASSERT_EQ(__atomic_load_n(&dels_in_allgather, __ATOMIC_RELAXED), 0);
  ASSERT_EQ(__atomic_load_n(&dels, __ATOMIC_RELAXED), 2 * (ROUNDS - 1));
  ASSERT_EQ(kv_mem_count(m, "muster/dels/ag/"), 2);
  kv_mem_free(m);
  return 0;
}

TEST_IMPL(store_mismatch_and_abort) {
  kv_mem_t *m = kv_mem_new();
  rank_arg_t a[R_MAX];
  run_ranks(kv_mem(m), "badlen", 3, -1, M_BADLEN, 10, a);
  for (int r = 0; r < 3; r++) {
    ASSERT_EQ(a[r].rc, MUSTER_EMISMATCH);
    ASSERT_STR_CONTAINS(a[r].msg, "allgather 0");
    ASSERT_STR_CONTAINS(a[r].msg, "passed 14"); /* rank 2 passed 14 bytes, the others 13 */
  }
  run_ranks(kv_mem(m), "abort", 3, -1, M_ABORT, 10, a);
  for (int r = 0; r < 3; r++) {
    ASSERT_EQ(a[r].rc, MUSTER_ENOTPD);
    ASSERT_STR_CONTAINS(a[r].msg, "rank 1 aborted the store set abort: the leading minor of order 3");
  }
  kv_mem_free(m);
  return 0;
}

TEST_IMPL(store_missing_and_closed_rank) {
  kv_mem_t *m = kv_mem_new();
  rank_arg_t a[R_MAX];
  double t0 = run_ranks(kv_mem(m), "missing", 3, 2, M_ONE_ROUND, 0.5, a);
  for (int r = 0; r < 2; r++) {
    if (a[r].rc != MUSTER_ETIMEDOUT) fprintf(stderr, "rank %d: %d %s\n", r, a[r].rc, a[r].msg);
    ASSERT_EQ(a[r].rc, MUSTER_ETIMEDOUT);
    ASSERT_STR_CONTAINS(a[r].msg, "rank 2 (never heard: its pid and host are unknown) has written no heartbeat");
    ASSERT_STR_CONTAINS(a[r].msg, "more than the timeout (0.5 s)");
    ASSERT_DBL_LT(0.5, a[r].t_return - t0);
    ASSERT_DBL_LT(a[r].t_return - t0, 2.0);
  }
  /* rank 1 closes without the allgather: rank 0, waiting for it, is told */
  muster_kv_t kv = kv_mem(m);
  muster_store_opts_t o = {.name = "closed", .rank = 1, .size = 2, .timeout_s = 30};
  muster_store_t *s;
  ASSERT_OK(muster_store_open(&kv, &o, &s));
  ASSERT_OK(muster_store_close(s));
  o.rank = 0;
  ASSERT_OK(muster_store_open(&kv, &o, &s));
  t0 = test_now();
  ASSERT_EQ(muster_store_barrier(s), MUSTER_EPEERDEAD);
  ASSERT_STR_CONTAINS(muster_last_error(), "store set closed: rank 1 (pid ");
  ASSERT_STR_CONTAINS(muster_last_error(), "closed its end; rank 0 was in allgather 0, waiting for rank 1");
  ASSERT_DBL_LT(test_now() - t0, 2.0);
  ASSERT_OK(muster_store_close(s));
  kv_mem_free(m);
  return 0;
}

TEST_IMPL(store_open_errors) {
  kv_mem_t *m = kv_mem_new();
  muster_kv_t kv = kv_mem(m), nokv = {0};
  muster_store_t *s = (muster_store_t *)1;
  muster_store_opts_t o = {.name = "a/b", .rank = 0, .size = 2};
  ASSERT_EQ(muster_store_open(&kv, &o, &s), MUSTER_EINVAL);
  ASSERT(s == NULL);
  ASSERT_STR_CONTAINS(muster_last_error(), "name 'a/b': 1..64 of [A-Za-z0-9._-]");
  o.name = "ok";
  ASSERT_EQ(muster_store_open(&nokv, &o, &s), MUSTER_EINVAL);
  ASSERT_STR_CONTAINS(muster_last_error(), "the store needs set and get");
  o.rank = 2;
  ASSERT_EQ(muster_store_open(&kv, &o, &s), MUSTER_EINVAL);
  ASSERT_STR_CONTAINS(muster_last_error(), "rank 2 of size 2");
  o.rank = 0;
  o.timeout_s = -1;
  ASSERT_EQ(muster_store_open(&kv, &o, &s), MUSTER_EINVAL);
  o.timeout_s = 1e-6; /* muster_timeout's range, the one rule of every wait */
  ASSERT_EQ(muster_store_open(&kv, &o, &s), MUSTER_EINVAL);
  ASSERT_STR_CONTAINS(muster_last_error(), "muster_store_open: store set ok, rank 0: timeout_s 1e-06 out of range");
  o.timeout_s = 0;
  setenv("MUSTER_TIMEOUT", "nonsense", 1);
  ASSERT_EQ(muster_store_open(&kv, &o, &s), MUSTER_EINVAL);
  ASSERT_STR_CONTAINS(muster_last_error(), "MUSTER_TIMEOUT");
  unsetenv("MUSTER_TIMEOUT");
  ASSERT_EQ(muster_store_allgather(NULL, NULL, NULL, 0, NULL, 0), MUSTER_EINVAL);
  ASSERT_EQ(kv_mem_count(m, ""), 0); /* nothing written by a refused open */
  kv_mem_free(m);
  return 0;
}
