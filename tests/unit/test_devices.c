/* tests/unit/test_devices.c - muster_run_on_devices (host devices here;
 * tests/gpu runs it on GPUs). */
#include <pthread.h>

#include "muster.h"
#include "task.h"

typedef struct seen {
  pthread_mutex_t mu;
  int calls;
  int rank_seen[16];
  int device_of[16];
  pthread_t tid[16];
  int fail_rank; /* rank whose fn returns 7, -1 none */
} seen_t;

static int record(int rank, int device, void *arg) {
  seen_t *s = arg;
  pthread_mutex_lock(&s->mu);
  s->calls++;
  s->rank_seen[rank]++;
  s->device_of[rank] = device;
  s->tid[rank] = pthread_self();
  pthread_mutex_unlock(&s->mu);
  return rank == s->fail_rank ? 7 : 0;
}

TEST_IMPL(devices_run_host_threads) {
  seen_t s = {PTHREAD_MUTEX_INITIALIZER, 0, {0}, {0}, {0}, -1};
  int devs[6] = {-1, -1, -1, -1, -1, -1};
  ASSERT_OK(muster_run_on_devices(6, devs, record, &s));
  ASSERT_EQ(s.calls, 6);
  for (int r = 0; r < 6; r++) {
    ASSERT_EQ(s.rank_seen[r], 1);
    ASSERT_EQ(s.device_of[r], -1);
    ASSERT(!pthread_equal(s.tid[r], pthread_self())); /* each rank runs in its own thread */
    for (int q = 0; q < r; q++) ASSERT(!pthread_equal(s.tid[r], s.tid[q]));
  }
  return 0;
}

TEST_IMPL(devices_first_nonzero_returned) {
  seen_t s = {PTHREAD_MUTEX_INITIALIZER, 0, {0}, {0}, {0}, 2};
  int devs[4] = {-1, -1, -1, -1};
  int rc = muster_run_on_devices(4, devs, record, &s);
  ASSERT_EQ(rc, 7);
  ASSERT_EQ(s.calls, 4); /* the others still ran */
  ASSERT_STR_CONTAINS(muster_last_error(), "rank 2");
  return 0;
}

TEST_IMPL(devices_bad_arguments) {
  seen_t s = {PTHREAD_MUTEX_INITIALIZER, 0, {0}, {0}, {0}, -1};
  int devs[2] = {-1, -1};
  ASSERT_EQ(muster_run_on_devices(0, devs, record, &s), MUSTER_EINVAL);
  ASSERT_EQ(muster_run_on_devices(2, NULL, record, &s), MUSTER_EINVAL);
  ASSERT_EQ(muster_run_on_devices(2, devs, NULL, &s), MUSTER_EINVAL);
  ASSERT_STR_CONTAINS(muster_last_error(), "muster_run_on_devices");
  ASSERT_EQ(s.calls, 0);
  return 0;
}

/* A device that cannot be made current (no CUDA here, or no such ordinal on
 * a GPU machine): nobody runs fn, the error names the device. */
TEST_IMPL(devices_bad_device_runs_nobody) {
  seen_t s = {PTHREAD_MUTEX_INITIALIZER, 0, {0}, {0}, {0}, -1};
  int devs[3] = {-1, 999, -1};
  /* a first call loads libcudart (and, on a GPU machine, the driver, which
   * keeps a few descriptors for the life of the process) */
  ASSERT_EQ(muster_run_on_devices(3, devs, record, &s), MUSTER_ECUDA);
  int fds = test_count_fds();
  double t0 = test_now();
  int rc = muster_run_on_devices(3, devs, record, &s);
  ASSERT_EQ(rc, MUSTER_ECUDA);
  ASSERT_EQ(s.calls, 0);
  ASSERT_STR_CONTAINS(muster_last_error(), "device 999");
  ASSERT_DBL_LT(test_now() - t0, 10.0);
  ASSERT_EQ(test_count_fds(), fds); /* nothing more on a second call */
  return 0;
}
