/*
 * tests/unit/test_segment_fuzz.c - the runtime's own attach path on
 * fuzzed segments (issue 11's standing suite): a segment file found at
 * join is read by a process that did not write it, so whatever its bytes,
 * muster_group_join must refuse it with a code and a message or use it as
 * a valid group, never crash, read out of bounds (ASan), hang or leak.
 *
 * Each case takes a valid one-rank segment (made by the runtime itself),
 * changes 1-8 random things (a byte, a 4- or 8-byte field set to an
 * extreme, the file cut short or grown), writes it where the group's name
 * points, and joins with a 50 ms deadline.  MUSTER_FUZZ_SEED=S replays;
 * MUSTER_FUZZ_CASES=K sets the count (default 400).  A summary line counts
 * the outcomes by code.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "muster.h"
#include "shm/segment.h"
#include "task.h"

static uint64_t rng;
static uint64_t next(void) { return test_rand(&rng); }

/* A fresh valid segment of a one-rank group, as bytes. */
static void *valid_image(size_t *size) {
  struct muster_segment seg;
  int created = 0;
  ASSERT_OK(muster__segment_open(&seg, test_job(), "fz", 1, &created));
  ASSERT_EQ(created, 1);
  *size = seg.size;
  void *copy = malloc(seg.size);
  ASSERT(copy);
  memcpy(copy, seg.hdr, seg.size);
  muster__segment_unlink(&seg);
  muster__segment_close(&seg);
  return copy;
}

/* One to eight changes; most in the header, where the checks are. */
static size_t mutate(unsigned char *b, size_t size) {
  static const uint64_t extreme[] = {0, 1, 0x7fffffff, 0x80000000u, 0xffffffffu,
                                     0x7fffffffffffffffull, ~0ull};
  size_t len = size;
  int k = 1 + (int)(next() % 8);
  for (int i = 0; i < k; i++) {
    size_t hdr = sizeof(struct muster_seg_header);
    size_t off = next() % 4 ? next() % hdr : next() % size;
    switch (next() % 5) {
    case 0:
    case 1: b[off] ^= (unsigned char)(1u << (next() % 8)); break;
    case 2: b[off] = (unsigned char)next(); break;
    case 3: { /* an aligned field set to an extreme */
      size_t w = next() % 2 ? 4 : 8;
      off &= ~(w - 1);
      if (off + w > size) break;
      uint64_t v = extreme[next() % (sizeof extreme / sizeof extreme[0])];
      memcpy(b + off, &v, w);
      break;
    }
    default: /* cut short, or longer with garbage */
      len = next() % 2 ? next() % size : size + next() % 4096;
    }
  }
  return len;
}

static void write_image(const char *path, const unsigned char *b, size_t size, size_t len) {
  int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
  ASSERT(fd >= 0);
  ASSERT_EQ(write(fd, b, len < size ? len : size), (ssize_t)(len < size ? len : size));
  if (len > size) ASSERT_EQ(ftruncate(fd, (off_t)len), 0); /* zeros past the copy */
  close(fd);
}

TEST_IMPL(segment_fuzz_attach) {
  const char *k = getenv("MUSTER_FUZZ_CASES");
  uint64_t seed = test_seed("MUSTER_FUZZ_SEED");
  int cases = k ? atoi(k) : 400;
  rng = seed;
  fprintf(stderr, "attach fuzz seed %llu, %d cases (MUSTER_FUZZ_SEED=%llu to replay)\n",
          (unsigned long long)seed, cases, (unsigned long long)seed);
  size_t size;
  unsigned char *img = valid_image(&size), *b = malloc(size);
  ASSERT(b);
  char name[256], path[512];
  ASSERT_OK(muster__segment_name(name, sizeof name, test_job(), "fz"));
  snprintf(path, sizeof path, "%s/%s", muster__segment_dir(), name);
  int fds = test_count_fds(), count[64] = {0};
  muster_group_opts_t o = {NULL, 0.05, -1};
  for (int i = 0; i < cases; i++) {
    memcpy(b, img, size);
    size_t len = mutate(b, size);
    write_image(path, b, size, len);
    muster_group_t *g = NULL;
    if (getenv("MUSTER_FUZZ_VERBOSE")) {
      fprintf(stderr, "case %d: %zu bytes of %zu; changed:", i, len, size);
      for (size_t x = 0; x < size; x++)
        if (b[x] != img[x]) fprintf(stderr, " %zu:%02x->%02x", x, img[x], b[x]);
      fprintf(stderr, "\n");
    }
    double t0 = test_now();
    int rc = muster_group_join("fz", 0, 1, &o, &g);
    double took = test_now() - t0;
    if (rc == 0) {
      rc = muster_group_barrier(g); /* a group it accepted must work */
      muster_group_leave(g);
    } else {
      ASSERT(g == NULL);
      ASSERT(strlen(muster_last_error()) > 0); /* says why */
    }
    if (!(took < 2.5) || (rc != 0 && !strcmp(muster_err_name(rc), "UNKNOWN")))
      fprintf(stderr, "case %d: rc %d (%s) after %.2f s: %s\n", i, rc, muster_err_name(rc), took,
              muster_last_error());
    ASSERT_PROMPT(took, 2.5);
    ASSERT(strcmp(muster_err_name(rc), "UNKNOWN") != 0); /* one of the documented codes */
    count[-rc < 64 ? -rc : 63]++;
    muster_group_cache_flush();
    unlink(path);
  }
  ASSERT_EQ(test_count_fds(), fds);
  ASSERT_EQ(test_count_job_segments(test_job()), 0);
  char line[512];
  size_t n = (size_t)snprintf(line, sizeof line, "attach fuzz: %d segments:", cases);
  for (int c = 0; c < 64 && n < sizeof line; c++)
    if (count[c]) n += (size_t)snprintf(line + n, sizeof line - n, " %s %d", c ? muster_err_name(-c) : "accepted", count[c]);
  fprintf(stderr, "%s\n", line);
  free(b);
  free(img);
  return 0;
}
