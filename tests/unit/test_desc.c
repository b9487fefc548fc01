/*
 * tests/unit/test_desc.c - the solve descriptor (runtime/solve/desc.c): what a
 * hostile or foreign descriptor gets (bad magic, size, unterminated
 * strings), and the facts the choice reads from the descriptors: span,
 * devices counted by bus id (or by process and ordinal without one), nodes,
 * and whether a leader provider can reach every shard.
 */
#include "task.h"
#include "solve/desc.h"

static void base(muster__desc_t *d, int64_t pid, uint64_t host) {
  static double a[64], b[8];
  muster_solve_args_t args = {.routine = MUSTER_POTRS, .dtype = MUSTER_F64, .n = 4, .nrhs = 1};
  muster_shard_t s = {.mem = MUSTER_MEM_HOST, .device = -1, .a = a, .lda = 4, .b = b, .ldb = 4};
  muster__desc_describe(&args, &s, d);
  ASSERT_EQ(d->problem, 0);
  d->pid = pid;
  d->host = host;
}

/* rank r of R holds its block of n=4 columns */
static void blockify(muster__desc_t *d, int r, int R) {
  ASSERT_OK(muster_layout_block_cols(d->n, R, r, &d->col0, &d->ncols));
}

TEST_IMPL(desc_validate_hostile) {
  muster__desc_t d[2];
  const muster__desc_t *ds[2] = {&d[0], &d[1]};
  size_t lens[2] = {sizeof d[0], sizeof d[1]};
  for (int r = 0; r < 2; r++) {
    base(&d[r], 100, 7);
    blockify(&d[r], r, 2);
  }
  ASSERT_OK(muster__desc_validate(ds, lens, 2));
  ASSERT_OK(muster__desc_validate(ds, NULL, 2));
  memset(d[1].want, 'x', sizeof d[1].want); /* no NUL anywhere */
  ASSERT_EQ(muster__desc_validate(ds, lens, 2), MUSTER_ECORRUPT);
  ASSERT_STR_CONTAINS(muster_last_error(), "rank 1 published a solve descriptor with an unterminated string");
  d[1].want[0] = '\0';
  memset(d[0].msg, 'y', sizeof d[0].msg);
  ASSERT_EQ(muster__desc_validate(ds, lens, 2), MUSTER_ECORRUPT);
  d[0].msg[0] = '\0';
  d[1].bloblen = 10; /* claims a blob it did not send */
  ASSERT_EQ(muster__desc_validate(ds, lens, 2), MUSTER_EVERSION);
  d[1].bloblen = 0;
  d[0].magic ^= 1;
  ASSERT_EQ(muster__desc_validate(ds, lens, 2), MUSTER_EVERSION);
  ASSERT_STR_CONTAINS(muster_last_error(), "rank 0 published a solve descriptor this muster build does not know");
  d[0].magic ^= 1;
  lens[1] = 12;
  ASSERT_EQ(muster__desc_validate(ds, lens, 2), MUSTER_EVERSION);
  return 0;
}

TEST_IMPL(desc_query_facts) {
  muster__desc_t d[4];
  const muster__desc_t *ds[4] = {&d[0], &d[1], &d[2], &d[3]};
  muster__query_t mq;
  char why[300];
  /* threads: one process, host memory: ndevices is the number of ranks */
  for (int r = 0; r < 3; r++) base(&d[r], 100, 7);
  muster__desc_query(ds, 3, &mq);
  ASSERT_EQ(mq.q.span, MUSTER_SPAN_THREADS);
  ASSERT_EQ(mq.q.ndevices, 3);
  ASSERT_EQ(mq.q.nnodes, 1);
  ASSERT_EQ(mq.q.nranks, 3);
  ASSERT_EQ(mq.q.routine, MUSTER_POTRS);
  ASSERT_EQ(mq.q.nrhs, 1);
  ASSERT(muster__desc_leader_reach(ds, 3, why, sizeof why) == NULL);
  /* processes on CUDA memory: GPUs told apart by bus id, not by ordinal */
  for (int r = 0; r < 4; r++) {
    base(&d[r], 100 + r, 7);
    d[r].mem = MUSTER_MEM_CUDA;
    d[r].device = 0; /* each process sees its GPU as device 0 */
    d[r].free_bytes = (uint64_t)(r + 1) << 30;
  }
  snprintf(d[0].busid, sizeof d[0].busid, "0000:01:00.0");
  snprintf(d[1].busid, sizeof d[1].busid, "0000:02:00.0");
  snprintf(d[2].busid, sizeof d[2].busid, "0000:01:00.0"); /* shares rank 0's GPU */
  snprintf(d[3].busid, sizeof d[3].busid, "0000:03:00.0");
  muster__desc_query(ds, 4, &mq);
  ASSERT_EQ(mq.q.span, MUSTER_SPAN_PROCESSES);
  ASSERT_EQ(mq.q.ndevices, 3);
  ASSERT_EQ(mq.q.free_bytes[2], UINT64_C(3) << 30);
  ASSERT_EQ(mq.q.devices[3], 0);
  ASSERT(muster__desc_leader_reach(ds, 4, why, sizeof why) == NULL); /* CUDA: IPC reaches them */
  /* no bus ids: a GPU is (process, ordinal) */
  for (int r = 0; r < 4; r++) d[r].busid[0] = '\0';
  muster__desc_query(ds, 4, &mq);
  ASSERT_EQ(mq.q.ndevices, 4);
  /* another node: span nodes, and no leader provider can reach it */
  d[3].host = 8;
  muster__desc_query(ds, 4, &mq);
  ASSERT_EQ(mq.q.span, MUSTER_SPAN_NODES);
  ASSERT_EQ(mq.q.nnodes, 2);
  ASSERT(muster__desc_leader_reach(ds, 4, why, sizeof why) != NULL);
  ASSERT_STR_CONTAINS(why, "rank 3 (pid 103) is on another node than the leader");
  /* host memory of another process that is not muster_shard_alloc memory */
  for (int r = 0; r < 2; r++) base(&d[r], 100 + r, 7);
  d[1].ncols = 2;
  ASSERT(muster__desc_leader_reach(ds, 2, why, sizeof why) != NULL);
  ASSERT_STR_CONTAINS(why, "rank 1 (pid 101): host shard a is not memory from muster_shard_alloc");
  return 0;
}
