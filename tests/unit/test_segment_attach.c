/*
 * tests/unit/test_segment_attach.c - an attacher that opened a segment
 * while its creator was still making it, and the creator then failed
 * (a full /dev/shm: it removes the file) or the name was given to a new
 * file.  The attacher must go back to the name: create it itself and meet
 * the creator's error (MUSTER_ENOSPC), or attach to the new file; never
 * report the abandoned file as corrupt ("no magic (being created...)").
 */
#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>

#include "muster.h"
#include "shm/segment.h"
#include "task.h"

enum { ATTACHERS = 4, NRANKS = 4 };

struct attacher {
  const char *group;
  pthread_barrier_t *go; /* NULL: start at once */
  int rc, created;
  char msg[512];
  double t_end; /* test_now() at return */
  struct muster_segment seg;
};

static void *attach_main(void *p) {
  struct attacher *a = p;
  if (a->go) pthread_barrier_wait(a->go);
  struct muster_segment seg;
  a->rc = muster__segment_open(&seg, test_job(), a->group, NRANKS, &a->created);
  a->t_end = test_now();
  snprintf(a->msg, sizeof a->msg, "%s", a->rc ? muster_last_error() : "");
  if (a->rc == 0) a->seg = seg; /* closed by the test, once all have opened it */
  return NULL;
}

static void start(pthread_t *t, struct attacher *a, const char *group, pthread_barrier_t *go) {
  for (int i = 0; i < ATTACHERS; i++) {
    memset(&a[i], 0, sizeof a[i]);
    a[i].group = group;
    a[i].go = go;
    ASSERT(pthread_create(&t[i], NULL, attach_main, &a[i]) == 0);
  }
}

/* What a creator has made before it publishes the magic: the file, sized,
 * all zero.  Returns its fd. */
static int half_made(const char *group, char *path, size_t cap) {
  char name[256];
  ASSERT_OK(muster__segment_name(name, sizeof name, test_job(), group));
  snprintf(path, cap, "%s/%s", muster__segment_dir(), name);
  int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  ASSERT(fd >= 0);
  ASSERT_EQ(ftruncate(fd, (off_t)muster__segment_size(NRANKS)), 0);
  return fd;
}

static void expect_enospc(const struct attacher *a) {
  for (int i = 0; i < ATTACHERS; i++) {
    if (a[i].rc != MUSTER_ENOSPC)
      fprintf(stderr, "attacher %d: rc %d: %s\n", i, a[i].rc, a[i].msg);
    ASSERT_EQ(a[i].rc, MUSTER_ENOSPC);
    ASSERT_STR_CONTAINS(a[i].msg, "no space for group");
    ASSERT_STR_CONTAINS(a[i].msg, muster__segment_dir());
  }
}

/* Deterministic: the attachers are waiting for the magic when the creator
 * gives up; every one then fails like the creator did, promptly (not after
 * the 1 s wait for a creator in progress). */
TEST_IMPL(segment_attach_creator_failed) {
  char path[400];
  int fd = half_made("gone", path, sizeof path);
  muster__segment_test_fail_alloc(ENOSPC); /* every creation fails now */
  pthread_t t[ATTACHERS];
  struct attacher a[ATTACHERS];
  start(t, a, "gone", NULL);
  usleep(100 * 1000); /* they have opened it and wait for the magic */
  double t_gone = test_now();
  ASSERT_EQ(unlink(path), 0); /* the failing creator's cleanup */
  close(fd);
  for (int i = 0; i < ATTACHERS; i++) pthread_join(t[i], NULL);
  muster__segment_test_fail_alloc(0);
  expect_enospc(a);
  for (int i = 0; i < ATTACHERS; i++) ASSERT_PROMPT(a[i].t_end - t_gone, 0.5);
  ASSERT_EQ(test_count_job_segments(test_job()), 0);
  return 0;
}

/* Deterministic: the half-made file is removed and the name given to a new,
 * complete segment: everyone meets in that one (made by us, or by an
 * attacher that went back to the name first). */
TEST_IMPL(segment_attach_name_replaced) {
  char path[400];
  int fd = half_made("moved", path, sizeof path);
  pthread_t t[ATTACHERS];
  struct attacher a[ATTACHERS];
  start(t, a, "moved", NULL);
  usleep(100 * 1000);
  ASSERT_EQ(unlink(path), 0);
  close(fd);
  struct muster_segment seg;
  int created = 0;
  ASSERT_OK(muster__segment_open(&seg, test_job(), "moved", NRANKS, &created));
  for (int i = 0; i < ATTACHERS; i++) pthread_join(t[i], NULL);
  int creators = created;
  for (int i = 0; i < ATTACHERS; i++) {
    if (a[i].rc) fprintf(stderr, "attacher %d: %s\n", i, a[i].msg);
    ASSERT_OK(a[i].rc);
    ASSERT_EQ(a[i].seg.ino, seg.ino);
    creators += a[i].created;
    muster__segment_close(&a[i].seg);
  }
  ASSERT_EQ(creators, 1);
  muster__segment_unlink(&seg);
  muster__segment_close(&seg);
  ASSERT_EQ(test_count_job_segments(test_job()), 0);
  return 0;
}

/* The race itself, repeated: ATTACHERS threads open one group at once while
 * every allocation fails; each must get MUSTER_ENOSPC. */
TEST_IMPL(segment_full_concurrent_open) {
  muster__segment_test_fail_alloc(ENOSPC);
  pthread_barrier_t go;
  ASSERT(pthread_barrier_init(&go, NULL, ATTACHERS) == 0);
  for (int round = 0; round < 200; round++) {
    char group[32];
    snprintf(group, sizeof group, "race%d", round);
    pthread_t t[ATTACHERS];
    struct attacher a[ATTACHERS];
    start(t, a, group, &go);
    for (int i = 0; i < ATTACHERS; i++) pthread_join(t[i], NULL);
    expect_enospc(a);
  }
  pthread_barrier_destroy(&go);
  muster__segment_test_fail_alloc(0);
  ASSERT_EQ(test_count_job_segments(test_job()), 0);
  return 0;
}
